// RFC 4180 CSV for the generators: writing with common/csv-records.ts; reading goes through the compiler's reader (gzip or
// plain, LF or CRLF), used to derive a successor from a prior release and to read the v0 register.
import { parseCsvText, readCsvBatches } from '../compiler/read/csv-reader.ts';

/** The generator reads releases with the compiler's reader: one RFC 4180 parser in the project. */
export const readCsv = (path: string, label: string = path) => readCsvBatches(path, label, 'generate');

/** Parses a whole CSV text (header included) into records; for small inputs and tests. */
export const parseCsv = parseCsvText;

/**
 * A copy of a parsed field that does not keep its source chunk alive. V8 represents substrings as views into the
 * parent string, so a few kept IDs would otherwise pin every 1 MB chunk they were cut from (gigabytes at 10M rows).
 */
export const own = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');
