// The state directory's process lock: an O_EXCL pid file, so two servers never interleave writes to one journal.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, open, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StateUnavailableError } from '../interfaces.ts';

/** Thrown when another live process (or another store in this process) already holds the state directory. */
export class StateDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateDirLockedError';
  }
}

// Tells this process apart from an earlier one that had the same pid (in a container the server is often pid 1 every time).
const PROCESS_TOKEN = randomBytes(8).toString('hex');

/**
 * Takes the lock at `path`, removing a stale one left by a dead process; resolves to its release function.
 *
 * The lock appears with its content in one step: the pid is written to a private temp file, which is then hard-linked
 * to `path` (the link fails if `path` exists, like O_EXCL). Creating `path` first and writing the pid after left an
 * empty lock whenever a process was killed in between, and the next start could not tell that from an opener still
 * writing, so it refused to start.
 */
export async function acquireStateLock(path: string, log: (message: string) => void): Promise<() => Promise<void>> {
  const content = `${process.pid} ${PROCESS_TOKEN}\n`;
  const tmp = `${path}.${process.pid}.${PROCESS_TOKEN}.tmp`;
  try {
    const fh = await open(tmp, 'w', 0o644);
    try {
      await fh.writeFile(content);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw new StateUnavailableError(`[state] ${tmp}: cannot create lock file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return await takeLock(path, tmp, log);
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

async function takeLock(path: string, tmp: string, log: (message: string) => void): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await linkOrCreate(tmp, path);
      await sweepDebris(path);
      return async () => {
        await unlink(path).catch(() => {});
      };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new StateUnavailableError(`[state] ${path}: cannot create lock file (${code ?? (e as Error).message})`);
    }
    const holder = await readHolder(path);
    if (holder === 'gone') continue;
    // A lock always appears whole (see above), so one without a pid in it is debris, e.g. from an older version.
    if (holder !== 'unreadable' && isAlive(holder.pid, holder.token)) {
      throw locked(path, holder.pid === process.pid ? 'it is already open in this process' : `process ${holder.pid} holds it; if no server runs there, delete the lock file`);
    }
    log(`[state] ${path}: removing stale lock${holder === 'unreadable' ? '' : ` of process ${holder.pid}, which is not running`}`);
    await unlink(path).catch(() => {});
  }
  throw locked(path, 'the lock kept changing hands');
}

/** link(2) where the filesystem has hard links; elsewhere O_EXCL create-then-write, the best it allows. */
async function linkOrCreate(tmp: string, path: string): Promise<void> {
  try {
    await link(tmp, path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e;
    await writeFile(path, await readFile(tmp), { flag: 'wx', mode: 0o644 });
  }
}

/** Removes temp files of lock attempts by processes that are gone (killed between writing and removing them). */
async function sweepDebris(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `${basename(path)}.`;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !isAlive(pid, '')) await unlink(join(dir, name)).catch(() => {});
  }
}

function locked(path: string, why: string): StateDirLockedError {
  return new StateDirLockedError(`[state] ${path}: state directory is in use (${why}); stop that server or give this one another --state directory`);
}

async function readHolder(path: string): Promise<{ pid: number; token: string } | 'gone' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
  const m = /^(\d+) ([0-9a-f]+)\n$/.exec(text);
  return m ? { pid: Number(m[1]), token: m[2] } : 'unreadable';
}

function isAlive(pid: number, token: string): boolean {
  if (pid === process.pid) return token === PROCESS_TOKEN;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
  // A killed server stays a zombie until its parent reaps it, and signal 0 still reaches a zombie. Where the
  // parent is slow to reap (a container whose init does not, a supervisor that waits), a restart would be refused
  // for a process that can no longer touch the state. Linux says which it is.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false; // gone since the signal
    return true; // no /proc (not Linux) or no access: trust the signal
  }
}
