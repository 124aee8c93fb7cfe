// Builds entity responses from a shard's bytes: the compiler wrote every section once, so the runtime slices and
// concatenates; only a `lang` filter or a relationships filter re-serialises the one section it changes. The
// bridges section is stored without its repeated per-bridge fields (common/shard-format.ts) and expanded here, by
// byte splicing, wherever it is emitted.
import type { Include } from '../common/ids.ts';
import { concatToSend } from '../common/bytes.ts';
import { expandBridgesInto } from '../common/shard-format.ts';
import { ArtefactError } from './read-errors.ts';
import type { LiveEntity } from './release/open-release.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const CLOSE = enc.encode('}');
// Section order in an Entity, matching the cuts of EntityIndexValue: aliases(+names), attributes, bridges, relationships, overlay.
const SECTION_INDEX: Record<Include, number> = { aliases: 0, attributes: 1, bridges: 2, relationships: 3, overlay: 4 };
const INCLUDE_ORDER: readonly Include[] = ['aliases', 'attributes', 'bridges', 'relationships', 'overlay'];

/** The shard's tail before its closing `}`: a match's `,"match":…`, whatever `include` says; empty for other types. */
const tailOf = (e: LiveEntity): Uint8Array => e.shard.subarray(e.cuts[5], e.shard.length - 1);

/** Redirect fields, appended when a merged ID was asked for. */
function redirectTail(e: LiveEntity): Uint8Array | null {
  return e.requestedId ? enc.encode(`,"requested_id":${JSON.stringify(e.requestedId)},"redirected_to":${JSON.stringify(e.id)}`) : null;
}

/** The raw bytes of one section (`,"name":value…`), possibly empty (an entity without overlay). */
function section(e: LiveEntity, i: number): Uint8Array {
  return e.shard.subarray(e.cuts[i], e.cuts[i + 1]);
}

/** Value bytes of a section whose text is `,"<key>":<value>` (single-key sections). */
function sectionValue(e: LiveEntity, i: number, key: string): Uint8Array | null {
  const s = section(e, i);
  if (s.length === 0) return null;
  return s.subarray(key.length + 4);
}

/** Pushes the bridges bytes as the API answers them. Bytes that passed their checksum yet do not expand are a broken compile. */
function pushBridges(out: Uint8Array[], e: LiveEntity, stored: Uint8Array): void {
  try {
    expandBridgesInto(out, stored, e.entityType);
  } catch (err) {
    throw new ArtefactError(e.file, `the bridges section of ${e.id} does not expand (${(err as Error).message})`, e.id);
  }
}

function filterAliases(sectionBytes: Uint8Array, lang: string): Uint8Array {
  // The section is `,"aliases":[…],"names":[…]`; parse just it, keep aliases in `lang`, derive names again.
  const parsed = JSON.parse(`{${dec.decode(sectionBytes.subarray(1))}}`) as { aliases: { name: string; language: string | null }[] };
  const aliases = parsed.aliases.filter((a) => a.language === lang);
  const names: string[] = [];
  for (const a of aliases) if (!names.includes(a.name)) names.push(a.name);
  return enc.encode(`,"aliases":${JSON.stringify(aliases)},"names":${JSON.stringify(names)}`);
}

/**
 * Pushes an Entity body with the requested expansions onto `out` as byte slices (join them once to send): a batch
 * of 100 entities is copied once, into its response, not once per item and again per batch.
 */
export function entityParts(e: LiveEntity, include: ReadonlySet<Include>, lang: string | null, out: Uint8Array[] = []): Uint8Array[] {
  out.push(e.shard.subarray(0, e.cuts[0]));
  for (const inc of INCLUDE_ORDER) {
    if (!include.has(inc)) continue;
    const s = section(e, SECTION_INDEX[inc]);
    if (inc === 'bridges') pushBridges(out, e, s);
    else out.push(inc === 'aliases' && lang !== null ? filterAliases(s, lang) : s);
  }
  out.push(tailOf(e));
  const tail = redirectTail(e);
  if (tail) out.push(tail);
  out.push(CLOSE);
  return out;
}

export const entityBody = (e: LiveEntity, include: ReadonlySet<Include>, lang: string | null): Uint8Array => concatToSend(entityParts(e, include, lang));

const INCLUDE_BIT = new Map<Include, number>(INCLUDE_ORDER.map((inc, i) => [inc, 1 << i]));

/**
 * What an Entity body depends on within one release, as a cache key: the ID asked for (a merged ID's body names
 * it), the includes as a bit set (their order in the query does not change the body) and the lang filter.
 */
export function entityBodyKey(id: string, include: ReadonlySet<Include>, lang: string | null): string {
  let bits = 0;
  for (const inc of include) bits |= INCLUDE_BIT.get(inc)!;
  return lang === null ? `${bits}\u0000${id}` : `${bits}\u0000${id}\u0000${lang}`;
}

const head = (e: LiveEntity) => enc.encode(`{"reep_id":${JSON.stringify(e.id)}`);

/** GET /entities/{id}/bridges body. */
export function bridgesBody(e: LiveEntity): Uint8Array {
  const parts: Uint8Array[] = [head(e), enc.encode(',"bridges":')];
  pushBridges(parts, e, sectionValue(e, 2, 'bridges')!);
  parts.push(enc.encode(`,"count":${e.bridgeCount}`), redirectTail(e) ?? new Uint8Array(), CLOSE);
  return concatToSend(parts);
}

/** GET /entities/{id}/overlay body: the overlay object (empty when the entity has none) and how many layers it has. */
export function overlayBody(e: LiveEntity): Uint8Array {
  const value = sectionValue(e, 4, 'overlay');
  return concatToSend([head(e), enc.encode(',"overlay":'), value ?? enc.encode('{}'), enc.encode(`,"count":${value ? 1 : 0}`), redirectTail(e) ?? new Uint8Array(), CLOSE]);
}

/** GET /entities/{id}/relationships body, optionally restricted to one family and capped at `limit` families. */
export function relationshipsBody(e: LiveEntity, family: string | null, limit: number): Uint8Array {
  let value = sectionValue(e, 3, 'relationships')!;
  if (value.length > 2) {
    // Only a non-empty list can need filtering; families are few, so this parse is small.
    let list = JSON.parse(dec.decode(value)) as { family: string }[];
    if (family !== null || list.length > limit) {
      if (family !== null) list = list.filter((r) => r.family === family);
      value = enc.encode(JSON.stringify(list.slice(0, limit)));
    }
  }
  return concatToSend([head(e), enc.encode(',"relationships":'), value, redirectTail(e) ?? new Uint8Array(), CLOSE]);
}
