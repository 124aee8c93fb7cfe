// The check of one contribution row against one release (docs/contributions.md): what the release already says of
// the row's provider ID, of the entity its other columns point at (cross-ID columns, a `reep_id` column) and, with
// neither, of its name. One function for the route, the CLI and the client's chunks, so the same row gives the same
// result bytes on Node and at the edge. Reads the release only through its lookups (resolve, entity, the name keys).
import { ENTITY_TYPES, REGISTER_ID, isEntityType, type EntityType } from '../../common/ids.ts';
import { MAX_PATH_PARAMETER_CHARS } from '../../common/request-limits.ts';
import { bridgesBody, sectionObject } from '../entity-answer.ts';
import type { LiveEntity, Release } from '../release/open-release.ts';
import { isClearMatch, matchNames, nameScorer, type NameCandidate, type NameQuery } from '../release/name-match.ts';
import { CHECK_BANDS, CHECK_STATUSES } from '../contract/schemas.ts';
import type { ContributionRow } from './contribution-file.ts';

const STATUSES = CHECK_STATUSES;
export type Status = (typeof STATUSES)[number];
/** 1: a direct typed bridge; 0.95: cross-ID plus the normalised full name; 0.9: for review; 0.8: a name candidate only. */
type Band = (typeof CHECK_BANDS)[number];

/**
 * Every reason code, with what it means (docs/contributions.md lists the same, with an example row each; a test
 * holds the two together). The first group makes a row `invalid`; the others explain the status and the band.
 */
export const REASONS = {
  wrong_field_count: 'The CSV record has more or fewer fields than the header.',
  missing_field: 'The row has no provider or no external_id (or a JSON row names a column twice).',
  unknown_provider: 'The release knows no such provider.',
  bad_id_format: 'An ID (external_id, a cross-ID) longer than a path parameter may be or holding NUL, or a reep_id that is no register ID.',
  unknown_entity_type: 'The type column is no entity type of the register.',
  bad_date_format: 'date_of_birth is not YYYY-MM-DD (or YYYY-MM, YYYY).',
  provider_id_on_other_entity: "The release bridges the row's provider ID to another entity than the one its other columns point at.",
  provider_id_on_several_entities: "The release bridges the row's provider ID to more than one entity.",
  two_ids_one_namespace: 'The entity already has another ID of this provider in this namespace.',
  type_mismatch: "The entity the row points at, or that holds its provider ID, is of another type than the row's type.",
  cross_ids_disagree: "The row's cross-IDs (and reep_id) point at different entities.",
  cross_id_ambiguous: 'A cross-ID is bridged to more than one entity.',
  cross_id_unknown: 'A cross-ID is not in the release.',
  reep_id_unknown: 'The reep_id column names no register ID of the release.',
  reep_id_retired: 'The register ID the row points at is retired, with no survivor.',
  merged: 'The register ID the row points at (by reep_id or a cross-ID) was merged; reep_id is the survivor.',
  name_agrees: "The row's name is the entity's name once normalised.",
  name_differs: "The row's name is not the entity's name, even normalised.",
  no_name: 'The row has no name to compare.',
  dob_not_in_release: 'The row gives a date of birth and the release holds none for the entity.',
  dob_differs: "The row's date of birth is not the entity's.",
  name_only: 'Only the name points at the entity: no provider ID, cross-ID or reep_id does.',
  candidates_tied: 'Two or more candidates are plausible and none leads clearly.',
  below_match_score: 'No candidate reaches the match score.',
  nothing_to_match: 'The row has no cross-ID, reep_id or name to find an entity by.',
} as const;
export type Reason = keyof typeof REASONS;

export interface CheckResult {
  row: number;
  line?: number;
  status: Status;
  reep_id: string | null;
  band: Band | null;
  reasons: Reason[];
  provider: string;
  namespace: string;
  external_id: string;
  candidates: NameCandidate[];
  extra: [string, string][];
}

/** Where the check looks a provider's IDs up: the namespaces its bridges use per entity type (release.json). */
export class ProviderNamespaces {
  private readonly byProvider = new Map<string, Record<string, string[]>>();

  constructor(release: Release) {
    for (const p of release.doc.providers) if (p.namespaces) this.byProvider.set(p.name, p.namespaces);
  }

