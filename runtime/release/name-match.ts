// Name matching (issue 48): candidates for a name from the release's compiled name keys (no scan at request time),
// each scored from explicit features. The contributions check and the reconciliation service both read it, so a
// name scores the same for both, on Node and at the edge (scores are rounded to thousandths, so JSON bytes agree).
import { ENTITY_TYPES, type EntityType } from '../../common/ids.ts';
import type { NameKeyEntry } from '../../common/dist-layout.ts';
import { affixesAgree, affixSignature, coreTokens, initialsForm, MAX_NAME_CHARS, nameKeys, nameTokens, soundKey } from '../../common/name-keys.ts';
import { sectionObject } from '../entity-answer.ts';
import type { LiveEntity, Release } from './open-release.ts';

export interface NameQuery {
  name: string;
  type?: EntityType | null;
  country?: string | null;
  limit?: number;
}

/** Each feature 0..1, fixed key order in JSON: exact, normalised, alias, token_overlap, initials, type, country. */
export interface NameFeatures {
  /** 1: the name as given is one of the entity's names, letter for letter (spaces collapsed). */
  exact: number;
  /**
   * 1: the same tokens in the same order once case, diacritics and script fold away; 0.5: the same core tokens in
   * another order, or with affixes ("FC") added, dropped or written otherwise, but not another affix ("AC", "FC").
   */
  normalised: number;
  /** What kind of name matched: 0 the label, 0.5 an alias, 1 an alias of the knowledge-base overlay. */
  alias: number;
  /** Dice overlap of the core tokens: a token alike counts 1, alike by sound 0.8, as an initial of the other 0.5. */
  token_overlap: number;
  /** 1: the core tokens pair up one to one, each equal, alike by sound, or an initial of its partner ("J. Smith", "John Smith"). */
  initials: number;
  /** 1 the type asked for, 0 another, 0.5 none asked. */
  type: number;
  /** 1 the country given, 0 another, 0.5 when either side has none. */
  country: number;
}

export interface NameCandidate {
  reep_id: string;
  entity_type: EntityType;
  label: string;
  score: number;
  features: NameFeatures;
}

/**
 * The weights, written once. The name's own features carry 0.74, its type 0.16 and its country 0.10, so an exact
 * name of the right type and country scores 1. Chosen so that (bench/name-match.ts measures them):
 * - a type other than the one asked for can never reach MATCH_SCORE (at most 1 - 0.16 = 0.84);
 * - an exact or normalised name of the right type is a match on its own (0.91 with no country), as is an exact name
 *   with nothing else known (0.87);
 * - other word orders and dropped affixes match only with the type (0.86), spelling and initials variants never
 *   (candidates for review, 0.70 to 0.80);
 * - a name found through an alias scores a little less than the label (0.02), through the overlay more (0.04).
 */
const WEIGHTS: Readonly<NameFeatures> = { exact: 0.04, normalised: 0.1, alias: -0.04, token_overlap: 0.45, initials: 0.15, type: 0.16, country: 0.1 };

/** A candidate is a match only when its score is at least this (see isClearMatch). */
export const MATCH_SCORE = 0.85;
/**
 * ... and it leads the next candidate by at least this: two plausible candidates never both look like a match. As
 * much as the country weighs, so two namesakes are told apart by a country only when one has it and the other
 * another; and more than an exact name's edge over the same name with an affix dropped ("Arsenal", "Arsenal F.C.").
 */
export const CLEAR_LEAD = 0.1;

/**
 * Whether the first of `candidates` (best first, as matchNames gives them) is a match: at least MATCH_SCORE and
 * ahead of the second by at least CLEAR_LEAD. Compared in thousandths, so 0.96 - 0.91 is the lead it looks like.
 */
export function isClearMatch(candidates: readonly NameCandidate[]): boolean {
  const [first, second] = candidates;
  if (!first || thousandths(first.score) < thousandths(MATCH_SCORE)) return false;
  return !second || thousandths(first.score) - thousandths(second.score) >= thousandths(CLEAR_LEAD);
}

const thousandths = (x: number): number => Math.round(x * 1000);
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

const DEFAULT_LIMIT = 5;
/** Most candidates one query returns. */
const MAX_LIMIT = 50;

