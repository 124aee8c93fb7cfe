// Stage 2, the entity shard: a live ID's full Entity JSON, written in its sections (whose ends the runtime slices
// at) with its index entry; a tombstone's stub and a redirect's entry.
import { ENTITY_TYPES, PROVIDER_ROLES, type EntityType } from '../../../common/ids.ts';
import { MAX_SHARD_BYTES } from '../../../common/limits.ts';
import { ENTRY_REDIRECT, liveEntry, tombstoneEntry } from '../../../common/dist-layout.ts';
import { ownCopy } from '../../../common/own-copy.ts';
import { jsonString } from '../../../common/json-string.ts';
import { RegisterError } from '../../../common/errors.ts';
import { noteSlack, type CompileContext } from '../../context.ts';
import type { PlacedShard, ShardPackWriter } from '../../write/shard-pack-writer.ts';
import type { ShardPlace } from '../../write/diff-base.ts';
import type { IndexEntryLog } from '../../records/index-entry-log.ts';
import type { Bridge, EntityRows } from '../../records/entity-rows.ts';
import { cmp, sortShort } from './short-lists.ts';
import type { MatchFacts } from '../../../common/scoreline.ts';
import { attributeKeyMarker, expandShardText, typeMarker, LARGEST_EXPANSION, SHARD_MARKERS as M, storedScorelineSection } from '../../../common/shard-format.ts';

/** Relationship families with more relationships than this are summarised as high-cardinality. */
export const HIGH_CARDINALITY = 1000;
/** Entity types whose relationship summary is empty by design (only structural relationships are summarised). */
const NO_RELATIONSHIPS = new Set<EntityType>(['player', 'coach', 'referee']);

interface Alias {
  name: string;
  language: string | null;
  type: string | null;
  rank: number | null;
}

/** The overlay an entity's shard holds under `overlay.kb` (written in the order its builder lists the fields). */
export interface Overlay {
  source: 'kb';
  source_tier: 'kb-originated';
  qid: string;
  link_confidence: number | null;
  dob_check: string | null;
  ids: { provider: string; property: string; external_id: string; confidence: number }[];
  aliases: { name: string; language: string | null; source: 'kb'; confidence: number | null }[];
}

/** What writing a live ID's shard gives back, for what stage 2 builds beside it. */
export interface LiveShard {
  loc: PlacedShard;
  /** Its aliases as the shard lists them. */
  aliases: Alias[];
  overlay: Overlay | null;
}

/** Writes the shards and index entries of one stage-2 range, counting what /meta reports. */
export class EntityShardWriter {
  /**
   * Byte ends of the last live shard's sections (see EntityIndexValue): core, aliases, attributes, bridges,
   * relationships, overlay, end. Overwritten by the next.
   */
  readonly cuts: number[] = [];

  /**
   * `roleOf` gives a bridge's provider role; `counts` are the range's served counts; `entitiesLabel` is how errors
   * name the entities table.
   */
  constructor(
    private readonly shards: ShardPackWriter,
    private readonly index: IndexEntryLog,
    private readonly roleOf: (bridge: Bridge) => string,
    private readonly counts: Record<string, number>,
    private readonly ctx: Pick<CompileContext, 'slack'>,
    private readonly entitiesLabel: string,
  ) {}

