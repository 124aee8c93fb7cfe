// The project's one RFC 4180 reader, for the release's (optionally gzipped) CSV tables, built for 10M-row files.
// Plain lines take a fast path (no quote character: split at their commas) and lines with `"` the quote-aware one
// (quotedRecord), in two forms:
// - over bytes (`readCsvRecords`, stage 1): records framed in the decompressed chunks, fields as offsets, a string
//   made only when a visitor asks, much faster than the text form over a full-size release;
// - over text (`readCsv`, `readCsvBatches`, and parseRecords/scanRecords for stage 2's spills): chunks decoded once,
//   fields sliced as strings, for the generator, the tests and text the compiler spilled itself.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { StringDecoder } from 'node:string_decoder';
import { RegisterError } from '../../common/errors.ts';
import { LONG_CAP, overCap, type CellCap } from './cell-caps.ts';
import { firstInvalidUtf8, isUtf8Range } from './utf8-check.ts';
import { CsvSyntaxError, parseRecords, quotedRecord, splitPlain } from '../../common/csv-records.ts';

export { parseRecords, splitPlain };

export interface CsvVisitor {
  /** Called once with the header row (a leading byte-order mark removed). */
  header?(columns: string[]): void;
  /**
   * Called for each data row; `row` counts data rows from 1 (the header is not counted). `raw` is the record's
   * own CSV text (quotes as written, line end removed): parsing it again gives the same fields, so a consumer can
   * pass rows on without re-encoding them.
   */
  row(fields: string[], row: number, raw: string): void;
}

/**
 * Scans text the compiler spilled itself (complete records, each ending in a newline) without splitting plain
 * lines: `plain(start, end)` gets each record without a quote character as the offsets of its line, and
 * `quoted(fields)` each record with one, parsed as parseRecords would. A caller can then keep a record as one
 * number and split it when it needs the fields.
 */
export function scanRecords(text: string, plain: (start: number, end: number) => void, quoted: (fields: string[]) => void): void {
  let pos = 0;
  let records = 0;
  const n = text.length;
  let q = -2;
  while (pos < n) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = n;
    if (q !== -1 && q < pos) q = text.indexOf('"', pos);
    if (q === -1 || q > nl) {
      plain(pos, nl);
      pos = nl + 1;
    } else {
      const rec = quotedRecord(text, pos, true, records)!;
      quoted(rec.fields);
      pos = rec.next;
    }
    records++;
  }
}

/** Parses a whole CSV text (header included) into records; for small inputs and tests. */
export function parseCsvText(text: string): string[][] {
  const out: string[][] = [];
  parseRecords(text, true, (r) => out.push(r));
  return out;
}

/**
 * Streams the decoded text chunks of `path` (gzip when it ends in `.gz`) through the parser, checking every row
 * against the header's width. `onRows` gets the rows of each chunk. Errors name `label` and the row.
 */
async function stream(
  path: string,
  label: string,
  stage: string,
  onHeader: (h: string[]) => void,
  onRow: (fields: string[], row: number, raw: string) => void,
  /** After each chunk's rows; a returned promise pauses reading until it settles (backpressure). */
  onChunk?: () => Promise<void> | void,
): Promise<number> {
  const source = chunksOf(path);
  const decoder = new StringDecoder('utf8');
  const rows = new TableRows(stage, label);
  let carry = '';

  const emit = (fields: string[], raw: string) => {
    if (rows.width < 0) {
      onHeader(rows.header(fields));
      return;
    }
    if (rows.row(fields.length, fields.length === 1 && fields[0] === '')) onRow(fields, rows.count, raw);
  };
  const parse = (text: string, final: boolean) => {
    carry = text.slice(parseRecords(text, final, emit));
  };

  try {
    for await (const chunk of source) {
      parse(carry + decoder.write(chunk as Buffer), false);
      if (onChunk) await onChunk();
    }
    parse(carry + decoder.end(), true);
    if (onChunk) await onChunk();
  } catch (e) {
    throw readError(e, stage, label, rows.count + 1);
  }
  return rows.end();
}

/**
 * The rules both forms of the reader apply to the records they frame: the first is the header (a leading
 * byte-order mark dropped), a blank line is no row, and each row after the header is counted and must be as wide.
 */
class TableRows {
  /** The header's width; -1 until the header is read. */
  width = -1;
  /** Data rows seen (the header is not one). */
  count = 0;

  constructor(private readonly stage: string, private readonly label: string) {}

  /** Takes the header's fields, its mark dropped in place; returns them. */
  header(fields: string[]): string[] {
    if (fields.length > 0 && fields[0].charCodeAt(0) === 0xfeff) fields[0] = fields[0].slice(1);
    this.width = fields.length;
    return fields;
  }