/** A query's name, taken apart once and compared with every candidate name. */
interface NameParts {
  /** Spaces collapsed, for `exact`. */
  verbatim: string;
  /** nameTokens joined by spaces, for `normalised`. */
  normalised: string;
  core: string[];
  sortedCore: string;
  /** affixSignature: "AC Oulu" and "FC Oulu" have the same core and different affixes. */
  affixes: string;
  initials: string | null;
}

function partsOf(name: string): NameParts {
  const tokens = nameTokens(name);
  const core = coreTokens(tokens);
  return {
    verbatim: name.slice(0, MAX_NAME_CHARS).normalize('NFC').trim().replace(/\s+/g, ' '),
    normalised: tokens.join(' '),
    core,
    sortedCore: core.slice().sort().join(' '),
    affixes: affixSignature(tokens),
    initials: initialsForm(core),
  };
}

/** How alike two tokens are: 1 equal, 0.8 alike by sound, 0.5 one the initial of the other, else 0. */
function tokenLikeness(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length === 1 || b.length === 1) return a[0] === b[0] ? 0.5 : 0;
  return soundKey(a) === soundKey(b) ? 0.8 : 0;
}

/**
 * Pairs each query token with its likeliest unpaired name token (greedy, query order): the likeness summed, and
 * whether every token found a partner on both sides.
 */
function pairTokens(q: readonly string[], f: readonly string[]): { sum: number; all: boolean } {
  const used = new Array<boolean>(f.length).fill(false);
  let sum = 0;
  let paired = 0;
  for (const t of q) {
    let best = -1;
    let bestLike = 0;
    for (let j = 0; j < f.length; j++) {
      if (used[j]) continue;
      const like = tokenLikeness(t, f[j]);
      if (like > bestLike) [best, bestLike] = [j, like];
    }
    if (best >= 0) {
      used[best] = true;
      sum += bestLike;
      paired++;
    }
  }
  return { sum, all: paired === q.length && paired === f.length };
}

/** The name features of candidate name `form` (from `source`) for query `q`. */
function nameFeatures(q: NameParts, form: string, source: number): Pick<NameFeatures, 'exact' | 'normalised' | 'alias' | 'token_overlap' | 'initials'> {
  const f = partsOf(form);
  const exact = q.verbatim === f.verbatim ? 1 : 0;
  const normalised = q.normalised === f.normalised ? 1 : q.sortedCore === f.sortedCore && affixesAgree(q.affixes, f.affixes) ? 0.5 : 0;
  const { sum, all } = pairTokens(q.core, f.core);
  let overlap = q.core.length + f.core.length ? (2 * sum) / (q.core.length + f.core.length) : 0;
  // A name written as one run of syllables ("BeiJingGuoAn") against the same name in words.
  const qRun = q.core.join('');
  const fRun = f.core.join('');
  if (qRun === fRun) overlap = 1;
  else if (overlap < 0.8 && soundKey(qRun) === soundKey(fRun)) overlap = 0.8;
  const initials = all || (q.initials !== null && q.initials === f.initials) ? 1 : 0;
  return { exact, normalised, alias: source === 0 ? 0 : source === 1 ? 0.5 : 1, token_overlap: round3(overlap), initials };
}

function sameCountry(a: string, b: string): boolean {
  return nameTokens(a).join(' ') === nameTokens(b).join(' ');
}

/** The candidate for one entity from its names found: the best-scoring name decides. */
function scoreEntity(q: NameParts, query: NameQuery, id: string, typeIndex: number, country: string, names: readonly [string, number][], label: string): NameCandidate {
  const entityType = ENTITY_TYPES[typeIndex];
  const type = query.type ? (query.type === entityType ? 1 : 0) : 0.5;
  const countryFeature = query.country && country ? (sameCountry(query.country, country) ? 1 : 0) : 0.5;
  let best: NameCandidate | null = null;
  for (const [form, source] of names) {
    const n = nameFeatures(q, form, source);
    const features: NameFeatures = { exact: n.exact, normalised: n.normalised, alias: n.alias, token_overlap: n.token_overlap, initials: n.initials, type, country: countryFeature };
    let score = 0;
    for (const k of Object.keys(WEIGHTS) as (keyof NameFeatures)[]) score += WEIGHTS[k] * features[k];
    // An alias's penalty counts only once the name is worth something: it must not make a poor name negative.
    score = round3(Math.max(0, score));
    if (!best || score > best.score) best = { reep_id: id, entity_type: entityType, label, score, features };
  }
  return best!;
}

