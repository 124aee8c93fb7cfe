// The stored form of a shard's bridges section, shared by the compiler (writer) and the runtime (expander).
//
// Every bridge of an entity repeats `"entity_type":"<the entity's type>","role":"<its provider's role>"`: ~48
// bytes a bridge, ~10M bridges at full size. The stored form leaves both fields out and puts one control byte
// (the role's marker) just before the bridge object's closing `}`. JSON text never holds a raw control byte
// (JSON.stringify escapes U+0000..U+001F inside strings), so a marker cannot be confused with data, and the
// runtime restores the two fields by splicing fixed bytes at each marker: no parse, no re-serialisation, and
// the response bytes are exactly those of the full form.
//
//   full:   ,"bridges":[{"provider":"opta","namespace":"","external_id":"g1","entity_type":"match","role":"canonical_bridge"}]
//   stored: ,"bridges":[{"provider":"opta","namespace":"","external_id":"g1"<0x01>}]
//
// A section without markers (shards compiled before the stored form) passes through the expander unchanged.
import { concat } from './bytes.ts';
import { ownCopy } from './own-copy.ts';
import { jsonString } from './json-string.ts';
import { ENTITY_TYPES, isEntityType, PROVIDER_ROLES, type EntityType, type ProviderRole } from './ids.ts';

/** One bridge as the compiler holds it: provider, namespace, external ID, and the provider's role. */
export type BridgeRow = readonly [provider: string, namespace: string, externalId: string, role: string];

/** Marker byte of PROVIDER_ROLES[i] is FIRST_MARKER + i (0x01 canonical_bridge, 0x02 bridge_only, 0x03 overlay_only). */
const FIRST_MARKER = 0x01;
const LAST_MARKER = FIRST_MARKER + PROVIDER_ROLES.length - 1;
const MARKER_OF = new Map<string, string>(PROVIDER_ROLES.map((r, i) => [r, String.fromCharCode(FIRST_MARKER + i)]));

function checkType(entityType: string): void {
  if (!isEntityType(entityType)) throw new Error(`[shard-format] unknown entity type ${JSON.stringify(entityType)}`);
}

/** The bridges section as the API answers it (and as shards held it before the stored form): `,"bridges":[…]`. */
export function fullBridgesSection(entityType: EntityType, bridges: readonly BridgeRow[]): string {
  checkType(entityType);
  const objs = bridges.map(([provider, namespace, external_id, role]) => ({ provider, namespace, external_id, entity_type: entityType, role }));
  return `,"bridges":${JSON.stringify(objs)}`;
}

/**
 * The bridges section as a shard stores it. `entityType` is not written (the runtime takes it from the index
 * entry); it is checked, like each role, so nothing is stored that the runtime could not expand.
 */
export function storedBridgesSection(entityType: EntityType, bridges: readonly BridgeRow[]): string {
  checkType(entityType);
  return storedBridges(bridges, roleInRow);
}
const roleInRow = (b: BridgeRow): string => b[3];

/**
 * storedBridgesSection for bridges whose role `roleOf` gives (the compiler's `[provider, namespace, external_id]`
 * rows, whose role is their provider's): no row of four is made per bridge, ~10M of them at full size. The text
 * does not depend on the entity type, so it also stands for a merged ID's bridges in the diff base.
 */
export function storedBridges<B extends readonly [string, string, string, ...string[]]>(bridges: readonly B[], roleOf: (bridge: B) => string): string {
  return bridgesSection(bridges, roleOf, (b, marker) => `{"provider":${quoted(b[0])},"namespace":${quoted(b[1])},"external_id":${jsonString(b[2])}${marker}}`);
}

/**
 * storedBridges as a shard of dist format 5 holds it: its keys written as dictionary markers (see SHARD_MARKERS),
 * which expandShard turns back into storedBridges' text.
 */
export function shardBridges<B extends readonly [string, string, string, ...string[]]>(bridges: readonly B[], roleOf: (bridge: B) => string): string {
  if (bridges.length === 0) return NO_STORED_BRIDGES;
  const m = SHARD_MARKERS;
  return bridgesSection(bridges, roleOf, (b, marker) => `${m.bridge}${quoted(b[0])}${b[1] === '' ? m.noNamespace : m.namespace + quoted(b[1]) + m.externalId}${jsonString(b[2])}${marker}}`);
}

