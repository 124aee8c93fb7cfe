// A wrong release is refused with one line naming the file (and row) and the reason, and dist/ is left unchanged.
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';
import { fresh, refused, tamper } from '../fixtures/refusals.ts';

const A = 'rt000000000000a1';
const B = 'rt000000000000b2';
const STAMP = '20261001T000000Z';
const good = (): Record<string, Rows> => ({
  entities: [[A, 'team', 'active', 'Alpha', '', '', '', '', ''], [B, 'team', 'active', 'Beta', '', '', '', '', '']],
  bridges: [['opta', '', 't1', A, ''], ['opta', '', 't2', B, '']],
});

const NEXT = '20261008T000000Z';

/**
 * Compiles `first` and its successor `next`: the successor's slack, change counts and digest, then the same once more
 * with the predecessor read from its tables (its diff base removed).
 */
async function successorBothWays(d: { releases: string; dist: string }, first: Record<string, Rows>, next: Record<string, Rows>) {
  writeHandRelease(d.releases, STAMP, first);
  writeHandRelease(d.releases, NEXT, next);
  const digest = () => JSON.parse(readFileSync(join(d.dist, NEXT, 'manifest.json'), 'utf8')).digest as string;
  // Shards written anew both times: only the changelog's source differs between the two compiles.
  const reports = await compileAll({ releases: d.releases, dist: d.dist, progress: false, shareShards: false });
  const doc = JSON.parse(readFileSync(join(d.dist, NEXT, 'public', 'release.json'), 'utf8'));
  const withBase = { slack: reports[1].slack, changeCounts: doc.changes.counts, digest: digest() };
  rmSync(join(d.dist, STAMP, 'private', 'diff-base'), { recursive: true });
  const [again] = await compileAll({ releases: d.releases, dist: d.dist, stamp: NEXT, progress: false, shareShards: false });
  return { ...withBase, fromTables: { slack: again.slack, digest: digest() } };
}

