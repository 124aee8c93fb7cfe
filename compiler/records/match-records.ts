// Match records: what stage 2 (build-entities) hands the match-index stage (build-matches). Each live match goes,
// as one JSON line, to the group of its year (so the next stage numbers matches by date one group at a time), and
// each live team, competition, season and stage to the refs group (labels and structural links: ~70k at full size).
// Each range also notes where the rows will first name each provider, so the next stage can number providers before
// it builds any row, and build the rows of different years in different threads to the same bytes.
import { ENTITY_TYPES, type EntityType } from '../../common/ids.ts';
import { dayOf } from '../../common/match-index.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { SCORELINE_FIELDS, type MatchFacts } from '../../common/scoreline.ts';
import type { Bridge, EntityRows } from './entity-rows.ts';

/** Years before this share the first group; each later year has its own, up to the last dated group. */
const FIRST_YEAR = 1850;
/** Dated year groups, then one for undated matches, then the refs. */
const DATED_GROUPS = 255;
const UNDATED_GROUP = DATED_GROUPS;
export const REFS_GROUP = DATED_GROUPS + 1;
export const MATCH_RECORD_GROUPS = REFS_GROUP + 1;

/** Entity types a match row names (its sides and its structure): their labels and links go to the refs group. */
const REF_TYPES: ReadonlySet<EntityType> = new Set(['team', 'competition', 'season', 'stage']);

/**
 * A live match as the next stage reads it: [reep_id, scoreline values (SCORELINE_FIELDS order), match_state, leg,
 * aggregate_of, relationship targets, public bridges flattened (provider, namespace, external_id, ...)].
 */
export type MatchRecord = [string, (string | number | null)[], string | null, string | null, string | null, string[], string[]];
/** A live team, competition, season or stage: [reep_id, entity type index, label, relationship targets]. */
export type RefRecord = [string, number, string, string[]];

const PLAYED_ON = SCORELINE_FIELDS.findIndex(([name]) => name === 'played_on');

/** The day a match row sorts by (0: undated), from its `played_on` cell, as the match index reads it. */
export const rowDayOf = (playedOn: string | number | null): number => (typeof playedOn === 'string' && playedOn !== '' ? dayOf(playedOn) : 0);

/**
 * Where the match rows first name a provider: [provider, year group, day, reep_id, index of its first bridge in the
 * row]. Rows are written by (group, day, reep_id), and each row numbers its bridges' new providers in bridge order,
 * so sorting these gives the providers' numbers (providerOrder).
 */
export type ProviderFirst = [string, number, number, string, number];

/** What one stage-2 range hands the match-index stage. */
export interface MatchRecordsHandle {
  spill: GroupSpillHandle;
  providers: ProviderFirst[];
}

/** Earlier in row order: by year group, day, then reep_id (one row per ID), then place in the row. */
function before(a: ProviderFirst, b: ProviderFirst): boolean {
  if (a[1] !== b[1]) return a[1] < b[1];
  if (a[2] !== b[2]) return a[2] < b[2];
  if (a[3] !== b[3]) return a[3] < b[3];
  return a[4] < b[4];
}

/** The providers of every range's rows, numbered as the rows first name them (index = number). */
export function providerOrder(handles: readonly MatchRecordsHandle[]): string[] {
  const first = new Map<string, ProviderFirst>();
  for (const h of handles) {
    for (const f of h.providers) {
      const had = first.get(f[0]);
      if (!had || before(f, had)) first.set(f[0], f);
    }
  }
  return [...first.values()].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)).map((f) => f[0]);
}

/** The year group of a `played_on` cell; one that is not a calendar date counts as undated, as the index treats it. */
function yearGroupOf(playedOn: string | number | null): number {
  if (typeof playedOn !== 'string' || dayOf(playedOn) === 0) return UNDATED_GROUP;
  return Math.min(DATED_GROUPS - 1, Math.max(0, Number(playedOn.slice(0, 4)) - FIRST_YEAR));
}

/** One stage-2 range's match and ref records. */
export class MatchRecordWriter {
  private readonly spill: GroupSpill;
  private readonly firsts = new Map<string, ProviderFirst>();

  constructor(dir: string) {
    this.spill = new GroupSpill({ dir, groups: MATCH_RECORD_GROUPS });
  }

  /**
   * Records a live entity the match index needs (a match, or a type in REF_TYPES); `bridges` are its sorted,
   * deduplicated bridges and `publicBridge` says which of them are public (not the overlay's); `facts` are a match's
   * checked scoreline and fixture (matchFactsOf), the values its shard states, so a row and its entity agree.
   */
  add(a: EntityRows, type: EntityType, bridges: readonly Bridge[], publicBridge: (b: Bridge) => boolean, facts: MatchFacts | null): void {
    if (type === 'match' && facts) {
      const flat: string[] = [];
      for (const b of bridges) if (publicBridge(b)) flat.push(b[0], b[1], b[2]);
      const scoreline = SCORELINE_FIELDS.map(([name]) => facts.scoreline[name]);
      const rec: MatchRecord = [a.id, scoreline, facts.fixture.state, facts.fixture.leg, facts.fixture.aggregate_of, a.relTo, flat];
      const group = yearGroupOf(scoreline[PLAYED_ON]);
      this.spill.addLine(group, JSON.stringify(rec));
      this.noteProviders(flat, group, scoreline[PLAYED_ON], a.id);
    } else if (REF_TYPES.has(type)) {
      const rec: RefRecord = [a.id, ENTITY_TYPES.indexOf(type), a.label, a.relTo];
      this.spill.addLine(REFS_GROUP, JSON.stringify(rec));
    }
  }

  /** Keeps, per provider, the earliest row (in row order) that names it; the day is worked out only for a tie. */
  private noteProviders(flat: readonly string[], group: number, playedOn: string | number | null, id: string): void {
    let day = -1;
    for (let i = 0; i < flat.length; i += 3) {
      const had = this.firsts.get(flat[i]);
      if (had && had[1] < group) continue;
      if (day < 0) day = rowDayOf(playedOn);
      const f: ProviderFirst = [flat[i], group, day, id, i / 3];
      if (!had || before(f, had)) this.firsts.set(flat[i], f);
    }
  }

  /** Seals the records for the match-index stage. */
  finish(): MatchRecordsHandle {
    this.spill.seal();
    return { spill: this.spill.handle(), providers: [...this.firsts.values()] };
  }
}

