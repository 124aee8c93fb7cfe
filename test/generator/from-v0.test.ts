// The v0 converter against the real CC0 data in ../shared (read at test time, never copied into the repo).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importV0 } from '../../generator/from-v0.ts';
import { REGISTER_ID } from '../../common/ids.ts';
import { expectConsistent, expectPublishedScorelines, readTable, type Rec } from './release-check.ts';

const V0 = resolve(import.meta.dirname, '../../../shared/real-data/v0-register');
const root = mkdtempSync(join(tmpdir(), 'from-v0-'));
const dir = join(root, '20260415T000000Z');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let t: Record<string, Rec[]>;
beforeAll(async () => {
  await importV0({ from: V0, out: dir });
  t = {};
  for (const table of ['entities', 'bridges', 'relationships', 'matches', 'overlay_links', 'seasons', 'competitions'] as const) {
    t[table] = await readTable(dir, table);
  }
});

const resolveKey = (provider: string, namespace: string, externalId: string) =>
  t.bridges.filter((b) => b.provider === provider && b.namespace === namespace && b.external_id === externalId).map((b) => b.reep_id);

describe.runIf(existsSync(V0))('importV0', () => {
  it('writes a consistent release with minted register IDs', async () => {
    const m = await expectConsistent(dir);
    expect(await expectPublishedScorelines(dir)).toBe(50);
    expect(m.row_counts['csv/entities.csv.gz']).toBe(45_353 + 194 + 1_200 + 50);
    expect(m.row_counts['csv/teams.csv.gz']).toBe(45_353);
    for (const e of t.entities) expect(e.reep_id).toMatch(REGISTER_ID);
    expect(new Set(t.entities.map((e) => e.reep_id)).size).toBe(t.entities.length);
    // minted from a hash of the v0 ID, so a re-import gives the same IDs
    const arsenal = 'rt' + createHash('sha256').update('reep_t8596499a').digest('hex').slice(0, 14);
    expect(t.entities.find((e) => e.label === 'Arsenal F.C.')?.reep_id).toBe(arsenal);
  });

  it('resolves transfermarkt/verein/11 to Arsenal F.C.', () => {
    const ids = resolveKey('transfermarkt', 'verein', '11');
    expect(ids).toHaveLength(1);
    const e = t.entities.find((x) => x.reep_id === ids[0]);
    expect(e).toMatchObject({ label: 'Arsenal F.C.', entity_type: 'team', country: 'United Kingdom' });
    expect(resolveKey('fbref', '', '18bb7c10')).toEqual(ids);
    expect(t.overlay_links.find((o) => o.reep_id === ids[0])?.qid).toBe('Q9617');
  });

  it('keeps the 32 Transfermarkt club IDs that name two clubs as ambiguous bridges', () => {
    const owners = new Map<string, Set<string>>();
    for (const b of t.bridges.filter((x) => x.provider === 'transfermarkt' && x.namespace === 'verein')) {
      owners.set(b.external_id, (owners.get(b.external_id) ?? new Set()).add(b.reep_id));
    }
    const ambiguous = [...owners.values()].filter((s) => s.size > 1);
    expect(ambiguous).toHaveLength(32);
    expect(ambiguous.every((s) => s.size === 2)).toBe(true);
  });

  it('keeps real quirks: slashes in Flashscore IDs, QID-only names, namespaces only for Transfermarkt', () => {
    expect(t.bridges.some((b) => b.provider === 'flashscore' && b.external_id.includes('/'))).toBe(true);
    expect(t.entities.some((e) => /^Q\d+$/.test(e.label))).toBe(true);
    expect(new Set(t.bridges.filter((b) => b.provider === 'transfermarkt').map((b) => b.namespace))).toEqual(new Set(['verein', 'wettbewerb']));
    expect(t.bridges.filter((b) => b.provider !== 'transfermarkt').every((b) => b.namespace === '')).toBe(true);
    expect(t.bridges.some((b) => b.provider === 'wikidata')).toBe(false);
  });

  it('relates seasons to the competition named inside them', () => {
    const label = new Map(t.entities.map((e) => [e.reep_id, e.label]));
    const seasonOf = t.relationships.filter((r) => r.kind === 'season_of');
    expect(seasonOf.length).toBeGreaterThan(700);
    for (const r of seasonOf) expect(label.get(r.from_id)).toContain(label.get(r.to_id));
    const bundesliga2 = t.seasons.find((s) => s.label.includes('2. Bundesliga'));
    if (bundesliga2) expect(label.get(seasonOf.find((r) => r.from_id === bundesliga2.reep_id)!.to_id)).toBe('2. Bundesliga');
  });

  it('converts the match sample with provider IDs, scores and resolvable sides', () => {
    expect(t.matches).toHaveLength(50);
    const verona = t.matches.find((m) => m.label === 'Hellas Verona v Fiorentina')!;
    expect(verona).toMatchObject({ home_score: '1', away_score: '1', played_on: '2021-12-22', match_state: 'played' });
    expect(resolveKey('fbref', '', 'efd40d81')).toEqual([verona.reep_id]);
    expect(resolveKey('fotmob', '', '3657184')).toEqual([verona.reep_id]);
    expect(resolveKey('understat', '', '16938')).toEqual([verona.reep_id]);
    expect(resolveKey('sofascore', '', '9645236')).toEqual([verona.reep_id]);
    expect(resolveKey('espn', '', '614739')).toEqual([verona.reep_id]);
    const teams = new Map(t.entities.filter((e) => e.entity_type === 'team').map((e) => [e.reep_id, e.label]));
    const resolved = t.matches.flatMap((m) => [m.home_id, m.away_id]).filter(Boolean);
    expect(resolved.length).toBeGreaterThan(0);
    for (const id of resolved) expect(teams.has(id)).toBe(true);
    // v0's goals map onto the published enums: a scored match is `unknown` in form and `single_source` in basis.
    expect(verona).toMatchObject({ result_form: 'unknown', score_basis: 'single_source' });
    // "Arsenal" in FBref is not the unbridged Lesotho club of that name
    expect(t.matches.find((m) => m.label.startsWith('Arsenal v'))?.home_id).toBe('');
  });
});

