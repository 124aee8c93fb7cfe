// The release writer: exact CSV escaping and round trips, deterministic gzip, and a manifest that matches the bytes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../common/csv-records.ts';
import { parseCsv, readCsv } from '../../generator/csv.ts';
import { ReleaseWriter, stampToIso } from '../../generator/release-writer.ts';
import { RegisterError } from '../../common/errors.ts';
import { expectConsistent, manifestOf } from './release-check.ts';

const root = mkdtempSync(join(tmpdir(), 'release-writer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TRICKY = [
  'plain',
  '',
  'Brighton & Hove Albion, U23',
  'Club "The Strongest"',
  '"',
  '""',
  ',',
  'line one\nline two',
  'crlf\r\ninside',
  'lone\rcr',
  ' leading and trailing ',
  'Łódź',
  'Müller',
  'São Paulo',
  'Ødegaard',
  'Hoffenheim 1899',
  '北京国安',
  'Зенит',
  'الأهلي',
  'emoji ⚽ 🏟️',
  'palmer-cole/h8agbDt7',
  '[{"provider":"fbref","confidence":0.9}]',
];

describe('csv escaping', () => {
  it('quotes only fields that need it, doubling quotes', () => {
    expect(csvField('Arsenal')).toBe('Arsenal');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('x\ny')).toBe('"x\ny"');
    expect(csvField('x\ry')).toBe('"x\ry"');
    expect(csvField('Łódź')).toBe('Łódź');
    expect(csvLine(['a', 'b,c', ''])).toBe('a,"b,c",\n');
  });

  it('round-trips any fields through csvLine and the parser', () => {
    const unitChars = fc.constantFrom('a', 'Z', ',', '"', '\n', '\r', ' ', 'é', 'Ł', '北', 'ز', '⚽');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }).chain((w) => fc.array(fc.array(fc.string({ unit: unitChars }), { minLength: w, maxLength: w }), { maxLength: 8 })), (rows) => {
        const width = rows[0]?.length ?? 1;
        const header = Array.from({ length: width }, (_, i) => `c${i}`);
        const text = [header, ...rows].map(csvLine).join('');
        const parsed = parseCsv(text);
        // a row of one empty field is written as an empty line, which readers treat as blank
        expect(parsed).toEqual([header, ...rows]);
      }),
      { numRuns: 300 },
    );
  });

  it('reads CRLF files, a BOM and a missing final newline', () => {
    expect(parseCsv('\ufeffa,b\r\n1,"x\r\ny"\r\n2,3')).toEqual([['\ufeffa', 'b'], ['1', 'x\r\ny'], ['2', '3']]);
  });
});