  /** The namespaces to look `provider`'s IDs of `type` up in (any type's when null), most used first; `['']` when none is known. */
  of(provider: string, type: string | null): string[] {
    const byType = this.byProvider.get(provider);
    if (!byType) return [''];
    if (type !== null) return byType[type] ?? [''];
    const all: string[] = [];
    for (const list of Object.values(byType)) for (const ns of list) if (!all.includes(ns)) all.push(ns);
    return all.length ? all : [''];
  }
}

const DATE = /^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$/;
const badExternalId = (id: string): boolean => id.length > MAX_PATH_PARAMETER_CHARS || id.includes('\u0000');

/** A live entity the row's columns lead to, with how: by a merged ID (`via`) or directly. */
interface Reached {
  entity: LiveEntity;
  /** The merged ID the row named, when it was one. */
  via: string | null;
}

/** The entities `provider`'s `id` is bridged to (of `type` when given), over `namespaces`; `otherType` counts the hits of other types. */
async function holders(release: Release, provider: string, namespaces: readonly string[], id: string, type: EntityType | null): Promise<{ found: Reached[]; namespace: string | null; otherType: number }> {
  const found: Reached[] = [];
  let namespace: string | null = null;
  let otherType = 0;
  for (const ns of namespaces) {
    const hits = (await release.resolve(provider, ns, id)) ?? [];
    for (const [hit, typeIndex] of hits) {
      if (type !== null && ENTITY_TYPES[typeIndex] !== type) {
        otherType++;
        continue;
      }
      const e = await release.entity(hit);
      if (e?.kind !== 'live' || found.some((f) => f.entity.id === e.id)) continue;
      namespace ??= ns;
      found.push({ entity: e, via: e.requestedId ?? null });
    }
  }
  return { found, namespace, otherType };
}

/** The bridges of `e` as the API answers them (provider, namespace, external_id). */
function bridgesOf(e: LiveEntity): { provider: string; namespace: string; external_id: string }[] {
  return (JSON.parse(new TextDecoder().decode(bridgesBody(e))) as { bridges: { provider: string; namespace: string; external_id: string }[] }).bridges;
}

/** Whether `e` already holds another ID of `provider` in `namespace` than `externalId` (a second one would be a conflict). */
const holdsOtherId = (e: LiveEntity, provider: string, namespace: string, externalId: string): boolean =>
  bridgesOf(e).some((b) => b.provider === provider && b.namespace === namespace && b.external_id !== externalId);

/** The entity's dates of birth, from its attributes; empty when the release holds none. */
function birthDates(e: LiveEntity): string[] {
  const attrs = (sectionObject(e, 1) as { attributes?: Record<string, unknown> }).attributes ?? {};
  const v = attrs.date_of_birth ?? attrs.birth_date;
  return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
}

/** The name score of an entity for one row's query, each entity scored once however often the row's check asks. */
type Scores = (e: LiveEntity) => NameCandidate;

/** Whether a row is `invalid` (costs nothing): decided without reading the release's files. */
export const isInvalid = (release: Release, r: ContributionRow): boolean => invalidReasons(release, r).length > 0;

/** The reasons a row is `invalid`, or none. */
function invalidReasons(release: Release, r: ContributionRow): Reason[] {
  if (r.problem) return [r.problem as Reason];
  const f = r.fields;
  const reasons: Reason[] = [];
  if (!f.provider || !f.external_id) reasons.push('missing_field');
  if (f.provider && !release.providers.has(f.provider)) reasons.push('unknown_provider');
  if ((f.external_id && badExternalId(f.external_id)) || (f.reep_id && !REGISTER_ID.test(f.reep_id)) || r.crossIds.some((x) => badExternalId(x.value))) reasons.push('bad_id_format');
  if (f.type && !isEntityType(f.type)) reasons.push('unknown_entity_type');
  if (f.date_of_birth && !DATE.test(f.date_of_birth)) reasons.push('bad_date_format');
  return reasons;
}

