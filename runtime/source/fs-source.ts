// ShardSource driver for a local dist/ folder: positioned reads through a small pool of open file handles.
import { read, readSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { transientBytes } from '../../common/bytes.ts';
import type { ShardSource } from '../interfaces.ts';
import { ArtefactError } from '../read-errors.ts';
import { checkRange, checkSourcePath, isMutablePath } from './source-path.ts';

/** Options of createFsSource. */
export interface FsSourceOptions {
  /** The dist root; every path is read relative to it. */
  root: string;
  /** Most file handles kept open for range reads; the least recently used is closed beyond this. Default 64. */
  maxOpenFiles?: number;
  /**
   * How range reads are made: `sync` (positioned reads on the event loop), `pool` (on libuv's thread pool), or
   * `adaptive` (default): synchronous while reads are page-cache copies, the pool while they reach the disk.
   */
  reads?: 'sync' | 'pool' | 'adaptive';
}

/** Counters for tests and metrics. */
interface FsSourceStats {
  /** Files opened so far (handle opens plus whole-file reads). */
  opens: number;
  /** Handles currently held open. */
  openFiles: number;
  maxOpenFiles: number;
}

export interface FsShardSource extends ShardSource {
  readonly local: true;
  stats(): FsSourceStats;
}

/** A kept handle: its opening, and the open file once that settled (what a read needs to answer at once). */
interface Handle {
  opening: Promise<OpenFile>;
  file: OpenFile | null;
}

interface OpenFile {
  fh: FileHandle;
  size: number;
  users: number;
  evicted: boolean;
  closed: boolean;
}

const NOT_FOUND = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
const isNotFound = (err: unknown): boolean => NOT_FOUND.has((err as NodeJS.ErrnoException)?.code ?? '');

export function createFsSource(opts: FsSourceOptions): FsShardSource {
  const root = resolve(opts.root);
  const maxOpenFiles = Math.max(1, opts.maxOpenFiles ?? 64);
  const reads = createReadPolicy(opts.reads ?? 'adaptive');
  const label = `fs:${root}`;
  const tag = 'fs-source';
  // Insertion order = recency: a hit re-inserts the entry.
  const handles = new Map<string, Handle>();
  const wholeReads = new Map<string, Promise<Uint8Array | null>>();
  let opens = 0;
  let openFiles = 0;
  let closed = false;

  const inside = root.endsWith(sep) ? root : root + sep;
  const where = (path: string): string => inside + path.split('/').join(sep);
  // Every lookup reads a few files (index pack, shard pack) again and again: checking and resolving each path
  // once, not per read, was ~5% of a batch's CPU. Only accepted paths are kept; a refused one throws every time.
  const accepted = new Map<string, string>();
  const absolute = (path: string): string => {
    const known = accepted.get(path);
    if (known !== undefined) return known;
    checkSourcePath(tag, path);
    const abs = resolve(root, path);
    // Belt and braces: checkSourcePath already rules out every way out of root.
    if (!abs.startsWith(inside)) throw new Error(`[${tag}] refused path ${JSON.stringify(path)}: outside root`);
    if (accepted.size >= 4096) accepted.clear(); // dist paths are few; this only bounds a stream of odd ones
    accepted.set(path, abs);
    return abs;
  };
  const assertOpen = () => {
    if (closed) throw new Error(`[${tag}] ${label} is closed`);
  };

  const release = (f: OpenFile): void => {
    f.users--;
    if (f.evicted && f.users === 0 && !f.closed) {
      f.closed = true;
      openFiles--;
      f.fh.close().catch(() => {});
    }
  };

  // A handle in use is closed only when its last reader releases it.
  const retire = (p: Promise<OpenFile>): Promise<void> =>
    p.then(
      (f) => {
        f.evicted = true;
        f.users++;
        release(f);
      },
      () => {},
    );

  const evictOldest = (): void => {
    while (handles.size > maxOpenFiles) {
      const [path, h] = handles.entries().next().value as [string, Handle];
      handles.delete(path);
      retire(h.opening);
    }
  };

  const touch = (path: string, h: Handle): void => {
    handles.delete(path);
    handles.set(path, h);
  };

  const acquire = async (path: string, abs: string): Promise<OpenFile> => {
    for (;;) {
      let h = handles.get(path);
      if (h) touch(path, h);
      else {
        opens++;
        const opening = (async () => {
          const fh = await open(abs, 'r');
          openFiles++;
          try {
            const st = await fh.stat();
            if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
            return { fh, size: st.size, users: 0, evicted: false, closed: false };
          } catch (err) {
            openFiles--;
            await fh.close().catch(() => {});
            throw err;
          }
        })();
        const mine: Handle = (h = { opening, file: null });
        handles.set(path, mine);
        opening.then(
          (f) => void (mine.file = f),
          () => {
            if (handles.get(path) === mine) handles.delete(path);
          },
        );
        evictOldest();
      }
      let f: OpenFile;
      try {
        f = await h.opening;
      } catch (err) {
        // A compiled file that is not there is a damaged dist, as the release layer reports it.
        if (isNotFound(err)) throw new ArtefactError(where(path), 'not found');
        throw new Error(`[${tag}] ${path}: ${(err as Error).message}`);
      }
      // Evicted and closed between lookup and use: open it again.
      if (f.closed) continue;
      f.users++;
      return f;
    }
  };

  const readWhole = async (path: string, abs: string): Promise<Uint8Array | null> => {
    opens++;
    try {
      const buf = await readFile(abs);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw new Error(`[${tag}] ${path}: ${(err as Error).message}`);
    }
  };

  const readWholeShared = async (path: string): Promise<Uint8Array | null> => {
    assertOpen();
    const abs = absolute(path);
    // Whole-file reads always go to the file system (never a kept handle), so a rewritten pointer file is seen
    // at once; identical concurrent reads share one.
    let p = wholeReads.get(path);
    if (!p) {
      p = readWhole(path, abs).finally(() => wholeReads.delete(path));
      wholeReads.set(path, p);
    }
    return p;
  };

  return {
    label,
    where,
    local: true,

    readFile: readWholeShared,

    readRange(path, offset, length, transient = false) {
      const h = handles.get(path);
      const f = h?.file;
      // At once only from a file already open (so its path was checked when it was opened), and only while reads
      // are page-cache copies; a failure still rejects, as every read's does (ShardSource.readRange).
      if (!f || f.closed || !reads.sync()) return readLater(path, offset, length, transient);
      try {
        assertOpen();
        checkRange(tag, path, offset, length);
        if (offset + length > f.size) throw shorter(path, offset, length, f.size);
        touch(path, h!);
        f.users++;
        try {
          return readOnLoop(f, path, offset, length, transient);
        } finally {
          release(f);
        }
      } catch (err) {
        return Promise.reject(err);
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      const all = [...handles.values()];
      handles.clear();
      await Promise.all(all.map((h) => retire(h.opening)));
    },

    stats: () => ({ opens, openFiles, maxOpenFiles }),
  };

  /** A range read that has to wait: the file is not open yet, a pointer file is read whole, or reads go to the pool. */
  async function readLater(path: string, offset: number, length: number, transient: boolean): Promise<Uint8Array> {
    assertOpen();
    const abs = absolute(path);
    checkRange(tag, path, offset, length);
    if (isMutablePath(path)) {
      // A pointer file may be replaced by rename at any moment: read the current one, never a kept handle.
      const whole = await readWholeShared(path);
      if (!whole) throw new ArtefactError(where(path), 'not found');
      if (offset + length > whole.byteLength) throw shorter(path, offset, length, whole.byteLength);
      return whole.slice(offset, offset + length);
    }
    const f = await acquire(path, abs);
    try {
      if (offset + length > f.size) throw shorter(path, offset, length, f.size);
      if (reads.sync()) return readOnLoop(f, path, offset, length, transient);
      const out = bytesFor(length, transient);
      for (let done = 0; done < length; ) {
        const bytesRead = await readAt(f.fh.fd, out, done, length - done, offset + done);
        if (bytesRead === 0) throw shorter(path, offset, length, offset + done);
        done += bytesRead;
      }
      return out;
    } finally {
      release(f);
    }
  }

  /** The range read on the event loop, each read timed for the read policy. */
  function readOnLoop(f: OpenFile, path: string, offset: number, length: number, transient: boolean): Uint8Array {
    const out = bytesFor(length, transient);
    for (let done = 0; done < length; ) {
      const t0 = performance.now();
      const bytesRead = readSync(f.fh.fd, out, done, length - done, offset + done);
      reads.took(performance.now() - t0);
      if (bytesRead === 0) throw shorter(path, offset, length, offset + done);
      done += bytesRead;
    }
    return out;
  }

  // Shorter than the directory or index entry that points into it: a truncated file.
  function shorter(path: string, offset: number, length: number, size: number): Error {
    return new ArtefactError(where(path), `range ${offset}+${length} is past the end of the file (${size} bytes)`);
  }
}

/** Where a range is read into: pooled only for a `transient` caller (see ShardSource.readRange), so a cached bucket never pins a slab. */
const bytesFor = (length: number, transient: boolean): Uint8Array => (transient ? transientBytes(length) : new Uint8Array(length));

/** A positioned read on the thread pool (the callback form: no FileHandle promise machinery per read). */
function readAt(fd: number, into: Uint8Array, at: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, into, at, length, position, (err, n) => (err ? reject(err) : resolve(n))));
}