  /**
   * Writes a live ID's shard and index entry; `bridgeSection` is shardBridges of `bridges`, `match` a match's facts
   * (matchFactsOf), null for any other type; `prior` where the predecessor's shard of the ID sits in a pack this
   * release inherits (null: none, or the packs are not shared), to be kept there if unchanged.
   */
  live(a: EntityRows, type: EntityType, bridges: Bridge[], bridgeSection: string, match: MatchFacts | null, prior: ShardPlace | null = null): LiveShard {
    const counts = this.counts;
    counts.entities++;
    const typeKey = TYPE_COUNT_KEYS[a.type];
    counts[typeKey] = (counts[typeKey] ?? 0) + 1;

    // The texts every shard repeats are written as dictionary markers (common/shard-format.ts), which the runtime
    // expands when it reads the shard: the type, the canonical ID and the commonest state. A live ID passed
    // REGISTER_ID in stage 1: it needs no escaping.
    const core = `{"reep_id":"${a.id}"${typeMarker(a.type)}${q(a.label)}${a.status === 'active' ? M.active : `,"lifecycle_state":${q(a.status)}`}${M.canonical}`;

    const aliases = a.aliases.length ? aliasesOf(a.aliases) : [];
    let aliasSection = M.noAliases;
    if (aliases.length) {
      const names: string[] = [];
      for (const x of aliases) if (!names.includes(x.name)) names.push(x.name);
      counts.aliases += aliases.length;
      aliasSection = `,"aliases":${JSON.stringify(aliases)},"names":${JSON.stringify(names)}`;
    }

    const attrSection = a.attrs ? attributesSection(a.attrs) : `${M.attributes}}`;

    // The bridges section is stored without the entity_type and role every bridge repeats; the runtime splices
    // them back at each marker byte (common/shard-format.ts).
    counts.bridges += bridges.length;

    const relMap = a.rels ?? NO_RELS;
    for (const f of relMap.values()) counts.relationships += f.out;
    const relSection = NO_RELATIONSHIPS.has(type) ? `${M.relationships}]` : relationshipsSection(relMap);

    const overlay = this.overlayOf(a);
    if (overlay) counts.overlay_links++;
    const overlaySection = overlay ? `,"overlay":${JSON.stringify({ kb: overlay })}` : '';

    const cuts = this.cuts;
    // A match's scoreline closes its shard, after the overlay: every answer carries it, whatever `include` says.
    const tail = match ? `${storedScorelineSection(match.scoreline)}}` : '}';
    const parts = [core, aliasSection, attrSection, bridgeSection, relSection, overlaySection, tail];
    const loc = this.shards.addParts(parts, cuts, prior);
    // The runtime answers a shard with its dictionary and bridges expanded, so that is the size the cap holds;
    // worked out exactly only when the longest expansions could pass it.
    if (loc.length * LARGEST_EXPANSION + bridges.length * LONGEST_SPLICE > MAX_SHARD_BYTES) this.checkShardSize(a, type, parts, bridges);
    this.index.add(a.id, liveEntry(loc, cuts, bridges.length, a.type));
    return { loc, aliases, overlay };
  }

  /** A merged ID: its index entry points at the final survivor. */
  redirect(id: string, to: string): void {
    this.index.add(id, [ENTRY_REDIRECT, to]);
    this.counts.redirects++;
  }

  /** A tombstoned ID: a stub holding the exact 410 body, and its index entry. */
  tombstone(id: string): void {
    const loc = this.shards.add(tombstoneBody(id));
    this.index.add(id, tombstoneEntry(loc));
    this.counts.tombstones++;
  }

  /** Refuses the entity whose shard, expanded, is past MAX_SHARD_BYTES, naming its largest section. */
  private checkShardSize(a: EntityRows, type: EntityType, parts: string[], bridges: Bridge[]): void {
    const sizes = parts.slice(0, SECTION_NAMES.length).map((p) => Buffer.byteLength(expandShardText(p, a.id)));
    for (const b of bridges) sizes[SECTION_NAMES.indexOf('bridges')] += spliceBytes(type, this.roleOf(b)) - 1;
    const expanded = sizes.reduce((n, s) => n + s, 0) + Buffer.byteLength(expandShardText(parts[SECTION_NAMES.length], a.id));
    if (expanded <= MAX_SHARD_BYTES) return;
    const largest = sizes.indexOf(Math.max(...sizes));
    const rows = [a.aliases.length, a.attrs?.size ?? 0, bridges.length, a.rels?.size ?? 0, a.xids.length + a.oaliases.length];
    const what = largest === 0 ? '' : ` (${rows[largest - 1]} ${SECTION_ROWS[largest]})`;
    throw new RegisterError(
      'compile',
      `entity ${a.id}: its shard is ${expanded} bytes, over the ${MAX_SHARD_BYTES}-byte cap MAX_SHARD_BYTES (docs/limits.md); ` +
        `its largest section is ${SECTION_NAMES[largest]}${what}, ${sizes[largest]} bytes`,
      this.entitiesLabel,
    );
  }

