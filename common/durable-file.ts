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

/** Writes `name` in `dir` through a temporary file: write, fsync, rename, fsync of `dir`. */
export async function writeAtomically(dir: string, name: string, bytes: Uint8Array | string): Promise<void> {
  const temp = join(dir, `.${name}.${process.pid}.tmp`);
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