describe.runIf(existsSync(V0))('importV0 --prior --demo-edits', () => {
  it('merges one duplicate club and corrects one score, documented, so the successor differs from its prior', async () => {
    const next = join(root, '20260501T000000Z');
    const lines: string[] = [];
    await importV0({ from: V0, out: next, prior: dir, demoEdits: true, onEdit: (l) => lines.push(l) });
    await expectConsistent(next);
    const n: Record<string, Rec[]> = {};
    for (const table of ['entities', 'bridges', 'matches', 'redirects', 'coverage'] as const) n[table] = await readTable(next, table);
    // The merge: the first Transfermarkt club ID two clubs share now names one, the other redirects to it.
    expect(n.redirects).toHaveLength(1);
    const [{ from_id: loser, to_id: survivor, reason }] = n.redirects;
    expect(reason).toBe('merged');
    expect(t.entities.some((e) => e.reep_id === loser)).toBe(true);
    expect(n.entities.some((e) => e.reep_id === loser)).toBe(false);
    expect(n.entities).toHaveLength(t.entities.length - 1);
    const tm = t.bridges.filter((b) => b.reep_id === loser && b.provider === 'transfermarkt')[0].external_id;
    expect(resolveKey('transfermarkt', 'verein', tm).sort()).toEqual([loser, survivor].sort());
    expect(n.bridges.filter((b) => b.provider === 'transfermarkt' && b.namespace === 'verein' && b.external_id === tm).map((b) => b.reep_id)).toEqual([survivor]);
    expect(n.bridges.some((b) => b.reep_id === loser)).toBe(false);
    expect(n.coverage.find((c) => c.section === 'tables' && c.key === 'bridges')?.value).toBe(String(n.bridges.length));
    // The score: exactly one match differs, by one home goal.
    const before = new Map(t.matches.map((m) => [m.reep_id, m]));
    const changed = n.matches.filter((m) => JSON.stringify(m) !== JSON.stringify(before.get(m.reep_id)));
    expect(changed).toHaveLength(1);
    expect(Number(changed[0].home_score)).toBe(Number(before.get(changed[0].reep_id)!.home_score) + 1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`merged ${loser}`);
    expect(lines[1]).toContain(changed[0].reep_id);
    // Without a prior there is nothing to differ from.
    await expect(importV0({ from: V0, out: join(root, '20260601T000000Z'), demoEdits: true })).rejects.toThrow(/--prior/);
  });
});