/** The bridges section, each bridge written by `write` with its provider role's marker (an unknown role is refused). */
function bridgesSection<B extends readonly [string, string, string, ...string[]]>(bridges: readonly B[], roleOf: (bridge: B) => string, write: (bridge: B, marker: string) => string): string {
  let out = ',"bridges":[';
  for (let i = 0; i < bridges.length; i++) {
    const b = bridges[i];
    const role = roleOf(b);
    const marker = MARKER_OF.get(role);
    if (marker === undefined) throw new Error(`[shard-format] unknown provider role ${JSON.stringify(role)}`);
    if (i > 0) out += ',';
    out += write(b, marker);
  }
  return out + ']';
}

/** The section storedBridges makes for no bridges. */
export const NO_STORED_BRIDGES = ',"bridges":[]';

/** `[provider, namespace, external_id]` of each bridge in a stored section (as storedBridges or shardBridges wrote it), in order. */
export function parseStoredBridges(section: string): [string, string, string][] {
  if (!section.startsWith(',"bridges":')) throw new Error(`[shard-format] not a bridges section: ${JSON.stringify(section.slice(0, 40))}`);
  // Markers are the only raw control characters in the text (see the top of this file).
  const list = JSON.parse(expandShardText(section.slice(',"bridges":'.length), '').replace(MARKERS_RE, '')) as { provider: string; namespace: string; external_id: string }[];
  return list.map((b) => [b.provider, b.namespace, b.external_id]);
}
const MARKERS_RE = new RegExp(`[${String.fromCharCode(FIRST_MARKER)}-${String.fromCharCode(LAST_MARKER)}]`, 'g');

// Providers and namespaces are a few dozen strings repeated over ~10M bridges: each is quoted once.
const QUOTED = new Map<string, string>();
function quoted(s: string): string {
  let q = QUOTED.get(s);
  if (q === undefined) {
    q = JSON.stringify(s);
    // Bounded, should a release hold unusually many; the key copied so it pins no chunk of input text.
    if (QUOTED.size < 4096) QUOTED.set(ownCopy(s), q);
  }
  return q;
}

const enc = new TextEncoder();
/** SPLICE[type][role]: the bytes a marker stands for, built once. */
const SPLICE: Uint8Array[][] = ENTITY_TYPES.map((t) => PROVIDER_ROLES.map((r: ProviderRole) => enc.encode(`,"entity_type":${JSON.stringify(t)},"role":${JSON.stringify(r)}`)));
const TYPE_INDEX = new Map<string, number>(ENTITY_TYPES.map((t, i) => [t, i]));
const CLOSE_BRACE = 0x7d;

/**
 * Expands stored bridges bytes (the section or any slice of it, e.g. the value after `"bridges":`) to the full
 * form, as slices pushed onto `out`: views of `stored` between markers and the shared splice bytes, so nothing is
 * copied until the whole response is joined once. Pushes `stored` itself when it holds no marker. Every marker
 * stands just before a `}`, so a native search for `}` finds them (a `}` inside an ID is preceded by a printable
 * byte or an escape, never a raw control byte).
 */
export function expandBridgesInto(out: Uint8Array[], stored: Uint8Array, entityType: string): void {
  if (stored.length > EXPAND_IN_ONE_ABOVE) {
    out.push(expandInOne(stored, entityType));
    return;
  }
  let splices: Uint8Array[] | undefined;
  let from = 0;
  for (let i = stored.indexOf(CLOSE_BRACE); i !== -1; i = stored.indexOf(CLOSE_BRACE, i + 1)) {
    const c = stored[i - 1];
    if (!(c < 0x20)) continue; // also false for i = 0 (undefined)
    if (c < FIRST_MARKER || c > LAST_MARKER) throw new Error(`[shard-format] byte 0x${c.toString(16)} at ${i - 1} is no bridge marker`);
    if (splices === undefined) {
      const t = TYPE_INDEX.get(entityType);
      if (t === undefined) throw new Error(`[shard-format] unknown entity type ${JSON.stringify(entityType)}`);
      splices = SPLICE[t];
    }
    out.push(stored.subarray(from, i - 1), splices[c - FIRST_MARKER]);
    from = i;
  }
  out.push(from === 0 ? stored : stored.subarray(from));
}

/**
 * Sections longer than this are expanded into one array of their own rather than pushed as two slices a bridge. The
 * largest entity the compiler accepts holds ~3,500 bridges: as slices, a 100-item batch of it made ~700,000 short-
 * lived objects, whose churn grew the young generation by tens of MiB; copied, it makes 100 arrays. An ordinary
 * entity (a few dozen bridges) stays on the slice path, which copies nothing until the answer is joined.
 */
const EXPAND_IN_ONE_ABOVE = 16 * 1024;

