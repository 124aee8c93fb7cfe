// The match index's rows are built in several jobs (threads), each over a run of year groups, and stitched in order:
// the cut follows the rows each range recorded, providers are numbered as the rows first name them whichever range
// or job holds those rows, and the compiled bytes are the same for any number of jobs, in threads or inline.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { TABLE_COLUMNS } from '../../generator/tables.ts';
import { generateRelease } from '../../generator/synthetic.ts';
import { matchJobs } from '../../compiler/stages/build-matches.ts';
import { MATCH_RECORD_GROUPS, providerOrder, REFS_GROUP, type MatchRecordsHandle } from '../../compiler/records/match-records.ts';

const STAMP = '20260301T000000Z';
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A range's handle with `rows[g]` records in year group g (the cut reads only the counts). */
function range(dir: string, rows: Record<number, number>, providers: MatchRecordsHandle['providers'] = []): MatchRecordsHandle {
  const counts = new Array<number>(MATCH_RECORD_GROUPS).fill(0);
  for (const [g, n] of Object.entries(rows)) counts[Number(g)] = n;
  counts[REFS_GROUP] = 3;
  return { spill: { dir, counts }, providers };
}

describe('the match index in jobs', () => {
  it('cuts the year groups into contiguous runs of about as many rows, each starting at its first ordinal', () => {
    const records = [range('/r0', { 0: 5, 100: 40, 170: 30, 255: 2 }), range('/r1', { 100: 10, 171: 30, 200: 3 })];
    const jobs = matchJobs({ records, redirects: new Map() }, '/scratch', 2);
    expect(jobs.map((j) => [j.from, j.to, j.base])).toEqual([[0, 171, 0], [171, 256, 85]]);
    expect(jobs.map((j) => j.scratchDir)).toEqual(['/scratch/job-0', '/scratch/job-1']);
    // More jobs than non-empty groups: no job without rows; one job: every group.
    expect(matchJobs({ records, redirects: new Map() }, '/s', 50).map((j) => [j.from, j.to, j.base])).toEqual([
      [0, 1, 0], [1, 101, 5], [101, 171, 55], [171, 172, 85], [172, 201, 115], [201, 256, 118],
    ]);
    expect(matchJobs({ records, redirects: new Map() }, '/s', 1).map((j) => [j.from, j.to, j.base])).toEqual([[0, 256, 0]]);
    expect(matchJobs({ records: [range('/e', {})], redirects: new Map() }, '/s', 2)).toEqual([]);
    expect(() => matchJobs({ records, redirects: new Map() }, '/s', 0)).toThrow(/positive whole number/);
  });

  it('numbers providers as the rows first name them, across ranges', () => {
    const records = [
      range('/r0', {}, [['opta', 120, 50000, 'rm00000000000002', 0], ['fbref', 120, 50000, 'rm00000000000002', 1], ['wyscout', 3, 100, 'rm00000000000009', 2]]),
      range('/r1', {}, [['fbref', 120, 50000, 'rm00000000000001', 4], ['sofascore', 120, 50000, 'rm00000000000001', 0], ['opta', 255, 0, 'rm00000000000000', 0]]),
    ];
    // Year group first, then day, then reep_id, then the bridge's place in its row.
    expect(providerOrder(records)).toEqual(['wyscout', 'sofascore', 'fbref', 'opta']);
  });

  it('compiles to the same bytes in one job inline or three in threads', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-match-jobs-'));
    roots.push(root);
    const releases = join(root, 'releases');
    await generateRelease({ out: join(releases, STAMP), entities: 1000, seed: 5 });
    // Matches of more than one year, so more than one job gets rows.
    const playedOn = (TABLE_COLUMNS.matches as readonly string[]).indexOf('played_on');
    const years = new Set<string>();
    await readCsv(join(releases, STAMP, 'csv', 'matches.csv.gz'), 'matches', { header: () => {}, row: (f) => void years.add(f[playedOn].slice(0, 4)) });
    expect(years.size).toBeGreaterThan(2);

    const digestOf = async (name: string, opts: { matchJobs: number; threads: boolean }) => {
      const dist = join(root, name);
      await compileAll({ releases, dist, progress: false, ...opts });
      const release = JSON.parse(readFileSync(join(dist, STAMP, 'public', 'release.json'), 'utf8'));
      return { digest: JSON.parse(readFileSync(join(dist, STAMP, 'manifest.json'), 'utf8')).digest as string, matches: release.matches };
    };
    const one = await digestOf('one', { matchJobs: 1, threads: false });
    expect(one.matches.count).toBeGreaterThan(300);
    expect(one.matches.providers.length).toBeGreaterThan(3);
    expect(await digestOf('three', { matchJobs: 3, threads: true })).toEqual(one);
  });
});
