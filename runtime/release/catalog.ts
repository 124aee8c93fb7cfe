// Which compiled release each namespace serves: dist/index.json, re-read at most once a second so a newly
// compiled stamp is picked up without a restart. Opened releases are kept, since older stamps stay addressable.
import { INDEX_FILE, type DistIndex } from '../../common/dist-layout.ts';
import type { Namespace } from '../../common/ids.ts';
import { NOT_AT_HAND, type Clock, type ShardSource } from '../interfaces.ts';
import { loadRelease, type Release } from './open-release.ts';
import { createBucketCache, DEFAULT_BUCKET_CACHE_BYTES, type BucketCache } from './bucket-family-reader.ts';
import { DEFAULT_SHARD_CACHE_BYTES, ShardCache } from './shard-cache.ts';
import { BodyCache, DEFAULT_BODY_CACHE_BYTES } from './body-cache.ts';

/** Options of a ReleaseCatalog. */
export interface CatalogOptions {
  source: ShardSource;
  clock: Clock;
  /** How often dist/index.json is re-read, in ms (default 1000). */
  refreshMs?: number;
  /** Bytes of verified bucket bytes kept across all families and releases (default DEFAULT_BUCKET_CACHE_BYTES). */
  cacheBytes?: number;
  /** Bytes of verified entity shards kept across all releases (default DEFAULT_SHARD_CACHE_BYTES; 0 keeps none). */
  shardCacheBytes?: number;
  /** Bytes of finished entity answers kept across all releases (default DEFAULT_BODY_CACHE_BYTES; 0 keeps none). */
  bodyCacheBytes?: number;
}

export class ReleaseCatalog {
  private index: DistIndex | null = null;
  private indexText = '';
  private checkedAt = -Infinity;
  private refreshing: Promise<void> | null = null;
  private readonly releases = new Map<string, Promise<Release>>();
  /** The releases of `releases` that have opened, for forNamespaceNow. */
  private readonly opened = new Map<string, Release>();
  readonly cache: BucketCache;
  readonly shards: ShardCache;
  readonly bodies: BodyCache;

  constructor(private readonly opts: CatalogOptions) {
    this.cache = createBucketCache(opts.cacheBytes ?? DEFAULT_BUCKET_CACHE_BYTES);
    this.shards = new ShardCache(opts.shardCacheBytes ?? DEFAULT_SHARD_CACHE_BYTES);
    this.bodies = new BodyCache(opts.bodyCacheBytes ?? DEFAULT_BODY_CACHE_BYTES);
  }

  /** The current index (null when nothing is compiled). */
  async current(): Promise<DistIndex | null> {
    const now = this.opts.clock.now();
    if (now - this.checkedAt >= (this.opts.refreshMs ?? 1000)) {
      this.refreshing ??= this.refresh(now).finally(() => (this.refreshing = null));
    }
    // Until the first index is read, every request waits for it (later refreshes run in the background).
    if (!this.index && this.refreshing) await this.refreshing;
    return this.index;
  }

  private async refresh(now: number): Promise<void> {
    this.checkedAt = now;
    try {
      const bytes = await this.opts.source.readFile(INDEX_FILE);
      if (!bytes) return;
      const text = new TextDecoder().decode(bytes);
      if (text !== this.indexText) {
        const parsed = JSON.parse(text) as DistIndex;
        // Open the new stamps before switching, so the first request after a publish does not pay for it.
        await Promise.all([parsed.v1, parsed.next].filter((s): s is string => !!s).map((s) => this.release(s)));
        this.index = parsed;
        this.indexText = text;
      }
    } catch {
      // Keep serving what we had: a mirror mid-upload or a transient read error must not take the API down.
    }
  }

  /** The release a namespace serves, or null. */
  async forNamespace(ns: Namespace): Promise<Release | null> {
    const index = await this.current();
    const stamp = index?.[ns];
    return stamp ? this.release(stamp) : null;
  }

  /**
   * forNamespace() without waiting, for the request path: the release when the index is fresh and its release is
   * open (nearly every request), null when the namespace serves nothing, NOT_AT_HAND when forNamespace() must be
   * awaited (the index is due for a re-read, or the release is still opening). Saves each request the promise hops.
   */
  forNamespaceNow(ns: Namespace): Release | null | typeof NOT_AT_HAND {
    if (!this.index || this.opts.clock.now() - this.checkedAt >= (this.opts.refreshMs ?? 1000)) return NOT_AT_HAND;
    const stamp = this.index[ns];
    if (!stamp) return null;
    return this.opened.get(stamp) ?? NOT_AT_HAND;
  }

  release(stamp: string): Promise<Release> {
    let r = this.releases.get(stamp);
    if (!r) {
      r = loadRelease(this.opts.source, stamp, this.cache, this.shards, this.bodies);
      r.then(
        (opened) => this.opened.set(stamp, opened),
        () => this.releases.delete(stamp),
      );
      this.releases.set(stamp, r);
    }
    return r;
  }
}
