// Reads one bucketed family (common/bucket-format.ts) through a ShardSource: the directory once, then one bucket
// per lookup with one ranged read. Buckets are kept as their checksum-verified bytes in a shared LRU and a lookup
// walks those bytes, decoding only the value it returns.
import { fnv1a32Bytes } from '../../common/hash.ts';
import { ApiError } from '../api-error.ts';
import { DIRECTORY_ENTRY_BYTES, findInBucket, readDirectoryEntry, valueInBucket, type BucketFamily } from '../../common/bucket-format.ts';
import { bucketOf } from '../../common/hash.ts';
import type { BucketFamilyReader, ShardSource } from '../interfaces.ts';
import { LruCache } from './lru-cache.ts';

/**
 * Cache of verified bucket bytes, keyed by `<pack path>#<bucket>`; pack names are content-addressed, so one cache
 * may serve every family and release. Bytes live outside the JS heap and are one object per bucket, so a full
 * cache adds next to nothing to what the GC marks.
 */
export type BucketCache = LruCache<string, Uint8Array>;

/** The runtime's shared bucket cache (runtime/release/catalog.ts). */
export const DEFAULT_BUCKET_CACHE_BYTES = 64 * 1024 * 1024;

/** What one retained bucket costs beyond its bytes: the Map slot, the key string, the Uint8Array and its ArrayBuffer. */
const SLOT_OVERHEAD_BYTES = 256;

/** Options of openBucketFamily. */
export interface BucketFamilyReaderOptions {
  /** Where verified buckets are kept (weight = bytes + a slot overhead). Default: a private cache of 8 MiB. */
  cache?: BucketCache;
}

export const createBucketCache = (maxBytes: number): BucketCache => new LruCache<string, Uint8Array>({ maxWeight: maxBytes });

export function openBucketFamily(source: ShardSource, family: BucketFamily, opts: BucketFamilyReaderOptions = {}): BucketFamilyReader {
  const cache = opts.cache ?? createBucketCache(8 * 1024 * 1024);
  const where = `${source.label} ${family.pack}`;
  let directory: Promise<Uint8Array> | null = null;

  // Loaded once and shared by concurrent first lookups; a failed load is forgotten so the next lookup retries.
  const loadDirectory = (): Promise<Uint8Array> => {
    directory ??= (async () => {
      const bytes = await source.readFile(family.directory);
      if (!bytes) throw new Error(`[bucket-reader] ${source.label} ${family.directory}: directory missing`);
      if (bytes.byteLength !== family.buckets * DIRECTORY_ENTRY_BYTES) {
        throw new Error(
          `[bucket-reader] ${source.label} ${family.directory}: ${bytes.byteLength} bytes, expected ${family.buckets} entries of ${DIRECTORY_ENTRY_BYTES}`,
        );
      }
      return bytes;
    })().catch((err) => {
      directory = null;
      throw err;
    });
    return directory;
  };

  // The client learns only that the answer cannot be trusted; which file and why goes nowhere near a response.
  const corrupt = (what: string) => {
    void what;
    return new ApiError(503, 'artefact_corrupt', 'A compiled artefact this answer needs failed its integrity check.');
  };

  const loadBucket = async (bucket: number): Promise<Uint8Array | null> => {
    const dir = await loadDirectory();
    const { offset, length, checksum } = readDirectoryEntry(dir, bucket);
    if (length === 0) return null;
    return cache.getOrLoad(
      `${family.pack}#${bucket}`,
      (bytes) => bytes.byteLength + SLOT_OVERHEAD_BYTES,
      async () => {
        // Bytes that fail their checksum (or a directory that points past the pack) are never kept nor walked:
        // the request gets 503 artefact_corrupt until the dist is repaired. Cached bytes were verified once.
        let bytes: Uint8Array;
        try {
          bytes = await source.readRange(family.pack, offset, length);
        } catch (err) {
          throw corrupt(`bucket ${bucket} unreadable (${(err as Error).message})`);
        }
        if (fnv1a32Bytes(bytes) !== checksum) throw corrupt(`bucket ${bucket} fails its checksum`);
        // A view into a larger buffer (a source that cached the whole file) would keep all of it alive under
        // this bucket's weight; own copy keeps the cache bound a bound on memory.
        return bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
      },
    );
  };

  // Bytes that passed their checksum but are not a bucket mean a broken compile: the same 503 as corrupt bytes.
  const walk = <V>(bucket: number, read: () => V): V => {
    try {
      return read();
    } catch (err) {
      throw corrupt(`bucket ${bucket} is not a bucket (${(err as Error).message})`);
    }
  };

  return {
    async get<V = unknown>(key: string): Promise<V | undefined> {
      if (family.addressing !== 'fnv1a32-top-bits') throw new Error(`[bucket-reader] ${where}: get() on an ${family.addressing} family`);
      if (family.entries === 0) return undefined;
      const bucket = bucketOf(key, family.buckets);
      const bytes = await loadBucket(bucket);
      return bytes ? walk(bucket, () => findInBucket<V>(bytes, key)) : undefined;
    },

    async at<V = unknown>(ordinal: number): Promise<V | undefined> {
      if (family.addressing !== 'ordinal') throw new Error(`[bucket-reader] ${where}: at() on a ${family.addressing} family`);
      if (!Number.isSafeInteger(ordinal) || ordinal < 0 || ordinal >= family.entries) return undefined;
      const per = family.per_bucket ?? 0;
      if (per < 1) throw new Error(`[bucket-reader] ${where}: ordinal family without per_bucket`);
      const bucket = Math.floor(ordinal / per);
      const bytes = await loadBucket(bucket);
      return bytes ? walk(bucket, () => valueInBucket<V>(bytes, ordinal % per)) : undefined;
    },
  };
}
