// The compiler's CSV reader over spilled text: scanRecords, which leaves plain lines unsplit for stage 2 to split
// when it builds their entity, must see exactly the records parseRecords sees, quoted ones included.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseRecords, scanRecords } from '../../compiler/read/csv-reader.ts';

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
            scanned.push(text.slice(start, end).split(','));
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
