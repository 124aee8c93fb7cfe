// ShardSource driver for a dist held in a Cloudflare R2 bucket, read through the Worker's bucket binding: whole
// files by `get`, pieces by ranged `get`, identical in-flight reads shared and read bytes kept in a bounded LRU per
// isolate, as the http driver keeps them. A missing object or one shorter than asked throws ArtefactError (a damaged
// bucket: 503 artefact_corrupt); a bucket that fails to answer throws UpstreamError. The release layer checks every
// byte read here against the manifests exactly as it checks a local dist's.
// Given the Cache API (the Worker's `caches.default`), a piece of an immutable file (anything under a stamp) is
// also kept there as a whole `200` object, so another isolate in the same data centre, or this one once its memory
// has let the piece go, reads it without an R2 operation. The cache cannot keep `206` answers, which is why each
// piece is its own object. A cached copy gets no trust of its own: it passes the same checks above this source.
import type { ShardSource } from '../interfaces.ts';
import { ArtefactError, UpstreamError } from '../read-errors.ts';
import { LruCache } from '../release/lru-cache.ts';
import { cachedReads } from './cached-reads.ts';
import { isMutablePath } from './source-path.ts';

/** The part of an R2 object the driver reads (workerd's R2ObjectBody). */
interface R2ObjectLike {
  readonly size: number;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** The part of an R2 bucket binding the driver uses: the Workers runtime's, or miniflare's proxy of it from Node. */
export interface R2BucketLike {
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<R2ObjectLike | null>;
  head(key: string): Promise<{ readonly size: number } | null>;
}

/** The part of the Cache API the driver uses (workerd's `Cache`: `caches.default`). */
interface CacheLike {
  match(key: string): Promise<Response | undefined>;
  put(key: string, response: Response): Promise<void>;
  delete(key: string): Promise<boolean>;
}

/**
 * The Cache API key of a piece of object `key` in bucket `name`: `range` is `''` for the whole object, else
 * `?bytes=<first>-<last>`. A URL is what the Cache API keys by; this host is never fetched. The bucket's name is in
 * it, so two buckets' pieces never meet, and the object's key names a stamp, under which nothing is ever rewritten.
 */
export const pieceCacheKey = (name: string, key: string, range: string): string =>
  `https://r2-pieces.invalid/${encodeURIComponent(name)}/${key.split('/').map(encodeURIComponent).join('/')}${range}`;

/**
 * How long a piece stays in the Cache API. Pieces never change, so the bound is not for freshness; a copy a check
 * refused is dropped at once (forgetShared).
 */
const CACHE_CONTROL = 'public, max-age=86400';

/** Options of createR2Source. */
export interface R2SourceOptions {
  bucket: R2BucketLike;
  /** The bucket's name as logs name it (`r2:<name>/<key>`). */
  name: string;
  /** Bytes of read objects and ranges kept (per isolate). Default 32 MiB: a Worker isolate has 128 MB in all. */
  cacheBytes?: number;
  /** Object keys are `<prefix><path>`; default none (the bucket holds the dist at its root). */
  prefix?: string;
  /** The Cache API to keep immutable pieces in across isolates; default none (the isolate's memory only). */
  cache?: CacheLike | null;
}

interface R2SourceStats {
  /** Bucket operations (`get` and `head`). */
  reads: number;
  /** Pieces answered from the Cache API, and pieces stored into it. */
  cacheHits: number;
  cachePuts: number;
  /** Bytes kept in the isolate's memory, and the bound. */
  cachedBytes: number;
  cacheBytes: number;
}

export interface R2ShardSource extends ShardSource {
  /** Bucket reads so far (`get` and `head` calls): what a lookup costs in R2 operations. */
  stats(): R2SourceStats;
}

export function createR2Source(opts: R2SourceOptions): R2ShardSource {
  const tag = 'r2-source';
  const prefix = opts.prefix ?? '';
  const label = `r2:${opts.name}/${prefix}`;
  const cacheBytes = opts.cacheBytes ?? 32 * 1024 * 1024;
  const cache = new LruCache<string, Uint8Array>({ maxWeight: cacheBytes });
  let reads = 0;
  let cacheHits = 0;
  let cachePuts = 0;
  let closed = false;
  const shared = opts.cache ?? null;
  // Cache API keys whose copy a check refused: the next read of each skips the cache, reads R2 and stores what R2
  // holds over the bad copy. The delete that forget() also starts may not finish once the Worker has answered.
  const distrusted = new Set<string>();
  const cacheKey = (path: string, range: string): string => pieceCacheKey(opts.name, prefix + path, range);
  const where = (path: string): string => `${label}${path}`;
  const assertOpen = () => {
    if (closed) throw new Error(`[${tag}] ${label} is closed`);
  };

  /** `op` on the bucket; `operation` false for reading the body of a get already counted. */
  async function call<T>(path: string, what: string, op: () => Promise<T>, operation = true): Promise<T> {
    if (closed) throw new Error(`[${tag}] ${where(path)}: source closed`);
    if (operation) reads++;
    try {
      return await op();
    } catch (e) {
      throw new UpstreamError(`${what} ${where(path)}`, (e as Error)?.message ?? String(e));
    }
  }

  const pastEnd = (path: string, offset: number, length: number, size: number): ArtefactError =>
    new ArtefactError(where(path), `range ${offset}-${offset + length - 1} is past the end of the file (${size} bytes)`);

  /**
   * The piece from the Cache API when it is there, else loaded from R2 and stored there for the next isolate. Only
   * immutable files' pieces; the store is awaited (a Worker may stop running work not awaited once it has answered)
   * and its failure only costs a later R2 read.
   */
  async function throughCache(path: string, range: string, load: () => Promise<Uint8Array | null>): Promise<Uint8Array | null> {
    if (shared === null || isMutablePath(path)) return load();
    const key = cacheKey(path, range);
    const hit = distrusted.delete(key) ? undefined : await shared.match(key).catch(() => undefined);
    if (hit?.status === 200) {
      const bytes = await hit.arrayBuffer().then((b) => new Uint8Array(b), () => null);
      if (bytes !== null) {
        cacheHits++;
        return bytes;
      }
    }
    const bytes = await load();
    if (bytes !== null && !closed) {
      const stored = new Response(bytes.slice(), { status: 200, headers: { 'cache-control': CACHE_CONTROL, 'content-type': 'application/octet-stream' } });
      await shared.put(key, stored).then(() => void cachePuts++, () => {});
    }
    return bytes;
  }

  async function loadFile(path: string): Promise<Uint8Array | null> {
    return throughCache(path, '', () => loadFileFromBucket(path));
  }

  const rangeOf = (offset: number, length: number): string => `?bytes=${offset}-${offset + length - 1}`;

  async function loadRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    return (await throughCache(path, rangeOf(offset, length), () => loadRangeFromBucket(path, offset, length)))!;
  }

