// The compiled match index behind GET /matches: its families, the values they hold and how a list entry packs a
// match's date, state and side, shared by the compiler (writer) and the runtime (reader).
import type { BucketFamily } from './bucket-format.ts';
import { fnv1a32 } from './hash.ts';
import { MATCH_STATES } from './scoreline.ts';

// Match states as the release's `match_state` column may publish them (common/scoreline.ts); any other value is no state.
export { MATCH_STATES };
/** The state code of a match with no (or no known) state: `none` in the `state` filter. */
const STATE_NONE = MATCH_STATES.length;
/** Names the `state` filter accepts, by state code. */
export const STATE_FILTER_NAMES: readonly string[] = [...MATCH_STATES, 'none'];

/**
 * Row copies per bucket of the rows family. An anchor's copies lie together in date order, so a page of 20 (or a
 * team's season) is one or two buckets; larger buckets would only make a page's one read longer.
 */
export const ROWS_PER_BUCKET = 32;
/** List entries per value (so per bucket) of the lists family. */
export const LIST_ENTRIES_PER_BUCKET = 256;
/** Integers in a list entry (MatchListEntry), each a little-endian u32 in a lists value. */
export const LIST_ENTRY_FIELDS = 4;
/** Bytes of a list entry in a lists value. */
export const LIST_ENTRY_BYTES = 4 * LIST_ENTRY_FIELDS;
/**
 * Rows per group of the generation's digest: the generation hashes the rows in ordinal order as format 6 stored
 * them (groups of eight, each a msgpack array), so it names the matches and not their layout, and stays what it
 * was for an unchanged release across the format change (cursors and clients keep it).
 */
export const GENERATION_ROWS_PER_GROUP = 8;

/**
 * release.json's `matches`: three families and the generation.
 * - rows (ordinal): copies of MatchRowValue laid out by anchor: each anchor's matches in its ascending order, one
 *   after another (`rows` of its ref says where they start). A team's matches are its own copies; a competition's
 *   too; a season whose matches are one block of its competition's copies points into them, any other season has
 *   its own. A match with no anchor has no copy (no page can name it).
 * - lists (ordinal, one value a bucket): MatchListEntry entries, LIST_ENTRIES_PER_BUCKET to a value, each value a
 *   msgpack bin of the entries' u32s, little-endian, four an entry; entry p is in value floor(p / 256). Each anchor
 *   owns two runs, its matches in ascending order (ordinal order) then the same matches in descending order (date
 *   desc, ties by reep_id asc, undated last). Entry i of the ascending run has row copy `rows + i`.
 * - refs (hashed): register ID of a team, competition, season or stage → MatchRefValue (its label, and where its
 *   lists and row copies sit).
 * `generation` is the sha256 of the live matches' rows in ordinal order, in groups of GENERATION_ROWS_PER_GROUP
 * (each a msgpack array): the rows determine every list and copy.
 */
export interface MatchesDoc {
  rows: BucketFamily;
  lists: BucketFamily;
  refs: BucketFamily;
  /** Live matches indexed. */
  count: number;
  /** Providers named by row bridges, in the order rows first name them; a row names a provider by its index here. */
  providers: string[];
  generation: string;
}

/**
 * One match: [reep_id, played_on, state code, home, away, competition, season, stage, home_score, away_score,
 * result_form, shootout_home, shootout_away, score_basis, leg, aggregate_of, bridges]. The five references are
 * register IDs (labels come from refs) or null; bridges are flat triples [provider index, namespace, external_id].
 */
export type MatchRowValue = [
  string, string | null, number, string | null, string | null, string | null, string | null, string | null,
  number | null, number | null, string | null, number | null, number | null, string | null, string | null, string | null,
  (string | number)[],
];

/** Where each field of a MatchRowValue sits: the compiler writes rows with matchRow, the runtime reads these. */
export const MATCH_ROW = {
  id: 0, playedOn: 1, state: 2, home: 3, away: 4, competition: 5, season: 6, stage: 7, homeScore: 8, awayScore: 9,
  resultForm: 10, shootoutHome: 11, shootoutAway: 12, scoreBasis: 13, leg: 14, aggregateOf: 15, bridges: 16,
} as const;

/** A match row's fields by name, as matchRow takes them. */
export type MatchRowFields = { [K in keyof typeof MATCH_ROW]: MatchRowValue[(typeof MATCH_ROW)[K]] };

/** The stored row of a match: its fields in MATCH_ROW's order. */
export function matchRow(r: MatchRowFields): MatchRowValue {
  return [
    r.id, r.playedOn, r.state, r.home, r.away, r.competition, r.season, r.stage, r.homeScore, r.awayScore, r.resultForm,
    r.shootoutHome, r.shootoutAway, r.scoreBasis, r.leg, r.aggregateOf, r.bridges,
  ];
}

/**
 * A reference: [entity type index, label, first entry of its ascending run, matches in its list, first of its row
 * copies].
 */
export type MatchRefValue = [number, string, number, number, number];
/** Where each field of a MatchRefValue sits. */
export const MATCH_REF = { typeIndex: 0, label: 1, start: 2, count: 3, rows: 4 } as const;

/** The stored reference of a team, competition, season or stage. */
export function matchRef(r: { typeIndex: number; label: string; start: number; count: number; rows: number }): MatchRefValue {
  return [r.typeIndex, r.label, r.start, r.count, r.rows];
}

/**
 * A list entry: [match ordinal, meta (see entryMeta), sides digest, structure digest]. The digests hold 16 bits of
 * each of the match's anchors (anchorDigest): home then away, competition then season. A filter over several
 * anchors is asked of the one list a page walks: an entry whose digests miss one of the filter's anchors cannot
 * pass, so only rows that may are read (and checked exactly).
 */
export type MatchListEntry = [number, number, number, number];

/** 16 bits of a register ID for the list digests; 0 for none (a real ID may give 0 too: digests only rule out). */
export const anchorDigest = (id: string | null): number => (id === null ? 0 : fnv1a32(id) >>> 16);
/** A list entry's two digests from its row's anchors. */
export const entryDigests = (home: string | null, away: string | null, competition: string | null, season: string | null): [number, number] => [
  ((anchorDigest(home) << 16) | anchorDigest(away)) >>> 0,
  ((anchorDigest(competition) << 16) | anchorDigest(season)) >>> 0,
];

/** Day numbers are days since 1970-01-01 plus this, so every date from year 0 on is positive and 0 means undated. */
const DAY_BASE = 800_000;
const MS_PER_DAY = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The day number of a `YYYY-MM-DD` calendar date, or 0 for anything else (empty, malformed, impossible). */
export function dayOf(date: string | null | undefined): number {
  if (!date) return 0;
  const m = ISO_DATE.exec(date);
  if (!m) return 0;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  // Date.UTC maps years 0-99 to 1900-1999; set the year again so every four-digit year is what it says.
  back.setUTCFullYear(y);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return 0;
  return Math.round(back.getTime() / MS_PER_DAY) + DAY_BASE;
}

/** A list entry's meta: its day number, state code and whether the anchor (a team) is the home side. */
export const entryMeta = (day: number, state: number, home: boolean): number => day * 16 + state * 2 + (home ? 1 : 0);
export const metaDay = (meta: number): number => Math.floor(meta / 16);
export const metaState = (meta: number): number => (meta >> 1) & 7;
export const metaHome = (meta: number): boolean => (meta & 1) === 1;

/** The state code of a published `match_state` cell. */
export const stateCode = (cell: string | null | undefined): number => {
  const i = (MATCH_STATES as readonly string[]).indexOf(cell ?? '');
  return i < 0 ? STATE_NONE : i;
};
