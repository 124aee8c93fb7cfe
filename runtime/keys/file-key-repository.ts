// The keys file (keys.json) as a key repository: the default store of `register keys` and of a server without
// `--keys state`. Each change is a locked read-modify-write and an atomic rewrite.

import { randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import type { KeyRepository } from '../interfaces.ts';
import { keyFileDocument, parseKeyFile, type KeyFile } from './key-entry.ts';

export const DEFAULT_KEYS_FILE = 'keys.json';

/** The keys file as a KeyRepository: each change a locked read-modify-write and an atomic rewrite. */
export function fileKeyRepository(file: string): KeyRepository {
  return {
    label: file,
    // As stored: a damaged entry is the reader's to report (listing names it, a server keeps that key's last good
    // state and still applies a legible revocation), not a reason to hide every other key.
    entries: async () => {
      const text = await readText(file);
      return text === null ? [] : keyFileDocument(text, file).keys;
    },
    insert: (entry) =>
      withFileLock(file, async () => {
        const data = await readKeyFile(file);
        if (data.keys.some((k) => k.id === entry.id)) return false;
        data.keys.push(entry);
        await writeKeyFile(file, data);
        return true;
      }),
    revoke: (id) =>
      withFileLock(file, async () => {
        const data = await readKeyFile(file);
        const entry = data.keys.find((k) => k.id === id);
        if (!entry) return null;
        if (!entry.revoked) {
          entry.revoked = true;
          await writeKeyFile(file, data);
        }
        return entry;
      }),
    version: async () => {
      try {
        const s = await stat(file, { bigint: true });
        return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
      } catch {
        return 'missing';
      }
    },
    close: async () => {},
  };
}

/** Reads and checks the keys file; a missing file reads as no keys. */
async function readKeyFile(file: string): Promise<KeyFile> {
  const text = await readText(file);
  return text === null ? { keys: [] } : parseKeyFile(text, file);
}

/** The file's text, or null when there is no file. */
async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new RegisterError('keys', `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, file);
  }
}

/**
 * Replaces the keys file atomically (temp file, fsync, rename, fsync of the directory), so a running server
 * polling it sees either the old or the new version, never half of one.
 */
async function writeKeyFile(file: string, data: KeyFile): Promise<void> {
  const path = resolve(file);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx', 0o600);
    await fh.writeFile(JSON.stringify(data, null, 2) + '\n');
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, path);
    const dir = await open(dirname(path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch (e) {
    await fh?.close().catch(() => {});
    await unlink(tmp).catch(() => {}); // gone already if the rename happened
    throw new RegisterError('keys', `cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, file);
  }
}

/** Serialises read-modify-write of the keys file between CLI runs (an O_EXCL lock file next to it). */
async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${resolve(file)}.lock`;
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await (await open(lock, 'wx')).close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new RegisterError('keys', `cannot create lock file ${lock} (${(e as NodeJS.ErrnoException).code})`, file);
      if (Date.now() > deadline) throw new RegisterError('keys', `another keys command holds ${lock}; if none is running, delete that file`, file);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => {});
  }
}
