// How stage 1 reads one table, on whichever thread: its header checked, each row handed on with its columns by name,
// the rows counted for the progress line, and (for a table whose rows are spilled) its layout recorded.
import { columnIndex, readCsvRecords, type CsvRecord } from '../../read/csv-reader.ts';
import { RegisterError } from '../../../common/errors.ts';
import { REGISTER_ID } from '../../../common/ids.ts';
import { bucketOf, bucketOfBytes } from '../../../common/hash.ts';
import type { GroupSpill } from '../../write/group-spill.ts';
import type { CompileContext } from '../../context.ts';
import { addShared, type SharedCount } from '../../../common/progress.ts';
import type { ReleaseInput, TableName } from '../../read/release-input.ts';
import { layoutOf, type LineLayout } from '../../records/partition-lines.ts';
import { capsOf } from '../../read/cell-caps.ts';

export const partitionOf = (id: string, partitions: number): number => bucketOf(id, partitions);
/** partitionOf field `k` of a record, hashed from its bytes when they are its characters. */
export const partitionIn = (r: CsvRecord, k: number, partitions: number): number =>
  r.quoted || !r.ascii ? bucketOf(r.text(k), partitions) : bucketOfBytes(r.buf, r.fieldStart(k), r.ends[k], partitions);

/** What reading needs from the compile: where rows go and what is noted. Also built inside worker threads. */
export interface Reader {
  /** Rows read so far by every reader of this compile (the progress line's count), when a line shows it. */
  rows: SharedCount | undefined;
  slack: CompileContext['slack'];
  partitions: number;
  spill: GroupSpill;
  layouts: Map<string, LineLayout>;
}

export function checkId(id: string, label: string, row: number): void {
  if (!REGISTER_ID.test(id)) throw new RegisterError('compile', `bad register ID ${JSON.stringify(id)}`, label, row);
}

/** Rows counted between two adds to the shared count, less one. */
const ROWS_STEP_MASK = 0x3fff;

type RowFn = (f: CsvRecord, c: Record<string, number>, row: number, label: string) => void;

/** One table to read. */
export interface TableRead {
  release: ReleaseInput;
  table: TableName;
  /** Columns the header must have; `row` finds their indices by name. */
  columns: string[];
  /** A table of the predecessor: its errors name the predecessor's stamp. */
  fromPrior?: boolean;
  row: RowFn;
  onHeader?: (header: string[], c: Record<string, number>) => void;
}

/** One table whose rows are spilled as partition lines under `tag`, keyed by `reep_id`. */
export interface SpilledRead extends Omit<TableRead, 'onHeader'> {
  tag: string;
  /** Its other sourced columns are the entity's attributes (compiler/records/partition-lines.ts `layoutOf`). */
  attributes?: boolean;
}

/** Reads a table of spilled rows and records its layout. */
export function readSpilled(r: Reader, t: SpilledRead): Promise<void> {
  return readTable(r, { ...t, onHeader: (header, c) => r.layouts.set(t.tag, layoutOf(header, c, 'reep_id', t.attributes === true)) });
}

export async function readTable(r: Reader, { release: rel, table: name, columns, fromPrior, row: fn, onHeader }: TableRead): Promise<void> {
  const t = rel.tables[name];
  if (!t) return;
  let c: Record<string, number> = Object.create(null);
  const stage = fromPrior ? `${rel.stamp}/${t.label}` : t.label;
  let rowsRead = 0;
  await readCsvRecords(t.path, stage, {
    caps: (h) => capsOf(name, h.map((x) => x.trim())),
    header: (h) => {
      const header = h.map((x) => x.trim());
      c = columnIndex(header, columns, stage);
      onHeader?.(header, c);
    },
    record: (f, row) => {
      fn(f, c, row, stage);
      // In steps: one atomic add per row would cost more than the count is worth.
      if ((++rowsRead & ROWS_STEP_MASK) === 0) addShared(r.rows, ROWS_STEP_MASK + 1);
    },
  });
  addShared(r.rows, rowsRead & ROWS_STEP_MASK);
}