  /** Counts a record of `fields` fields, unless it is `blank` (false then: no row); throws for a row of another width. */
  row(fields: number, blank: boolean): boolean {
    if (blank) return false;
    this.count++;
    if (fields !== this.width) throw new RegisterError(this.stage, `expected ${this.width} fields, found ${fields}`, this.label, this.count);
    return true;
  }

  /** The number of rows, once the table is read; throws for a table without even a header. */
  end(): number {
    if (this.width < 0) throw new RegisterError(this.stage, 'no header row', this.label);
    return this.count;
  }
}

/** The decompressed bytes of `path` (gzip when it ends in `.gz`), in chunks of about 1 MiB. */
function chunksOf(path: string): NodeJS.ReadableStream {
  const input = createReadStream(path, { highWaterMark: 1 << 20 });
  if (!path.endsWith('.gz')) return input;
  const source = input.pipe(createGunzip({ chunkSize: 1 << 20 }));
  input.on('error', (e) => source.destroy(e));
  return source;
}

/** A failure while reading `label` at data row `row`, as the RegisterError that names them. */
function readError(e: unknown, stage: string, label: string, row: number): RegisterError {
  if (e instanceof RegisterError) return e;
  if (e instanceof CsvSyntaxError) return new RegisterError(stage, e.message, label, row);
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || /unexpected end of file|incorrect header/i.test(String(e))) {
    return new RegisterError(stage, `corrupt or truncated gzip (${(e as Error).message})`, label, row);
  }
  if (code === 'ENOENT') return new RegisterError(stage, 'file is missing', label);
  return new RegisterError(stage, (e as Error).message, label, row);
}

/**
 * Reads `path` and calls `visitor` for the header and each row; returns the number of data rows.
 * `label` is how errors name the file (its path inside the release, e.g. `csv/bridges.csv.gz`).
 * Every row must have as many fields as the header; a malformed row, an unterminated quote or a corrupt gzip
 * stops the read with a RegisterError naming the file and row.
 */
export function readCsv(path: string, label: string, visitor: CsvVisitor, stage = 'compile'): Promise<number> {
  return stream(path, label, stage, (h) => visitor.header?.(h), (f, row, raw) => visitor.row(f, row, raw));
}

/**
 * One record as the byte reader (readCsvRecords) hands it over, over the decompressed bytes: no string is made
 * unless asked for. The reader reuses one object for every record, so a visitor copies what it keeps.
 */
export class CsvRecord {
  /** The chunk holding the record; the record's own bytes (quotes as written, line end removed) are `[start, end)`. */
  buf: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  /** The fields of a record with a quote character, parsed by the quote-aware rules; null for a plain record. */
  quoted: string[] | null = null;
  /** No byte of the record is above 0x7f: each plain field's bytes are then also its characters. */
  ascii = true;
  /** A plain record's fields: field k ends at `ends[k]` (its comma, or `end`) and starts after field k-1's end. */
  ends: Int32Array = new Int32Array(0);

  fieldStart(k: number): number {
    return k === 0 ? this.start : this.ends[k - 1] + 1;
  }

  /** Field `k` as text. */
  text(k: number): string {
    if (this.quoted) return this.quoted[k];
    return this.buf.toString(this.ascii ? 'latin1' : 'utf8', this.fieldStart(k), this.ends[k]);
  }

  /** Whether field `k` is empty. */
  empty(k: number): boolean {
    return this.quoted ? this.quoted[k] === '' : this.ends[k] === this.fieldStart(k);
  }

  /** The record's own CSV text (see CsvVisitor.row's `raw`). */
  raw(): string {
    return this.buf.toString('utf8', this.start, this.end);
  }
}

/**
 * Frames the complete records of `data` into `rec`, calling `emit(fields)` after each with its field count; returns
 * where an incomplete last record starts (data.length when all was consumed). With `final`, the end of the data
 * ends the last record. A plain record's field ends go into `rec.ends` as far as it has room; wider records are
 * still counted. A syntax error is thrown as a CsvSyntaxError, which the caller numbers.
 */