describe('compile refuses a wrong release', () => {
  it('size mismatch names the file', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good());
    tamper(dir, 'csv/bridges.csv', Buffer.from(readFileSync(join(dir, 'csv/bridges.csv'), 'utf8') + 'x'), false);
    expect(await refused(d)).toMatch(/csv\/bridges\.csv: size \d+ bytes, release\.json says \d+/);
  });

  it('sha256 mismatch names the file', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good());
    const text = readFileSync(join(dir, 'csv/bridges.csv'), 'utf8').replace('t1', 't9');
    tamper(dir, 'csv/bridges.csv', Buffer.from(text), false);
    expect(await refused(d)).toMatch(/csv\/bridges\.csv: sha256 [0-9a-f]{64} does not match release\.json/);
  });

  it('a listed file missing on disk', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good());
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, 'csv/bridges.csv'));
    expect(await refused(d)).toMatch(/csv\/bridges\.csv: listed in release\.json but missing on disk/);
  });

  it('a truncated gzip (with a manifest that matches the truncated bytes)', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good(), { gzip: true });
    const gz = readFileSync(join(dir, 'csv/bridges.csv.gz'));
    tamper(dir, 'csv/bridges.csv.gz', gz.subarray(0, gz.length - 12), true);
    expect(await refused(d)).toMatch(/csv\/bridges\.csv\.gz row \d+: corrupt or truncated gzip/);
  });

  it('a malformed CSV row names the row', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good());
    tamper(dir, 'csv/bridges.csv', Buffer.from(`provider,namespace,external_id,reep_id,rung\nopta,,t1,${A},\nopta,t2,${B}\n`), true);
    expect(await refused(d)).toMatch(/csv\/bridges\.csv row 2: expected 5 fields, found 3/);
  });

  it('an unterminated quote', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good());
    tamper(dir, 'csv/bridges.csv', Buffer.from(`provider,namespace,external_id,reep_id,rung\nopta,,"t1,${A},\n`), true);
    expect(await refused(d)).toMatch(/csv\/bridges\.csv row 1: unterminated quoted field/);
  });

  it('a bad register ID names file and row', async () => {
    const rows = good();
    rows.bridges.push(['opta', '', 't3', 'reep_t0871097b', '']);
    const d = fresh();
    writeHandRelease(d.releases, STAMP, rows);
    expect(await refused(d)).toMatch(/csv\/bridges\.csv row 3: bad register ID "reep_t0871097b"/);
  });

  it('a redirect to an unknown ID', async () => {
    const rows = { ...good(), redirects: [['rt000000000000c3', 'rt000000000000ff', 'merged']] };
    const d = fresh();
    writeHandRelease(d.releases, STAMP, rows);
    expect(await refused(d)).toMatch(/redirect from rt000000000000c3 leads to rt000000000000ff, which is not a live entity/);
  });

  it('a redirect cycle', async () => {
    const rows = { ...good(), redirects: [['rt000000000000c3', 'rt000000000000c4', 'merged'], ['rt000000000000c4', 'rt000000000000c3', 'merged']] };
    const d = fresh();
    writeHandRelease(d.releases, STAMP, rows);
    expect(await refused(d)).toMatch(/redirect cycle/);
  });

  it('a redirect row that makes no sense names its row', async () => {
    const C = 'rt000000000000c3';
    for (const [row, message] of [
      [[C, A, 'renamed'], `redirect of ${C} has reason "renamed"; it must be merged (with a to_id) or de_corroborated (without)`],
      [[C, '', ''], `redirect of ${C} has reason ""; it must be merged (with a to_id) or de_corroborated (without)`],
      [[C, '', 'merged'], `merged redirect of ${C} has no to_id`],
      [[C, A, 'de_corroborated'], `de_corroborated redirect of ${C} names to_id ${A}; a tombstone has none`],
      [[C, C, 'merged'], `redirect cycle: ${C} redirects to itself`],
    ] as const) {
      const d = fresh();
      writeHandRelease(d.releases, STAMP, { ...good(), redirects: [['rt000000000000d4', A, 'merged'], [...row]] });
      expect(await refused(d)).toBe(`[compile] csv/redirects.csv row 2: ${message}`);
    }
  });

  it('referential slack is dropped and reported, and refused under --strict', async () => {
    const rows = good();
    rows.bridges.push(['opta', '', 't3', 'rt0000000000dead', '']);
    const d = fresh();
    writeHandRelease(d.releases, STAMP, rows);
    expect(await refused(d, true)).toMatch(/csv\/bridges\.csv: unknown register ID \(1 rows, e\.g\. row 3: rt0000000000dead\); refused under --strict/);
    const reports = await compileAll({ releases: d.releases, dist: d.dist, progress: false });
    expect(reports[0].slack).toEqual([{ what: 'csv/bridges.csv: unknown register ID', count: 1, example: 'row 3: rt0000000000dead' }]);
  });

  it("an ID of the predecessor gone without a redirect is tombstoned, reported and logged as removed with its bridges, read from the diff base or the tables alike", async () => {
    const d = fresh();
    const next = good();
    next.entities = next.entities.filter((r) => r[0] !== B);
    next.bridges = next.bridges.filter((r) => r[3] !== B);
    const run = await successorBothWays(d, good(), next);
    const gone = { what: 'csv/entities.csv: ID of the prior release missing without redirect or tombstone (tombstoned)', count: 1, example: B };
    expect(run.slack).toEqual([gone]);
    // It is removed (a tombstone now) and its one bridge is logged as removed; nothing else changed.
    expect(run.changeCounts).toEqual({
      entity_added: 0, entity_status_changed: 0, label_updated: 0, entity_removed: 1, redirect_changed: 0, provider_updated: 1, fixture_updated: 0, score_updated: 0,
    });
    // The same successor from the predecessor's tables (its diff base gone): the same report and bytes.
    expect(run.fromTables.slack).toEqual([gone]);
    expect(run.fromTables.digest).toBe(run.digest);
    await expect(compileAll({ releases: d.releases, dist: mkdtempSync(join(tmpdir(), 'ir-bad-strict-')), strict: true, progress: false })).rejects.toThrow(
      /ID of the prior release missing without redirect or tombstone \(tombstoned\) \(1 rows, e\.g\. rt000000000000b2\); refused under --strict/,
    );
  });

  it("a provider whose role changed logs no bridge change, read from the diff base or the tables alike", async () => {
    const run = await successorBothWays(fresh(), { ...good(), providers: [['opta', 'canonical_bridge']] }, { ...good(), providers: [['opta', 'bridge_only']] });
    expect(run.slack).toEqual([]);
    expect(run.changeCounts).toEqual({
      entity_added: 0, entity_status_changed: 0, label_updated: 0, entity_removed: 0, redirect_changed: 0, provider_updated: 0, fixture_updated: 0, score_updated: 0,
    });
    expect(run.fromTables.digest).toBe(run.digest);
  });

  it('a file on disk that release.json does not list is ignored', async () => {
    const d = fresh();
    const dir = writeHandRelease(d.releases, STAMP, good());
    writeFileSync(join(dir, 'csv/aliases.csv.gz'), gzipSync('garbage,"'));
    const [report] = await compileAll({ releases: d.releases, dist: d.dist, progress: false });
    expect(report.counts.entities).toBe(2);
  });
});
