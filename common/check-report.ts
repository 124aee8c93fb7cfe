// The contribution check's CSV report, written once: `register check --format csv` prints it and the explorer's
// check view downloads it, and the two must be the same bytes for the same file and stamp.
import { csvLine } from './csv-records.ts';

/** The report's own columns, before the pass-through ones (the file's other columns, as the first row names them). */
export const REPORT_COLUMNS = ['row', 'line', 'status', 'reep_id', 'band', 'reasons', 'provider', 'namespace', 'external_id', 'candidates'];

/** What a report line says of one result; `line` is the file's (null or absent for JSON rows). */
export interface ReportRow {
  row: number;
  line?: number | null;
  status: string;
  reep_id: string | null;
  band: number | null;
  reasons: readonly string[];
  provider: string;
  namespace: string;
  external_id: string;
}

/** The `candidates` cell: `reep_id:score` of each candidate, best first. */
export const candidatesCell = (candidates: readonly { reep_id: string; score: number }[]): string => candidates.map((c) => `${c.reep_id}:${c.score}`).join(' ');

/** The header line, naming the pass-through columns after the report's own. */
export const reportHeader = (extraNames: readonly string[]): string => csvLine([...REPORT_COLUMNS, ...extraNames]);

/** One result's line: its cells, its candidates cell, then its pass-through values. */
export function reportLine(r: ReportRow, candidates: string, extraValues: readonly string[]): string {
  const line = r.line === undefined || r.line === null ? '' : String(r.line);
  return csvLine([String(r.row), line, r.status, r.reep_id ?? '', r.band === null ? '' : String(r.band), r.reasons.join(' '), r.provider, r.namespace, r.external_id, candidates, ...extraValues]);
}
