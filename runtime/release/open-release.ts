// One compiled release as the runtime sees it: release.json plus lazily opened bucketed families and shard packs,
// all read through a ShardSource, so the same code serves a local dist/ or a mirror over HTTP.
import { ENTITY_TYPES } from '../../common/ids.ts';
import { checksum32 } from '../../common/checksum.ts';
import { createHash } from 'node:crypto';
import { DIST_FORMAT, ENTRY_REDIRECT, ENTRY_TOMBSTONE, MANIFEST_FILE, PUBLIC_DIR, RELEASE_DOC, type EntityIndexValue, type ReleaseDoc, type ResolveValue, type SearchDoc, type SearchValue } from '../../common/dist-layout.ts';
import { ApiError } from '../api-error.ts';
import { NOT_AT_HAND, type BucketFamilyReader, type ShardSource } from '../interfaces.ts';
import { openBucketFamily, type BucketCache } from './bucket-family-reader.ts';
import { shardCacheKey, type ShardCache } from './shard-cache.ts';
import { packNumber } from './pack-numbers.ts';
import { RecentMap } from './recent-map.ts';
import type { BodyCache } from './body-cache.ts';
import { ownCopy } from '../../common/own-copy.ts';

/**
 * Index entries of the register IDs looked up most recently, per release. Measured on the full-size dist under the
 * benchmark's batch load: finding an ID in its (cached) 4 KiB index bucket was ~30% of a batch's CPU, nearly all
 * of it waiting on memory (a hash, an LRU touch and a binary search over bytes scattered across 17 MiB of cached
 * buckets); a hit here is one Map lookup. ~200 bytes an entry, so ~6 MiB when full.
 */
export const RECENT_INDEX_ENTRIES = 32 * 1024;

/** A live entity's shard and where its sections start. */
export interface LiveEntity {
  kind: 'live';
  id: string;
  shard: Uint8Array;
  /** [aliases, attributes, bridges, relationships, overlay, end] byte offsets. */
  cuts: number[];
  bridgeCount: number;
  entityType: string;
  /** The ID the client asked for, when it was a merged ID. */
  requestedId?: string;
}
export interface GoneEntity {
  kind: 'gone';
  /** The exact 410 Error body. */
  body: Uint8Array;
}
export type EntityLookup = LiveEntity | GoneEntity | null;

/** Tells releases apart in the shared BodyCache's keys, whatever their stamps. */
let releasesOpened = 0;

export class Release {
  readonly stamp: string;
  readonly providers: Set<string>;
  private readonly entities: BucketFamilyReader;
  private readonly resolveIndex: BucketFamilyReader;
  private readonly search: BucketFamilyReader;
  private readonly docs: BucketFamilyReader;
  private readonly streams = new Map<string, BucketFamilyReader>();
  private readonly documentCache = new Map<string, Promise<Uint8Array>>();
  private readonly recentIndex = new RecentMap<string, EntityIndexValue>(RECENT_INDEX_ENTRIES);
  private readonly bodyScope = `${releasesOpened++}\u0000`;

  constructor(
    readonly doc: ReleaseDoc,
    private readonly source: ShardSource,
    private readonly cache: BucketCache,
    /** sha256 of every public file (public/manifest.json), to check documents before they are served. */
    private readonly sha256Of: Record<string, string>,
    /** Verified shards kept across requests (shared by the catalog's releases), or null for none. */
    private readonly shards: ShardCache | null = null,
    /** Finished answers kept across requests (shared by the catalog's releases), or null for none. */
    private readonly bodies: BodyCache | null = null,
  ) {
    this.stamp = doc.stamp;
    this.providers = new Set(doc.providers.map((p) => p.name));
    this.entities = this.family(doc.families.entities);
    this.resolveIndex = this.family(doc.families.resolve);
    this.search = this.family(doc.families.search);
    this.docs = this.family(doc.families.search_docs);
  }

  private family(f: ReleaseDoc['families']['entities']): BucketFamilyReader {
    const prefix = `${this.stamp}/${PUBLIC_DIR}/`;
    return openBucketFamily(this.source, { ...f, directory: prefix + f.directory, pack: prefix + f.pack }, { cache: this.cache });
  }

