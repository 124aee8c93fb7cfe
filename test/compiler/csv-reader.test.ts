// The compiler's CSV reader: over spilled text, scanRecords (which leaves plain lines unsplit for stage 2 to split
// when it builds their entity) must see exactly the records parseRecords sees, quoted ones included; over a table's
// bytes, scanCsvBytes and readCsvRecords (stage 1's reader) must see exactly what the text reader sees.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CsvRecord, parseRecords, readCsv, readCsvRecords, scanCsvBytes, scanRecords, splitPlain } from '../../compiler/read/csv-reader.ts';
import { FieldInterner } from '../../compiler/read/field-interner.ts';
import { RegisterIdTable } from '../../compiler/read/register-id-table.ts';
import { fnv1a32, fnv1a32Bytes } from '../../common/hash.ts';

// Fields with the characters that decide the path: commas, quotes and newlines (quoted), and non-ASCII text.
const field = fc.string({ unit: fc.constantFrom(...'ab,"\né1 '.split('')), maxLength: 12 });
const encode = (f: string) => (/[",\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f);
// Records of one width, as stage 1 spills them: every record ends in a newline, and none is a bare empty line.
const spilled = fc
  .integer({ min: 1, max: 5 })
  .chain((width) => fc.array(fc.array(field, { minLength: width, maxLength: width }), { maxLength: 30 }))
  .map((records) => records.filter((r) => r.length > 1 || r[0] !== ''));

/** Spilled records as one table's text, LF or CRLF, and where a stream might cut it into chunks. */
const cutTable = fc.record({ records: spilled, crlf: fc.boolean(), cuts: fc.array(fc.nat(), { maxLength: 5 }), lastLineEnds: fc.boolean() });
function tableText({ records, crlf, lastLineEnds }: { records: string[][]; crlf: boolean; lastLineEnds: boolean }): string {
  const eol = crlf ? '\r\n' : '\n';
  const text = records.map((r) => r.map(encode).join(',')).join(eol);
  return lastLineEnds && records.length ? text + eol : text;
}

/**
 * Feeds `whole` to `scan` as a stream would: each cut ends a chunk, and what `scan` leaves unread of a chunk (it
 * returns where that starts) is carried into the next.
 */
function feed<T extends string | Buffer>(whole: T, cuts: number[], scan: (chunk: T, final: boolean) => number): void {
  const ends = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const join = (carry: T, at: number, end: number): T =>
    (typeof whole === 'string' ? carry + whole.slice(at, end) : Buffer.concat([carry as Buffer, (whole as Buffer).subarray(at, end)])) as T;
  let carry = whole.slice(0, 0) as T;
  let at = 0;
  for (const end of [...ends, whole.length]) {
    const chunk = join(carry, at, end);
    at = Math.max(at, end);
    const final = end === whole.length;
    carry = chunk.slice(scan(chunk, final)) as T;
    if (final) break;
  }
}

describe('scanRecords', () => {
  it('gives the records parseRecords gives, plain lines as offsets that split to the same fields', () => {
    fc.assert(
      fc.property(spilled, (records) => {
        const text = records.map((r) => r.map(encode).join(',') + '\n').join('');
        const parsed: string[][] = [];
        parseRecords(text, true, (f) => parsed.push(f));
        const scanned: string[][] = [];
        scanRecords(
          text,
          (start, end) => {
            // A plain line starts a record and holds no quote.
            expect(start === 0 || text[start - 1] === '\n').toBe(true);
            expect(text.slice(start, end)).not.toContain('"');
            scanned.push(splitPlain(text, start, end));
          },
          (f) => scanned.push(f),
        );
        expect(scanned).toEqual(parsed);
        expect(parsed).toEqual(records);
      }),
    );
  });

  it('reads a record that spans lines inside quotes as one record', () => {
    const text = 'B,"line one\nline two",x\nB,plain,y\n';
    const seen: string[][] = [];
    scanRecords(text, (s, e) => seen.push(['plain', text.slice(s, e)]), (f) => seen.push(['quoted', ...f]));
    expect(seen).toEqual([['quoted', 'B', 'line one\nline two', 'x'], ['plain', 'B,plain,y']]);
  });
});

describe('parseRecords', () => {
  it('reads LF and CRLF records cut into chunks anywhere as whole records, each raw text parsing back to its fields', () => {
    fc.assert(
      fc.property(cutTable, (table) => {
        const { records, cuts } = table;
        const got: string[][] = [];
        const raws: string[] = [];
        feed(tableText(table), cuts, (chunk, final) => parseRecords(chunk, final, (f, raw) => (got.push(f), raws.push(raw))));
        const expected = records.length ? records : [];
        // An empty last field of a lone one-field record reads as a blank line, which the table reader skips.
        expect(got.filter((f) => f.length > 1 || f[0] !== '')).toEqual(expected);
        for (let i = 0; i < raws.length; i++) {
          expect(raws[i].endsWith('\r')).toBe(false);
          const again: string[][] = [];
          parseRecords(raws[i], true, (f) => again.push(f));
          expect(again).toEqual([got[i]]);
        }
      }),
    );
  });
});

describe('splitPlain', () => {
  it('splits a quote-free range of a longer text as split(",") splits it on its own', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'ab,\n'.split('')), maxLength: 30 }), fc.nat(), fc.nat(), (text, x, y) => {
        const start = x % (text.length + 1);
        const end = start + (y % (text.length - start + 1));
        expect(splitPlain(text, start, end)).toEqual(text.slice(start, end).split(','));
      }),
    );
  });
});

