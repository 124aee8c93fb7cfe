// A match's scoreline as the published register states it: which release cells feed it, which values each field
// admits, and its JSON text. The compiler checks release rows with it (stage 1, for the slack report) and writes
// shards with it (stage 2); anything else that answers a scoreline reads the values through it too.
import { REGISTER_ID } from './ids.ts';

/** How a result was reached, as the published service names it. */
export const RESULT_FORMS = ['regular', 'extra_time', 'penalties', 'golden_goal', 'awarded', 'abandoned', 'unknown'] as const;
/** What a score rests on, as the published service names it. */
export const SCORE_BASES = ['corroborated', 'single_source', 'operator_ruling'] as const;

type ResultForm = (typeof RESULT_FORMS)[number];
type ScoreBasis = (typeof SCORE_BASES)[number];

/** The scoreline object, in contract key order; null where the release holds no (valid) value. */
export interface Scoreline {
  home_score: number | null;
  away_score: number | null;
  result_form: ResultForm | null;
  shootout_home: number | null;
  shootout_away: number | null;
  score_basis: ScoreBasis | null;
  home_id: string | null;
  away_id: string | null;
  played_on: string | null;
}

/** What kind of value a field takes, which decides how a release cell is checked. */
export type FieldKind = 'count' | 'form' | 'basis' | 'id' | 'date';

/** The fields in contract order: the matches table's column of the same name feeds each. */
export const SCORELINE_FIELDS: readonly (readonly [keyof Scoreline, FieldKind])[] = [
  ['home_score', 'count'], ['away_score', 'count'], ['result_form', 'form'], ['shootout_home', 'count'],
  ['shootout_away', 'count'], ['score_basis', 'basis'], ['home_id', 'id'], ['away_id', 'id'], ['played_on', 'date'],
];

const FORMS = new Set<string>(RESULT_FORMS);
const BASES = new Set<string>(SCORE_BASES);
const COUNT = /^\d{1,9}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `v` is a real calendar date written YYYY-MM-DD (the Gregorian calendar, any four-digit year). */
function isCalendarDate(v: string): boolean {
  return v.length === 10 && admitsBytes('date', Buffer.from(v, 'latin1'), 0, 10) && DATE.test(v);
}

/**
 * Why a non-empty cell of a scoreline field cannot be published, or null when it can. An ID is checked for its
 * shape only: whether it names a live entity is the reader's to say (stage 1 knows the live IDs).
 */
export function scorelineProblem(kind: FieldKind, v: string): string | null {
  switch (kind) {
    case 'count':
      return COUNT.test(v) ? null : 'not a whole number of goals (0 or more)';
    case 'form':
      return FORMS.has(v) ? null : `not one of ${RESULT_FORMS.join(', ')}`;
    case 'basis':
      return BASES.has(v) ? null : `not one of ${SCORE_BASES.join(', ')}`;
    case 'id':
      return REGISTER_ID.test(v) ? null : 'not a register ID';
    case 'date':
      return isCalendarDate(v) ? null : 'not a date (YYYY-MM-DD)';
  }
}

