// RFC 4180 records over text, Web-standard (no Node API), so the compiler's reader (compiler/read/csv-reader.ts) and
// the runtime's contribution files (runtime/contributions/, which run in workerd too) frame records one way; and the
// one way of writing them (the generators' releases, the contribution check's report). Plain
// lines take a fast path (no quote character: split at their commas), lines with `"` the quote-aware one.

/** A record that could not be parsed; `recordsBefore` says how many complete records preceded it in the text. */
export class CsvSyntaxError extends Error {
  constructor(message: string, readonly recordsBefore: number) {
    super(message);
  }
}

const stripCr = (s: string): string => (s.length > 0 && s.charCodeAt(s.length - 1) === 13 ? s.slice(0, -1) : s);

/**
 * Parses complete records of `text` and hands each to `emit`; returns the offset where an incomplete last record
 * starts (text.length when all was consumed). With `final`, the end of the text ends the last record.
 */
export function parseRecords(text: string, final: boolean, emit: (fields: string[], raw: string) => void): number {
  let pos = 0;
  let records = 0;
  const n = text.length;
  // The next quote is looked up only once we have passed the last one found: searching afresh for every line
  // would rescan the whole (usually quote-free) chunk per line, quadratic in the chunk size.
  let q = -2;
  while (pos < n) {
    const nl = text.indexOf('\n', pos);
    if (q !== -1 && q < pos) q = text.indexOf('"', pos);
    if (q === -1 || (nl !== -1 && q > nl)) {
      // Fast path: a record with no quote character.
      if (nl === -1 && !final) return pos;
      const lineEnd = nl === -1 ? n : nl;
      const end = lineEnd > pos && text.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd;
      emit(splitPlain(text, pos, end), text.slice(pos, end));
      if (nl === -1) return n;
      records++;
      pos = nl + 1;
      continue;
    }
    // Slow path: a record with quotes; it may span lines.
    const rec = quotedRecord(text, pos, final, records);
    if (rec === null) return pos;
    emit(rec.fields, stripCr(text.slice(pos, rec.rawEnd)));
    records++;
    pos = rec.next;
  }
  return n;
}

/**
 * The fields of the quote-free record `text[start, end)`, split at every comma. Walking the commas with indexOf and
 * slicing each field from the whole text is faster than slicing the line and calling `split(',')` on it; stage 2
 * splits its partition lines this way.
 */
export function splitPlain(text: string, start: number, end: number): string[] {
  // Commas counted first, so the array is made at its size: grown by push, its spare slots doubled what a row's
  // array allocated.
  let count = 1;
  for (let comma = text.indexOf(',', start); comma !== -1 && comma < end; comma = text.indexOf(',', comma + 1)) count++;
  const fields: string[] = new Array(count);
  let from = start;
  for (let i = 0; i < count - 1; i++) {
    const comma = text.indexOf(',', from);
    fields[i] = text.slice(from, comma);
    from = comma + 1;
  }
  fields[count - 1] = text.slice(from, end);
  return fields;
}

/**
 * The record at `pos` by the quote-aware rules: its fields, where its raw text ends (before the line end) and where
 * the next record starts. Null when the text ends inside it and more may follow (`final` false).
 */
export function quotedRecord(text: string, pos: number, final: boolean, recordsBefore: number): { fields: string[]; rawEnd: number; next: number } | null {
  const n = text.length;
  const fields: string[] = [];
  let field = '';
  let i = pos;
  let inQuotes = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (inQuotes) {
      if (c === 34) {
        if (i + 1 < n && text.charCodeAt(i + 1) === 34) {
          field += '"';
          i += 2;
          continue;
        }
        if (i + 1 >= n && !final) return null; // cannot tell `""` from `"` yet
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
      fields.push(field);
      // i is the record's newline; the raw text ends before it (stripCr drops a CR of a CRLF).
      return { fields, rawEnd: i, next: i + 1 };
    } else if (c === 13 && (i + 1 < n ? text.charCodeAt(i + 1) === 10 : final)) {
      // CR of a CRLF line end, outside quotes (a CR inside quotes is data and never reaches here).
      i++;
    } else if (c === 34) {
      if (field.length > 0) throw new CsvSyntaxError('quote inside an unquoted field', recordsBefore);
      inQuotes = true;
      i++;
    } else {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 44 || d === 10 || d === 34 || d === 13) break;
        j++;
      }
      field += text.slice(i, j);
      i = j;
    }
  }
  if (!final) return null;
  if (inQuotes) throw new CsvSyntaxError('unterminated quoted field at end of file', recordsBefore);
  fields.push(field);
  return { fields, rawEnd: n, next: n };
}


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
