// What stage 2's gathering reads one register ID's partition lines into (compiler/stages/entities/gather-rows.ts),
// and what the shard, index entry, change events and match records are built from. Fields named `prior…` come from
// the predecessor's tables; every other field from this release's.

/** A bridge: [provider, namespace, external_id]. */
export type Bridge = [string, string, string];

/** One ID's rows, read: what its shard, index entry and change events are built from. */
export interface EntityRows {
  id: string;
  /** In this release's entities table. */
  live: boolean;
  /** Index in ENTITY_TYPES (-1 unless live). */
  type: number;
  status: string;
  label: string;
  /** Lists and maps below start as the shared NONE / null and are made on a first row: most IDs have none. */
  attrs: Map<string, string[]> | null;
  /** [alias, kind, rank, language] */
  aliases: [string, string, string, string][];
  bridges: Bridge[];
  /** Relationships by family: how many name this ID as from_id (out) and as to_id (in). */
  rels: Map<string, { out: number; in: number }> | null;
  /** The to_id of each relationship naming this ID as from_id (the match index follows them up to competitions). */
  relTo: string[];
  /** [qid, confidence, dob_check, inherited] */
  link: [string, string, string, string] | null;
  /** [name, language, confidence, qid] */
  oaliases: [string, string, string, string][];
  /** [provider, property, external_id, confidence, qid] */
  xids: [string, string, string, string, string][];
  /** [status, label] in the predecessor's tables (read only when its diff base is not there). */
  prior: [string, string] | null;
  /** Bridges in the predecessor's tables (likewise). */
  priorBridges: Bridge[];
  /** Redirected or tombstoned in the predecessor. */
  priorRetired: boolean;
  /** A live match in the predecessor's tables (read only when its diff base is not there). */
  priorMatch: boolean;
  /** Its row of the predecessor's matches table, as attributes (likewise). */
  priorAttrs: Map<string, string[]> | null;
  /** Scoreline fields stage 1 found naming no live entity (TAG.dropped), published as null. */
  dropped: Set<string> | null;
}
