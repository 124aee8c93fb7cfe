// One compiled release as the runtime sees it: release.json plus lazily opened bucketed families and shard packs,
// all read through a ShardSource, so the same code serves a local dist/ or a mirror over HTTP. Every byte is checked
// before use (docs/integrity.md): the public manifest against index.json, release.json, the documents and the
// directories against the manifest, buckets and shards against their CRC-32s.
import { ENTITY_TYPES } from '../../common/ids.ts';
import { checksum32 } from '../../common/checksum.ts';
import { sha256Hex } from '#platform/crypto';
import { DIST_FORMAT, ENTRY_REDIRECT, ENTRY_TOMBSTONE, INDEX_FILE, LIVE_ENTRY, REDIRECT_ENTRY, TOMBSTONE_ENTRY, type LiveIndexValue, MANIFEST_FILE, PUBLIC_DIR, RELEASE_DOC, type EntityIndexValue, type NameKeyValue, type ReleaseDoc, type ResolveValue, type SearchDoc, type SearchValue } from '../../common/dist-layout.ts';
import { MAX_SHARD_BYTES } from '../../common/limits.ts';
import { isPromise, type BucketFamilyReader, type MaybePromise, type ShardSource } from '../interfaces.ts';
import { ArtefactError, fileOf, readFailure } from '../read-errors.ts';
import { openBucketFamily, type BucketCache } from './bucket-family-reader.ts';
import { shardCacheKey, type ShardCache } from './shard-cache.ts';
import { packNumber } from './pack-numbers.ts';
import { RecentMap, RecentRing } from './recent-map.ts';
import { defaultCacheShares, type CacheShares } from './cache-budget.ts';
import type { BodyCache } from './body-cache.ts';
import { MatchIndex } from './match-index.ts';
import { ownCopy } from '../../common/own-copy.ts';
import { expandShard, type ExpandedShard } from '../../common/shard-format.ts';
import { transientBytes } from '../../common/bytes.ts';

/**
 * What one remembered index entry costs (ID, entry array, map entry), measured ~200 bytes. Remembering the register IDs
 * looked up most recently pays: on the full-size dist under the benchmark's batch load, finding an ID in its (cached)
 * 4 KiB index bucket was ~30% of a batch's CPU, nearly all of it waiting on memory (a hash, an LRU touch and a binary
 * search over bytes scattered across 17 MiB of cached buckets); a hit here is one Map lookup.
 */
const RECENT_ID_BYTES = 200;
/** A match row's reference as kept (release/match-index.ts KeptReference: ID, text, UTF-8 and two map entries), ~100 bytes. */
const MATCH_REFERENCE_BYTES = 100;
/** A decoded match list bucket: 256 entries of four u32 (MatchListEntry), 4 KiB, and the array's object and map entry. */
const MATCH_LIST_BYTES = 4096 + 96;

/**
 * The memos a release keeps, each bounded across all the releases that share it (the catalog's: its budget holds
 * however many stamps are opened). The match index's are for MatchIndex (release/match-index.ts) to keep in.
 */
export interface ReleaseMemos {
  recentIds: RecentRing;
  matchReferences: RecentRing;
  matchLists: RecentRing;
}

/** Memos within `shares` (at least one entry each, so even a budget of 0 gives maps that work). */
export function releaseMemos(shares: CacheShares): ReleaseMemos {
  const ring = (bytes: number, entryBytes: number) => new RecentRing(Math.max(bytes, entryBytes), entryBytes);
  return {
    recentIds: ring(shares.recentIds, RECENT_ID_BYTES),
    matchReferences: ring(shares.matchReferences, MATCH_REFERENCE_BYTES),
    matchLists: ring(shares.matchLists, MATCH_LIST_BYTES),
  };
}

/** A live entity's shard and where its sections start. */
export interface LiveEntity {
  kind: 'live';
  id: string;
  shard: Uint8Array;
  /** [aliases, attributes, bridges, relationships, overlay, end] byte offsets. */
  cuts: number[];
  bridgeCount: number;
  entityType: string;
  /** The file the shard was read from, as logs name it (a composer that finds it broken says where). */
  file: string;
  /** The ID the client asked for, when it was a merged ID. */
  requestedId?: string;
}
interface GoneEntity {
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
  private readonly names: BucketFamilyReader;
  private readonly streams = new Map<string, BucketFamilyReader>();
  private readonly documentCache = new Map<string, Promise<Uint8Array>>();
  private readonly recentIndex: RecentMap<string, EntityIndexValue>;
  /** Prefix of this release's keys in the shared answer cache (`answers`), so two releases never answer for each other. */
  readonly answerScope = `${releasesOpened++}\u0000`;
  /**
   * Key ID of the trusted key whose signature over this release's public manifest was verified (`serve --trust`),
   * named by GET / and /meta; null when signatures are not checked. Set by the catalog once it has verified it.
   */
  signingKeyId: string | null = null;

