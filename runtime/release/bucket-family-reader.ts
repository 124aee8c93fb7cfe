// Reads one bucketed family (common/bucket-format.ts) through a ShardSource: the directory once (checked whole
// against its sha256 in the release's manifest), then one bucket per lookup with one ranged read (checked against
// the directory's CRC-32). Buckets are kept as their checksum-verified bytes in a shared LRU and a lookup
// walks those bytes, decoding only the value it returns; a bucket looked into again gets an entry index, so hot
// buckets (search tokens, search docs) are binary-searched or indexed instead of walked.
import { sha256Hex } from '#platform/crypto';
import { checksum32 } from '../../common/checksum.ts';
import { ArtefactError, fileOf, readFailure } from '../read-errors.ts';
import {
  bucketEntries,
  DIRECTORY_ENTRY_BYTES,
  findInBucket,
  indexBucket,
  locateValue,
  readDirectoryEntry,
  valueInBucket,
  type BucketFamily,
  type BucketIndex,
} from '../../common/bucket-format.ts';
import { bucketOf } from '../../common/hash.ts';
import type { BucketFamilyReader, MaybePromise, ShardSource } from '../interfaces.ts';
import { LruCache } from './lru-cache.ts';
import { defaultCacheShares } from './cache-budget.ts';
import { packNumber } from './pack-numbers.ts';

/** One cached bucket: its verified bytes and, once it is looked into a second time, its entry index. */
export interface CachedBucket {
  bytes: Uint8Array;
  index: BucketIndex | null;
  lookups: number;
}

/**
 * Cache of verified buckets, keyed by bucketCacheKey (pack, bucket); pack names are content-addressed, so one cache
 * may serve every family and release. Bytes and indexes live outside the JS heap and are a few objects per bucket,
 * so a full cache adds next to nothing to what the GC marks.
 */
export type BucketCache = LruCache<number, CachedBucket>;

/** Buckets a family may have for bucketCacheKey (the compiler writes at most 2^24). */
const MAX_BUCKETS = 2 ** 24;
/** The cache key of one bucket of a pack. */
export const bucketCacheKey = (pack: string, bucket: number): number => packNumber(pack) * MAX_BUCKETS + bucket;

/**
 * The runtime's shared bucket cache (runtime/release/catalog.ts) by default: its share of the default cache budget
 * (cache-budget.ts). At full size the entity index (100 MiB) and resolve (394 MiB) families dwarf any affordable
 * cache, so for them a hit saves only a page-cached read and a checksum, whatever the size; the cache earns its
 * keep on the small hot families (all search tokens are 4 MiB, the popular search docs, change pages). Measured on
 * the full-size dist: 32, 64 and 96 MiB served within noise of each other, and RSS after the benchmark's load grew
 * with the size (259 / 278 / 279 MiB).
 */
export const DEFAULT_BUCKET_CACHE_BYTES = defaultCacheShares().buckets;

/** What one cached bucket costs beyond its bytes and index: the Map entry, the LRU slot, this record and the typed arrays' objects. */
const SLOT_OVERHEAD_BYTES = 320;

/** Options of openBucketFamily. */
export interface BucketFamilyReaderOptions {
  /** Where verified buckets are kept (weight = bytes + the index they may get + a slot overhead). Default: a private cache of 8 MiB. */
  cache?: BucketCache;
  /**
   * The directory's sha256 (hex) as the release's manifest lists it: the directory is refused unless its bytes hash
   * to it. Default: none, and only its length is checked (for families read outside a release, e.g. in tests).
   */
  directorySha256?: string;
}

export const createBucketCache = (maxBytes: number): BucketCache => new LruCache<number, CachedBucket>({ maxWeight: maxBytes });