const ascii = new TextEncoder();
const ENUM_BYTES: Record<'form' | 'basis', Uint8Array[]> = {
  form: RESULT_FORMS.map((v) => ascii.encode(v)),
  basis: SCORE_BASES.map((v) => ascii.encode(v)),
};
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number the ASCII digits `b[start, end)` spell, or -1 when one is not a digit. */
function digitsIn(b: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = b[i] - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Whether the ASCII bytes `b[start, end)` are a value of `kind` (not an ID) that scorelineProblem admits, without
 * making a string: a release has a scoreline per match row (1.5M at full size), nearly all of them fine. False means
 * only "ask scorelineProblem", which names the problem.
 */
export function admitsBytes(kind: Exclude<FieldKind, 'id'>, b: Uint8Array, start: number, end: number): boolean {
  const n = end - start;
  switch (kind) {
    case 'count':
      return n >= 1 && n <= 9 && digitsIn(b, start, end) >= 0;
    case 'form':
    case 'basis':
      for (const v of ENUM_BYTES[kind]) {
        if (v.length !== n) continue;
        let i = 0;
        while (i < n && v[i] === b[start + i]) i++;
        if (i === n) return true;
      }
      return false;
    case 'date': {
      if (n !== 10 || b[start + 4] !== 45 || b[start + 7] !== 45) return false;
      const y = digitsIn(b, start, start + 4);
      const m = digitsIn(b, start + 5, start + 7);
      const d = digitsIn(b, start + 8, end);
      if (y < 0 || m < 1 || m > 12 || d < 1) return false;
      const leap = m === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
      return d <= DAYS_IN_MONTH[m - 1] + (leap ? 1 : 0);
    }
  }
}

/**
 * The scoreline of a match from its cells (`cell(name)`: the first value of that column, undefined when empty).
 * A value that fails its check is null; `dropped` (field names) nulls a value the reader found wrong otherwise,
 * such as a side that is not a live entity.
 */
export function scorelineOf(cell: (name: string) => string | undefined, dropped: ReadonlySet<string> | null = null): Scoreline {
  const out: Record<string, string | number | null> = {};
  for (const [name, kind] of SCORELINE_FIELDS) {
    const v = cell(name);
    out[name] = v === undefined || v === '' || dropped?.has(name) || scorelineProblem(kind, v) !== null ? null : kind === 'count' ? Number(v) : v;
  }
  return out as unknown as Scoreline;
}

/** `,"match":{...}`: the scoreline's section of a match shard, keys in contract order. */
export const scorelineSection = (s: Scoreline): string => `,"match":${JSON.stringify(s)}`;

/** A match's states as the published service names them. */
export const MATCH_STATES = ['played', 'scheduled', 'postponed', 'cancelled', 'awarded', 'abandoned'] as const;
const STATES = new Set<string>(MATCH_STATES);
const LEGS = new Set(['1', '2']);

/** A match's fixture facts beside its scoreline's sides and date: null where the release holds no published value. */
export interface Fixture {
  leg: '1' | '2' | null;
  aggregate_of: string | null;
  state: (typeof MATCH_STATES)[number] | null;
}

/** The fixture facts of a match from its cells (see scorelineOf): `leg`, `aggregate_of`, `match_state`. */
export function fixtureOf(cell: (name: string) => string | undefined): Fixture {
  const leg = cell('leg');
  const aggregate = cell('aggregate_of');
  const state = cell('match_state');
  return {
    leg: leg !== undefined && LEGS.has(leg) ? (leg as '1' | '2') : null,
    aggregate_of: aggregate !== undefined && REGISTER_ID.test(aggregate) ? aggregate : null,
    state: state !== undefined && STATES.has(state) ? (state as Fixture['state']) : null,
  };
}

/** What the changelog compares of a match: its scoreline and fixture facts. */
export interface MatchFacts {
  scoreline: Scoreline;
  fixture: Fixture;
}

/** A match's facts from its attributes (first value of each column), `dropped` as in scorelineOf. */
export function matchFactsOf(attrs: ReadonlyMap<string, readonly string[]> | null, dropped: ReadonlySet<string> | null): MatchFacts {
  const cell = (name: string) => attrs?.get(name)?.[0];
  return { scoreline: scorelineOf(cell, dropped), fixture: fixtureOf(cell) };
}

/** The fields of a fixture_updated event: the sides, date and fixture facts, as they now are. */
export const fixtureFields = (m: MatchFacts) => ({
  home_id: m.scoreline.home_id, away_id: m.scoreline.away_id, played_on: m.scoreline.played_on, ...m.fixture,
});

/** Whether the scores (everything of the scoreline but its sides and date) differ. */
export const scoresDiffer = (a: Scoreline, b: Scoreline): boolean =>
  a.home_score !== b.home_score || a.away_score !== b.away_score || a.result_form !== b.result_form ||
  a.shootout_home !== b.shootout_home || a.shootout_away !== b.shootout_away || a.score_basis !== b.score_basis;

/** Whether the fixture (sides, date, leg, aggregate, state) differs. */
export const fixtureDiffers = (a: MatchFacts, b: MatchFacts): boolean =>
  a.scoreline.home_id !== b.scoreline.home_id || a.scoreline.away_id !== b.scoreline.away_id || a.scoreline.played_on !== b.scoreline.played_on ||
  a.fixture.leg !== b.fixture.leg || a.fixture.aggregate_of !== b.fixture.aggregate_of || a.fixture.state !== b.fixture.state;
