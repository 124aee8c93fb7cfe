// Reading a contribution file (docs/contributions.md): a CSV of provider IDs with a header row, streamed from any
// source of bytes (a file on Node, a request body in workerd), or the same rows as JSON objects. Web-standard: the
// route runs at the edge too. Records are framed by the project's one CSV parser (common/csv-records.ts); this
// module adds what a contributor's file needs: header names matched case-insensitively, the physical line of each
// record, and refusals that name the line instead of a crash, with memory bounded by one record and one chunk.
import { CsvSyntaxError, parseRecords } from '../../common/csv-records.ts';
import { firstInvalidUtf8 } from '../../common/utf8.ts';
import { MAX_CONTRIBUTION_RECORD_CHARS } from '../../common/request-limits.ts';

/** A file that cannot be read as a contribution file: the message names the problem, `line` where it is (1 = header). */
export class ContributionFileError extends Error {
  constructor(reason: string, readonly line: number) {
    super(`line ${line}: ${reason}`);
  }
}

/** The columns the check reads, by their (lower-cased) header names; any other column is passed through. */
const KNOWN = ['provider', 'external_id', 'name', 'date_of_birth', 'type', 'nationality', 'namespace', 'reep_id'] as const;
type Known = (typeof KNOWN)[number];
const KNOWN_SET: ReadonlySet<string> = new Set(KNOWN);

/** Where each column of a header goes: a known field, a cross-ID (`<provider>_id`), or passed through as written. */
interface Columns {
  known: Partial<Record<Known, number>>;
  /** `<provider>_id` columns whose provider the release knows, in header order. */
  crossIds: { provider: string; column: number }[];
  /** Every other column, by its name as written. */
  extras: { name: string; column: number }[];
  width: number;
}

/** One input row as read: its number among the data rows, where it starts (CSV only), its fields, or what is wrong with it. */
export interface ContributionRow {
  row: number;
  /** The physical line where the record starts (the header is line 1); absent for JSON input. */
  line?: number;
  fields: Partial<Record<Known, string>>;
  crossIds: { provider: string; value: string }[];
  extra: [string, string][];
  /** A reason code when the record itself cannot be checked (a CSV record of the wrong width). */
  problem: string | null;
}

/**
 * The columns of `header` (names trimmed, compared lower-cased). `providers` decides which `<provider>_id` columns
 * are cross-IDs. Throws for a header without `provider` or `external_id`, or naming a column twice.
 */
function columnsOf(header: readonly string[], providers: ReadonlySet<string>, line = 1): Columns {
  const cols: Columns = { known: {}, crossIds: [], extras: [], width: header.length };
  const seen = new Set<string>();
  header.forEach((raw, column) => {
    const name = raw.trim().toLowerCase();
    if (name !== '' && seen.has(name)) throw new ContributionFileError(`the header names column ${JSON.stringify(raw.trim().slice(0, 64))} twice`, line);
    seen.add(name);
    if (KNOWN_SET.has(name)) cols.known[name as Known] = column;
    else if (name.endsWith('_id') && providers.has(name.slice(0, -3))) cols.crossIds.push({ provider: name.slice(0, -3), column });
    else cols.extras.push({ name: raw.trim(), column });
  });
  const missing = ['provider', 'external_id'].filter((c) => cols.known[c as Known] === undefined);
  if (missing.length) throw new ContributionFileError(`the header has no ${missing.join(' and no ')} column (it needs provider and external_id; names are matched case-insensitively)`, line);
  return cols;
}

/** A record's fields as a row, by `cols`. */
function rowOf(cols: Columns, fields: readonly string[], row: number, line?: number): ContributionRow {
  const out: ContributionRow = { row, fields: {}, crossIds: [], extra: [], problem: null };
  if (line !== undefined) out.line = line;
  if (fields.length !== cols.width) {
    out.problem = 'wrong_field_count';
    return out;
  }
  for (const k of KNOWN) {
    const c = cols.known[k];
    if (c !== undefined) out.fields[k] = fields[c].trim();
  }
  for (const x of cols.crossIds) {
    const v = fields[x.column].trim();
    if (v !== '') out.crossIds.push({ provider: x.provider, value: v });
  }
  for (const x of cols.extras) out.extra.push([x.name, fields[x.column]]);
  return out;
}

/** Whether a record holds nothing: an empty line, or a line of commas. */
const blank = (fields: readonly string[]): boolean => fields.every((f) => f === '');

const NEWLINE = 10;

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function countNewlineBytes(bytes: Uint8Array, to: number): number {
  let n = 0;
  for (let i = 0; i < to; i++) if (bytes[i] === NEWLINE) n++;
  return n;
}

