// The compiler's CSV reader over spilled text: scanRecords, which leaves plain lines unsplit for stage 2 to split
// when it builds their entity, must see exactly the records parseRecords sees, quoted ones included.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseRecords, scanRecords, splitPlain } from '../../compiler/read/csv-reader.ts';

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
});
