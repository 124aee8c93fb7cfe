// The CSV side of the explorer's contribution check, kept free of the DOM so it is tested in process: a contribution
// file cut into requests of at most MAX_CHECK_ROWS records, and the report of the results as CSV.
//
// The file is cut as bytes, not text: a record ends at a line feed outside quotes whatever the encoding, and bytes
// the server must see as they are (a byte that is not UTF-8, which it refuses naming the line; a BOM) reach it
// unchanged, as they would reach `register check`. The cut follows the project's CSV parser
// (common/csv-records.ts) and the contribution reader on it (runtime/contributions/contribution-file.ts): a quote
// opens a quoted field only at the start of a field, `""` inside one is a quote, a CR is part of a CRLF line end or
// data, and a blank record (nothing in any field: an empty line, a line of commas) is no row, though its lines count;
// the header is the first record that is not blank. Every chunk is the header's bytes and then whole records, so
// each is a file the server reads alone, and the rows and lines it numbers are put back into the file's numbering.
import type { CheckResult } from '../client/register-client.ts';
import { candidatesCell, reportHeader, reportLine } from '../common/check-report.ts';
import { MAX_CHECK_ROWS } from '../common/request-limits.ts';

/** Bytes per request, header included: within the server's default body cap (256 KiB) with room to spare. */
const CHUNK_BYTES = 240 * 1024;

export interface CsvChunk {
  /** The header's bytes and then this chunk's records, as in the file. */
  body: Uint8Array<ArrayBuffer>;
  /** Rows in the chunk: its records that are not blank (at least one). */
  rows: number;
  /** The file's row number of the chunk's first row (the header is not a row): `?first_row=`. */
  firstRow: number;
  /** Add to the line the server gives a record of this chunk to get the record's line in the file. */
  lineOffset: number;
  /** The file's line where the header starts (after any blank lines), and how many lines it spans. */
  headerLine: number;
  headerLines: number;
  /** Bytes of the file read so far, for the progress line. */
  bytesRead: number;
}

const LF = 10;
const CR = 13;
const QUOTE = 34;
const COMMA = 44;

/** Where the scan is within a record. */
const enum At {
  FieldStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted field: it closes the field, or doubled stands for one. */
  QuoteInQuoted,
}

/**
 * Cuts the file (a stream of byte pieces, as `File.stream()` gives) into chunks of at most `maxRecords` records and,
 * where records allow, `maxBytes` bytes; a record longer than that goes alone in its chunk (the server then says what
 * it thinks of it). A chunk of blank records only is not sent. A file without a header yields nothing, and so does
 * a header alone.
 */
export async function* csvChunks(pieces: AsyncIterable<Uint8Array>, maxRecords = MAX_CHECK_ROWS, maxBytes = CHUNK_BYTES): AsyncGenerator<CsvChunk> {
  let header: Uint8Array | null = null;
  let headerLines = 0;
  let headerLine = 1;
  /** Bytes of the chunk being filled: complete records, then the record under way. */
  let parts: Uint8Array[] = [];
  let partsBytes = 0;
  /** Offsets within `parts` (as a whole) where each complete record ends, and whether it is a row (not blank). */
  let ends: number[] = [];
  let isRow: boolean[] = [];
  let state = At.FieldStart;
  /** Whether the record under way has anything in a field. */
  let content = false;
  let rowsBefore = 0;
  /** Line feeds before the first record of the chunk being filled (its start line is this + 1). */
  let linesBefore = 0;
  let bytesRead = 0;

  const joined = (): Uint8Array => {
    const all = new Uint8Array(partsBytes);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return all;
  };
  /** Takes the first `count` complete records off: a chunk of them, or null when none is a row. */
  const cut = (count: number): CsvChunk | null => {
    const all = joined();
    const end = ends[count - 1];
    const taken = all.subarray(0, end);
    const rows = isRow.slice(0, count).filter(Boolean).length;
    let chunk: CsvChunk | null = null;
    if (rows > 0) {
      const body = new Uint8Array(header!.length + taken.length);
      body.set(header!);
      body.set(taken, header!.length);
      chunk = { body, rows, firstRow: rowsBefore + 1, lineOffset: linesBefore - headerLines, headerLine, headerLines, bytesRead };
    }
    rowsBefore += rows;
    linesBefore += countLineFeeds(taken);
    const rest = all.slice(end);
    parts = rest.length ? [rest] : [];
    partsBytes = rest.length;
    ends = ends.slice(count).map((e) => e - end);
    isRow = isRow.slice(count);
    return chunk;
  };

  for await (const piece of pieces) {
    bytesRead += piece.length;
    let from = 0;
    for (let i = 0; i < piece.length; i++) {
      const c = piece[i];
      if (state === At.Quoted) {
        if (c === QUOTE) state = At.QuoteInQuoted;
        else content = true;
        continue;
      }
      if (state === At.QuoteInQuoted && c === QUOTE) {
        state = At.Quoted;
        content = true;
        continue;
      }
      if (c === COMMA) state = At.FieldStart;
      else if (c === QUOTE && state === At.FieldStart) state = At.Quoted;
      else if (c === LF) {
        state = At.FieldStart;
        const blank = !content;
        content = false;
        const recordEnd = partsBytes + (i + 1 - from);
        if (header === null) {
          parts.push(piece.slice(from, i + 1));
          partsBytes += i + 1 - from;
          const record = joined();
          parts = [];
          partsBytes = 0;
          from = i + 1;
          // Blank records before the header are lines, nothing more.
          if (blank) linesBefore += countLineFeeds(record);
          else {
            header = record;
            headerLine = linesBefore + 1;
            headerLines = countLineFeeds(header);
            linesBefore += headerLines;
          }
          continue;
        }
        ends.push(recordEnd);
        isRow.push(!blank);
        const over = header.length + recordEnd > maxBytes && ends.length > 1;
        if (ends.length === maxRecords || over) {
          parts.push(piece.slice(from, i + 1));
          partsBytes += i + 1 - from;
          from = i + 1;
          // Over the byte budget the last record starts the next chunk.
          const chunk = cut(over ? ends.length - 1 : ends.length);
          if (chunk) yield chunk;
        }
      } else {
        if (c !== CR) content = true;
        state = At.Unquoted;
      }
    }
    if (from < piece.length) {
      parts.push(piece.slice(from));
      partsBytes += piece.length - from;
    }
  }
  if (header === null) return;
  // The last record may lack its line feed; it is a record all the same.
  const lastEnd = ends.length ? ends[ends.length - 1] : 0;
  if (partsBytes > lastEnd) {
    ends.push(partsBytes);
    isRow.push(content);
  }
  while (ends.length) {
    const over = ends.findIndex((e) => header!.length + e > maxBytes);
    const chunk = cut(over > 0 ? over : over === 0 ? 1 : ends.length);
    if (chunk) yield chunk;
  }
}