  /** The entity's overlay, or null when it has none (or none with a valid QID, which is noted as slack). */
  private overlayOf(a: EntityRows): Overlay | null {
    const qid = a.link?.[0] || a.xids.find((x) => x[4])?.[4] || a.oaliases.find((x) => x[3])?.[3] || '';
    if (!/^Q[1-9][0-9]*$/.test(qid)) {
      if (a.link || a.xids.length || a.oaliases.length) noteSlack(this.ctx, 'csv/overlay_links.csv.gz', 'overlay without a valid QID', a.id);
      return null;
    }
    const ids: OverlayIds = new Map();
    for (const [prov, prop, ext, conf] of a.xids) addOverlayId(ids, prov, prop, ext, conf);
    if (a.link?.[3]) {
      try {
        const inherited = JSON.parse(a.link[3]);
        if (Array.isArray(inherited)) for (const x of inherited) if (x && typeof x === 'object') addOverlayId(ids, String(x.provider ?? ''), String(x.property ?? ''), String(x.external_id ?? ''), x.confidence);
      } catch {
        noteSlack(this.ctx, 'csv/overlay_links.csv.gz', 'inherited is not valid JSON', a.id);
      }
    }
    const aliasMap = new Map<string, { name: string; language: string | null; source: 'kb'; confidence: number | null }>();
    for (const [name, language, conf] of a.oaliases) {
      if (!name) continue;
      const k = `${name}\u0000${language}`;
      const c = conf === '' ? null : parseFloat(conf);
      const prev = aliasMap.get(k);
      if (!prev || (c !== null && (prev.confidence === null || prev.confidence < c))) {
        aliasMap.set(k, { name, language: language || null, source: 'kb', confidence: c !== null && Number.isFinite(c) ? c : null });
      }
    }
    return {
      source: 'kb',
      source_tier: 'kb-originated',
      qid,
      link_confidence: finiteOrNull(a.link?.[1]),
      dob_check: a.link?.[2] ? a.link[2] : null,
      ids: sortShort([...ids.keys()], cmp).map((k) => ids.get(k)!),
      aliases: sortShort([...aliasMap.keys()], cmp).map((k) => aliasMap.get(k)!),
    };
  }
}

/** The body of a retired ID's 410, stored as its stub. */
export function tombstoneBody(id: string): string {
  return JSON.stringify({ error: 'gone', message: `Register ID ${id} was retired and is never reused.`, detail: id });
}

/** A shard's sections in order (see EntityIndexValue's cuts), and what each section's rows are. */
const SECTION_NAMES = ['core', 'aliases', 'attributes', 'bridges', 'relationships', 'overlay'];
const SECTION_ROWS = ['', 'aliases', 'attributes', 'bridges', 'relationship families', 'overlay rows'];
/** The bytes the runtime puts in place of one bridge's role marker (see common/shard-format.ts). */
const spliceBytes = (type: string, role: string): number => Buffer.byteLength(`,"entity_type":${JSON.stringify(type)},"role":${JSON.stringify(role)}`);
const LONGEST_SPLICE = Math.max(...ENTITY_TYPES.flatMap((t) => PROVIDER_ROLES.map((r) => spliceBytes(t, r))));

const NO_RELS: ReadonlyMap<string, { out: number; in: number }> = new Map();
const TYPE_COUNT_KEYS = ENTITY_TYPES.map((t) => `entities_${t}`);

// Per-entity helpers live out here, at module level: they need none of the writer's state.

