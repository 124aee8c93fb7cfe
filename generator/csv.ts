// RFC 4180 CSV for the generators: escaping for the writer; reading goes through the compiler's reader (gzip or
// plain, LF or CRLF), used to derive a successor from a prior release and to read the v0 register.
import { parseCsvText, readCsvBatches } from '../compiler/read/csv-reader.ts';

const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE_RE = /"/g;

/** One CSV field: quoted (with quotes doubled) only when it holds a comma, quote, CR or LF. */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(QUOTE_RE, '""')}"` : value;
}

/** One CSV record with its LF terminator. */
export function csvLine(fields: readonly string[]): string {
  let out = csvField(fields[0] ?? '');
  for (let i = 1; i < fields.length; i++) out += ',' + csvField(fields[i]);
  return out + '\n';
}

/** The generator reads releases with the compiler's reader: one RFC 4180 parser in the project. */
export const readCsv = (path: string, label: string = path) => readCsvBatches(path, label, 'generate');

/** Parses a whole CSV text (header included) into records; for small inputs and tests. */
export const parseCsv = parseCsvText;

/**
 * A copy of a parsed field that does not keep its source chunk alive. V8 represents substrings as views into the
 * parent string, so a few kept IDs would otherwise pin every 1 MB chunk they were cut from (gigabytes at 10M rows).
 */
export const own = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');