  constructor(
    readonly doc: ReleaseDoc,
    private readonly source: ShardSource,
    private readonly cache: BucketCache,
    /** Every public file with its size and sha256 (public/manifest.json, itself checked against index.json). */
    private readonly files: Record<string, ManifestEntry>,
    /** Verified shards kept across requests (shared by the catalog's releases), or null for none. */
    private readonly shards: ShardCache | null = null,
    /** Finished answers kept across requests (shared by the catalog's releases), or null for none: runtime/entity-answer.ts keeps them. */
    readonly answers: BodyCache | null = null,
    /**
     * sha256 (hex) of public/manifest.json, which lists every public file's sha256: it changes whenever any byte this
     * release can answer from changes (a stamp compiled again differently), so answers' ETags are derived from it.
     */
    readonly manifestSha256 = '',
    /** Memos bounded across the releases that share them (the catalog's); default: this release's own. */
    readonly memos: ReleaseMemos = releaseMemos(defaultCacheShares()),
  ) {
    this.recentIndex = new RecentMap(memos.recentIds);
    this.stamp = doc.stamp;
    this.providers = new Set(doc.providers.map((p) => p.name));
    this.entities = this.family(doc.families.entities);
    this.resolveIndex = this.family(doc.families.resolve);
    this.search = this.family(doc.families.search);
    this.docs = this.family(doc.families.search_docs);
    this.names = this.family(doc.families.names);
    // Per stamp, not per lookup: each shard pack's path, cache number and log name.
    this.shardPacks = doc.shard_packs.map((name) => {
      const path = `${this.stamp}/${PUBLIC_DIR}/${name}`;
      return { path, number: packNumber(path), file: fileOf(source, path) };
    });
  }

  private family(f: ReleaseDoc['families']['entities']): BucketFamilyReader {
    const prefix = `${this.stamp}/${PUBLIC_DIR}/`;
    const directory = prefix + f.directory;
    // A directory the manifest does not list cannot be vouched for: never read it (the empty string matches no hash).
    const directorySha256 = this.files[f.directory]?.sha256 ?? '';
    return openBucketFamily(this.source, { ...f, directory, pack: prefix + f.pack }, { cache: this.cache, directorySha256 });
  }

  /**
   * Looks up a register ID, following a merge to the final survivor. Each step is taken at once when its bytes are
   * ready (an index entry remembered or in a cached bucket, a shard cached or in the page cache) and waits for
   * a read only when they are not: a batch of 100 items made ~8 promises per item when every step was async.
   */
  entity(id: string): MaybePromise<EntityLookup> {
    try {
      const recent = this.recentIndex.get(id);
      if (recent !== undefined) return this.lookupOf(id, recent);
      const v = this.entities.get<EntityIndexValue>(id);
      return isPromise(v) ? v.then((read) => this.lookupOf(id, this.remember(id, read))) : this.lookupOf(id, this.remember(id, v));
    } catch (err) {
      // A read never throws (interfaces.ts MaybePromise): a damaged entry found at once rejects like one read later.
      return Promise.reject(err);
    }
  }

  /** The lookup an index entry leads to: nothing, a merge's survivor, a tombstone's stub or a live entity's shard. */
  private lookupOf(id: string, v: EntityIndexValue | undefined): MaybePromise<EntityLookup> {
    if (!v) return null;
    if (v[0] === ENTRY_REDIRECT) {
      const target = this.entity(v[REDIRECT_ENTRY.survivor]);
      return isPromise(target) ? target.then((t) => redirected(t, id)) : redirected(target, id);
    }
    if (v[0] === ENTRY_TOMBSTONE) {
      const body = this.shard(this.shardPack(v[TOMBSTONE_ENTRY.pack], id), v[TOMBSTONE_ENTRY.offset], v[TOMBSTONE_ENTRY.length], v[TOMBSTONE_ENTRY.checksum], id);
      return isPromise(body) ? body.then(goneOf) : goneOf(body);
    }
    const live = v;
    const p = this.shardPack(live[LIVE_ENTRY.pack], id);
    const shard = this.shard(p, live[LIVE_ENTRY.offset], live[LIVE_ENTRY.length], live[LIVE_ENTRY.checksum], id);
    return isPromise(shard) ? shard.then((s) => liveOf(id, live, s, p)) : liveOf(id, live, shard, p);
  }

  private remember(id: string, v: EntityIndexValue | undefined): EntityIndexValue | undefined {
    // Its own copy: an ID cut from a request's URL or body would keep that whole text alive in the memo.
    if (v !== undefined) this.recentIndex.set(ownCopy(id), v);
    return v;
  }

