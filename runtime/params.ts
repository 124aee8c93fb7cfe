// Query and path parameter parsing shared by every route (and by batch items), with the contract's 400 codes.
import { INCLUDES, isEntityType, REGISTER_ID, type Include, type EntityType } from '../common/ids.ts';
import { ApiError } from './api-error.ts';

// Parsed `include` strings: clients send the same few on every call. Bounded, since spacing and repeats make
// endless spellings of the same set.
const parsedIncludes = new Map<string, ReadonlySet<Include>>();
const MAX_PARSED_INCLUDES = 64;
const NO_INCLUDES: ReadonlySet<Include> = new Set();

/**
 * Parses `include` (comma-separated string or array); order and repetition do not matter. The set may be shared
 * with other calls: read it, do not change it. 400 unknown_include for a name the contract does not know.
 */
export function parseInclude(raw: string | string[] | null | undefined): ReadonlySet<Include> {
  if (raw === null || raw === undefined) return NO_INCLUDES;
  if (typeof raw === 'string') {
    const known = parsedIncludes.get(raw);
    if (known) return known;
  }
  const set = new Set<Include>();
  const parts = Array.isArray(raw) ? raw.flatMap((x) => (typeof x === 'string' ? x.split(',') : [x as never])) : raw.split(',');
  for (const p of parts) {
    if (typeof p !== 'string') throw new ApiError(400, 'unknown_include', 'include must be a string or an array of strings.');
    const name = p.trim();
    if (name === '') continue;
    if (!(INCLUDES as readonly string[]).includes(name)) {
      throw new ApiError(400, 'unknown_include', `Unknown include ${JSON.stringify(name.slice(0, 64))}; allowed: ${INCLUDES.join(', ')}.`);
    }
    set.add(name as Include);
  }
  if (typeof raw === 'string') {
    if (parsedIncludes.size >= MAX_PARSED_INCLUDES) parsedIncludes.clear();
    parsedIncludes.set(raw, set);
  }
  return set;
}

export function checkRegisterId(id: string): string {
  if (!REGISTER_ID.test(id)) {
    throw new ApiError(400, 'invalid_id', 'Not a register ID (want r, a letter and 14 hex digits).', { detail: id.slice(0, 64) });
  }
  return id;
}

export function parseEntityType(raw: string | null | undefined): EntityType | null {
  if (raw === null || raw === undefined || raw === '') return null;
  if (!isEntityType(raw)) throw new ApiError(400, 'unknown_entity_type', `Unknown entity type ${JSON.stringify(raw.slice(0, 64))}.`);
  return raw;
}

/** An integer query parameter in [min, max], or the default when absent. */
export function intParam(query: URLSearchParams, name: string, min: number, max: number, def: number): number {
  const raw = query.get(name);
  if (raw === null) return def;
  if (!/^\d{1,9}$/.test(raw)) throw new ApiError(400, 'invalid_parameter', `${name} must be an integer from ${min} to ${max}.`);
  const n = Number(raw);
  if (n < min || n > max) throw new ApiError(400, 'invalid_parameter', `${name} must be an integer from ${min} to ${max}.`);
  return n;
}

/** Rejects query parameters a route does not know, so a typo is a 400 rather than silently ignored. */
export function allowOnly(query: URLSearchParams, allowed: readonly string[]): void {
  for (const k of query.keys()) {
    if (!allowed.includes(k)) throw new ApiError(400, 'invalid_parameter', `Unknown query parameter ${JSON.stringify(k.slice(0, 64))}.`);
  }
}

/** A single-valued string parameter (a repeated one is a 400: which one wins would be a guess). */
export function oneParam(query: URLSearchParams, name: string): string | null {
  const all = query.getAll(name);
  if (all.length > 1) throw new ApiError(400, 'invalid_parameter', `${name} may be given once.`);
  return all.length ? all[0] : null;
}