export function scanCsvBytes(data: Buffer, final: boolean, rec: CsvRecord, emit: (fields: number) => void): number {
  const n = data.length;
  rec.buf = data;
  let pos = 0;
  while (pos < n) {
    // Read per record: the header's record is how the reader learns the width it sizes `ends` to.
    const ends = rec.ends;
    const room = ends.length;
    let i = pos;
    let commas = 0;
    let high = 0;
    let b = 0;
    for (; i < n; i++) {
      b = data[i];
      high |= b;
      // Newline, quote and comma are all below 45, as few other bytes of a row are: one test for most bytes.
      if (b < 45) {
        if (b === 44) {
          if (commas < room) ends[commas] = i;
          commas++;
        } else if (b === 10 || b === 34) break;
      }
    }
    if (i < n && b === 34) {
      // A quote: find where the record ends by the quote rules (a newline outside quotes), then parse its text.
      let inQuotes = false;
      let j = pos;
      for (; j < n; j++) {
        const c = data[j];
        if (c === 34) inQuotes = !inQuotes;
        else if (c === 10 && !inQuotes) break;
      }
      if (j === n && !final) return pos;
      const parsed = quotedRecord(data.toString('utf8', pos, j), 0, true, 0)!;
      rec.quoted = parsed.fields;
      rec.start = pos;
      rec.end = j > pos && data[j - 1] === 13 ? j - 1 : j;
      rec.ascii = false;
      emit(parsed.fields.length);
      pos = j + 1;
      continue;
    }
    if (i === n && !final) return pos;
    const end = i > pos && data[i - 1] === 13 ? i - 1 : i;
    if (commas < room) ends[commas] = end;
    rec.quoted = null;
    rec.start = pos;
    rec.end = end;
    rec.ascii = high < 0x80;
    emit(commas + 1);
    pos = i + 1;
  }
  return n;
}

export interface CsvRecordVisitor {
  /** Called once with the header row (a leading byte-order mark removed). */
  header?(columns: string[]): void;
  /**
   * The size cap of each column, given the header (see compiler/read/cell-caps.ts); default LONG_CAP for every
   * column. A row with a cell past its column's cap is refused, and so is a record that runs on further than its
   * columns' caps allow, before more of it is held in memory.
   */
  caps?(columns: string[]): readonly CellCap[];
  /** Called for each data row, counted from 1; `record` is reused for the next row (see CsvRecord). */
  record(record: CsvRecord, row: number): void;
}

/**
 * readCsv over bytes: the same records, rows and errors, but each handed over as a CsvRecord, which makes no string
 * unless its visitor asks. Stage 1 reads every table this way: most rows only need one ID looked up and their bytes
 * copied to a partition. Unlike readCsv it trusts no byte: input that is not UTF-8, a cell past its cap
 * (`visitor.caps`) or a record too long to be a row stops the read with a RegisterError naming the row.
 */
export async function readCsvRecords(path: string, label: string, visitor: CsvRecordVisitor, stage = 'compile'): Promise<number> {
  const record = new CsvRecord();
  const rows = new TableRows(stage, label);
  let header: string[] = [];
  let caps: readonly CellCap[] = [];
  let capBytes = new Int32Array(0);
  // A record no longer than the smallest cap cannot hold a cell past its own: most rows are checked by one test.
  let minCap = 0;
  // Until the header is read, it is the record: held to one long cell.
  let maxRecord = LONG_CAP.bytes;
  // Where the first byte that is not UTF-8 sits in the current data (-1: none met); the record holding it is refused
  // as it is framed, so its row is counted as every other error's is.
  let badByte = -1;
  const emit = (fields: number) => {
    if (badByte >= 0 && record.end > badByte) {
      const row = rows.width < 0 ? 0 : rows.count + 1;
      throw new RegisterError(stage, `not valid UTF-8 (byte ${badByte - record.start + 1} of the ${row ? 'row' : 'header'})`, label, row);
    }
    if (rows.width < 0) {
      header = rows.header(record.quoted ?? record.raw().split(','));
      record.ends = new Int32Array(header.length);
      caps = visitor.caps?.(header) ?? header.map(() => LONG_CAP);
      capBytes = Int32Array.from(caps, (c) => c.bytes);
      minCap = Math.min(...capBytes);
      // Each cell quoted, every byte of it a doubled quote, and its comma.
      maxRecord = capBytes.reduce((n, c) => n + 2 * c + 3, 0);
      visitor.header?.(header);
      return;
    }
    const blank = fields === 1 && (record.quoted ? record.quoted[0] === '' : record.end === record.start);
    if (!rows.row(fields, blank)) return;
    if (record.end - record.start > minCap) {
      const k = cellOverCap(record, capBytes);
      if (k >= 0) throw new RegisterError(stage, `${header[k]} ${overCap(cellBytes(record, k), caps[k])}`, label, rows.count);
    }
    visitor.record(record, rows.count);
  };
  let carry: Buffer | null = null;
  // How many leading bytes of `carry` were checked as UTF-8 already.
  let checked = 0;
  /** Checks data[checked, to) as UTF-8, noting the first bad byte, if any, for `emit`. */
  const checkUtf8 = (data: Buffer, to: number) => {
    // Should the two checks ever disagree, the refusal still comes, at the start of the range.
    if (to > checked && badByte < 0 && !isUtf8Range(data, checked, to)) badByte = Math.max(checked, firstInvalidUtf8(data, checked, to));
    checked = Math.max(checked, to);
  };
  try {
    for await (const chunk of chunksOf(path)) {
      const data: Buffer = carry && carry.length ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
      // Up to the last newline the bytes are whole characters (a newline byte is never part of a longer one), so
      // a character cut by the chunk boundary is checked once the next chunk completes it.
      checkUtf8(data, data.lastIndexOf(10) + 1);
      const consumed = scanCsvBytes(data, false, record, emit);
      carry = data.subarray(consumed);
      checked = Math.max(0, checked - consumed);
      if (badByte >= 0) badByte -= consumed;
      if (carry.length > maxRecord) throw new RegisterError(stage, longRecordMessage(carry, header, caps, maxRecord), label, rows.width < 0 ? 0 : rows.count + 1);
    }
    if (carry && carry.length) {
      checkUtf8(carry, carry.length);
      scanCsvBytes(carry, true, record, emit);
    }
  } catch (e) {
    throw readError(e, stage, label, rows.count + 1);
  }
  return rows.end();
}

