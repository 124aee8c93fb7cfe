// Where an entity answer is made, for GET /entities/{id} (and its views), batch items and resolve: the lookup of a
// live entity (404 never published, 410 retired), the cached answer for the same question, and the composition from
// a shard's bytes. The compiler wrote every section once, so composing slices and concatenates; only a `lang`
// filter or a relationships filter re-serialises the one section it changes. The bridges section is stored without
// its repeated per-bridge fields (common/shard-format.ts) and expanded here, by byte splicing, wherever it is emitted.
import type { Include } from '../common/ids.ts';
import { concatToSend } from '../common/bytes.ts';
import { expandBridgesInto } from '../common/shard-format.ts';
import { ApiError } from './api-error.ts';
import { isPromise, type MaybePromise } from './interfaces.ts';
import { ArtefactError } from './read-errors.ts';
import type { EntityLookup, LiveEntity, Release } from './release/open-release.ts';
import type { Reply } from './route.ts';

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

/**
 * One section as the object its text is (0 aliases, 1 attributes, 2 bridges as stored, 3 relationships, 4 overlay);
 * empty when the entity has none. For readers of a few fields (name matching, the contributions check).
 */
export function sectionObject(e: LiveEntity, i: number): Record<string, unknown> {
  const s = section(e, i);
  return s.length === 0 ? {} : (JSON.parse(`{${dec.decode(s.subarray(1))}}`) as Record<string, unknown>);
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

/** `include` as a bit set: its order and repetition in a query change no body, so they change no cached answer's key. */
export function includeBits(include: ReadonlySet<Include>): number {
  let bits = 0;
  for (const inc of include) bits |= INCLUDE_BIT.get(inc)!;
  return bits;
}

/** One entity question: the ID asked for, the expansions and the lang filter, and the key its answer is kept under. */
export interface EntityQuestion {
  id: string;
  include: ReadonlySet<Include>;
  lang: string | null;
  key: string;
}

/**
 * The question `id` with `include` and `lang` asks `release`. Its key names everything the body depends on: the
 * release (its answerScope), the ID asked for (a merged ID's body names it), the includes as a bit set (their
 * order in the query does not change the body) and the lang filter.
 */
export function entityQuestion(release: Release, id: string, include: ReadonlySet<Include>, lang: string | null): EntityQuestion {
  const bits = includeBits(include);
  const key = lang === null ? `${release.answerScope}${bits}\u0000${id}` : `${release.answerScope}${bits}\u0000${id}\u0000${lang}`;
  return { id, include, lang, key };
}

/** The answer body kept for `q`, or undefined. Never write to it. */
export const cachedAnswer = (release: Release, q: EntityQuestion): Uint8Array | undefined => release.answers?.get(q.key);

/**
 * Pushes the answer to `q` about `e` onto `out` as byte slices (join them once to send) and keeps it for the next
 * request that asks the same. Returns the cached bytes, or null when they were not kept.
 */
export function composeAnswer(release: Release, q: EntityQuestion, e: LiveEntity, out: Uint8Array[]): Uint8Array | null {
  const from = out.length;
  entityParts(e, q.include, q.lang, out);
  return release.answers ? release.answers.keep(q.key, out, from) : null;
}

/**
 * GET /entities/{id}'s answer: the one kept for the same question, else composed (and kept). Only 200 bodies are
 * kept; a 404 or 410 is looked up each time.
 */
export function entityAnswer(release: Release, q: EntityQuestion): MaybePromise<Reply> {
  const kept = cachedAnswer(release, q);
  if (kept) return { status: 200, body: kept };
  return withLive(release, q.id, (e) => {
    const parts: Uint8Array[] = [];
    return { status: 200, body: composeAnswer(release, q, e, parts) ?? concatToSend(parts) };
  });
}

/**
 * The live entity `id`, at once when its index entry and shard are ready. Rejects (never throws) with a 404 when
 * it was never published and a 410 carrying the compiler's tombstone stub when it was retired.
 */
export function liveEntity(release: Release, id: string): MaybePromise<LiveEntity> {
  const found = release.entity(id);
  if (isPromise(found)) return found.then((f) => (f?.kind === 'live' ? f : Promise.reject(notLive(f, id))));
  return found?.kind === 'live' ? found : Promise.reject(notLive(found, id));
}

function notLive(found: Exclude<EntityLookup, LiveEntity>, id: string): ApiError {
  if (!found) return new ApiError(404, 'not_found', 'No entity has this register ID.', { detail: id });
  return new ApiError(410, 'gone', 'retired', { stub: found.body });
}

/** `answer` applied to the live entity `id`: at once when it is ready (no promise hops), else once it is read. */
export function withLive<T>(release: Release, id: string, answer: (e: LiveEntity) => T): MaybePromise<T> {
  const e = liveEntity(release, id);
  return isPromise(e) ? e.then(answer) : answer(e);
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