  /** A check refused bytes of `path`: its copies in the Cache API are not read again (see `distrusted`). */
  function forgetShared(path: string, range?: { offset: number; length: number }): void {
    if (shared === null || isMutablePath(path)) return;
    // Bounded: more refused pieces than this in one isolate means a damaged dist, not a bad cached copy.
    if (distrusted.size >= 1024) distrusted.clear();
    for (const key of [cacheKey(path, ''), ...(range ? [cacheKey(path, rangeOf(range.offset, range.length))] : [])]) {
      distrusted.add(key);
      shared.delete(key).catch(() => false);
    }
  }

  async function loadFileFromBucket(path: string): Promise<Uint8Array | null> {
    const obj = await call(path, 'get', () => opts.bucket.get(prefix + path));
    if (!obj) return null;
    const bytes = new Uint8Array(await call(path, 'get', () => obj.arrayBuffer(), false));
    if (bytes.byteLength !== obj.size) throw new UpstreamError(`get ${where(path)}`, `body has ${bytes.byteLength} bytes, the object ${obj.size}`);
    return bytes;
  }

  async function loadRangeFromBucket(path: string, offset: number, length: number): Promise<Uint8Array> {
    // The size first when the range may run past the end: R2 refuses such a range with an error that does not say
    // whether the object is missing or short.
    let obj: R2ObjectLike | null;
    try {
      obj = await call(path, 'get', () => opts.bucket.get(prefix + path, { range: { offset, length } }));
    } catch (e) {
      const head = await call(path, 'head', () => opts.bucket.head(prefix + path));
      if (!head) throw new ArtefactError(where(path), 'not found');
      if (offset + length > head.size) throw pastEnd(path, offset, length, head.size);
      throw e;
    }
    if (!obj) throw new ArtefactError(where(path), 'not found');
    if (offset + length > obj.size) throw pastEnd(path, offset, length, obj.size);
    const bytes = new Uint8Array(await call(path, 'get', () => obj.arrayBuffer(), false));
    if (bytes.byteLength !== length) throw new UpstreamError(`get ${where(path)}`, `body has ${bytes.byteLength} bytes, expected ${length}`);
    return bytes;
  }

  async function loadEmptyRange(path: string, offset: number): Promise<Uint8Array> {
    const head = await call(path, 'head', () => opts.bucket.head(prefix + path));
    if (!head) throw new ArtefactError(where(path), 'not found');
    if (offset > head.size) throw pastEnd(path, offset, 1, head.size);
    return new Uint8Array(0);
  }

  return {
    label,
    where,
    ...cachedReads(cache, { tag, loadFile, loadRange, loadEmptyRange, pastEnd, assertOpen, forget: forgetShared }),
    async ping() {
      assertOpen();
      await call('index.json', 'head', () => opts.bucket.head(`${prefix}index.json`));
    },
    async close() {
      closed = true;
      cache.clear();
    },
    stats: () => ({ reads, cacheHits, cachePuts, cachedBytes: cache.weight, cacheBytes }),
  };
}