/** The first column of `record` whose cell is longer than its cap in `caps`; -1 when none is. */
function cellOverCap(record: CsvRecord, caps: Int32Array): number {
  for (let k = 0; k < caps.length; k++) if (cellBytes(record, k) > caps[k]) return k;
  return -1;
}

/** The UTF-8 bytes of cell `k` of `record` (a quoted cell's as unquoted). */
function cellBytes(record: CsvRecord, k: number): number {
  return record.quoted ? Buffer.byteLength(record.quoted[k]) : record.ends[k] - record.fieldStart(k);
}

/**
 * Why a record still open after `bytes.length` bytes is refused: the first of its cells (so far) past its column's
 * cap, which one must be, since `maxRecord` leaves room for every cell at its cap; or, for a header or a record wider
 * than the header, its length alone. Quotes are undone as the cells are measured.
 */
function longRecordMessage(bytes: Buffer, header: string[], caps: readonly CellCap[], maxRecord: number): string {
  let k = 0;
  let cell = 0;
  let inQuotes = false;
  const over = () => k < caps.length && cell > caps[k].bytes;
  for (let i = 0; i < bytes.length && caps.length; i++) {
    const b = bytes[i];
    if (b === 34) {
      // An opening or closing quote is no byte of the cell; a doubled one inside quotes is one quote.
      if (inQuotes && bytes[i + 1] === 34) {
        cell++;
        i++;
      } else inQuotes = !inQuotes;
    } else if (b === 44 && !inQuotes) {
      if (over()) break;
      k++;
      cell = 0;
    } else cell++;
  }
  if (over()) return `${header[k]} runs past ${caps[k].bytes} bytes, the cap ${caps[k].name} (docs/limits.md)`;
  return `a ${caps.length ? 'record' : 'header row'} runs past ${maxRecord} bytes without ending, longer than its cells' caps allow (docs/limits.md)`;
}

/** A slice of a table: the header (the same array every time) and the next data rows. */
export interface CsvBatch {
  header: string[];
  rows: string[][];
}

/** The same reader as an async generator of row batches (one per decoded chunk), for pull-style consumers. */
export async function* readCsvBatches(path: string, label: string = path, stage = 'compile'): AsyncGenerator<CsvBatch> {
  // The reader pushes; a small queue of batches lets the generator pull, one chunk of rows at a time.
  let header: string[] = [];
  let rows: string[][] = [];
  const ready: CsvBatch[] = [];
  let wake: (() => void) | null = null;
  let drained: (() => void) | null = null;
  let finished = false;
  let failure: unknown = null;
  const done = stream(
    path, label, stage,
    (h) => {
      header = h;
    },
    (f) => rows.push(f),
    async () => {
      if (rows.length) ready.push({ header, rows });
      rows = [];
      wake?.();
      // Hold the reader while the consumer has two batches waiting: memory stays at a few chunks.
      if (ready.length >= 2) await new Promise<void>((r) => (drained = r));
    },
  ).then(
    () => {
      finished = true;
      wake?.();
    },
    (e) => {
      failure = e;
      finished = true;
      wake?.();
    },
  );
  let yieldedHeader = false;
  for (;;) {
    while (ready.length) {
      yieldedHeader = true;
      const batch = ready.shift()!;
      if (ready.length < 2 && drained) {
        const go: () => void = drained;
        drained = null;
        go();
      }
      yield batch;
    }
    if (finished) break;
    await new Promise<void>((r) => (wake = r));
    wake = null;
  }
  await done;
  if (failure) throw failure;
  if (!yieldedHeader) yield { header, rows: [] };
}

/** Maps header names to positions and checks that `required` columns are present. */
export function columnIndex(header: string[], required: readonly string[], label: string): Record<string, number> {
  const index: Record<string, number> = Object.create(null);
  header.forEach((name, i) => (index[name.trim()] = i));
  const missing = required.filter((c) => index[c] === undefined);
  if (missing.length) throw new RegisterError('compile', `missing column(s) ${missing.join(', ')}`, label, 0);
  return index;
}
