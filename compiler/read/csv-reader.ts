// Streaming RFC 4180 reader for the release's (optionally gzipped) CSV tables, built for 10M-row files:
// decode whole chunks to text once, split plain lines natively, and take the quote-aware path only for lines with `"`.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { StringDecoder } from 'node:string_decoder';
import { RegisterError } from '../../common/errors.ts';

export interface CsvVisitor {
  /** Called once with the header row; return the expected column count check or throw. */
  header?(columns: string[]): void;
  /** Called for each data row; `row` counts data rows from 1 (the header is not counted). */
  row(fields: string[], row: number): void;
}

/**
 * Reads `path` (gzip when it ends in `.gz`) and calls `visitor` for the header and each row.
 * `label` is how errors name the file (its path inside the release, e.g. `csv/bridges.csv.gz`).
 * Every row must have as many fields as the header; a malformed row, an unterminated quote or a corrupt gzip
 * stops the read with a RegisterError naming the file and row.
 */
export async function readCsv(path: string, label: string, visitor: CsvVisitor): Promise<number> {
  const input = createReadStream(path, { highWaterMark: 1 << 20 });
  const stream = path.endsWith('.gz') ? input.pipe(createGunzip({ chunkSize: 1 << 20 })) : input;
  if (stream !== input) input.on('error', (e) => stream.destroy(e));
  const decoder = new StringDecoder('utf8');
  let carry = '';
  let width = -1;
  let rowNo = 0; // data rows seen; 0 while reading the header

  const emit = (fields: string[]) => {
    if (width < 0) {
      if (fields.length > 0 && fields[0].charCodeAt(0) === 0xfeff) fields[0] = fields[0].slice(1);
      width = fields.length;
      visitor.header?.(fields);
      return;
    }
    rowNo++;
    if (fields.length !== width) {
      if (fields.length === 1 && fields[0] === '') return; // blank line (e.g. trailing), not a row
      throw new RegisterError('compile', `expected ${width} fields, found ${fields.length}`, label, rowNo);
    }
    visitor.row(fields, rowNo);
  };

  // Parses complete records from `text`; returns the unconsumed tail (an incomplete last record).
  const parse = (text: string, final: boolean): string => {
    let pos = 0;
    const n = text.length;
    let q = -2; // next quote at or after pos (-1: none left); searched lazily so plain chunks stay linear
    while (pos < n) {
      const nl = text.indexOf('\n', pos);
      if (q !== -1 && q < pos) q = text.indexOf('"', pos);
      if (q === -1 || (nl !== -1 && q > nl)) {
        // Fast path: a record with no quote character.
        if (nl === -1) {
          if (!final) return text.slice(pos);
          emit(stripCr(text.slice(pos)).split(','));
          return '';
        }
        emit(stripCr(text.slice(pos, nl)).split(','));
        pos = nl + 1;
        continue;
      }
      // Slow path: a record with quotes; may span lines.
      const fields: string[] = [];
      let field = '';
      let i = pos;
      let inQuotes = false;
      let done = false;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (inQuotes) {
          if (c === 34) {
            if (i + 1 < n && text.charCodeAt(i + 1) === 34) {
              field += '"';
              i += 2;
              continue;
            }
            if (i + 1 >= n && !final) break; // cannot tell `""` from `"` yet
            inQuotes = false;
            i++;
            continue;
          }
          const nextQ = text.indexOf('"', i);
          if (nextQ === -1) {
            i = n;
            break;
          }
          field += text.slice(i, nextQ);
          i = nextQ;
          continue;
        }
        if (c === 44) {
          fields.push(field);
          field = '';
          i++;
        } else if (c === 10) {
          fields.push(stripCr(field));
          i++;
          done = true;
          break;
        } else if (c === 34) {
          if (field.length > 0) {
            throw new RegisterError('compile', 'quote inside an unquoted field', label, rowNo + 1);
          }
          inQuotes = true;
          i++;
        } else {
          // run of plain characters up to the next special one
          let j = i + 1;
          while (j < n) {
            const d = text.charCodeAt(j);
            if (d === 44 || d === 10 || d === 34) break;
            j++;
          }
          field += text.slice(i, j);
          i = j;
        }
      }
      if (!done) {
        if (!final) return text.slice(pos);
        if (inQuotes) throw new RegisterError('compile', 'unterminated quoted field at end of file', label, rowNo + 1);
        fields.push(stripCr(field));
        emit(fields);
        return '';
      }
      emit(fields);
      pos = i;
    }
    return '';
  };

  try {
    for await (const chunk of stream) {
      carry = parse(carry + decoder.write(chunk as Buffer), false);
    }
    carry = parse(carry + decoder.end(), true);
  } catch (e) {
    if (e instanceof RegisterError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || /unexpected end of file|incorrect header/i.test(String(e))) {
      throw new RegisterError('compile', `corrupt or truncated gzip (${(e as Error).message})`, label, rowNo + 1);
    }
    if (code === 'ENOENT') throw new RegisterError('compile', 'file is missing', label);
    throw new RegisterError('compile', (e as Error).message, label, rowNo + 1);
  }
  if (width < 0) throw new RegisterError('compile', 'no header row', label);
  return rowNo;
}

function stripCr(s: string): string {
  return s.length > 0 && s.charCodeAt(s.length - 1) === 13 ? s.slice(0, -1) : s;
}

/** Maps header names to positions and checks that `required` columns are present. */
export function columnIndex(header: string[], required: readonly string[], label: string): Record<string, number> {
  const index: Record<string, number> = Object.create(null);
  header.forEach((name, i) => (index[name.trim()] = i));
  const missing = required.filter((c) => index[c] === undefined);
  if (missing.length) throw new RegisterError('compile', `missing column(s) ${missing.join(', ')}`, label, 0);
  return index;
}