function countLineFeeds(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) n++;
  return n;
}

/** The statuses of a checked row, in the order the view lists them. */
export const STATUSES = ['already_bridged', 'new_bridge', 'conflict', 'redirected', 'retired', 'ambiguous', 'no_candidate', 'invalid'] as const satisfies readonly CheckResult['status'][];

/**
 * What the view keeps of a result: the report's cells, and the best candidate's name for the table, not every
 * candidate's features, so 100k rows stay a few tens of megabytes in the tab.
 */
export interface CheckedRow {
  row: number;
  line: number | null;
  status: CheckResult['status'];
  reep_id: string | null;
  band: number | null;
  reasons: string[];
  provider: string;
  namespace: string;
  external_id: string;
  /** The report's `candidates` cell: `reep_id:score` of each, best first. */
  candidates: string;
  best: { reep_id: string; label: string; score: number } | null;
  extra: Record<string, string>;
}

/** A result of one chunk in the file's numbering. */
export function checkedRow(r: CheckResult, chunk: Pick<CsvChunk, 'lineOffset'>): CheckedRow {
  const best = r.candidates[0];
  return {
    row: r.row,
    line: r.line === undefined ? null : r.line + chunk.lineOffset,
    status: r.status,
    reep_id: r.reep_id,
    band: r.band,
    reasons: r.reasons,
    provider: r.provider,
    namespace: r.namespace,
    external_id: r.external_id,
    candidates: candidatesCell(r.candidates),
    best: best ? { reep_id: best.reep_id, label: best.label, score: best.score } : null,
    extra: r.extra,
  };
}

/**
 * The report as CSV lines, header first (common/check-report.ts: the lines `register check --format csv` prints for
 * the same file and stamp), the pass-through columns as the first row names them. One string per row, so a Blob is
 * made of them without one string of the whole report.
 */
export function reportLines(rows: readonly CheckedRow[]): string[] {
  const extras = rows.length ? Object.keys(rows[0].extra) : [];
  const out = [reportHeader(extras)];
  for (const r of rows) out.push(reportLine(r, r.candidates, extras.map((k) => r.extra[k] ?? '')));
  return out;
}

/**
 * A message the server gave about a line of one chunk (`line 3: …`, an `invalid_csv` refusal) with the file's line:
 * the header's lines are where the header is in the file, the records' lines are moved by the chunk's offset.
 */
export function withFileLines(message: string, chunk: Pick<CsvChunk, 'lineOffset' | 'headerLine' | 'headerLines'>): string {
  return message.replace(/\bline (\d+)\b/g, (_, n: string) => `line ${Number(n) <= chunk.headerLines ? chunk.headerLine + Number(n) - 1 : Number(n) + chunk.lineOffset}`);
}