describe('readCsv', () => {
  it('hands a visitor every field of rows read over many chunks, plain and quoted, and checks every row\'s width', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-'));
    try {
      // Enough rows that most arrive in chunks after the header's.
      const rows = Array.from({ length: 60_000 }, (_, i) => `r${i},kind${i % 7},${'x'.repeat(i % 40)},"q,${i}"`);
      const path = join(dir, 't.csv');
      writeFileSync(path, `id,kind,pad,quoted\n${rows.join('\n')}\n`);
      const seen: string[][] = [];
      await readCsv(path, 't.csv', { row: (f) => seen.push(f) });
      expect(seen.length).toBe(rows.length);
      // A record with a quote takes the quote-aware path and comes whole; none of these is plain. Rows that differ
      // are gathered and asserted once (an expect() per row was most of the test's time).
      const want = (i: number) => [`r${i}`, `kind${i % 7}`, 'x'.repeat(i % 40), `q,${i}`];
      expect(seen.flatMap((f, i) => (JSON.stringify(f) === JSON.stringify(want(i)) ? [] : [{ row: i, got: f }]))).toEqual([]);
      // ~5 MB: the reader's first 1 MiB chunk (the header's, split whole) holds only a fifth of the rows.
      const plain = Array.from({ length: 60_000 }, (_, i) => `r${i},k,${'x'.repeat(60 + (i % 40))}`);
      writeFileSync(path, `id,kind,pad\n${plain.join('\n')}\nr-bad,k\n`);
      const got: string[][] = [];
      await expect(readCsv(path, 't.csv', { row: (f) => got.push(f) })).rejects.toThrow(/t\.csv row 60001: expected 3 fields, found 2/);
      expect(got.length).toBe(60_000);
      expect(got.every((f, i) => f.length === 3 && f[0] === `r${i}` && f[2] === 'x'.repeat(60 + (i % 40)))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Each field of a record as the byte reader gives it, through the one accessor a visitor would use. */
const fieldsOf = (r: CsvRecord, count: number): string[] => Array.from({ length: count }, (_, k) => r.text(k));

describe('scanCsvBytes', () => {
  it('frames LF and CRLF bytes cut into chunks anywhere (inside a character too) as parseRecords frames the text', () => {
    fc.assert(
      fc.property(cutTable, (table) => {
        const text = tableText(table);
        const want: [string[], string][] = [];
        parseRecords(text, true, (f, raw) => want.push([f, raw]));
        const record = new CsvRecord();
        record.ends = new Int32Array(5);
        const got: [string[], string][] = [];
        feed(Buffer.from(text), table.cuts, (chunk, final) =>
          scanCsvBytes(chunk, final, record, (count) => {
            if (!record.quoted) expect(record.ascii).toBe(!/[^\x00-\x7f]/.test(record.raw()));
            got.push([fieldsOf(record, count), record.raw()]);
          }),
        );
        expect(got).toEqual(want);
      }),
    );
  });
});

describe('readCsvRecords', () => {
  it('gives the header, rows, raw texts and errors that readCsv gives, gzipped or not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-'));
    try {
      const read = async (path: string) => {
        const text: string[][] = [];
        const bytes: string[][] = [];
        const textRows = await readCsv(path, 't.csv', { header: (h) => void text.push(['header', ...h]), row: (f, row, raw) => void text.push([String(row), raw, ...f]) });
        const byteRows = await readCsvRecords(path, 't.csv', {
          header: (h) => void bytes.push(['header', ...h]),
          record: (r, row) => void bytes.push([String(row), r.raw(), ...fieldsOf(r, r.quoted ? r.quoted.length : r.ends.length)]),
        });
        expect(byteRows).toBe(textRows);
        expect(bytes).toEqual(text);
        return text;
      };
      // A byte-order mark, a blank line, a quoted record over two lines, non-ASCII text, CRLF: and enough rows that
      // most arrive in later chunks of the stream.
      const rows = Array.from({ length: 40_000 }, (_, i) => (i % 997 === 0 ? `r${i},"two\nlines, é",x${i}` : `r${i},Zoë ${i % 13},${'x'.repeat(i % 70)}`));
      const body = `\ufeffid,name,pad\r\n${rows.slice(0, 20).join('\r\n')}\r\n\r\n${rows.slice(20).join('\n')}\n`;
      for (const [name, data] of [['t.csv', Buffer.from(body)], ['t.csv.gz', gzipSync(body)]] as const) {
        writeFileSync(join(dir, name), data);
        const seen = await read(join(dir, name));
        expect(seen[0]).toEqual(['header', 'id', 'name', 'pad']);
        expect(seen.length).toBe(rows.length + 1);
      }
      for (const [bad, error] of [
        ['id,a\nr1,x\nr2,x,y\n', /t\.csv row 2: expected 2 fields, found 3/],
        ['id,a\nr1,x\nr2,"open\n', /t\.csv row 2: unterminated quoted field/],
        ['id,a\nr1,x"y\n', /t\.csv row 1: quote inside an unquoted field/],
        ['', /t\.csv: no header row/],
      ] as const) {
        writeFileSync(join(dir, 'bad.csv'), bad);
        await expect(readCsv(join(dir, 'bad.csv'), 't.csv', { row() {} })).rejects.toThrow(error);
        await expect(readCsvRecords(join(dir, 'bad.csv'), 't.csv', { record() {} })).rejects.toThrow(error);
      }
      writeFileSync(join(dir, 'cut.csv.gz'), gzipSync(body).subarray(0, 5000));
      await expect(readCsvRecords(join(dir, 'cut.csv.gz'), 't.csv', { record() {} })).rejects.toThrow(/t\.csv row \d+: corrupt or truncated gzip/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reading fields from their bytes', () => {
  /** One plain or quoted record of `fields`, framed by the byte reader. */
  const recordOf = (fields: string[]): CsvRecord => {
    const r = new CsvRecord();
    r.ends = new Int32Array(fields.length);
    scanCsvBytes(Buffer.from(`,,${fields.map(encode).join(',')}\n`).subarray(2), true, r, () => {});
    return r;
  };

  it('hashes bytes as fnv1a32 hashes the string they encode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ maxLength: 4 }), (s, pad) => {
        const bytes = Buffer.from(pad + s);
        const from = Buffer.byteLength(pad);
        expect(fnv1a32Bytes(bytes, from, bytes.length)).toBe(fnv1a32(s));
      }),
    );
  });

  it('looks register IDs up from a record as from their strings, quoted or not', () => {
    const table = new RegisterIdTable();
    table.set('rt000000000000a1', 3);
    for (const id of ['rt000000000000a1', 'rt000000000000a2', 'rT000000000000a1', 'rt000000000000a', 'x', '']) {
      for (const r of [recordOf(['x', id, 'y']), recordOf(['x,"', id, 'y'])]) {
        expect(table.getIn(r, 1)).toBe(table.get(id));
        expect(table.fitsIn(r, 1)).toBe(table.fits(id));
      }
    }
    const other = new RegisterIdTable();
    expect(other.addIn(recordOf(['rt000000000000b1']), 0, 4)).toBe(true);
    expect(other.addIn(recordOf(['"x"', 'rt000000000000b1']), 1, 5)).toBe(false);
    other.setIn(recordOf(['rt000000000000b2']), 0, 6);
    expect([other.get('rt000000000000b1'), other.get('rt000000000000b2')]).toEqual([4, 6]);
    expect(() => other.setIn(recordOf(['nope']), 0, 1)).toThrow(/"nope" is not a register ID/);
  });

  it('interns a column\'s values from bytes and from strings alike, in first-seen order', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('espn', 'fbref', 'é-club', 'a,b', '', 'espn2', 'x"y'), { maxLength: 40 }), (values) => {
        const interner = new FieldInterner();
        const order: string[] = [];
        for (const [i, v] of values.entries()) {
          const at = i % 2 ? interner.indexOf(v) : interner.indexIn(recordOf(['id', v]), 1);
          if (!order.includes(v)) order.push(v);
          expect(interner.values[at]).toBe(v);
        }
        expect(interner.values).toEqual(order);
      }),
    );
  });
});