  /** A verified shard: from the cache, else read (at once when the source can) and checked against its CRC-32. */
  private shard(p: ShardPack, offset: number, length: number, checksum: number, id: string): MaybePromise<Uint8Array> {
    // An entry claiming more than the compiler ever writes is damage, and must not make a request allocate it.
    if (length > MAX_SHARD_BYTES) throw new ArtefactError(this.entitiesFile, `the index entry of ${id} claims a shard of ${length} bytes, more than ${MAX_SHARD_BYTES}`, id);
    const cached = this.shards?.get(shardCacheKey(p.number, offset), length);
    if (cached) return cached;
    const bytes = this.source.readRange(p.path, offset, length, true);
    if (!isPromise(bytes)) return this.retained(p, offset, verifiedShard(this.source, p, bytes, offset, checksum, id));
    return bytes.then(
      (read) => this.retained(p, offset, verifiedShard(this.source, p, read, offset, checksum, id)),
      (err: unknown) => {
        throw shardUnreadable(err, p, id);
      },
    );
  }

  /** Keeps a verified shard in the cache (a copy) and hands the bytes on. */
  private retained(p: ShardPack, offset: number, bytes: Uint8Array): Uint8Array {
    this.shards?.put(shardCacheKey(p.number, offset), bytes);
    return bytes;
  }

  /** How logs name the entity index pack, whose entries point at shards. */
  private get entitiesFile(): string {
    return fileOf(this.source, `${this.stamp}/${PUBLIC_DIR}/${this.doc.families.entities.pack}`);
  }

  /** Each shard pack's path from the source root, its cache number and its log name, by its number in release.json. */
  private readonly shardPacks: ShardPack[];
  private shardPack(pack: number, id: string): ShardPack {
    const known = this.shardPacks[pack];
    if (known === undefined) throw new ArtefactError(this.entitiesFile, `the index entry of ${id} names shard pack ${pack}; release.json lists ${this.doc.shard_packs.length}`, id);
    return known;
  }

  resolve(provider: string, namespace: string, externalId: string): MaybePromise<ResolveValue | undefined> {
    return this.resolveIndex.get<ResolveValue>(`${provider}\u0000${namespace}\u0000${externalId}`);
  }

  searchKey(key: string): MaybePromise<SearchValue | undefined> {
    return this.search.get<SearchValue>(key);
  }