/** Checks one row against `release`. */
export async function checkRow(release: Release, namespaces: ProviderNamespaces, r: ContributionRow): Promise<CheckResult> {
  const f = r.fields;
  const result: CheckResult = {
    row: r.row, status: 'invalid', reep_id: null, band: null, reasons: [],
    provider: f.provider ?? '', namespace: f.namespace ?? '', external_id: f.external_id ?? '', candidates: [], extra: r.extra,
  };
  if (r.line !== undefined) result.line = r.line;
  const invalid = invalidReasons(release, r);
  if (invalid.length) {
    result.reasons = invalid;
    return result;
  }
  const provider = f.provider!;
  const externalId = f.external_id!;
  const type = (f.type || null) as EntityType | null;
  const q: NameQuery = { name: f.name ?? '', type, country: f.nationality || null };
  const reasons = new Set<Reason>();
  // The entities an ID led to are scored as they are held, each once.
  const scoreOf = nameScorer(q);
  const scored = new Map<string, NameCandidate>();
  const scores: Scores = (e) => {
    let c = scored.get(e.id);
    if (!c) scored.set(e.id, (c = scoreOf(e)));
    return c;
  };
  const finish = (status: Status, reepId: string | null, band: Band | null) => {
    result.status = status;
    result.reep_id = reepId;
    result.band = band;
    result.reasons = [...reasons];
    return result;
  };
  /** The result, with the entities involved as its candidates (each once, in order). */
  const done = (status: Status, target: LiveEntity | null, band: Band | null, involved: LiveEntity[], reepId: string | null = target?.id ?? null) => {
    const seen = new Set<string>();
    for (const e of involved) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      result.candidates.push(scores(e));
    }
    return finish(status, reepId, band);
  };

  // What the release says of the row's own provider ID.
  const ownNamespaces = f.namespace !== undefined ? [f.namespace] : namespaces.of(provider, type);
  const held = await holders(release, provider, ownNamespaces, externalId, type);
  result.namespace = held.namespace ?? ownNamespaces[0];

  // What the row's other columns point at: its reep_id, its cross-IDs.
  const claims: Reached[] = [];
  let retired: string | null = null;
  if (f.reep_id) {
    const e = await release.entity(f.reep_id);
    if (e === null) reasons.add('reep_id_unknown');
    else if (e.kind === 'gone') retired = f.reep_id;
    else claims.push({ entity: e, via: e.requestedId ?? null });
  }
  for (const x of r.crossIds) {
    const found = await holders(release, x.provider, namespaces.of(x.provider, type), x.value, type);
    if (found.found.length === 0) reasons.add(found.otherType ? 'type_mismatch' : 'cross_id_unknown');
    else if (found.found.length > 1) {
      reasons.add('cross_id_ambiguous');
      return done('ambiguous', null, null, found.found.map((c) => c.entity));
    } else claims.push(found.found[0]);
  }
  const claimed = claims.filter((c, i) => claims.findIndex((d) => d.entity.id === c.entity.id) === i);
  const merged = claims.find((c) => c.via !== null) ?? held.found.find((c) => c.via !== null);
  if (merged) reasons.add('merged');

  if (held.found.length > 1) {
    reasons.add('provider_id_on_several_entities');
    return done('ambiguous', null, null, [...held.found, ...claimed].map((c) => c.entity));
  }
  if (claimed.length > 1) {
    reasons.add('cross_ids_disagree');
    return done('ambiguous', null, null, [...claimed, ...held.found].map((c) => c.entity));
  }
  const holder = held.found[0]?.entity ?? null;
  const target = claimed[0]?.entity ?? null;
  if (type !== null && target && target.entityType !== type) {
    reasons.add('type_mismatch');
    return done('conflict', target, null, [target, ...(holder ? [holder] : [])]);
  }
  if (holder) {
    if (target && target.id !== holder.id) {
      reasons.add('provider_id_on_other_entity');
      return done('conflict', holder, null, [holder, target]);
    }
    nameReasons(scores, holder, q, f.date_of_birth, reasons);
    return done(merged ? 'redirected' : 'already_bridged', holder, 1, [holder]);
  }
  if (held.otherType) reasons.add('type_mismatch');
  if (retired !== null && !target) {
    reasons.add('reep_id_retired');
    return done('retired', null, null, [], retired);
  }
  if (target) {
    const ns = f.namespace ?? namespaces.of(provider, target.entityType)[0];
    result.namespace = ns;
    if (holdsOtherId(target, provider, ns, externalId)) {
      reasons.add('two_ids_one_namespace');
      return done('conflict', target, null, [target]);
    }
    const agrees = nameReasons(scores, target, q, f.date_of_birth, reasons);
    return done(merged ? 'redirected' : 'new_bridge', target, agrees ? 0.95 : 0.9, [target]);
  }
  // Nothing but the name: candidates from the release's name keys, a match only with a clear lead.
  if (!q.name) {
    reasons.add('nothing_to_match');
    return done('no_candidate', null, null, []);
  }
  const candidates = await matchNames(release, q);
  result.candidates = candidates;
  if (isClearMatch(candidates)) {
    const best = await release.entity(candidates[0].reep_id);
    if (best?.kind === 'live') {
      const ns = f.namespace ?? namespaces.of(provider, best.entityType)[0];
      result.namespace = ns;
      if (holdsOtherId(best, provider, ns, externalId)) {
        reasons.add('two_ids_one_namespace');
        return finish('conflict', best.id, null);
      }
    }
    reasons.add('name_only');
    return finish('new_bridge', candidates[0].reep_id, 0.8);
  }
  if (candidates.length >= 2 && isClearMatch([candidates[0]])) {
    reasons.add('candidates_tied');
    return finish('ambiguous', null, null);
  }
  reasons.add('below_match_score');
  return finish('no_candidate', null, null);
}

