// The state directory's process lock: an O_EXCL pid file, so two servers never interleave writes to one journal.

import { randomBytes } from 'node:crypto';
import { open, readFile, stat, unlink } from 'node:fs/promises';
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

/** A lock file younger than this with no readable pid is taken to be mid-creation by another opener. */
const FRESH_MS = 2000;

/** Takes the lock at `path`, removing a stale one left by a dead process; resolves to its release function. */
export async function acquireStateLock(path: string, log: (message: string) => void): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o644);
      try {
        await fh.writeFile(`${process.pid} ${PROCESS_TOKEN}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      return async () => {
        await unlink(path).catch(() => {});
      };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new StateUnavailableError(`[state] ${path}: cannot create lock file (${code ?? (e as Error).message})`);
    }
    const holder = await readHolder(path);
    if (holder === 'gone') continue;
    if (holder === 'unreadable') {
      const age = await stat(path).then((s) => Date.now() - s.mtimeMs, () => Infinity);
      if (age < FRESH_MS) throw locked(path, 'another process is opening it');
    } else if (isAlive(holder.pid, holder.token)) {
      throw locked(path, holder.pid === process.pid ? 'it is already open in this process' : `process ${holder.pid} holds it; if no server runs there, delete the lock file`);
    }
    log(`[state] ${path}: removing stale lock${holder === 'unreadable' ? '' : ` of process ${holder.pid}, which is not running`}`);
    await unlink(path).catch(() => {});
  }
  throw locked(path, 'the lock kept changing hands');
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
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}
