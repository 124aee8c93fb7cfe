// RFC 4180 CSV for the generators: escaping for the writer, and a streaming reader (gzip or plain, LF or CRLF)
// used to derive a successor from a prior release and to read the v0 register.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { StringDecoder } from 'node:string_decoder';
import { RegisterError } from '../../common/errors.ts';

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

/** A slice of a table: the header (the same array every time) and the next data rows. */
export interface CsvBatch {
  header: string[];
  rows: string[][];
}

const stripCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

/**
 * Parses complete records from `text` into `out`; returns the offset where an incomplete trailing record starts
 * (text.length when everything was consumed). `final` says no more text will follow.
 */
function parseRecords(text: string, final: boolean, out: string[][]): number {
  let pos = 0;
  const n = text.length;
  // The next quote is looked up only once we have passed the last one found: searching it afresh for every line
  // would rescan the whole (usually quote-free) chunk per line, quadratic in the chunk size.
  let q = -2;
  while (pos < n) {
    const nl = text.indexOf('\n', pos);
    if (q !== -1 && q < pos) q = text.indexOf('"', pos);
    if (q === -1 || (nl !== -1 && q > nl)) {
      // No quote before the end of this line: a plain split is exact.
      if (nl === -1) {
        if (!final) return pos;
        out.push(stripCr(text.slice(pos)).split(','));
        return n;
      }
      out.push(stripCr(text.slice(pos, nl)).split(','));
      pos = nl + 1;
      continue;
    }
    const fields: string[] = [];
    let field = '';
    let i = pos;
    let quoted = false;
    let complete = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (quoted) {
        if (c === 34) {
          if (i + 1 >= n && !final) break; // `"` at the end of the chunk: cannot yet tell `""` from a close
          if (text.charCodeAt(i + 1) === 34) {
            field += '"';
            i += 2;
          } else {
            quoted = false;
            i++;
          }
        } else {
          const next = text.indexOf('"', i);
          if (next === -1) {
            i = n;
            break;
          }
          field += text.slice(i, next);
          i = next;
        }
      } else if (c === 34) {
        quoted = true;
        i++;
      } else if (c === 44) {
        fields.push(field);
        field = '';
        i++;
      } else if (c === 10) {
        fields.push(field);
        i++;
        complete = true;
        break;
      } else if (c === 13 && i + 1 >= n && !final) {
        break; // a CR at the end of the chunk: cannot yet tell whether an LF follows
      } else if (c === 13 && (i + 1 >= n || text.charCodeAt(i + 1) === 10)) {
        // CRLF outside quotes ends the record; a CR inside quotes was consumed above and stays data
        fields.push(field);
        i = Math.min(n, i + 2);
        complete = true;
        break;
      } else {
        let j = i + 1;
        while (j < n) {
          const d = text.charCodeAt(j);
          if (d === 44 || d === 34 || d === 10 || d === 13) break;
          j++;
        }
        field += text.slice(i, j);
        i = j;
      }
    }
    if (!complete) {
      if (!final) return pos;
      if (quoted) throw new Error('unterminated quoted field');
      fields.push(field);
      i = n;
    }
    out.push(fields);
    pos = i;
  }
  return n;
}

/**
 * Streams a CSV table (gzip when the path ends in `.gz`) in batches of rows. `label` names the file in errors.
 * Every row must have as many fields as the header; a blank line (such as a trailing one) is skipped.
 */
export async function* readCsv(path: string, label: string = path): AsyncGenerator<CsvBatch> {
  const input = createReadStream(path, { highWaterMark: 1 << 20 });
  const stream = path.endsWith('.gz') ? input.pipe(createGunzip({ chunkSize: 1 << 20 })) : input;
  if (stream !== input) input.on('error', (e) => stream.destroy(e));
  const decoder = new StringDecoder('utf8');
  let header: string[] | null = null;
  let carry = '';
  let rowNo = 0;

  const take = (text: string, final: boolean): string[][] => {
    const records: string[][] = [];
    let used: number;
    try {
      used = parseRecords(text, final, records);
    } catch (e) {
      throw new RegisterError('generate', (e as Error).message, label, rowNo + records.length + 1);
    }
    carry = text.slice(used);
    const rows: string[][] = [];
    for (const rec of records) {
      if (header === null) {
        if (rec[0]?.charCodeAt(0) === 0xfeff) rec[0] = rec[0].slice(1);
        header = rec;
        continue;
      }
      if (rec.length === 1 && rec[0] === '') continue;
      rowNo++;
      if (rec.length !== header.length) {
        throw new RegisterError('generate', `expected ${header.length} fields, found ${rec.length}`, label, rowNo);
      }
      rows.push(rec);
    }
    return rows;
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const rows = take(carry + decoder.write(chunk), false);
    if (rows.length > 0) yield { header: header!, rows };
  }
  const rows = take(carry + decoder.end(), true);
  if (header === null) throw new RegisterError('generate', 'no header row', label);
  yield { header, rows };
}

/** Index of `name` in a header, or a RegisterError naming the file. */
export function columnIndex(header: readonly string[], name: string, label: string): number {
  const i = header.indexOf(name);
  if (i < 0) throw new RegisterError('generate', `missing column ${name}`, label);
  return i;
}

/** Parses a whole CSV text (header included) into records; for small inputs and tests. */
export function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  parseRecords(text, true, out);
  return out;
}

/**
 * A copy of a parsed field that does not keep its source chunk alive. V8 represents substrings as views into the
 * parent string, so a few kept IDs would otherwise pin every 1 MB chunk they were cut from (gigabytes at 10M rows).
 */
export const own = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');