/**
 * Adds what the row's name and date of birth say of `e` to `reasons`; true when the name agrees (band 0.95): the
 * normalised full name, and no date of birth that differs.
 */
function nameReasons(scores: Scores, e: LiveEntity, q: NameQuery, dob: string | undefined, reasons: Set<Reason>): boolean {
  let agrees = false;
  if (!q.name) reasons.add('no_name');
  else {
    const scored = scores(e);
    agrees = scored.features.exact === 1 || scored.features.normalised === 1;
    reasons.add(agrees ? 'name_agrees' : 'name_differs');
  }
  if (dob) {
    const known = birthDates(e);
    if (known.length === 0) reasons.add('dob_not_in_release');
    else if (!known.some((d) => d === dob || d.startsWith(`${dob}-`) || dob.startsWith(`${d}-`))) {
      reasons.add('dob_differs');
      agrees = false;
    }
  }
  return agrees;
}

/** A band as JSON writes it, and as the summary keys it. */
const bandKey = (b: Band | null): string => (b === null ? 'none' : String(b));

/** One result row as the route and the CLI write it: keys in a fixed order, `line` only for CSV input. */
export function resultJson(r: CheckResult): string {
  let s = `{"row":${r.row}`;
  if (r.line !== undefined) s += `,"line":${r.line}`;
  s += `,"status":"${r.status}","reep_id":${r.reep_id === null ? 'null' : JSON.stringify(r.reep_id)},"band":${r.band === null ? 'null' : r.band}`;
  s += `,"reasons":${JSON.stringify(r.reasons)},"provider":${JSON.stringify(r.provider)},"namespace":${JSON.stringify(r.namespace)},"external_id":${JSON.stringify(r.external_id)}`;
  s += `,"candidates":[${r.candidates.map(candidateJson).join(',')}],"extra":{`;
  // Pass-through columns by name as written; a name given twice keeps its first value (JSON has one key each).
  const seen = new Set<string>();
  let first = true;
  for (const [k, v] of r.extra) {
    if (seen.has(k)) continue;
    seen.add(k);
    s += `${first ? '' : ','}${JSON.stringify(k)}:${JSON.stringify(v)}`;
    first = false;
  }
  return `${s}}}`;
}

function candidateJson(c: NameCandidate): string {
  const x = c.features;
  return `{"reep_id":${JSON.stringify(c.reep_id)},"entity_type":"${c.entity_type}","label":${JSON.stringify(c.label)},"score":${c.score},"features":{"exact":${x.exact},"normalised":${x.normalised},"alias":${x.alias},"token_overlap":${x.token_overlap},"initials":${x.initials},"type":${x.type},"country":${x.country}}}`;
}

/** Counts per status and per band, as the response's `summary` and the CLI's stderr line give them. */
export class CheckSummary {
  readonly statuses: Record<Status, number> = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  readonly bands: Record<string, number> = { '1': 0, '0.95': 0, '0.9': 0, '0.8': 0, none: 0 };
  count = 0;

  add(r: CheckResult): void {
    this.statuses[r.status]++;
    this.bands[bandKey(r.band)]++;
    this.count++;
  }

  /** Rows charged for: every row that is not `invalid`. */
  get checked(): number {
    return this.count - this.statuses.invalid;
  }

  json(): string {
    return `{"statuses":${JSON.stringify(this.statuses)},"bands":${JSON.stringify(this.bands)}}`;
  }

  /** One line for people (the CLI's stderr). */
  text(): string {
    const statuses = STATUSES.filter((s) => this.statuses[s]).map((s) => `${s} ${this.statuses[s]}`).join(', ');
    const bands = Object.entries(this.bands).filter(([, n]) => n).map(([b, n]) => `${b} ${n}`).join(', ');
    return `${this.count} row(s): ${statuses || 'none'}; bands: ${bands || 'none'}`;
  }
}
