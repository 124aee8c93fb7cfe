// ShardSource driver for a dist held in a Cloudflare R2 bucket, read through the Worker's bucket binding: whole
// files by `get`, pieces by ranged `get`, identical in-flight reads shared and read bytes kept in a bounded LRU per
// isolate, as the http driver keeps them. A missing object or one shorter than asked throws ArtefactError (a damaged
// bucket: 503 artefact_corrupt); a bucket that fails to answer throws UpstreamError. The release layer checks every
// byte read here against the manifests exactly as it checks a local dist's.
import type { ShardSource } from '../interfaces.ts';
import { ArtefactError, UpstreamError } from '../read-errors.ts';
import { LruCache } from '../release/lru-cache.ts';
import { cachedReads } from './cached-reads.ts';

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

/** Options of createR2Source. */
export interface R2SourceOptions {
  bucket: R2BucketLike;
  /** The bucket's name as logs name it (`r2:<name>/<key>`). */
  name: string;
  /** Bytes of read objects and ranges kept (per isolate). Default 32 MiB: a Worker isolate has 128 MB in all. */
  cacheBytes?: number;
  /** Object keys are `<prefix><path>`; default none (the bucket holds the dist at its root). */
  prefix?: string;
}

export interface R2ShardSource extends ShardSource {
  /** Bucket reads so far (`get` and `head` calls): what a lookup costs in R2 operations. */
  stats(): { reads: number; cachedBytes: number; cacheBytes: number };
}

export function createR2Source(opts: R2SourceOptions): R2ShardSource {
  const tag = 'r2-source';
  const prefix = opts.prefix ?? '';
  const label = `r2:${opts.name}/${prefix}`;
  const cacheBytes = opts.cacheBytes ?? 32 * 1024 * 1024;
  const cache = new LruCache<string, Uint8Array>({ maxWeight: cacheBytes });
  let reads = 0;
  let closed = false;
  const where = (path: string): string => `${label}${path}`;
  const assertOpen = () => {
    if (closed) throw new Error(`[${tag}] ${label} is closed`);
  };

  async function call<T>(path: string, what: string, op: () => Promise<T>): Promise<T> {
    if (closed) throw new Error(`[${tag}] ${where(path)}: source closed`);
    reads++;
    try {
      return await op();
    } catch (e) {
      throw new UpstreamError(`${what} ${where(path)}`, (e as Error)?.message ?? String(e));
    }
  }

  const pastEnd = (path: string, offset: number, length: number, size: number): ArtefactError =>
    new ArtefactError(where(path), `range ${offset}-${offset + length - 1} is past the end of the file (${size} bytes)`);

  async function loadFile(path: string): Promise<Uint8Array | null> {
    const obj = await call(path, 'get', () => opts.bucket.get(prefix + path));
    if (!obj) return null;
    const bytes = new Uint8Array(await call(path, 'get', () => obj.arrayBuffer()));
    reads--; // the body of the same get
    if (bytes.byteLength !== obj.size) throw new UpstreamError(`get ${where(path)}`, `body has ${bytes.byteLength} bytes, the object ${obj.size}`);
    return bytes;
  }

  async function loadRange(path: string, offset: number, length: number): Promise<Uint8Array> {
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
    const bytes = new Uint8Array(await call(path, 'get', () => obj.arrayBuffer()));
    reads--;
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
    ...cachedReads(cache, { tag, loadFile, loadRange, loadEmptyRange, pastEnd, assertOpen }),
    async ping() {
      assertOpen();
      await call('index.json', 'head', () => opts.bucket.head(`${prefix}index.json`));
    },
    async close() {
      closed = true;
      cache.clear();
    },
    stats: () => ({ reads, cachedBytes: cache.weight, cacheBytes }),
  };
}
