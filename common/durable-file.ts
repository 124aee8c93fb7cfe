// Durable writes shared by the compiler, `register sign` and `register pull`: a reader (or a crash) sees a file's old
// bytes or its new ones, never a part.
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * fsync of one file or directory (a directory's, so a rename or new entry in it is durable), its handle closed even
 * when the sync fails.
 */
export async function fsyncPath(path: string): Promise<void> {
  const h = await open(path, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** Writes in flight in this process: each takes a temporary name of its own. */
let writes = 0;

/**
 * Writes `name` in `dir` through a temporary file: write, fsync, rename, fsync of `dir`. The temporary file is named
 * by the process and the write, so two writes of one file at once (in one process or several) never share it; the
 * last rename wins.
 */
export async function writeAtomically(dir: string, name: string, bytes: Uint8Array | string): Promise<void> {
  const temp = join(dir, `.${name}.${process.pid}-${++writes}.tmp`);
  const fh = await open(temp, 'w');
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(temp, join(dir, name));
  await fsyncPath(dir);
}