describe('ReleaseWriter', () => {
  it('writes tables that read back exactly, across gzip and chunk boundaries', async () => {
    const dir = join(root, '20260101T000000Z');
    const w = await ReleaseWriter.create(dir);
    const t = w.table('aliases');
    const rows: string[][] = [];
    // ~3 MB of text so rows straddle the writer's flush size and the reader's 1 MB chunks
    for (let i = 0; i < 40_000; i++) {
      const row = [`rp${i.toString(16).padStart(14, '0')}`, TRICKY[i % TRICKY.length] + ' ' + 'x'.repeat(i % 50), 'full', String(i % 4 || ''), ''];
      rows.push(row);
      const p = t.row(row);
      if (p) await p;
    }
    await w.closeTable(t);
    await w.finish();

    const back: string[][] = [];
    let header: string[] = [];
    for await (const batch of readCsv(join(dir, 'csv/aliases.csv.gz'))) {
      header = batch.header;
      back.push(...batch.rows);
    }
    expect(header).toEqual(['reep_id', 'alias', 'kind', 'rank', 'language']);
    expect(back).toEqual(rows);
    await expectConsistent(dir);
  });

  it('writes a manifest, checksums, licence and schema that match the files', async () => {
    const dir = join(root, '20260102T030405Z');
    const w = await ReleaseWriter.create(dir, { prior: '20260101T000000Z', tier: 'open_census', publishable: false });
    await w.writeTable('entities', [['rp00000000000001', 'player', 'active', 'Cole Palmer', 'male', 'England', 'A', '6', 'tier_1']]);
    await w.writeTable('bridges', TRICKY.map((x, i) => ['flashscore', '', x || 'empty', `rp0000000000000${i % 10}`, '']));
    await w.writeTable('overlay_links', []);
    await w.writeTable('coverage', [['release', 'stamp', '20260102T030405Z']]);
    await w.writeFile('private/notices/fbref.json', '{"provider":"fbref","batch_id":1,"generated_at":null,"findings":[]}\n', 'private');
    const manifest = await w.finish();

    const m = await expectConsistent(dir);
    expect(m).toEqual(manifest);
    expect(Object.keys(m)).toEqual(['schema_version', 'stamp', 'generated_at', 'tier', 'publishable', 'prior', 'files', 'row_counts', 'licence']);
    expect(m.stamp).toBe('20260102T030405Z');
    expect(m.generated_at).toBe('2026-01-02T03:04:05Z');
    expect(m.tier).toBe('open_census');
    expect(m.publishable).toBe(false);
    expect(m.prior).toBe('20260101T000000Z');
    expect(m.files['csv/entities.csv.gz'].role).toBe('canonical_csv');
    expect(m.files['csv/overlay_links.csv.gz']).toMatchObject({ role: 'overlay', rows: 0 });
    expect(m.files['csv/coverage.csv.gz'].role).toBe('metadata');
    expect(m.files['schema.json'].role).toBe('metadata');
    expect(m.files['private/notices/fbref.json'].role).toBe('private');
    expect(m.row_counts['csv/bridges.csv.gz']).toBe(TRICKY.length);
    const schema = JSON.parse(readFileSync(join(dir, 'schema.json'), 'utf8'));
    expect(schema.files['csv/bridges.csv.gz'].columns).toEqual(['provider', 'namespace', 'external_id', 'reep_id', 'rung']);
    // gzip header: no file name, mtime 0, so bytes depend only on the rows
    const gz = readFileSync(join(dir, 'csv/entities.csv.gz'));
    expect([...gz.subarray(0, 8)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
    expect(gunzipSync(gz).toString('utf8')).toBe(
      'reep_id,entity_type,status,label,gender,country,corroboration_grade,corroboration_count,source_tier_band\n' +
        'rp00000000000001,player,active,Cole Palmer,male,England,A,6,tier_1\n',
    );
  });

  it('omits prior when there is none, and refuses to overwrite a release unless asked', async () => {
    const dir = join(root, '20260103T000000Z');
    const w = await ReleaseWriter.create(dir);
    await w.writeTable('entities', []);
    await w.finish();
    expect('prior' in manifestOf(dir)).toBe(false);
    await expect(ReleaseWriter.create(dir)).rejects.toThrow(RegisterError);
    const again = await ReleaseWriter.create(dir, { overwrite: true });
    await again.writeTable('entities', [['rp00000000000002', 'player', 'active', 'X', '', '', '', '', '']]);
    await again.finish();
    expect(manifestOf(dir).row_counts['csv/entities.csv.gz']).toBe(1);
  });

  it('rejects rows of the wrong width and bad stamps', async () => {
    const w = await ReleaseWriter.create(join(root, '20260104T000000Z'));
    const t = w.table('redirects');
    expect(() => t.row(['a', 'b'])).toThrow(/redirects.csv.gz row 1: row has 2 fields, expected 3/);
    await w.abort();
    await expect(ReleaseWriter.create(join(root, 'latest'))).rejects.toThrow(/bad release stamp/);
    expect(() => stampToIso('20261341T000000Z')).toThrow(/not a real UTC date-time/);
    expect(stampToIso('20261005T180536Z')).toBe('2026-10-05T18:05:36Z');
  });
});