export function openBucketFamily(source: ShardSource, family: BucketFamily, opts: BucketFamilyReaderOptions = {}): BucketFamilyReader {
  const cache = opts.cache ?? createBucketCache(8 * 1024 * 1024);
  const where = `${source.label} ${family.pack}`;
  if (!(family.buckets <= MAX_BUCKETS)) throw new Error(`[bucket-reader] ${where}: ${family.buckets} buckets, at most ${MAX_BUCKETS} supported`);
  const keyBase = bucketCacheKey(family.pack, 0);
  const dirFile = fileOf(source, family.directory);
  const packFile = fileOf(source, family.pack);
  let directory: Promise<Uint8Array> | null = null;

  // Loaded once and shared by concurrent first lookups; a failed load is forgotten so the next lookup retries.
  // Read once per process, so hashing it whole costs nothing per lookup; a zeroed or altered entry would otherwise
  // turn a bucket into an empty one, and a lookup into a wrong "not found".
  const loadDirectory = (): Promise<Uint8Array> => {
    directory ??= (async () => {
      let bytes: Uint8Array | null;
      try {
        bytes = await source.readFile(family.directory);
      } catch (err) {
        throw readFailure(err, dirFile);
      }
      if (!bytes) throw new ArtefactError(dirFile, 'not found');
      if (bytes.byteLength !== family.buckets * DIRECTORY_ENTRY_BYTES) {
        throw new ArtefactError(dirFile, `${bytes.byteLength} bytes, expected ${family.buckets} entries of ${DIRECTORY_ENTRY_BYTES}`);
      }
      if (opts.directorySha256 !== undefined) {
        const actual = sha256Hex(bytes);
        if (actual !== opts.directorySha256) {
          source.forget?.(family.directory);
          throw new ArtefactError(dirFile, `sha256 ${actual} does not match the manifest (${opts.directorySha256})`);
        }
      }
      return bytes;
    })().catch((err) => {
      directory = null;
      throw err;
    });
    return directory;
  };

  // Which file and why goes to the operator's log (runtime/app.ts), nowhere near a response.
  const corrupt = (what: string) => new ArtefactError(packFile, what);

  const hashed = family.addressing === 'fnv1a32-top-bits';
  const loadBucket = async (bucket: number): Promise<CachedBucket | null> => {
    const dir = await loadDirectory();
    const { offset, length, checksum } = readDirectoryEntry(dir, bucket);
    if (length === 0) return null;
    return cache.getOrLoad(
      keyBase + bucket,
      // The index a bucket may get later is counted now, so the bound holds whichever buckets get one.
      (c) => c.bytes.byteLength + (bucketEntries(c.bytes, hashed) + 1) * (c.bytes.byteLength <= 0xffff ? 2 : 4) + SLOT_OVERHEAD_BYTES,
      async () => {
        // Bytes that fail their checksum (or a directory that points past the pack) are never kept nor walked:
        // the request gets 503 artefact_corrupt until the dist is repaired. Cached bytes were verified once.
        let bytes: Uint8Array;
        try {
          bytes = await source.readRange(family.pack, offset, length);
        } catch (err) {
          // Missing or truncated (ArtefactError), or the mirror's origin is down (UpstreamError, not damage).
          throw readFailure(err, packFile);
        }
        if (checksum32(bytes) !== checksum) {
          source.forget?.(family.pack, { offset, length });
          throw corrupt(`crc32 of bucket ${bucket} (bytes ${offset}+${length}) does not match its directory entry`);
        }
        // A view into a larger buffer (a source that cached the whole file) would keep all of it alive under
        // this bucket's weight; own copy keeps the cache bound a bound on memory. (A copy made by the
        // constructor: Buffer's slice() would be another view.)
        const own = bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
        try {
          bucketEntries(own, hashed);
        } catch (err) {
          throw corrupt(`bucket ${bucket} is not a bucket (${(err as Error).message})`);
        }
        return { bytes: own, index: null, lookups: 0 };
      },
    );
  };

  // Bytes that passed their checksum but are not a bucket mean a broken compile: the same 503 as corrupt bytes.
  const walk = <V>(bucket: number, c: CachedBucket, read: (bytes: Uint8Array, index: BucketIndex | undefined) => V): V => {
    try {
      // Most buckets of a large family are read once before they are evicted: a walk that stops at the key costs
      // less than indexing them. A second lookup shows the bucket is hot, and indexing pays off from then on.
      if (c.index === null && c.lookups++ > 0) c.index = indexBucket(c.bytes, hashed);
      return read(c.bytes, c.index ?? undefined);
    } catch (err) {
      throw corrupt(`bucket ${bucket} is not a bucket (${(err as Error).message})`);
    }
  };

  return {
    get<V = unknown>(key: string): MaybePromise<V | undefined> {
      if (family.addressing !== 'fnv1a32-top-bits') return Promise.reject(new Error(`[bucket-reader] ${where}: get() on an ${family.addressing} family`));
      if (family.entries === 0) return undefined;
      const bucket = bucketOf(key, family.buckets);
      const c = cache.get(keyBase + bucket);
      // A cached bucket answers at once: no promise hops through the loader for the common case.
      if (c === undefined) return loadBucket(bucket).then((l) => (l ? walk(bucket, l, (bytes, index) => findInBucket<V>(bytes, key, index)) : undefined));
      try {
        return walk(bucket, c, (bytes, index) => findInBucket<V>(bytes, key, index));
      } catch (err) {
        return Promise.reject(err);
      }
    },

    async at<V = unknown>(ordinal: number): Promise<V | undefined> {
      if (family.addressing !== 'ordinal') throw new Error(`[bucket-reader] ${where}: at() on a ${family.addressing} family`);
      if (!Number.isSafeInteger(ordinal) || ordinal < 0 || ordinal >= family.entries) return undefined;
      const per = family.per_bucket ?? 0;
      if (per < 1) throw new Error(`[bucket-reader] ${where}: ordinal family without per_bucket`);
      const bucket = Math.floor(ordinal / per);
      const c = cache.get(keyBase + bucket) ?? (await loadBucket(bucket));
      const v = c ? walk(bucket, c, (bytes, index) => valueInBucket<V>(bytes, ordinal % per, index)) : undefined;
      // Every ordinal below `entries` has a value: a gap means the directory or bucket disagrees with release.json.
      if (v === undefined) throw corrupt(`ordinal ${ordinal} of ${family.entries} is not in bucket ${bucket}`);
      return v;
    },

    valueBytes(ordinal: number): MaybePromise<Uint8Array> {
      const per = family.per_bucket ?? 0;
      if (family.addressing !== 'ordinal' || per < 1) return Promise.reject(new Error(`[bucket-reader] ${where}: valueBytes() on a family without ordinals`));
      if (!Number.isSafeInteger(ordinal) || ordinal < 0 || ordinal >= family.entries) return Promise.reject(new Error(`[bucket-reader] ${where}: no ordinal ${ordinal}`));
      const bucket = Math.floor(ordinal / per);
      const view = (c: CachedBucket | null): Uint8Array => {
        const at = c ? walk(bucket, c, (bytes, index) => locateValue(bytes, ordinal % per, index)) : null;
        if (!at) throw corrupt(`ordinal ${ordinal} of ${family.entries} is not in bucket ${bucket}`);
        return c!.bytes.subarray(at[0], at[1]);
      };
      const c = cache.get(keyBase + bucket);
      if (c === undefined) return loadBucket(bucket).then(view);
      try {
        return view(c);
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
}