  /**
   * Looks up a register ID, following a merge to the final survivor. Each step is taken at once when its bytes are
   * at hand (see entityNow) and waits for a read only when they are not.
   */
  async entity(id: string): Promise<EntityLookup> {
    let v = this.indexEntryNow(id);
    if (v === NOT_AT_HAND) v = this.remember(id, await this.entities.get<EntityIndexValue>(id));
    if (!v) return null;
    if (v[0] === ENTRY_REDIRECT) {
      const target = await this.entity(v[1]);
      return target?.kind === 'live' ? { ...target, requestedId: id } : target;
    }
    if (v[0] === ENTRY_TOMBSTONE) return { kind: 'gone', body: await this.shard(v[1], v[2], v[3], v[4], id) };
    return liveOf(id, v, await this.shard(v[1], v[2], v[3], v[12], id));
  }

  /**
   * entity() without waiting, when its index bucket is retained and its shard can be read at once (a local dist
   * in the page cache): the same answer, or NOT_AT_HAND and the caller uses entity(). A batch of 100 items made
   * ~8 promises per item through entity(); here it makes none.
   */
  entityNow(id: string): EntityLookup | typeof NOT_AT_HAND {
    const v = this.indexEntryNow(id);
    if (v === NOT_AT_HAND || !v) return v ?? null;
    if (v[0] === ENTRY_REDIRECT) {
      const target = this.entityNow(v[1]);
      return target !== NOT_AT_HAND && target?.kind === 'live' ? { ...target, requestedId: id } : target;
    }
    if (v[0] === ENTRY_TOMBSTONE) {
      const body = this.readShardNow(v[1], v[2], v[3], v[4], id);
      return body === NOT_AT_HAND ? body : { kind: 'gone', body };
    }
    const shard = this.readShardNow(v[1], v[2], v[3], v[12], id);
    return shard === NOT_AT_HAND ? shard : liveOf(id, v, shard);
  }

  /** The answer body this release kept under `key` (see keepBody), or undefined. Never write to it. */
  keptBody(key: string): Uint8Array | undefined {
    return this.bodies?.get(this.bodyScope + key);
  }

  /**
   * Keeps `parts[from..]` joined as the answer body for `key`, a string that names everything the body depends on
   * besides the release (compose-entity.ts: entityBodyKey). Returns the kept bytes, or null when they were not kept.
   */
  keepBody(key: string, parts: readonly Uint8Array[], from = 0): Uint8Array | null {
    return this.bodies ? this.bodies.keep(this.bodyScope + key, parts, from) : null;
  }

  /** The index entry of `id` from the recent ones or a retained bucket, else NOT_AT_HAND (undefined: no such ID). */
  private indexEntryNow(id: string): EntityIndexValue | undefined | typeof NOT_AT_HAND {
    const recent = this.recentIndex.get(id);
    return recent !== undefined ? recent : this.remember(id, this.entities.getNow<EntityIndexValue>(id));
  }

  private remember<V extends EntityIndexValue | undefined | typeof NOT_AT_HAND>(id: string, v: V): V {
    // Its own copy: an ID cut from a request's URL or body would keep that whole text alive in the memo.
    if (v !== undefined && v !== NOT_AT_HAND) this.recentIndex.set(ownCopy(id), v as EntityIndexValue);
    return v;
  }

  /** A verified shard, read at once when it can be (readShardNow), else through the source's promise. */
  private shard(pack: number, offset: number, length: number, checksum: number, id: string): Uint8Array | Promise<Uint8Array> {
    const now = this.readShardNow(pack, offset, length, checksum, id);
    if (now !== NOT_AT_HAND) return now;
    const p = this.shardPack(pack);
    if (p === null) return verifiedShard(null, checksum, id);
    return this.source.readRange(p.path, offset, length, true).then((bytes) => this.retained(p, offset, verifiedShard(bytes, checksum, id)));
  }

  /** The shard from the cache, or read and verified without waiting, or NOT_AT_HAND when it needs a wait. */
  private readShardNow(pack: number, offset: number, length: number, checksum: number, id: string): Uint8Array | typeof NOT_AT_HAND {
    const p = this.shardPack(pack);
    if (p === null) return NOT_AT_HAND; // a bad pack number is refused by shard()
    const cached = this.shards?.get(shardCacheKey(p.number, offset), length);
    if (cached) return cached;
    if (!this.source.readRangeNow) return NOT_AT_HAND;
    const bytes = this.source.readRangeNow(p.path, offset, length, true);
    return bytes === NOT_AT_HAND ? bytes : this.retained(p, offset, verifiedShard(bytes, checksum, id));
  }

  /** Keeps a verified shard in the cache (a copy) and hands the bytes on. */
  private retained(p: ShardPack, offset: number, bytes: Uint8Array): Uint8Array {
    this.shards?.put(shardCacheKey(p.number, offset), bytes);
    return bytes;
  }

