// The shape of a compiled dist/ tree: the contract between compiler (writer) and runtime (reader).
// docs/dist-format.md explains each file; this module holds the names and types both sides use.
import { SIG_SUFFIX } from './signing.ts';
import type { BucketFamily } from './bucket-format.ts';
import type { ProviderRole } from './ids.ts';
import type { MatchesDoc } from './match-index.ts';

/**
 * Format tag written into every release document; bump when the reader must change. 2: bridges stored compactly
 * (common/shard-format.ts). 3: shard and bucket checksums are CRC-32 (common/checksum.ts), not FNV-1a. 4: the match
 * index. 5: shards stored with the shard dictionary (common/shard-format.ts expandShard; the cuts index the stored
 * bytes). 6: the name keys family (families.names, name_countries) that name matching reads.
 */
export const DIST_FORMAT = 'identity-register-dist/7';

/** dist/index.json: the one small pointer, rewritten last and atomically after a compile. */
export interface DistIndex {
  format: typeof DIST_FORMAT;
  /** Stamp served under /api/v1: newest publishable release (null when none is publishable). */
  v1: string | null;
  /** Stamp served under /api/next: newest release of all. */
  next: string | null;
  /** Every compiled stamp, oldest first, with its predecessor, whether it is publishable, and its manifests' sha256. */
  releases: IndexedRelease[];
}

/** One compiled stamp as dist/index.json lists it. */
export interface IndexedRelease {
  stamp: string;
  prior: string | null;
  publishable: boolean;
  generated_at: string;
  /**
   * sha256 (hex) of the stamp's three manifests: the roots of its chain of trust (docs/integrity.md). `public` is
   * all a mirror needs; `private` vouches for the notice batches a local runtime reads; `manifest` for `register
   * verify`. These are digests of digests: nothing of the private part can be learnt from them.
   */
  sha256: { manifest: string; public: string; private: string };
}

export const INDEX_FILE = 'index.json';
/**
 * Beside an index.json of a mirror's own (`register pull --stamp`: only some of the origin's stamps), the origin's
 * signed index.json that pull verified, kept verbatim with its signature as ORIGIN_INDEX_FILE + `.sig`: `serve
 * --trust` takes the unsigned local index only when every entry it lists is the origin's, under that signature
 * (docs/integrity.md, "A copy holding some stamps"). A full copy has no such file.
 */
export const ORIGIN_INDEX_FILE = 'index.origin.json';
export const PUBLIC_DIR = 'public';
export const PRIVATE_DIR = 'private';
export const RELEASE_DOC = 'release.json';
export const MANIFEST_FILE = 'manifest.json';
/** The signature files of a dist, each beside what it signs (one definition for signer, verifier, puller and server). */
export const INDEX_SIG_FILE = `${INDEX_FILE}${SIG_SUFFIX}`;
export const ORIGIN_INDEX_SIG_FILE = `${ORIGIN_INDEX_FILE}${SIG_SUFFIX}`;
export const MANIFEST_SIG_FILE = `${MANIFEST_FILE}${SIG_SUFFIX}`;
/** Path of a stamp's public manifest signature, relative to the dist. */
export const manifestSigPath = (stamp: string): string => `${stamp}/${PUBLIC_DIR}/${MANIFEST_SIG_FILE}`;

export interface ReleaseSummary {
  schema_version: string;
  generated_at: string;
  stamp: string;
  tier: 'public_bridge_v1' | 'open_census';
  publishable: boolean;
  index_generated_at: string;
}

