// Match records: what stage 2 (build-entities) hands the match-index stage (build-matches). Each live match goes,
// as one JSON line, to the group of its year (so the next stage numbers matches by date one group at a time), and
// each live team, competition, season and stage to the refs group (labels and structural links: ~70k at full size).
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

/** The year group of a `played_on` cell; one that is not a calendar date counts as undated, as the index treats it. */
function yearGroupOf(playedOn: string | number | null): number {
  if (typeof playedOn !== 'string' || dayOf(playedOn) === 0) return UNDATED_GROUP;
  return Math.min(DATED_GROUPS - 1, Math.max(0, Number(playedOn.slice(0, 4)) - FIRST_YEAR));
}

/** One stage-2 range's match and ref records. */
export class MatchRecordWriter {
  private readonly spill: GroupSpill;

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
      this.spill.addLine(yearGroupOf(scoreline[PLAYED_ON]), JSON.stringify(rec));
    } else if (REF_TYPES.has(type)) {
      const rec: RefRecord = [a.id, ENTITY_TYPES.indexOf(type), a.label, a.relTo];
      this.spill.addLine(REFS_GROUP, JSON.stringify(rec));
    }
  }

  /** Seals the records for the match-index stage. */
  finish(): GroupSpillHandle {
    this.spill.seal();
    return this.spill.handle();
  }
}