  /** Each shard pack's path from the source root and its cache number, made once per pack rather than per read. */
  private readonly shardPacks: ShardPack[] = [];
  private shardPack(pack: number): ShardPack | null {
    const name = this.doc.shard_packs[pack];
    if (name === undefined) return null;
    if (this.shardPacks[pack] === undefined) {
      const path = `${this.stamp}/${PUBLIC_DIR}/${name}`;
      this.shardPacks[pack] = { path, number: packNumber(path) };
    }
    return this.shardPacks[pack];
  }

  resolve(provider: string, namespace: string, externalId: string): Promise<ResolveValue | undefined> {
    return this.resolveIndex.get<ResolveValue>(`${provider}\u0000${namespace}\u0000${externalId}`);
  }

  searchKey(key: string): Promise<SearchValue | undefined> {
    return this.search.get<SearchValue>(key);
  }

  searchDoc(ordinal: number): Promise<SearchDoc | undefined> {
    return this.docs.at<SearchDoc>(ordinal);
  }

  /** A change stream (`all`, `type:<t>`, `provider:<p>`), or null when this release has none of it. */
  changeStream(name: string): { total: number; reader: BucketFamilyReader } | null {
    const s = this.doc.changes.streams[name];
    if (!s) return null;
    let r = this.streams.get(name);
    if (!r) this.streams.set(name, (r = this.family(s.family)));
    return { total: s.total, reader: r };
  }

  /** A precomputed response body (path relative to public/), read once. */
  document(path: string): Promise<Uint8Array> {
    let p = this.documentCache.get(path);
    if (!p) {
      p = this.source.readFile(`${this.stamp}/${PUBLIC_DIR}/${path}`).then((b) => {
        if (!b) throw new ApiError(503, 'index_unavailable', 'A release document is missing from the compiled dist.');
        // Read once per process, so a full hash is cheap; altered bytes are refused, never served.
        if (sha256Hex(b) !== this.sha256Of[path]) throw new ApiError(503, 'artefact_corrupt', 'A compiled artefact this answer needs failed its integrity check.');
        return b;
      });
      p.catch(() => this.documentCache.delete(path));
      this.documentCache.set(path, p);
    }
    return p;
  }
}

interface ShardPack {
  path: string;
  number: number;
}

/** A live index entry (ENTRY_LIVE) and its verified shard. */
function liveOf(id: string, v: Extract<EntityIndexValue, { length: 13 }>, shard: Uint8Array): LiveEntity {
  return { kind: 'live', id, shard, cuts: [v[4], v[5], v[6], v[7], v[8], v[9]], bridgeCount: v[10], entityType: ENTITY_TYPES[v[11]] };
}

function verifiedShard(bytes: Uint8Array | null, checksum: number, id: string): Uint8Array {
  // Wrong bytes are worse than no answer: a corrupted pack is refused until the dist is repaired.
  if (!bytes || checksum32(bytes) !== checksum) throw new ApiError(503, 'artefact_corrupt', 'The compiled data for this ID failed its integrity check.', { detail: id });
  return bytes;
}

export async function loadRelease(source: ShardSource, stamp: string, cache: BucketCache, shards: ShardCache | null = null, bodies: BodyCache | null = null): Promise<Release> {
  const manifestBytes = await source.readFile(`${stamp}/${PUBLIC_DIR}/${MANIFEST_FILE}`);
  if (!manifestBytes) throw new Error(`release ${stamp} has no ${PUBLIC_DIR}/${MANIFEST_FILE}`);
  const files = (JSON.parse(new TextDecoder().decode(manifestBytes)) as { files: Record<string, { sha256: string }> }).files;
  const sha256Of: Record<string, string> = {};
  for (const [path, f] of Object.entries(files)) sha256Of[path] = f.sha256;
  const bytes = await source.readFile(`${stamp}/${PUBLIC_DIR}/${RELEASE_DOC}`);
  if (!bytes) throw new Error(`release ${stamp} has no ${PUBLIC_DIR}/${RELEASE_DOC}`);
  // A release whose own description is altered is not opened at all.
  if (sha256Hex(bytes) !== sha256Of[RELEASE_DOC]) throw new Error(`release ${stamp}: ${RELEASE_DOC} does not match its manifest`);
  const doc = JSON.parse(new TextDecoder().decode(bytes)) as ReleaseDoc;
  // Another format's shards may be stored differently (format 2 stores bridges compactly): never guess at them.
  if (doc.format !== DIST_FORMAT) throw new Error(`release ${stamp} is in format ${JSON.stringify(doc.format)}, this runtime reads ${DIST_FORMAT}; recompile it`);
  return new Release(doc, source, cache, sha256Of, shards, bodies);
}

const sha256Hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
