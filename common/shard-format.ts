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
  let out = ',"bridges":[';
  for (let i = 0; i < bridges.length; i++) {
    const b = bridges[i];
    const role = roleOf(b);
    const marker = MARKER_OF.get(role);
    if (marker === undefined) throw new Error(`[shard-format] unknown provider role ${JSON.stringify(role)}`);
    if (i > 0) out += ',';
    out += `{"provider":${quoted(b[0])},"namespace":${quoted(b[1])},"external_id":${jsonString(b[2])}${marker}}`;
  }
  return out + ']';
}

/** The section storedBridges makes for no bridges. */
export const NO_STORED_BRIDGES = ',"bridges":[]';

/** `[provider, namespace, external_id]` of each bridge in a stored section (as storedBridges wrote it), in order. */
export function parseStoredBridges(section: string): [string, string, string][] {
  if (!section.startsWith(',"bridges":')) throw new Error(`[shard-format] not a bridges section: ${JSON.stringify(section.slice(0, 40))}`);
  // Markers are the only raw control characters in the text (see the top of this file).
  const list = JSON.parse(section.slice(',"bridges":'.length).replace(MARKERS_RE, '')) as { provider: string; namespace: string; external_id: string }[];
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
