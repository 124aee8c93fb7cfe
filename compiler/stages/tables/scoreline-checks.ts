// Stage 1's checks of a matches row's scoreline cells against the live IDs and the published value rules.
import type { CsvRecord } from '../../read/csv-reader.ts';
import { REGISTER_ID } from '../../../common/ids.ts';
import { admitsBytes, SCORELINE_FIELDS, scorelineProblem } from '../../../common/scoreline.ts';
import type { RegisterIdTable } from '../../read/register-id-table.ts';
import { noteSlack } from '../../context.ts';
import { TAG } from '../../records/partition-lines.ts';
import type { Reader } from './table-reader.ts';

/**
 * Checks a matches row's scoreline cells (common/scoreline.ts): a value the published enums, counts or dates do not
 * admit, or a side that is not a live entity, is referential slack, noted with its row. Stage 2 drops a bad value to
 * null by the same checks; a side's liveness it cannot see, so a TAG.dropped line tells it.
 */
export function checkScoreline(r: Reader, live: RegisterIdTable, f: CsvRecord, c: Record<string, number>, row: number, label: string, p: number): void {
  for (const [name, kind] of SCORELINE_FIELDS) {
    const k = c[name];
    if (k === undefined || f.empty(k)) continue;
    // A live side or a good value is found from its bytes; only another value is made a string.
    if (kind === 'id' ? live.getIn(f, k) >= 0 : !f.quoted && f.ascii && admitsBytes(kind, f.buf, f.fieldStart(k), f.ends[k])) continue;
    const v = f.text(k);
    const problem = scorelineProblem(kind, v) ?? (kind === 'id' ? 'not a live register ID' : null);
    if (problem === null) continue;
    noteSlack(r, label, `${name} ${problem}`, `row ${row}: ${JSON.stringify(v.slice(0, 40))}`);
    if (kind === 'id' && REGISTER_ID.test(v)) r.spill.addTaggedLine(p, TAG.dropped, `${f.text(c.reep_id)},${name}`);
  }
}