/** Copies `source[from, to)` into `target` at `at` without making a view object (Node's native copy where there is one). */
const copyRange: (source: Uint8Array, target: Uint8Array, at: number, from: number, to: number) => void =
  typeof globalThis.Buffer === 'function'
    ? (source, target, at, from, to) => void globalThis.Buffer.prototype.copy.call(source, target, at, from, to)
    : (source, target, at, from, to) => target.set(source.subarray(from, to), at);

/** The expanded section as one new array: one pass to size it, one to fill it. Throws what expandBridgesInto throws. */
function expandInOne(stored: Uint8Array, entityType: string): Uint8Array {
  const t = TYPE_INDEX.get(entityType);
  const splices = t === undefined ? undefined : SPLICE[t];
  let size = stored.length;
  for (let i = stored.indexOf(CLOSE_BRACE); i !== -1; i = stored.indexOf(CLOSE_BRACE, i + 1)) {
    const c = stored[i - 1];
    if (!(c < 0x20)) continue;
    if (c < FIRST_MARKER || c > LAST_MARKER) throw new Error(`[shard-format] byte 0x${c.toString(16)} at ${i - 1} is no bridge marker`);
    if (splices === undefined) throw new Error(`[shard-format] unknown entity type ${JSON.stringify(entityType)}`);
    size += splices[c - FIRST_MARKER].length - 1;
  }
  if (size === stored.length) return stored;
  const out = new Uint8Array(size);
  let from = 0;
  let at = 0;
  for (let i = stored.indexOf(CLOSE_BRACE); i !== -1; i = stored.indexOf(CLOSE_BRACE, i + 1)) {
    const c = stored[i - 1];
    if (!(c < 0x20)) continue;
    copyRange(stored, out, at, from, i - 1);
    at += i - 1 - from;
    const splice = splices![c - FIRST_MARKER];
    out.set(splice, at);
    at += splice.length;
    from = i;
  }
  copyRange(stored, out, at, from, stored.length);
  return out;
}

/** expandBridgesInto as one array (`stored` itself when it holds no marker). */
export function expandBridges(stored: Uint8Array, entityType: string): Uint8Array {
  const parts: Uint8Array[] = [];
  expandBridgesInto(parts, stored, entityType);
  return parts.length === 1 ? parts[0] : concat(parts);
}

// The shard dictionary (dist format 5). A shard repeats the same keys and punctuation in every entity, and its own
// register ID as its canonical ID: at full size ~1.4 GB of the shard packs' ~2.1 GB. The stored shard writes each such text as
// a control byte (or ESCAPE and an index byte), which the runtime's shard reader expands once per read
// (expandShard), before anything slices it: every section, and so every answer, is the same bytes as before. As
// with the role markers, JSON text never holds a raw control byte, so a marker cannot be confused with data; the
// role markers (0x01-0x03) are left for expandBridgesInto. Tab, newline and carriage return are never markers.

/** `{id}` in a text stands for the shard's own register ID. */
const ID_SLOT = '{id}';
/** Texts of the one-byte markers, in the order of DICTIONARY_BYTES. */
const SINGLE_TEXTS = [
  `,"canonical_reep_id":"${ID_SLOT}"`,
  ',"lifecycle_state":"active"',
  ',"aliases":[],"names":[]',
  ',"attributes":{',
  '{"provider":',
  ',"namespace":"","external_id":',
  ',"namespace":',
  ',"external_id":',
  ',"relationships":[',
  '{"family":',
  ',"count":',
  ',"roles":{',
  '"outgoing":',
  '"incoming":',
  '},"source_providers":[],"expansion":"summary_only"}',
  ',"match":{"home_score":',
  ',"away_score":',
  ',"result_form":',
  ',"shootout_home":',
  ',"shootout_away":',
  ',"score_basis":',
  ',"home_id":',
  ',"away_id":',
  ',"played_on":',
] as const;
/** The control bytes that are one-byte markers: 0x04-0x1e but tab, newline and carriage return. */
const DICTIONARY_BYTES = [0x04, 0x05, 0x06, 0x07, 0x08, 0x0b, 0x0c, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e];
/**
 * Two-byte markers: ESCAPE, then EXTENDED_BASE plus an index into EXTENDED_TEXTS: a printable byte, so no tab or
 * newline appears in a stored shard (nor in a diff base's lines, which hold stored bridges sections).
 */