/**
 * The rows of a contribution CSV streamed from `chunks`, in order, numbered from `firstRow`. The header is the first
 * record that is not blank; blank records are skipped (their lines still count). Throws ContributionFileError
 * naming the line for a byte that is not UTF-8, a record longer than MAX_CONTRIBUTION_RECORD_CHARS, a quote out of
 * place, a bad header or a file without one. Holds at most one chunk and one record.
 */
export async function* readContributionCsv(
  chunks: AsyncIterable<Uint8Array>,
  providers: ReadonlySet<string>,
  firstRow = 1,
): AsyncGenerator<ContributionRow, void, undefined> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let cols: Columns | null = null;
  /** The line where the next record starts. */
  let line = 1;
  let row = firstRow;
  /** Text not yet framed (the start of a record the next chunk completes). */
  let carry = '';
  /** Bytes after the last newline seen: a character may be cut there, so they are decoded with the next chunk. */
  let pending: Uint8Array = new Uint8Array(0);
  let ready: ContributionRow[] = [];

  const emit = (fields: string[], raw: string) => {
    const at = line;
    line += 1 + (raw.indexOf('\n') === -1 ? 0 : countNewlines(raw));
    if (raw.length > MAX_CONTRIBUTION_RECORD_CHARS) throw tooLong(at);
    if (cols === null) {
      if (fields.length === 1 && fields[0] === '') return;
      if (fields[0].charCodeAt(0) === 0xfeff) fields[0] = fields[0].slice(1);
      cols = columnsOf(fields, providers, at);
      return;
    }
    if (blank(fields)) return;
    ready.push(rowOf(cols, fields, row++, at));
  };
  const frame = (text: string, final: boolean) => {
    try {
      carry = text.slice(parseRecords(text, final, emit));
    } catch (e) {
      if (e instanceof CsvSyntaxError) throw new ContributionFileError(e.message, line);
      throw e;
    }
    if (carry.length > MAX_CONTRIBUTION_RECORD_CHARS) throw tooLong(line);
  };
  const decode = (bytes: Uint8Array): string => {
    try {
      return decoder.decode(bytes);
    } catch {
      const bad = Math.max(0, firstInvalidUtf8(bytes, 0, bytes.length));
      throw new ContributionFileError('not valid UTF-8 (save the file as UTF-8)', line + countNewlines(carry) + countNewlineBytes(bytes, bad));
    }
  };

  for await (const chunk of chunks) {
    let bytes = chunk;
    if (pending.length) {
      bytes = new Uint8Array(pending.length + chunk.length);
      bytes.set(pending);
      bytes.set(chunk, pending.length);
    }
    const cut = bytes.lastIndexOf(NEWLINE) + 1;
    pending = bytes.slice(cut);
    // A record cut off by no newline at all: refused once it is longer than any record may be (a character is at
    // most 4 bytes), before more of it is held.
    if (pending.length > 4 * MAX_CONTRIBUTION_RECORD_CHARS + 4) throw tooLong(line + countNewlines(carry));
    if (cut > 0) frame(carry + decode(bytes.subarray(0, cut)), false);
    if (ready.length) {
      const out = ready;
      ready = [];
      yield* out;
    }
  }
  frame(carry + decode(pending), true);
  yield* ready;
  if (cols === null) throw new ContributionFileError('no header row (the file is empty)', line);
}

const tooLong = (line: number) =>
  new ContributionFileError(`a record runs past ${MAX_CONTRIBUTION_RECORD_CHARS} characters, longer than any contribution row (docs/contributions.md)`, line);

/** A whole text (a CSV request body) as chunks, for readContributionCsv. */
export async function* chunksOfBytes(bytes: Uint8Array, size = 1 << 20): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, Math.min(bytes.length, at + size));
}

/**
 * JSON rows (objects of strings or numbers, as the request schema admits) as rows, numbered from `firstRow`: each
 * object's keys are its header, matched as a CSV header's are; a row without `provider` or `external_id` is
 * checked as an invalid row, not refused.
 */
export function rowsOfJson(rows: readonly Record<string, string | number | null>[], providers: ReadonlySet<string>, firstRow = 1): ContributionRow[] {
  return rows.map((obj, i) => {
    const keys = Object.keys(obj);
    const values = keys.map((k) => (obj[k] === null ? '' : String(obj[k])));
    try {
      return rowOf(columnsOf(keys, providers), values, firstRow + i);
    } catch (e) {
      if (!(e instanceof ContributionFileError)) throw e;
      // What a CSV header would have been refused for (no provider or external_id, a column named twice) is this
      // row's own problem, `missing_field` (check-row.ts REASONS): its keys are its header.
      return { row: firstRow + i, fields: {}, crossIds: [], extra: [], problem: 'missing_field' };
    }
  });
}