  /** The names under one match key of common/name-keys.ts (runtime/release/name-match.ts reads them). */
  nameKey(key: string): MaybePromise<NameKeyValue | undefined> {
    return this.names.get<NameKeyValue>(key);
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

  /** sha256 (hex) of a precomputed response body as the compiler recorded it in the manifest, or undefined. */
  documentSha256(path: string): string | undefined {
    return this.files[path]?.sha256;
  }

  private matches: MatchIndex | null | undefined;
  /** The match index of GET /matches, or null for a release compiled before there was one. */
  matchIndex(): MatchIndex | null {
    if (this.matches === undefined) {
      const m = this.doc.matches;
      const releaseFile = fileOf(this.source, `${this.stamp}/${PUBLIC_DIR}/${RELEASE_DOC}`);
      this.matches = m ? new MatchIndex(m, this.family(m.rows), this.family(m.lists), this.family(m.refs), releaseFile, { references: this.memos.matchReferences, lists: this.memos.matchLists }) : null;
    }
    return this.matches;
  }

  /** A precomputed response body (path relative to public/), read once and checked whole against the manifest. */
  document(path: string): Promise<Uint8Array> {
    let p = this.documentCache.get(path);
    if (!p) {
      p = readVerified(this.source, `${this.stamp}/${PUBLIC_DIR}/${path}`, this.files[path]?.sha256, `${PUBLIC_DIR}/${MANIFEST_FILE}`);
      p.catch(() => this.documentCache.delete(path));
      this.documentCache.set(path, p);
    }
    return p;
  }
}

/** A file as a part manifest lists it. */
export interface ManifestEntry {
  bytes: number;
  sha256: string;
}

interface ShardPack {
  path: string;
  number: number;
  /** How logs name it (fileOf), made once. */
  file: string;
}

/** A merge's answer: the survivor's, naming the ID asked for when the survivor is live. */
function redirected(target: EntityLookup, id: string): EntityLookup {
  return target?.kind === 'live' ? { ...target, requestedId: id } : target;
}

const goneOf = (body: Uint8Array): GoneEntity => ({ kind: 'gone', body });

/** A live index entry (ENTRY_LIVE) and its verified shard. */
function liveOf(id: string, v: LiveIndexValue, stored: Uint8Array, p: ShardPack): LiveEntity {
  const c = LIVE_ENTRY.cutsFrom;
  // The shard is stored with its dictionary (common/shard-format.ts); the cuts index the stored bytes and move with
  // the expansion, after which every section is the text the API answers.
  let full: ExpandedShard;
  try {
    full = expandShard(stored, id, [v[c], v[c + 1], v[c + 2], v[c + 3], v[c + 4], v[c + 5]], transientBytes);
  } catch (err) {
    throw new ArtefactError(p.file, `the shard of ${id} does not expand (${(err as Error).message})`, id);
  }
  return { kind: 'live', id, shard: full.bytes, cuts: full.cuts, bridgeCount: v[LIVE_ENTRY.bridgeCount], entityType: ENTITY_TYPES[v[LIVE_ENTRY.typeIndex]], file: p.file };
}

function verifiedShard(source: ShardSource, p: ShardPack, bytes: Uint8Array, offset: number, checksum: number, id: string): Uint8Array {
  // Wrong bytes are worse than no answer: a corrupted pack is refused until the dist is repaired.
  if (checksum32(bytes) !== checksum) {
    source.forget?.(p.path, { offset, length: bytes.byteLength });
    throw new ArtefactError(p.file, `crc32 of bytes ${offset}+${bytes.byteLength} does not match the index entry of ${id}`, id);
  }
  return bytes;
}

/** A shard read that failed: missing or truncated pack (ArtefactError), or an origin that is down (UpstreamError). */
function shardUnreadable(err: unknown, p: ShardPack, id: string): Error {
  const e = readFailure(err, p.file);
  return e instanceof ArtefactError ? e.about(id) : e;
}


/**
 * A whole file that must hash to `sha256` (hex), as `vouchedBy` (the file that listed it) says. Missing, unreadable
 * or different bytes throw ArtefactError; an origin that is down throws UpstreamError. `undefined`: the voucher does
 * not list the file, which is refused like damage.
 */
export async function readVerified(source: ShardSource, path: string, sha256: string | undefined, vouchedBy: string): Promise<Uint8Array> {
  const file = fileOf(source, path);
  if (sha256 === undefined) throw new ArtefactError(file, `not listed in ${vouchedBy}`);
  let bytes: Uint8Array | null;
  try {
    bytes = await source.readFile(path);
  } catch (err) {
    throw readFailure(err, file);
  }
  if (!bytes) throw new ArtefactError(file, 'not found');
  const actual = sha256Hex(bytes);
  if (actual !== sha256) {
    source.forget?.(path);
    throw new ArtefactError(file, `sha256 ${actual} does not match ${vouchedBy} (${sha256})`);
  }
  return bytes;
}

/** The JSON a verified file holds; bytes that hash right yet do not parse mean a broken compile, refused the same way. */
export function parseVerified<T>(source: ShardSource, path: string, bytes: Uint8Array): T {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch (e) {
    throw new ArtefactError(fileOf(source, path), `not JSON (${(e as Error).message})`);
  }
}

/**
 * Opens release `stamp`: its public manifest must hash to `manifestSha256` (what index.json records), and
 * release.json to what that manifest lists. Throws ArtefactError (or UpstreamError) otherwise.
 */
export async function loadRelease(
  source: ShardSource, stamp: string, manifestSha256: string, cache: BucketCache, shards: ShardCache | null = null, bodies: BodyCache | null = null,
  memos?: ReleaseMemos,
): Promise<Release> {
  const manifestPath = `${stamp}/${PUBLIC_DIR}/${MANIFEST_FILE}`;
  const manifest = parseVerified<{ files?: Record<string, ManifestEntry> }>(source, manifestPath, await readVerified(source, manifestPath, manifestSha256, INDEX_FILE));
  const files = manifest.files ?? {};
  const docPath = `${stamp}/${PUBLIC_DIR}/${RELEASE_DOC}`;
  const doc = parseVerified<ReleaseDoc>(source, docPath, await readVerified(source, docPath, files[RELEASE_DOC]?.sha256, `${PUBLIC_DIR}/${MANIFEST_FILE}`));
  // Another format's shards may be stored differently (format 2 stores bridges compactly): never guess at them.
  if (doc.format !== DIST_FORMAT) throw new ArtefactError(fileOf(source, docPath), `format ${JSON.stringify(doc.format)}, this runtime reads ${DIST_FORMAT}; recompile it`);
  if (doc.stamp !== stamp) throw new ArtefactError(fileOf(source, docPath), `names stamp ${JSON.stringify(doc.stamp)}, not ${stamp}`);
  return new Release(doc, source, cache, files, shards, bodies, manifestSha256, memos);
}
