// The published release's tables: file names, exact column lists and manifest roles (RELEASE-FORMAT.md).
import type { EntityType } from '../common/ids.ts';

/** Columns of every table a release may ship, in the published order (plus the project's providers extension). */
export const TABLE_COLUMNS = {
  entities: [
    'reep_id', 'entity_type', 'status', 'label', 'gender', 'country',
    'corroboration_grade', 'corroboration_count', 'source_tier_band',
  ],
  players: ['reep_id', 'status', 'label', 'gender', 'country'],
  coaches: ['reep_id', 'status', 'label', 'gender', 'country'],
  referees: ['reep_id', 'status', 'label'],
  teams: ['reep_id', 'status', 'label', 'gender', 'country'],
  competitions: ['reep_id', 'status', 'label', 'gender', 'country'],
  seasons: ['reep_id', 'status', 'label'],
  stages: ['reep_id', 'status', 'label'],
  matches: [
    'reep_id', 'status', 'label', 'home_score', 'away_score', 'result_form', 'shootout_home', 'shootout_away',
    'score_basis', 'home_id', 'away_id', 'played_on', 'leg', 'aggregate_of', 'match_state',
  ],
  aliases: ['reep_id', 'alias', 'kind', 'rank', 'language'],
  bridges: ['provider', 'namespace', 'external_id', 'reep_id', 'rung'],
  redirects: ['from_id', 'to_id', 'reason'],
  relationships: ['from_id', 'to_id', 'kind'],
  overlay_links: ['reep_id', 'qid', 'confidence', 'dob_check', 'entity_type', 'inherited_count', 'inherited'],
  overlay_aliases: [
    'reep_id', 'name', 'language', 'name_source', 'confidence', 'link_confidence', 'dob_check', 'qid', 'source',
    'source_tier',
  ],
  overlay_xids: ['reep_id', 'provider', 'property', 'external_id', 'rank', 'confidence', 'dob_check', 'qid'],
  coverage: ['section', 'key', 'value'],
  observed_clubs: [
    'reep_id', 'entity_type', 'observed_clubs', 'first_observed_season', 'last_observed_season', 'basis',
  ],
  providers: ['provider', 'role'],
} as const satisfies Record<string, readonly string[]>;

export type TableName = keyof typeof TABLE_COLUMNS;

/** Manifest roles of release.json `files` entries. */
export type FileRole = 'canonical_csv' | 'overlay' | 'metadata' | 'convenience' | 'private';

/** Path of a table inside a release. */
export const tablePath = (table: TableName): string => `csv/${table}.csv.gz`;

/** The manifest role of a table's file. */
export function tableRole(table: TableName): FileRole {
  if (table.startsWith('overlay_')) return 'overlay';
  if (table === 'coverage') return 'metadata';
  return 'canonical_csv';
}

/** The per-type table repeating each entity of that type. */
export const TYPE_TABLE: Record<EntityType, TableName> = {
  player: 'players',
  coach: 'coaches',
  referee: 'referees',
  team: 'teams',
  competition: 'competitions',
  season: 'seasons',
  stage: 'stages',
  match: 'matches',
};

/** The letter after `r` in minted register IDs, a hint at the type (never read back as the type). */
export const TYPE_LETTER: Record<EntityType, string> = {
  player: 'p',
  coach: 'c',
  referee: 'f',
  team: 't',
  competition: 'l',
  season: 's',
  stage: 'g',
  match: 'm',
};