/**
 * Entity index values (msgpack arrays), keyed by register ID:
 * - live:      [0, pack, offset, length, aliasesCut, attributesCut, bridgesCut, relationshipsCut, overlayCut, endCut, bridgeCount, typeIndex, checksum]
 * - redirect:  [1, finalSurvivorId]
 * - tombstone: [2, pack, offset, length, checksum]   (the stub holds the exact 410 Error body)
 * A live shard is `{core` `,"aliases":…,"names":…` `,"attributes":…` `,"bridges":…` `,"relationships":…`
 * `,"overlay":…` `,"match":…` `}`; the cuts are the byte offsets where each section starts (the overlay section is
 * empty when the entity has none) and where the tail starts: a match's `,"match":…` (empty for any other type),
 * which every answer carries, then the closing `}` as the shard's last byte. The bridges section may be in the stored form of
 * common/shard-format.ts (each bridge without entity_type and role, one role marker byte before its `}`); the
 * runtime expands it to the full text, and passes a section without markers through.
 * typeIndex indexes ENTITY_TYPES; checksum is checksum32 (CRC-32) of the shard's bytes, checked on every read so a
 * corrupted pack answers 503 rather than wrong bytes.
 */
export type EntityIndexValue =
  | [0, number, number, number, number, number, number, number, number, number, number, number, number]
  | [1, string]
  | [2, number, number, number, number];

export const ENTRY_LIVE = 0;
export const ENTRY_REDIRECT = 1;
export const ENTRY_TOMBSTONE = 2;

/**
 * Where each field of an index entry sits, by kind: the compiler writes entries with the constructors below and the
 * runtime reads them with these indices, so the two cannot disagree about a position.
 */
export const LIVE_ENTRY = {
  pack: 1, offset: 2, length: 3,
  /** The six cuts, in shard order (aliases, attributes, bridges, relationships, overlay, tail): cutsFrom .. cutsFrom + 5. */
  cutsFrom: 4,
  bridgeCount: 10, typeIndex: 11, checksum: 12,
} as const;
export const REDIRECT_ENTRY = { survivor: 1 } as const;
export const TOMBSTONE_ENTRY = { pack: 1, offset: 2, length: 3, checksum: 4 } as const;
export type LiveIndexValue = Extract<EntityIndexValue, { 0: typeof ENTRY_LIVE }>;
export type TombstoneIndexValue = Extract<EntityIndexValue, { 0: typeof ENTRY_TOMBSTONE }>;

/** Where a shard sits: its pack (an index into ReleaseDoc.shard_packs), byte offset and length, and its checksum32. */
export interface ShardLocation {
  pack: number;
  offset: number;
  length: number;
  checksum: number;
}

/** A live entity's index entry. `cuts`: the six section offsets (see EntityIndexValue). */
export function liveEntry(at: ShardLocation, cuts: ArrayLike<number>, bridgeCount: number, typeIndex: number): LiveIndexValue {
  return [ENTRY_LIVE, at.pack, at.offset, at.length, cuts[0], cuts[1], cuts[2], cuts[3], cuts[4], cuts[5], bridgeCount, typeIndex, at.checksum];
}

/** A tombstoned ID's index entry: where its stub sits. */
export function tombstoneEntry(at: ShardLocation): TombstoneIndexValue {
  return [ENTRY_TOMBSTONE, at.pack, at.offset, at.length, at.checksum];
}

/** Resolve values, keyed by resolveKey(): [[reep_id, typeIndex], ...] sorted by reep_id (IDs may be redirects). */
export type ResolveValue = [string, number][];
export const resolveKey = (provider: string, namespace: string, externalId: string): string =>
  `${provider}\u0000${namespace}\u0000${externalId}`;

/**
 * Search values, keyed by normalised token: [exact, prefix].
 * exact: ascending `ordinal * 4 + source` (source 3 = canonical label, 2 = canonical alias, 1 = overlay alias),
 *        written as deltas from the previous element (first element absolute).
 * prefix: ascending ordinals of entities having a token that starts with the key (key length >= MIN_PREFIX),
 *        also as deltas. Both capped at MAX_CANDIDATES_PER_TOKEN entities.
 * Ordinals number live entities by (bridge_count desc, reep_id asc), so the best candidates are the smallest.
 */
export type SearchValue = [number[], number[]];
/**
 * Name keys values, keyed by a match key of common/name-keys.ts (`w:`, `p:` or `i:` and the key): [entities, entries].
 * `entities` counts every live entity with a name under the key; `entries` holds the names of the first
 * MAX_KEY_ENTITIES of them (label before alias, then most bridges, then register ID), each entity's names together.
 */
