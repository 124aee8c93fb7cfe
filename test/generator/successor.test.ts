// A successor release derived from a prior: every changelog event kind occurs, no published ID vanishes.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRelease } from '../../generator/synthetic.ts';
import { filesOf, expectConsistent, expectPublishedScorelines, readTable, type Rec } from './release-check.ts';

const root = mkdtempSync(join(tmpdir(), 'successor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const priorDir = join(root, '20261001T120000Z');
const nextDir = join(root, '20261008T120000Z');
const thirdDir = join(root, '20261015T120000Z');
type Tables = Record<'entities' | 'bridges' | 'redirects' | 'aliases' | 'relationships' | 'players' | 'matches', Rec[]>;
let a: Tables;
let b: Tables;

async function load(dir: string): Promise<Tables> {
  const out = {} as Tables;
  for (const t of ['entities', 'bridges', 'redirects', 'aliases', 'relationships', 'players', 'matches'] as const) out[t] = await readTable(dir, t);
  return out;
}

beforeAll(async () => {
  await generateRelease({ out: priorDir, entities: 2000, seed: 5 });
  await generateRelease({ out: nextDir, prior: priorDir, seed: 5 });
  await generateRelease({ out: thirdDir, prior: nextDir, seed: 5 });
  a = await load(priorDir);
  b = await load(nextDir);
});

const byId = (rows: Rec[]) => new Map(rows.map((r) => [r.reep_id, r]));
const bridgeSets = (rows: Rec[]) => {
  const m = new Map<string, Set<string>>();
  for (const r of rows) m.set(r.reep_id, (m.get(r.reep_id) ?? new Set()).add(`${r.provider}|${r.namespace}|${r.external_id}`));
  return m;
};

describe('successor releases', () => {
  it('names its prior and is internally consistent', async () => {
    const m = await expectConsistent(nextDir);
    expect(m.prior).toBe('20261001T120000Z');
    expect(m.generated_at).toBe('2026-10-08T12:00:00Z');
    expect((await expectConsistent(thirdDir)).prior).toBe('20261008T120000Z');
    expect(await expectPublishedScorelines(nextDir)).toBeGreaterThan(0);
  });

  it('exercises every changelog event type', () => {
    const before = byId(a.entities);
    const after = byId(b.entities);
    const added = [...after.keys()].filter((id) => !before.has(id));
    const gone = [...before.keys()].filter((id) => !after.has(id));
    const newRedirects = b.redirects.filter((r) => !a.redirects.some((x) => x.from_id === r.from_id));
    const statusChanged = [...after.values()].filter((e) => before.has(e.reep_id) && before.get(e.reep_id)!.status !== e.status);
    const relabelled = [...after.values()].filter((e) => before.has(e.reep_id) && before.get(e.reep_id)!.label !== e.label);
    const bA = bridgeSets(a.bridges);
    const bB = bridgeSets(b.bridges);
    const continuing = [...after.keys()].filter((id) => before.has(id));
    const gained = continuing.filter((id) => [...(bB.get(id) ?? [])].some((k) => !bA.get(id)?.has(k)));
    const lost = continuing.filter((id) => [...(bA.get(id) ?? [])].some((k) => !bB.get(id)?.has(k)));

    const n = a.entities.length;
    expect(added.length).toBeGreaterThanOrEqual(2); // entity_added
    expect(statusChanged.length).toBeGreaterThanOrEqual(1); // entity_status_changed
    expect(statusChanged.every((e) => e.status === 'inactive')).toBe(true);
    expect(relabelled.length).toBeGreaterThanOrEqual(2); // label_updated
    const tombstoned = newRedirects.filter((r) => r.reason === 'de_corroborated');
    const merged = newRedirects.filter((r) => r.reason === 'merged');
    expect(tombstoned.length).toBeGreaterThanOrEqual(1); // entity_removed
    expect(merged.length).toBeGreaterThanOrEqual(2); // redirect_changed
    expect(gained.length).toBeGreaterThanOrEqual(2); // provider_updated (added)
    expect(lost.length).toBeGreaterThanOrEqual(1); // provider_updated (removed)
    const matchesBefore = byId(a.matches);
    const rescored = b.matches.filter((m) => matchesBefore.has(m.reep_id) && matchesBefore.get(m.reep_id)!.home_score !== m.home_score);
    const moved = b.matches.filter((m) => matchesBefore.has(m.reep_id) && matchesBefore.get(m.reep_id)!.played_on !== m.played_on);
    expect(rescored.length).toBeGreaterThanOrEqual(2); // score_updated
    expect(moved.length).toBeGreaterThanOrEqual(2); // fixture_updated
    expect(rescored.every((m) => m.score_basis === 'single_source')).toBe(true);
    // about 1% of the register changes
    expect(added.length + gone.length + statusChanged.length + relabelled.length).toBeLessThan(n * 0.03);

    // removed entities are exactly the new redirects' sources; merges point at live entities of the same type
    expect(new Set(gone)).toEqual(new Set(newRedirects.map((r) => r.from_id)));
    for (const r of merged) {
      expect(after.has(r.to_id)).toBe(true);
      expect(after.get(r.to_id)!.entity_type).toBe(before.get(r.from_id)!.entity_type);
      for (const k of bA.get(r.from_id) ?? []) expect(bB.get(r.to_id)?.has(k)).toBe(true); // bridges moved to the survivor
    }
    for (const r of tombstoned) expect(r.to_id).toBe('');
    // new entities carry their own rows
    const players = byId(b.players);
    for (const id of added) {
      const e = after.get(id)!;
      if (e.entity_type === 'player') expect(players.get(id)?.label).toBe(e.label);
      expect(b.aliases.some((x) => x.reep_id === id)).toBe(true);
    }
    // per-type tables follow the entity table
    for (const e of [...relabelled, ...statusChanged]) {
      if (e.entity_type === 'player') expect(players.get(e.reep_id)).toMatchObject({ label: e.label, status: e.status });
    }
  });

  it('keeps every published ID resolvable', () => {
    const live = new Set(b.entities.map((e) => e.reep_id));
    const redirected = new Set(b.redirects.map((r) => r.from_id));
    for (const r of a.redirects) expect(b.redirects).toContainEqual(r);
    for (const e of a.entities) expect(live.has(e.reep_id) || redirected.has(e.reep_id)).toBe(true);
    // removed entities leave no rows that would dangle
    const removed = new Set(b.redirects.filter((r) => !a.redirects.some((x) => x.from_id === r.from_id)).map((r) => r.from_id));
    expect(b.bridges.some((x) => removed.has(x.reep_id))).toBe(false);
    expect(b.relationships.some((x) => removed.has(x.from_id) || removed.has(x.to_id))).toBe(false);
  });

  it('carries notice findings over with a new batch', () => {
    const old = JSON.parse(readFileSync(join(priorDir, 'private/notices/fbref.json'), 'utf8'));
    const now = JSON.parse(readFileSync(join(nextDir, 'private/notices/fbref.json'), 'utf8'));
    expect(now.batch_id).toBe(old.batch_id + 1);
    expect(now.generated_at).toBe('2026-10-08T12:00:00Z');
    const kept = now.findings.filter((f: { finding_id: string }) => old.findings.some((o: { finding_id: string }) => o.finding_id === f.finding_id));
    expect(kept.length).toBeGreaterThan(0);
    for (const f of kept) expect(f.last_seen_at).toBe('2026-10-08T12:00:00Z');
  });

  it('is deterministic and refuses to go back in time', async () => {
    const again = join(root, 'again', '20261008T120000Z');
    await generateRelease({ out: again, prior: priorDir, seed: 5 });
    for (const f of filesOf(nextDir)) expect(readFileSync(join(again, f)).equals(readFileSync(join(nextDir, f))), f).toBe(true);
    await expect(generateRelease({ out: join(root, '20260901T000000Z'), prior: priorDir })).rejects.toThrow(/must be later/);
  });
});
