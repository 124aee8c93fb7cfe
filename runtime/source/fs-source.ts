// ShardSource driver for a local dist/ folder: positioned reads through a small pool of open file handles.
import { read, readSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { resolve, sep } from 'node:path';
import { NOT_AT_HAND, type ShardSource } from '../interfaces.ts';
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
export interface FsSourceStats {
  /** Files opened so far (handle opens plus whole-file reads). */
  opens: number;
  /** Handles currently held open. */
  openFiles: number;
  maxOpenFiles: number;
}

export interface FsShardSource extends ShardSource {
  /** A local disk always offers it (see ShardSource.readRangeNow). */
  readRangeNow(path: string, offset: number, length: number, transient?: boolean): Uint8Array | typeof NOT_AT_HAND;
  stats(): FsSourceStats;
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
  const handles = new Map<string, Promise<OpenFile>>();
  // The same handles once open, for reads that need not wait (readRangeNow); an entry leaves when its handle is evicted.
  const openNow = new Map<string, OpenFile>();
  const wholeReads = new Map<string, Promise<Uint8Array | null>>();
  let opens = 0;
  let openFiles = 0;
  let closed = false;

  const inside = root.endsWith(sep) ? root : root + sep;
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
      const [path, p] = handles.entries().next().value as [string, Promise<OpenFile>];
      handles.delete(path);
      openNow.delete(path);
      retire(p);
    }
  };

  const acquire = async (path: string, abs: string): Promise<OpenFile> => {
    for (;;) {
      let p = handles.get(path);
      if (p) {
        handles.delete(path);
        handles.set(path, p);
      } else {
        opens++;
        p = (async () => {
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
        const mine = p;
        handles.set(path, mine);
        mine.then(
          (f) => {
            if (handles.get(path) === mine) openNow.set(path, f);
          },
          () => {
            if (handles.get(path) === mine) handles.delete(path);
          },
        );
        evictOldest();
      }
      let f: OpenFile;
      try {
        f = await p;
      } catch (err) {
        if (isNotFound(err)) throw new Error(`[${tag}] ${path}: not found`);
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

    readFile: readWholeShared,

    async readRange(path, offset, length, transient = false) {
      assertOpen();
      const abs = absolute(path);
      checkRange(tag, path, offset, length);
      if (isMutablePath(path)) {
        // A pointer file may be replaced by rename at any moment: read the current one, never a kept handle.
        const whole = await readWholeShared(path);
        if (!whole) throw new Error(`[${tag}] ${path}: not found`);
        if (offset + length > whole.byteLength) throw shorter(path, offset, length, whole.byteLength);
        return whole.slice(offset, offset + length);
      }
      const f = await acquire(path, abs);
      try {
        if (offset + length > f.size) throw shorter(path, offset, length, f.size);
        // Short reads come from Node's shared buffer pool: a fresh ArrayBuffer per shard (100 per batch) was
        // allocation and external-memory accounting that drove extra garbage collections. Only bytes the caller
        // drops after one answer may share a slab (see ShardSource.readRange), so a cached bucket never pins one.
        const out = transient ? Buffer.allocUnsafe(length) : new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const bytesRead = reads.sync() ? timedReadSync(f, out, done, length - done, offset + done) : await readAt(f.fh.fd, out, done, length - done, offset + done);
          if (bytesRead === 0) throw shorter(path, offset, length, offset + done);
          done += bytesRead;
        }
        return out;
      } finally {
        release(f);
      }
    },

    readRangeNow(path, offset, length, transient = false) {
      assertOpen();
      const f = openNow.get(path);
      // Only a file already open (so its path was checked when it was opened) and only while reads are copies.
      if (f === undefined || f.closed || !reads.sync()) return NOT_AT_HAND;
      checkRange(tag, path, offset, length);
      if (offset + length > f.size) throw shorter(path, offset, length, f.size);
      const p = handles.get(path)!; // recency, as acquire() keeps it
      handles.delete(path);
      handles.set(path, p);
      const out = transient ? Buffer.allocUnsafe(length) : new Uint8Array(length);
      f.users++;
      try {
        let done = 0;
        while (done < length) {
          const bytesRead = timedReadSync(f, out, done, length - done, offset + done);
          if (bytesRead === 0) throw shorter(path, offset, length, offset + done);
          done += bytesRead;
        }
      } finally {
        release(f);
      }
      return out;
    },

    async close() {
      if (closed) return;
      closed = true;
      const all = [...handles.values()];
      handles.clear();
      openNow.clear();
      await Promise.all(all.map(retire));
    },

    stats: () => ({ opens, openFiles, maxOpenFiles }),
  };

  function timedReadSync(f: OpenFile, into: Uint8Array, at: number, length: number, position: number): number {
    const t0 = performance.now();
    const n = readSync(f.fh.fd, into, at, length, position);
    reads.took(performance.now() - t0);
    return n;
  }

  function shorter(path: string, offset: number, length: number, size: number): Error {
    return new Error(`[${tag}] ${path}: range ${offset}+${length} is past the end of the file (${size} bytes)`);
  }
}

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
