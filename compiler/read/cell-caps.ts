// Which size cap of common/limits.ts each column of a release table is held to (docs/limits.md): the byte reader
// refuses a cell beyond it, naming the file, the row, the column and the cap.
import { MAX_CELL_BYTES, MAX_ID_BYTES, MAX_TEXT_BYTES } from '../../common/limits.ts';

/** A size cap: the most UTF-8 bytes a value (a column's cells, say) may hold, and its name in common/limits.ts. */
export interface CellCap {
  bytes: number;
  name: string;
}

export const ID_CAP: CellCap = { bytes: MAX_ID_BYTES, name: 'MAX_ID_BYTES' };
export const TEXT_CAP: CellCap = { bytes: MAX_TEXT_BYTES, name: 'MAX_TEXT_BYTES' };
export const LONG_CAP: CellCap = { bytes: MAX_CELL_BYTES, name: 'MAX_CELL_BYTES' };

/** How a refusal says that a value (a cell, a JSON field, a file) of `bytes` is past `cap`, after naming it. */
export const overCap = (bytes: number, cap: CellCap): string => `is ${bytes} bytes, over the ${cap.bytes}-byte cap ${cap.name} (docs/limits.md)`;

/** Columns that hold a register ID, provider key, namespace or provider-side ID, in whatever table. */
const ID_COLUMNS = new Set(['reep_id', 'from_id', 'to_id', 'home_id', 'away_id', 'aggregate_of', 'provider', 'namespace', 'external_id', 'property', 'qid']);

/** `table/column` of the cells that hold a list (JSON arrays): the only ones allowed past a short text's cap. */
const LONG_COLUMNS = new Set(['overlay_links/inherited', 'observed_clubs/observed_clubs']);

/**
 * The cap of each column of `table` (a table name such as `bridges`), in header order. Any column not named here,
 * including one the published format does not have, is short text: the type tables turn such columns into entity
 * attributes.
 */
export function capsOf(table: string, header: readonly string[]): CellCap[] {
  return header.map((column) => (ID_COLUMNS.has(column) ? ID_CAP : LONG_COLUMNS.has(`${table}/${column}`) ? LONG_CAP : TEXT_CAP));
}