export type NameKeyValue = [number, NameKeyEntry[]];
/**
 * One name under a key: [reep_id, typeIndex, source, country, name]. source: 0 label, 1 alias, 2 overlay alias.
 * country: 0 none, else a position in ReleaseDoc.name_countries, plus one. name: as the release spells it.
 */
export type NameKeyEntry = [string, number, number, number, string];

/** Search docs (ordinal addressing): bucket = [[reep_id, typeIndex, label, bridge_count], ...]. */
export type SearchDoc = [string, number, string, number];

export interface ProviderInfo {
  name: string;
  role: ProviderRole;
  /**
   * The namespaces this provider's bridges use per entity type, most used first (compiler/records/provider-rollup.ts);
   * absent for a provider without bridges, and in a release compiled before contributions were checked.
   */
  namespaces?: Record<string, string[]>;
}

/** public/release.json: everything the runtime needs to open one compiled release. */
export interface ReleaseDoc {
  format: typeof DIST_FORMAT;
  stamp: string;
  prior: string | null;
  summary: ReleaseSummary;
  /** The served population (`/meta` counts), e.g. entities per type, redirects, tombstones, bridges. */
  counts: Record<string, number>;
  /** Provider keys known to this release, sorted, with their role (unknown provider in a resolve is a 400). */
  providers: ProviderInfo[];
  /** Shard packs holding entity documents and tombstone stubs, indexed by the `pack` number of index values. */
  shard_packs: string[];
  families: {
    entities: BucketFamily;
    resolve: BucketFamily;
    search: BucketFamily;
    search_docs: BucketFamily;
    /** Name match keys (NameKeyValue). */
    names: BucketFamily;
  };
  /** The countries the name keys' entries number (NameKeyEntry), sorted. */
  name_countries: string[];
  /** Precomputed response bodies (paths relative to public/, each file holding exact JSON bytes). */
  documents: {
    /** GET / per namespace */
    root: { v1: string; next: string };
    /** GET /meta per namespace */
    meta: { v1: string; next: string };
    providers: string;
    coverage: string;
    /** null when the release ships no notices (the endpoint then answers 503 summary_unavailable). */
    notices_summary: string | null;
  };
  changes: ChangesDoc;
  /** The match index of GET /matches (common/match-index.ts); absent in a dist compiled before it existed. */
  matches?: MatchesDoc;
  /** Relationship families whose count exceeds this are marked summary_only_high_cardinality. */
  high_cardinality_threshold: number;
}

/**
 * The changelog of one release against its predecessor, pre-paged.
 * Streams: `all`, `type:<event type>`, `provider:<provider>` (provider_updated events touching it).
 * Each stream is an ordinal family whose values are event JSON texts, `page_events` per bucket.
 */
export interface ChangesDoc {
  prior: string | null;
  /** Events per type (every type present, zero included). */
  counts: Record<string, number>;
  /** provider_updated events per provider (providers with none are absent). */
  provider_counts: Record<string, number>;
  page_events: number;
  streams: Record<string, { total: number; family: BucketFamily }>;
}

export const CHANGE_EVENT_TYPES = [
  'entity_added',
  'entity_status_changed',
  'label_updated',
  'entity_removed',
  'redirect_changed',
  'provider_updated',
  'fixture_updated',
  'score_updated',
] as const;

/** Private notice batch: dist/<stamp>/private/notices/<provider>.json (never under public/). */
export interface NoticeBatch {
  provider: string;
  batch_id: number;
  generated_at: string | null;
  findings: NoticeFindingRecord[];
}

/** A finding as the release ships it: the contract's ProviderNoticeFinding without seen/acknowledged state. */
export interface NoticeFindingRecord {
  finding_id: string;
  provider: string;
  kind: string;
  title: string;
  provider_ref: string | null;
  source: Record<string, unknown>;
  observed: string | null;
  expected: string | null;
  severity: string;
  suggested_action: string | null;
  payload: Record<string, unknown>;
  payload_hash: string;
  first_seen_at: string | null;
  last_seen_at: string | null;
}