/**
 * When to read synchronously. A page-cache hit is a copy of a few microseconds, far cheaper than a thread-pool
 * round trip, so it is made on the event loop; a read that reaches the disk (~150 µs on this project's machines,
 * whose page cache is reclaimed within minutes) would stall every request behind it, so while many recent
 * synchronous reads were slow, reads go to the pool, where they overlap with each other and with other requests'
 * work. Measured on the full-size dist: sync 12,400 entity lookups/s at p99 20 ms, pool 15,600 at p99 7.6 ms; on a
 * cached dist, sync 830 batches/s against 310 through the pool. The signal is the share of slow reads, not their
 * mean: on a busy machine a read is sometimes descheduled for milliseconds, and one such outlier in a mean kept
 * a whole batch load on the pool for thousands of reads. While on the pool, one read in PROBE_EVERY is still
 * made synchronously, to notice when the cache is warm again.
 */
export function createReadPolicy(mode: 'sync' | 'pool' | 'adaptive'): { sync(): boolean; took(ms: number): void } {
  if (mode === 'sync') return { sync: () => true, took: () => {} };
  if (mode === 'pool') return { sync: () => false, took: () => {} };
  const SLOW_READ_MS = 0.1;
  const POOL_ABOVE_SHARE = 0.25;
  const PROBE_EVERY = 64;
  let slowShare = 0; // moving share of synchronous reads slower than SLOW_READ_MS
  let n = 0;
  return {
    sync: () => slowShare < POOL_ABOVE_SHARE || ++n % PROBE_EVERY === 0,
    took: (ms) => {
      slowShare += ((ms > SLOW_READ_MS ? 1 : 0) - slowShare) * 0.05;
    },
  };
}