const ESCAPE = 0x1f;
const EXTENDED_BASE = 0x30;
/** Attribute names whose key (`"name":`) has a marker: those every match, player and official carries. */
const ATTRIBUTE_NAMES = [
  'played_on', 'match_state', 'home_id', 'away_id', 'score_basis', 'result_form', 'home_score', 'away_score', 'gender', 'country',
  'observed_clubs', 'last_observed_season', 'first_observed_season', 'basis',
] as const;
const EXTENDED_TEXTS: readonly string[] = [
  '},"source_providers":[],"expansion":"summary_only_high_cardinality"}',
  // What follows a live shard's `{"reep_id":"<id>"`, per entity type: extended index 1 + the type's index in
  // ENTITY_TYPES. The ID itself stays text, so each stored shard still names its entity.
  ...ENTITY_TYPES.map((t) => `,"entity_type":"${t}","name_en":`),
  ...ATTRIBUTE_NAMES.map((n) => `"${n}":`),
];
if (SINGLE_TEXTS.length !== DICTIONARY_BYTES.length || EXTENDED_BASE + EXTENDED_TEXTS.length > 0x7b) throw new Error('[shard-format] the dictionary does not fit its markers');

const markerOf = (i: number): string => String.fromCharCode(DICTIONARY_BYTES[i]);
const extended = (i: number): string => String.fromCharCode(ESCAPE, EXTENDED_BASE + i);

/** The markers a compiler writes in place of the dictionary's texts (see SINGLE_TEXTS for what each stands for). */
export const SHARD_MARKERS = {
  canonical: markerOf(0),
  active: markerOf(1),
  noAliases: markerOf(2),
  attributes: markerOf(3),
  bridge: markerOf(4),
  noNamespace: markerOf(5),
  namespace: markerOf(6),
  externalId: markerOf(7),
  relationships: markerOf(8),
  relationship: markerOf(9),
  count: markerOf(10),
  roles: markerOf(11),
  outgoing: markerOf(12),
  incoming: markerOf(13),
  summaryOnly: markerOf(14),
  highCardinality: extended(0),
} as const;

/** The marker of the text after a live shard's ID (`,"entity_type":…,"name_en":`) for an ENTITY_TYPES index. */
export const typeMarker = (typeIndex: number): string => extended(1 + typeIndex);

const ATTRIBUTE_MARKERS = new Map<string, string>(ATTRIBUTE_NAMES.map((n, i) => [n, extended(1 + ENTITY_TYPES.length + i)]));
/** The marker of an attribute's key (`"name":`), or undefined for a name without one. */
export const attributeKeyMarker = (name: string): string | undefined => ATTRIBUTE_MARKERS.get(name);

/** The scoreline's keys as markers, in SCORELINE_FIELDS order; the first opens the object (`,"match":{"home_score":`). */
const SCORELINE_MARKERS = [15, 16, 17, 18, 19, 20, 21, 22, 23].map(markerOf);
const SCORELINE_KEYS = ['home_score', 'away_score', 'result_form', 'shootout_home', 'shootout_away', 'score_basis', 'home_id', 'away_id', 'played_on'] as const;

/** A match's tail as a shard stores it: scorelineSection's text with its keys as markers. */
export function storedScorelineSection(s: Readonly<Record<(typeof SCORELINE_KEYS)[number], string | number | null>>): string {
  let out = '';
  for (let i = 0; i < SCORELINE_KEYS.length; i++) {
    const v = s[SCORELINE_KEYS[i]];
    out += SCORELINE_MARKERS[i] + (v === null ? 'null' : typeof v === 'number' ? String(v) : jsonString(v));
  }
  return out + '}';
}

/** One dictionary entry as bytes: the text before the ID, and (for a text with the ID) the text after it. */
interface Entry {
  before: Uint8Array;
  after: Uint8Array | null;
}
const entryOf = (text: string): Entry => {
  const at = text.indexOf(ID_SLOT);
  return at < 0 ? { before: enc.encode(text), after: null } : { before: enc.encode(text.slice(0, at)), after: enc.encode(text.slice(at + ID_SLOT.length)) };
};
/** SINGLE_ENTRY[byte]: the entry of a one-byte marker, undefined for any other byte. */
const SINGLE_ENTRY: (Entry | undefined)[] = new Array(0x20);
DICTIONARY_BYTES.forEach((b, i) => (SINGLE_ENTRY[b] = entryOf(SINGLE_TEXTS[i])));
const EXTENDED_ENTRY: Entry[] = EXTENDED_TEXTS.map(entryOf);
const FIRST_DICTIONARY_BYTE = 0x04;
/** The most bytes one marker stands for, besides the ID it may hold. */
const LONGEST_TEXT = Math.max(...[...SINGLE_ENTRY, ...EXTENDED_ENTRY].map((e) => (e ? e.before.length + (e.after ? e.after.length : 0) : 0)));

