// What both sources over a network (HTTP, R2) do in front of their loads: refuse bad paths and ranges, keep whole
// files and ranges in one LRU by weight, share a load while it is in flight, and answer a range of a file already
// held whole from it. Each source says only how a file, a range and an empty range are loaded from its origin.
import type { ShardSource } from '../interfaces.ts';
import type { LruCache } from '../release/lru-cache.ts';
import { checkRange, checkSourcePath, isMutablePath } from './source-path.ts';

/** How one source loads from its origin. */
export interface OriginLoads {
  /** The source's tag in messages (`http-source`, `r2-source`). */
  tag: string;
  /** The whole file, or null when the origin says it does not exist. */
  loadFile(path: string): Promise<Uint8Array | null>;
  /** Exactly `length` bytes at `offset` (length > 0), or a rejection naming why not. */
  loadRange(path: string, offset: number, length: number): Promise<Uint8Array>;
  /** A zero-length range: only whether the file exists and reaches `offset`. */
  loadEmptyRange(path: string, offset: number): Promise<Uint8Array>;
  /** The error for a range past the end of a file of `size` bytes. */
  pastEnd(path: string, offset: number, length: number, size: number): Error;
  assertOpen(): void;
  /** Drops a shared cache's copies of `path` (the whole file, and `range`), when the source keeps one beyond memory. */
  forget?(path: string, range?: { offset: number; length: number }): void;
}

/** A missing file inside the cache, so concurrent readers of it share one load. */
const MISSING = new Uint8Array(0);
// Pointer files and missing files are shared while in flight but never kept: both may change at any moment.
const weightOf = (path: string) => (bytes: Uint8Array) => (bytes === MISSING || isMutablePath(path) ? Infinity : bytes.byteLength);
const NOT_RETAINED = () => Infinity;

/** The cache key a whole file is held under, for a source that learns a whole file from a range request. */
export const wholeFileKey = (path: string): string => `f ${path}`;

const rangeKey = (path: string, offset: number, length: number): string => `r ${path} ${offset} ${length}`;

export function cachedReads(cache: LruCache<string, Uint8Array>, o: OriginLoads): Pick<ShardSource, 'readFile' | 'readRange' | 'forget'> {
  return {
    forget(path, range) {
      cache.delete(wholeFileKey(path));
      if (range) cache.delete(rangeKey(path, range.offset, range.length));
      o.forget?.(path, range);
    },
    async readFile(path) {
      o.assertOpen();
      checkSourcePath(o.tag, path);
      const bytes = await cache.getOrLoad(wholeFileKey(path), weightOf(path), async () => (await o.loadFile(path)) ?? MISSING);
      return bytes === MISSING ? null : bytes;
    },
    async readRange(path, offset, length, transient = false) {
      o.assertOpen();
      checkSourcePath(o.tag, path);
      checkRange(o.tag, path, offset, length);
      if (length === 0) return o.loadEmptyRange(path, offset);
      if (!isMutablePath(path)) {
        const whole = cache.get(wholeFileKey(path));
        if (whole && whole !== MISSING) {
          if (offset + length > whole.byteLength) throw o.pastEnd(path, offset, length, whole.byteLength);
          return whole.subarray(offset, offset + length);
        }
      }
      // A transient range (a shard) is kept, verified, by its caller (release/shard-cache.ts): shared while in
      // flight, but not cached here a second time.
      return cache.getOrLoad(rangeKey(path, offset, length), transient ? NOT_RETAINED : weightOf(path), () => o.loadRange(path, offset, length));
    },
  };
}