/**
 * `,"attributes":{...}` with the names sorted, written out rather than built as an object for JSON.stringify: most
 * entities are matches with about ten attributes, and the object's keys (and `__proto__` or a numeric column name,
 * which an object would drop or reorder) cost more than the text. The quoted names are kept, one per column.
 */
function attributesSection(attrs: Map<string, string[]>): string {
  const names = sortShort([...attrs.keys()], cmp);
  let out = M.attributes;
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    let key = QUOTED_NAMES.get(name);
    if (key === undefined) QUOTED_NAMES.set(ownCopy(name), (key = attributeKeyMarker(name) ?? `${q(name)}:`));
    const values = attrs.get(name)!;
    out += (i === 0 ? key : `,${key}`) + (values.length === 1 ? `[${q(values[0])}]` : JSON.stringify(values));
  }
  return out + '}';
}
const QUOTED_NAMES = new Map<string, string>();

/**
 * `,"relationships":[...]`: a summary per family, by family name, written out as attributesSection is (an object
 * per family for JSON.stringify cost more than its text). Keys in this order: family, count, roles (incoming before
 * outgoing, each only when non-zero), source_providers, expansion.
 */
function relationshipsSection(rels: ReadonlyMap<string, { out: number; in: number }>): string {
  if (rels.size === 0) return `${M.relationships}]`;
  const families = sortShort([...rels.keys()], cmp);
  let out = M.relationships;
  for (let i = 0; i < families.length; i++) {
    const family = families[i];
    const f = rels.get(family)!;
    const count = f.out + f.in;
    const roles = f.in && f.out ? `${M.incoming}${f.in},${M.outgoing}${f.out}` : f.in ? `${M.incoming}${f.in}` : f.out ? `${M.outgoing}${f.out}` : '';
    // The summary's closing text (source_providers and expansion) is one marker.
    const end = count > HIGH_CARDINALITY ? M.highCardinality : M.summaryOnly;
    out += `${i === 0 ? '' : ','}${M.relationship}${q(family)}${M.count}${count}${M.roles}${roles}${end}`;
  }
  return out + ']';
}

type OverlayIds = Map<string, { provider: string; property: string; external_id: string; confidence: number }>;

/** Adds one overlay ID, keeping the highest confidence per (provider, property, external ID). */
function addOverlayId(ids: OverlayIds, provider: string, property: string, external_id: string, confidence: unknown): void {
  const c = typeof confidence === 'number' ? confidence : parseFloat(String(confidence));
  if (!provider || !external_id || !Number.isFinite(c)) return;
  const k = `${provider}\u0000${property}\u0000${external_id}`;
  const prev = ids.get(k);
  if (!prev || prev.confidence < c) ids.set(k, { provider, property, external_id, confidence: clamp01(c) });
}

const finiteOrNull = (s: string | undefined): number | null => (s === undefined || s === '' || !Number.isFinite(parseFloat(s)) ? null : parseFloat(s));

/** An entity's aliases as its shard lists them: by rank (unranked last), name, type and language, repeats dropped. */
function aliasesOf(rows: [string, string, string, string][]): Alias[] {
  const aliases: Alias[] = sortShort(
    rows.map(([name, kind, rank, language]) => ({ name, language: language || null, type: kind || null, rank: parseRank(rank) })),
    compareAliases,
  );
  return aliases.filter((x, i) => i === 0 || !sameAlias(x, aliases[i - 1]));
}

const compareAliases = (x: Alias, y: Alias) =>
  rankKey(x.rank) - rankKey(y.rank) || cmp(x.name, y.name) || cmp(x.type ?? '', y.type ?? '') || cmp(x.language ?? '', y.language ?? '');

const sameAlias = (x: Alias, y: Alias) => x.name === y.name && x.language === y.language && x.type === y.type && x.rank === y.rank;

const q = jsonString;
const parseRank = (s: string): number | null => (s === '' || !Number.isFinite(Number(s)) ? null : Number(s));
const rankKey = (r: number | null) => (r === null ? Number.MAX_SAFE_INTEGER : r);
const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
