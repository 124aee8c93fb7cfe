// Bytes that are not UTF-8 are refused, naming the file and the row, rather than read as U+FFFD: in a plain or a
// gzipped table, wherever the stream's chunks are cut, and (see notice-files.test.ts) in a notice file.
import { isUtf8 } from 'node:buffer';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCsvRecords } from '../../compiler/read/csv-reader.ts';
import { firstInvalidUtf8 } from '../../compiler/read/utf8-check.ts';
import { writeHandRelease } from '../fixtures/hand-release.ts';
import { fresh, refused } from '../fixtures/refusals.ts';

const A = 'rt000000000000a1';
const B = 'rt000000000000b2';
const STAMP = '20261001T000000Z';
const csv = (...lines: string[]) => Buffer.from(lines.map((l) => l + '\n').join(''));
/** `text` with the bytes of its `@` replaced by `bad`. */
const withBytes = (text: Buffer, bad: number[]): Buffer => {
  const at = text.indexOf('@');
  return Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at + 1)]);
};

describe('firstInvalidUtf8', () => {
  it('finds a bad byte exactly when isUtf8 refuses, and everything before it is UTF-8', () => {
    // Random bytes are mostly invalid early; valid text with a byte or two changed probes the edges (overlong
    // forms, surrogates, code points past U+10FFFF, cut characters).
    const mutated = fc
      .tuple(fc.string({ unit: 'binary', maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }))
      .map(([s, edits]) => {
        const b = Buffer.from(s);
        for (const [at, v] of edits) if (b.length) b[at % b.length] = v;
        return new Uint8Array(b);
      });
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 40 }), mutated), (b) => {
        const at = firstInvalidUtf8(b, 0, b.length);
        expect(at === -1).toBe(isUtf8(b));
        if (at >= 0) expect(isUtf8(b.subarray(0, at))).toBe(true);
      }),
      { numRuns: 1500 },
    );
    for (const bad of [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]]) {
      expect(firstInvalidUtf8(new Uint8Array([0x61, ...bad, 0x62]), 0, bad.length + 2)).toBe(1);
    }
  });
});

describe('the byte reader', () => {
  // Rows of 2-, 3- and 4-byte characters over several 1 MiB chunks: nearly every chunk boundary cuts a character.
  const rows = 45_000;
  const body = (bad: number | null) =>
    Buffer.concat([
      Buffer.from('id,name\n'),
      ...Array.from({ length: rows }, (_, i) => Buffer.from(`r${i},${i === bad ? '@' : ''}é€😀 ${'ł'.repeat(i % 70)}\n`)),
    ]);

  it('reads characters cut by chunk boundaries, gzipped or not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'utf8-'));
    const text = body(null);
    expect(text.length).toBeGreaterThan(3 << 20);
    for (const [name, data] of [['t.csv', text], ['t.csv.gz', gzipSync(text)]] as const) {
      writeFileSync(join(dir, name), data);
      let last = '';
      const n = await readCsvRecords(join(dir, name), 't.csv', { record: (r) => void (last = r.text(1)) });
      expect(n).toBe(rows);
      expect(last).toBe(`é€😀 ${'ł'.repeat((rows - 1) % 70)}`);
    }
  });

  it('names the row of a bad byte in a later chunk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'utf8-'));
    const bad = 40_000;
    const text = withBytes(body(bad), [0xff]);
    for (const [name, data] of [['t.csv', text], ['t.csv.gz', gzipSync(text)]] as const) {
      writeFileSync(join(dir, name), data);
      await expect(readCsvRecords(join(dir, name), 't.csv', { record() {} })).rejects.toThrow(`[compile] t.csv row ${bad + 1}: not valid UTF-8 (byte ${`r${bad},`.length + 1} of the row)`);
    }
  });
});

describe('the compile', () => {
  const bridges = [['opta', '', 't1', A, ''], ['opta', '', 't2', B, '']];

  it('refuses a plain .csv table holding a byte that is not UTF-8', async () => {
    const d = fresh();
    const entities = withBytes(csv('reep_id,entity_type,status,label,gender,country,corroboration_grade,corroboration_count,source_tier_band', `${A},team,active,Alpha,,,,,`, `${B},team,active,Be@ta,,,,,`), [0xe9]);
    writeHandRelease(d.releases, STAMP, { bridges }, { raw: { 'csv/entities.csv': entities } });
    expect(await refused(d)).toBe('[compile] csv/entities.csv row 2: not valid UTF-8 (byte 32 of the row)');
  });

  it('refuses a gzipped table holding an overlong encoding (a slash as two bytes)', async () => {
    const d = fresh();
    const entities = csv('reep_id,entity_type,status,label,gender,country,corroboration_grade,corroboration_count,source_tier_band', `${A},team,active,Alpha,,,,,`, `${B},team,active,Beta,,,,,`);
    const aliases = withBytes(csv('reep_id,alias,kind,rank,language', `${A},Gunners,short,1,`, `${B},"B@",short,,`), [0xc0, 0xaf]);
    writeHandRelease(d.releases, STAMP, { bridges }, { raw: { 'csv/entities.csv.gz': gzipSync(entities), 'csv/aliases.csv.gz': gzipSync(aliases) } });
    expect(await refused(d)).toBe('[compile] csv/aliases.csv.gz row 2: not valid UTF-8 (byte 20 of the row)');
  });
});
