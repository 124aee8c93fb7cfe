// The compiler's CSV reader over spilled text: scanRecords, which leaves plain lines unsplit for stage 2 to split
// when it builds their entity, must see exactly the records parseRecords sees, quoted ones included.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRecords, readCsv, scanRecords, splitPlain } from '../../compiler/read/csv-reader.ts';

// Fields with the characters that decide the path: commas, quotes and newlines (quoted), and non-ASCII text.
const field = fc.string({ unit: fc.constantFrom(...'ab,"\né1 '.split('')), maxLength: 12 });
const encode = (f: string) => (/[",\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f);
// Records of one width, as stage 1 spills them: every record ends in a newline, and none is a bare empty line.
const spilled = fc
  .integer({ min: 1, max: 5 })
  .chain((width) => fc.array(fc.array(field, { minLength: width, maxLength: width }), { maxLength: 30 }))
  .map((records) => records.filter((r) => r.length > 1 || r[0] !== ''));

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
    const table = fc.record({
      records: spilled,
      crlf: fc.boolean(),
      cuts: fc.array(fc.nat(), { maxLength: 4 }),
      lastLineEnds: fc.boolean(),
    });
    fc.assert(
      fc.property(table, ({ records, crlf, cuts, lastLineEnds }) => {
        const eol = crlf ? '\r\n' : '\n';
        let text = records.map((r) => r.map(encode).join(',')).join(eol);
        if (lastLineEnds && records.length) text += eol;
        // Fed as a stream would feed it: each cut ends a chunk, and what a chunk leaves unread is carried over.
        const ends = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const got: string[][] = [];
        const raws: string[] = [];
        let carry = '';
        let at = 0;
        for (const end of [...ends, text.length]) {
          const chunk = carry + text.slice(at, end);
          at = Math.max(at, end);
          const final = end === text.length;
          carry = chunk.slice(parseRecords(chunk, final, (f, raw) => (got.push(f), raws.push(raw))));
          if (final) break;
        }
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

  it('slices fields up to lastField only, leaving the rest undefined but counted', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'é'), maxLength: 4 }), { minLength: 1, maxLength: 8 }), fc.nat(9), (fields, last) => {
        const text = `x\n${fields.join(',')}\ny`;
        const got = splitPlain(text, 2, text.length - 2, last);
        expect(got.length).toBe(fields.length);
        fields.forEach((f, i) => expect(got[i]).toBe(i <= last ? f : undefined));
      }),
    );
  });
});

describe('readCsv', () => {
  it('hands a visitor whose header names its last field only the fields up to it, and still checks every row\'s width', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-'));
    try {
      // Enough rows that most arrive in chunks after the header's.
      const rows = Array.from({ length: 60_000 }, (_, i) => `r${i},kind${i % 7},${'x'.repeat(i % 40)},"q,${i}"`);
      const path = join(dir, 't.csv');
      writeFileSync(path, `id,kind,pad,quoted\n${rows.join('\n')}\n`);
      const seen: (string | undefined)[][] = [];
      await readCsv(path, 't.csv', { header: () => 1, row: (f) => seen.push(f) });
      expect(seen.length).toBe(rows.length);
      for (const [i, f] of seen.entries()) {
        expect(f.length).toBe(4);
        expect([f[0], f[1]]).toEqual([`r${i}`, `kind${i % 7}`]);
        // A record with a quote takes the quote-aware path and comes whole; none of these is plain.
        expect(f[3]).toBe(`q,${i}`);
      }
      // ~5 MB: the reader's first 1 MiB chunk (the header's, split whole) holds only a fifth of the rows.
      const plain = Array.from({ length: 60_000 }, (_, i) => `r${i},k,${'x'.repeat(60 + (i % 40))}`);
      writeFileSync(path, `id,kind,pad\n${plain.join('\n')}\nr-bad,k\n`);
      const got: (string | undefined)[][] = [];
      await expect(readCsv(path, 't.csv', { header: () => 0, row: (f) => got.push(f) })).rejects.toThrow(/t\.csv row 60001: expected 3 fields, found 2/);
      expect(got.length).toBe(60_000);
      expect(got.filter((f) => f[1] === undefined).length).toBeGreaterThan(40_000);
      expect(got.every((f, i) => f[0] === `r${i}` && f.length === 3)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
