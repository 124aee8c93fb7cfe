// Reads one bucketed family (common/bucket-format.ts) through a ShardSource: the directory once, then one bucket
// per lookup with one ranged read, decoded buckets kept in a shared LRU.
import { fnv1a32Bytes } from '../../common/hash.ts';
import { ApiError } from '../api-error.ts';
import { decodeMsgpack, DIRECTORY_ENTRY_BYTES, findInBucket, readDirectoryEntry, type BucketFamily } from '../../common/bucket-format.ts';
import { bucketOf } from '../../common/hash.ts';
import type { BucketFamilyReader, ShardSource } from '../interfaces.ts';
import { LruCache } from './lru-cache.ts';

/** Cache of decoded buckets, keyed by `<pack path>#<bucket>`; pack names are content-addressed, so one cache may serve every family and release. */
/** Rough ratio of a decoded bucket's heap size to its encoded size (measured ~3-5× for short-string buckets). */
const DECODED_WEIGHT = 4;

export type BucketCache = LruCache<string, unknown[]>;

/** Options of openBucketFamily. */
export interface BucketFamilyReaderOptions {
  /** Where decoded buckets are kept (weight = encoded bytes × DECODED_WEIGHT). Default: a private cache of 8 MiB. */
  cache?: BucketCache;
}

export const createBucketCache = (maxBytes: number): BucketCache => new LruCache<string, unknown[]>({ maxWeight: maxBytes });

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

  const loadBucket = async (bucket: number): Promise<unknown[] | null> => {
    const dir = await loadDirectory();
    const { offset, length, checksum } = readDirectoryEntry(dir, bucket);
    if (length === 0) return null;
    return cache.getOrLoad(
      `${family.pack}#${bucket}`,
      // Decoded buckets (JS arrays and strings) take several times their msgpack bytes; weigh them so, so the
      // cache bound is a bound on memory, not on wire bytes.
      () => length * DECODED_WEIGHT,
      async () => {
        // Bytes that fail their checksum (or a directory that points past the pack) are never decoded into an
        // answer: the request gets 503 artefact_corrupt until the dist is repaired.
        let bytes: Uint8Array;
        try {
          bytes = await source.readRange(family.pack, offset, length);
        } catch (err) {
          throw corrupt(`bucket ${bucket} unreadable (${(err as Error).message})`);
        }
        if (fnv1a32Bytes(bytes) !== checksum) throw corrupt(`bucket ${bucket} fails its checksum`);
        let decoded: unknown;
        try {
          decoded = decodeMsgpack(bytes);
        } catch (err) {
          throw corrupt(`bucket ${bucket} undecodable (${(err as Error).message})`);
        }
        if (!Array.isArray(decoded)) throw corrupt(`bucket ${bucket} is not an array`);
        return decoded;
      },
    );
  };

  return {
    async get<V = unknown>(key: string): Promise<V | undefined> {
      if (family.addressing !== 'fnv1a32-top-bits') throw new Error(`[bucket-reader] ${where}: get() on an ${family.addressing} family`);
      if (family.entries === 0) return undefined;
      const flat = await loadBucket(bucketOf(key, family.buckets));
      return flat ? findInBucket<V>(flat, key) : undefined;
    },

    async at<V = unknown>(ordinal: number): Promise<V | undefined> {
      if (family.addressing !== 'ordinal') throw new Error(`[bucket-reader] ${where}: at() on a ${family.addressing} family`);
      if (!Number.isSafeInteger(ordinal) || ordinal < 0 || ordinal >= family.entries) return undefined;
      const per = family.per_bucket ?? 0;
      if (per < 1) throw new Error(`[bucket-reader] ${where}: ordinal family without per_bucket`);
      const values = await loadBucket(Math.floor(ordinal / per));
      return values?.[ordinal % per] as V | undefined;
    },
  };
}
