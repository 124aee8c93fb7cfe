// The synthetic generator: deterministic bytes for a seed, a consistent manifest, and the shapes real data has
// (ambiguous IDs, namespaces, slashes, scripts, redirect chains, tombstones, referential slack, notices).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRelease } from '../../generator/synthetic.ts';
import { REGISTER_ID } from '../../common/ids.ts';
import { RegisterError } from '../../common/errors.ts';
import { expectConsistent, expectPublishedScorelines, filesOf, readTable, type Rec } from './release-check.ts';

const root = mkdtempSync(join(tmpdir(), 'synthetic-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const STAMP = '20261001T120000Z';
const dirA = join(root, 'a', STAMP);
const dirB = join(root, 'b', STAMP);
const dirOther = join(root, 'c', STAMP);
let t: Record<string, Rec[]>;

beforeAll(async () => {
  await generateRelease({ out: dirA, entities: 3000, seed: 1 });
  await generateRelease({ out: dirB, entities: 3000, seed: 1 });
  await generateRelease({ out: dirOther, entities: 3000, seed: 2 });
  t = {};
  for (const table of [
    'entities', 'bridges', 'redirects', 'relationships', 'matches', 'aliases', 'overlay_links', 'overlay_xids',
    'providers', 'players', 'teams', 'observed_clubs',
  ] as const) {
    t[table] = await readTable(dirA, table);
  }
});

describe('generateRelease', () => {
  it('gives byte-identical files for the same seed, and different ones for another seed', () => {
    const files = filesOf(dirA);
    expect(filesOf(dirB)).toEqual(files);
    for (const f of files) expect(readFileSync(join(dirB, f)).equals(readFileSync(join(dirA, f))), f).toBe(true);
    expect(readFileSync(join(dirOther, 'csv/bridges.csv.gz')).equals(readFileSync(join(dirA, 'csv/bridges.csv.gz')))).toBe(false);
  });

  it('writes a manifest whose sizes, hashes and row counts match the files', async () => {
    const m = await expectConsistent(dirA);
    expect(m.stamp).toBe(STAMP);
    expect(m.generated_at).toBe('2026-10-01T12:00:00Z');
    expect(m.prior).toBeUndefined();
    expect(m.files['private/notices/fbref.json'].role).toBe('private');
    expect(m.files['csv/overlay_xids.csv.gz'].role).toBe('overlay');
    // Scorelines take the published service's values (result_form, score_basis and the rest).
    expect(await expectPublishedScorelines(dirA)).toBeGreaterThan(0);
  });

  it('scales row counts from the real release', () => {
    const scale = 3000 / 2_037_806;
    const near = (actual: number, real: number, tolerance = 0.25) => {
      expect(actual).toBeGreaterThan(real * scale * (1 - tolerance));
      expect(actual).toBeLessThan(real * scale * (1 + tolerance));
    };
    expect(t.entities.length).toBe(3000);
    near(t.bridges.length, 10_038_804);
    near(t.matches.length, 1_467_911, 0.05);
    near(t.players.length, 438_178, 0.05);
    near(t.relationships.length, 2_054_922);
    near(t.aliases.length, 684_236);
    near(t.overlay_links.length, 156_236, 0.4);
  });

  it('mints distinct register IDs whose letter hints at the type', () => {
    const ids = t.entities.map((e) => e.reep_id);
    expect(new Set(ids).size).toBe(ids.length);
    const letter: Record<string, string> = { player: 'p', coach: 'c', referee: 'f', team: 't', competition: 'l', season: 's', stage: 'g', match: 'm' };
    for (const e of t.entities) {
      expect(e.reep_id).toMatch(REGISTER_ID);
      expect(e.reep_id[1]).toBe(letter[e.entity_type]);
    }
    expect(new Set(t.entities.map((e) => e.entity_type)).size).toBe(8);
  });

  it('has the bridge shapes of real data', () => {
    const live = new Set(t.entities.map((e) => e.reep_id));
    const typeOf = new Map(t.entities.map((e) => [e.reep_id, e.entity_type]));
    const providers = new Set(t.bridges.map((b) => b.provider));
    expect(providers.size).toBeGreaterThanOrEqual(35);
    expect(providers.has('wikidata')).toBe(false);
    const tmNamespace: Record<string, string> = { player: 'spieler', coach: 'trainer', team: 'verein', competition: 'wettbewerb' };
    for (const b of t.bridges.filter((x) => x.provider === 'transfermarkt' && live.has(x.reep_id))) {
      expect(b.namespace).toBe(tmNamespace[typeOf.get(b.reep_id)!]);
    }
    expect(t.bridges.filter((b) => b.provider !== 'transfermarkt').every((b) => b.namespace === '')).toBe(true);
    expect(t.bridges.some((b) => b.provider === 'flashscore' && /^[a-z0-9-]+\/[0-9A-Za-z]{8}$/.test(b.external_id))).toBe(true);
    expect(t.bridges.some((b) => b.rung === '')).toBe(true);
    expect(t.bridges.some((b) => b.rung !== '')).toBe(true);
    // the same provider key on two entities (the resolve endpoint's 409)
    const owners = new Map<string, Set<string>>();
    for (const b of t.bridges) {
      const k = `${b.provider}|${b.namespace}|${b.external_id}`;
      owners.set(k, (owners.get(k) ?? new Set()).add(b.reep_id));
    }
    const ambiguous = [...owners].filter(([, s]) => s.size > 1).map(([k]) => k);
    expect(ambiguous.some((k) => k.startsWith('transfermarkt|verein|'))).toBe(true);
    expect(ambiguous.length).toBeGreaterThanOrEqual(2);
    // a few rows name IDs that were never published
    expect(t.bridges.some((b) => !live.has(b.reep_id))).toBe(true);
    expect(t.aliases.some((a) => !live.has(a.reep_id))).toBe(true);
    expect(t.relationships.some((r) => !live.has(r.from_id))).toBe(true);
    const roles = new Map(t.providers.map((p) => [p.provider, p.role]));
    expect([...roles.values()]).toContain('bridge_only');
    expect([...providers].some((p) => !roles.has(p))).toBe(true); // unlisted → canonical_bridge by default
  });

  it('has labels in many scripts and aliases of every kind', () => {
    const labels = t.entities.map((e) => e.label).join('\n');
    for (const s of ['Arsenal v Chelsea', 'Arsenal', 'Chelsea', 'Łódź', 'São Paulo', 'Hoffenheim 1899', '北京国安', 'Зенит', 'الأهلي']) expect(labels).toContain(s);
    expect(labels).toMatch(/Ødegaard|Müller|Kjær|Gündoğan/);
    expect(t.entities.some((e) => e.label.includes(','))).toBe(true);
    expect(t.entities.some((e) => e.label.includes('"'))).toBe(true);
    expect(new Set(t.aliases.map((a) => a.kind))).toEqual(new Set(['full', 'short', 'secondary']));
    expect(t.aliases.some((a) => a.rank === '')).toBe(true);
    expect(t.aliases.some((a) => a.rank === '1')).toBe(true);
    expect(t.aliases.every((a) => a.language === '')).toBe(true);
  });

  it('builds matches and structural relationships', () => {
    const live = new Map(t.entities.map((e) => [e.reep_id, e.entity_type]));
    const teams = new Map(t.teams.map((x) => [x.reep_id, x.label]));
    for (const m of t.matches) {
      expect(live.get(m.home_id)).toBe('team');
      expect(live.get(m.away_id)).toBe('team');
      expect(m.home_id).not.toBe(m.away_id);
      expect(m.label).toBe(`${teams.get(m.home_id)} v ${teams.get(m.away_id)}`);
      expect(m.played_on).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(t.matches.some((m) => m.home_score === '' && m.match_state === 'played')).toBe(true);
    expect(t.matches.some((m) => m.home_score !== '')).toBe(true);
    expect(new Set(t.matches.map((m) => m.match_state))).toContain('scheduled');
    const families: Record<string, [string, string]> = {
      season_of: ['season', 'competition'], stage_of: ['stage', 'season'], match_in: ['match', 'stage'], participates_in: ['team', 'season'],
    };
    for (const r of t.relationships) {
      expect(Object.keys(families)).toContain(r.kind);
      if (live.has(r.from_id)) expect([live.get(r.from_id), live.get(r.to_id)]).toEqual(families[r.kind]);
    }
    expect(new Set(t.relationships.map((r) => r.kind)).size).toBe(4);
  });

  it('writes merges (with a chain) and tombstones for IDs that are not live', () => {
    const live = new Set(t.entities.map((e) => e.reep_id));
    const merged = t.redirects.filter((r) => r.reason === 'merged');
    const tombs = t.redirects.filter((r) => r.reason === 'de_corroborated');
    expect(merged.length).toBeGreaterThanOrEqual(3);
    expect(tombs.length).toBeGreaterThanOrEqual(1);
    for (const r of t.redirects) expect(live.has(r.from_id)).toBe(false);
    for (const r of tombs) expect(r.to_id).toBe('');
    const next = new Map(merged.map((r) => [r.from_id, r.to_id]));
    let chains = 0;
    for (const from of next.keys()) {
      let id = from;
      let hops = 0;
      while (next.has(id) && hops < 10) {
        id = next.get(id)!;
        hops++;
      }
      expect(live.has(id)).toBe(true);
      if (hops >= 2) chains++;
    }
    expect(chains).toBeGreaterThanOrEqual(1);
  });

  it('writes an overlay with parseable inherited IDs, and observed clubs', () => {
    for (const o of t.overlay_links) {
      expect(o.qid).toMatch(/^Q[1-9][0-9]*$/);
      const c = Number(o.confidence);
      expect(c).toBeGreaterThanOrEqual(0);
      expect(c).toBeLessThanOrEqual(1);
      const inherited = JSON.parse(o.inherited);
      expect(inherited.length).toBe(Number(o.inherited_count));
      for (const x of inherited) expect(Object.keys(x)).toEqual(['provider', 'property', 'external_id', 'rank', 'source', 'source_tier', 'confidence']);
    }
    expect(new Set(t.overlay_links.map((o) => o.qid)).size).toBe(t.overlay_links.length);
    expect(t.overlay_xids.length).toBeGreaterThan(t.overlay_links.length);
    for (const o of t.observed_clubs.slice(0, 50)) expect(JSON.parse(o.observed_clubs).length).toBeGreaterThan(0);
  });

  it('writes private notice batches for two providers', () => {
    for (const provider of ['fbref', 'sofascore']) {
      const batch = JSON.parse(readFileSync(join(dirA, `private/notices/${provider}.json`), 'utf8'));
      expect(Object.keys(batch)).toEqual(['provider', 'batch_id', 'generated_at', 'findings']);
      expect(batch).toMatchObject({ provider, batch_id: 1, generated_at: '2026-10-01T12:00:00Z' });
      expect(batch.findings.length).toBeGreaterThan(0);
      for (const f of batch.findings) {
        expect(Object.keys(f)).toEqual([
          'finding_id', 'provider', 'kind', 'title', 'provider_ref', 'source', 'observed', 'expected', 'severity',
          'suggested_action', 'payload', 'payload_hash', 'first_seen_at', 'last_seen_at',
        ]);
        expect(f.provider).toBe(provider);
        expect(f.payload_hash).toMatch(/^[0-9a-f]{64}$/);
      }
    }
  });

  it('rejects bad options', async () => {
    await expect(generateRelease({ out: join(root, 'x', 'not-a-stamp'), entities: 100 })).rejects.toThrow(RegisterError);
    await expect(generateRelease({ out: join(root, 'x', STAMP), entities: 5 })).rejects.toThrow(/--entities/);
    await expect(generateRelease({ out: dirA, entities: 100 })).rejects.toThrow(/already exists/);
  });
});