/** A shard as the runtime reads it: its full text and its section cuts in that text. */
export interface ExpandedShard {
  bytes: Uint8Array;
  cuts: number[];
}

/**
 * The full text of a stored shard of register ID `id`, and `cuts` (offsets into the stored bytes, ascending) moved to
 * where they fall in it. Returns `stored` and `cuts` themselves when it holds no dictionary marker (a tombstone stub,
 * or a shard of an older format). Throws on a control byte that is no marker: bytes that passed their checksum yet
 * do not expand are a broken compile.
 */
export function expandShard(stored: Uint8Array, id: string, cuts: readonly number[], alloc: (n: number) => Uint8Array = (n) => new Uint8Array(n)): ExpandedShard {
  // One pass, byte by byte, into a scratch buffer, then one copy out: a shard is ~1 KB with a few dozen markers,
  // where a loop beats the native copy calls two passes would make per marker (measured ~5x).
  const n = stored.length;
  const room = LONGEST_TEXT + id.length;
  // Room for every byte left as it is, and one marker's text: checked again only at each marker.
  let out: Uint8Array = n + room > scratch.length ? (scratch = growScratch(scratch, 0, n + room)) : scratch;
  const moved = new Array<number>(cuts.length);
  let k = 0;
  let nextCut = cuts.length > 0 ? cuts[0] : Infinity;
  let at = 0;
  let markers = 0;
  for (let i = 0; i < n; i++) {
    if (i >= nextCut) {
      while (k < cuts.length && cuts[k] <= i) moved[k++] = at;
      nextCut = k < cuts.length ? cuts[k] : Infinity;
    }
    const b = stored[i];
    if (b >= 0x20 || b < FIRST_DICTIONARY_BYTE) {
      out[at++] = b;
      continue;
    }
    const e = b === ESCAPE ? EXTENDED_ENTRY[stored[++i] - EXTENDED_BASE] : SINGLE_ENTRY[b];
    if (e === undefined) throw new Error(`[shard-format] byte 0x${b.toString(16)} at ${b === ESCAPE ? i - 1 : i} is no dictionary marker`);
    markers++;
    if (at + (n - i) + room > out.length) out = scratch = growScratch(out, at, at + (n - i) + room);
    const before = e.before;
    for (let j = 0; j < before.length; j++) out[at++] = before[j];
    if (e.after !== null) {
      // A register ID is ASCII (REGISTER_ID): one byte a character.
      for (let j = 0; j < id.length; j++) out[at++] = id.charCodeAt(j);
      const after = e.after;
      for (let j = 0; j < after.length; j++) out[at++] = after[j];
    }
  }
  if (markers === 0) return { bytes: stored, cuts: cuts as number[] };
  while (k < cuts.length) moved[k] = at + cuts[k++] - n;
  const bytes = alloc(at);
  bytes.set(out.subarray(0, at));
  return { bytes, cuts: moved };
}

/** What expandShard writes into before its one copy out; grown (never shrunk) for a larger shard. */
let scratch: Uint8Array = new Uint8Array(64 * 1024);
function growScratch(old: Uint8Array, used: number, need: number): Uint8Array {
  const bigger = new Uint8Array(Math.max(need, old.length * 2));
  bigger.set(old.subarray(0, used));
  return bigger;
}

const DICTIONARY_MARKER_RE = /\x1f[\s\S]|[\x04-\x08\x0b\x0c\x0e-\x1e]/g;
const textOf = (e: Entry, id: string): string => dec.decode(e.before) + (e.after === null ? '' : id + dec.decode(e.after));
const dec = new TextDecoder();

/** expandShard for text: `stored` (a shard or any whole sections of it) with every dictionary marker expanded. */
export function expandShardText(stored: string, id: string): string {
  return stored.replace(DICTIONARY_MARKER_RE, (m) => {
    const e = m.length === 2 ? EXTENDED_ENTRY[m.charCodeAt(1) - EXTENDED_BASE] : SINGLE_ENTRY[m.charCodeAt(0)];
    if (e === undefined) throw new Error(`[shard-format] ${JSON.stringify(m)} is no dictionary marker`);
    return textOf(e, id);
  });
}

/** The most bytes one stored byte can stand for with a register ID: a bound for size checks. */
export const LARGEST_EXPANSION = LONGEST_TEXT + 16;