/** Best first: score descending, then register ID ascending. */
const byScore = (a: NameCandidate, b: NameCandidate): number => b.score - a.score || (a.reep_id < b.reep_id ? -1 : a.reep_id > b.reep_id ? 1 : 0);

/** The number of candidates a query asks for, within 1..MAX_LIMIT. */
const limitOf = (q: NameQuery): number => Math.max(1, Math.min(MAX_LIMIT, Math.floor(q.limit ?? DEFAULT_LIMIT)));

/** Candidates from the compiled keys only (no scan), scored, best first (score desc, then reep_id asc), at most q.limit (default 5). */
export async function matchNames(release: Release, q: NameQuery): Promise<NameCandidate[]> {
  const parts = partsOf(q.name);
  const keys = nameKeys(q.name);
  if (keys.length === 0) return [];
  const values = await Promise.all(keys.map((k) => release.nameKey(k)));
  // Every name found, per entity, once.
  const found = new Map<string, { type: number; country: number; names: Map<string, number>; label: string | null }>();
  for (const v of values) {
    if (!v) continue;
    for (const [id, type, source, country, name] of v[1] as NameKeyEntry[]) {
      let e = found.get(id);
      if (!e) found.set(id, (e = { type, country, names: new Map(), label: null }));
      if (!((e.names.get(name) ?? 3) <= source)) e.names.set(name, source);
      if (source === 0) e.label = name;
    }
  }
  const countries = release.doc.name_countries;
  const scored: NameCandidate[] = [];
  for (const [id, e] of found) {
    const names = [...e.names].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    scored.push(scoreEntity(parts, q, id, e.type, e.country ? countries[e.country - 1] ?? '' : '', names, e.label ?? ''));
  }
  const top = scored.sort(byScore).slice(0, limitOf(q));
  // A candidate found only through an alias: its label from its shard.
  for (const c of top) {
    if (found.get(c.reep_id)!.label) continue;
    const e = await liveItself(release, c.reep_id);
    if (e) c.label = namesOf(e).label;
  }
  return top;
}

/** A live entity's names, type and country as its shard holds them. */
interface EntityNames {
  label: string;
  typeIndex: number;
  country: string;
  /** [name, source]: the label (0), its aliases (1), its overlay's aliases (2). */
  names: [string, number][];
}

const decoder = new TextDecoder();

function namesOf(e: LiveEntity): EntityNames {
  // The core (up to cuts[0]) holds the label; the other sections are read by entity-answer.ts's sectionObject.
  const core = JSON.parse(`${decoder.decode(e.shard.subarray(0, e.cuts[0]))}}`) as { name_en?: string };
  const aliases = sectionObject(e, 0) as { aliases?: { name: string }[] };
  const attrs = sectionObject(e, 1) as { attributes?: { country?: string[] } };
  const overlay = sectionObject(e, 4) as { overlay?: { kb?: { aliases?: { name: string }[] } } };
  const label = core.name_en ?? '';
  const names: [string, number][] = [[label, 0]];
  for (const a of aliases.aliases ?? []) names.push([a.name, 1]);
  for (const a of overlay.overlay?.kb?.aliases ?? []) names.push([a.name, 2]);
  return { label, typeIndex: ENTITY_TYPES.indexOf(e.entityType as EntityType), country: attrs.attributes?.country?.[0] ?? '', names };
}

/** The entity `reepId` names itself (not as a merged ID), or null. */
async function liveItself(release: Release, reepId: string): Promise<LiveEntity | null> {
  const e = await release.entity(reepId);
  return e && e.kind === 'live' && e.requestedId === undefined ? e : null;
}

/**
 * How well `q` names each live entity it is given, the query taken apart once: for a caller that already holds the
 * entities (the contributions check, reconcile's provider-ID hits), so none is looked up again.
 */
export function nameScorer(q: NameQuery): (e: LiveEntity) => NameCandidate {
  const parts = partsOf(q.name);
  return (e) => {
    const n = namesOf(e);
    return scoreEntity(parts, q, e.id, n.typeIndex, n.country, n.names, n.label);
  };
}

/** How well `name` names one known entity (cross-ID + name agreement): the same scoring, for that entity alone; null when the entity is not live. */
export async function scoreNameOf(release: Release, reepId: string, q: NameQuery): Promise<NameCandidate | null> {
  const e = await liveItself(release, reepId);
  return e ? nameScorer(q)(e) : null;
}
