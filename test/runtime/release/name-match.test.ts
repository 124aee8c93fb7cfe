// Name matching over compiled releases (runtime/release/name-match.ts): candidates come from the release's name keys
// family only, every live non-match entity is found by its own label, namesakes never give a match, a type other
// than the one asked for never does, and scoreNameOf scores one known entity the same way. Over a generated release
// and the real v0 data (../shared/real-data, read at test time, never committed).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../../compiler/compile.ts';
import { ENTITY_TYPES, type EntityType } from '../../../common/ids.ts';
import { generateRelease } from '../../../generator/synthetic.ts';
import { createBucketCache } from '../../../runtime/release/bucket-family-reader.ts';
import { CLEAR_LEAD, isClearMatch, MATCH_SCORE, matchNames, scoreNameOf, type NameCandidate, type NameFeatures } from '../../../runtime/release/name-match.ts';
import { loadRelease, type Release } from '../../../runtime/release/open-release.ts';
import { createFsSource, type FsShardSource } from '../../../runtime/source/fs-source.ts';
import { compiledRealData } from '../../fixtures/compiled-fixtures.ts';

const STAMP = '20261101T000000Z';
const NEXT = '20261108T000000Z';
const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const REAL_STAMP = '20260401T000000Z';

let root: string;
const sources: FsShardSource[] = [];

async function open(dist: string, stamp: string): Promise<Release> {
  const source = createFsSource({ root: dist, reads: 'sync' });
  sources.push(source);
  const manifest = createHash('sha256').update(readFileSync(join(dist, stamp, 'public', 'manifest.json'))).digest('hex');
  return loadRelease(source, stamp, manifest, createBucketCache(1 << 22));
}

/** Rows of one gzipped CSV table of a release, by column name (the generator writes no quoted commas in these columns). */
function table(release: string, name: string): Record<string, string>[] {
  const [head, ...lines] = gunzipSync(readFileSync(join(release, 'csv', `${name}.csv.gz`))).toString('utf8').trimEnd().split('\n');
  const cols = head.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}

let release: Release;
let next: Release;
let entities: Record<string, string>[];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-name-match-'));
  await generateRelease({ out: join(root, 'releases', STAMP), entities: 1500, seed: 48 });
  await generateRelease({ out: join(root, 'releases', NEXT), prior: join(root, 'releases', STAMP), seed: 48 });
  // No patches: zstd would be a child process, which this in-process tier starts none of.
  await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false, patches: false });
  release = await open(join(root, 'dist'), STAMP);
  next = await open(join(root, 'dist'), NEXT);
  // Labels with a comma are quoted in the CSV: left out rather than parsed here.
  entities = table(join(root, 'releases', STAMP), 'entities').filter((e) => e.entity_type !== 'match' && !e.label.startsWith('"'));
});
afterAll(async () => {
  for (const s of sources) await s.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('matchNames over a generated release', () => {
  it('finds every live non-match entity by its label, with the label\'s features, and never scores it above 1', async () => {
    expect(entities.length).toBeGreaterThan(300);
    for (const e of entities) {
      const c = await matchNames(release, { name: e.label, type: e.entity_type as EntityType, limit: 50 });
      const mine = c.find((x) => x.reep_id === e.reep_id);
      expect(mine, e.label).toBeDefined();
      expect(mine!.features).toMatchObject({ exact: 1, normalised: 1, type: 1 });
      expect(mine!.label).toBe(e.label);
      expect(mine!.entity_type).toBe(e.entity_type);
      for (const x of c) {
        expect(x.score).toBeLessThanOrEqual(1);
        expect(Math.round(x.score * 1000) / 1000).toBe(x.score);
      }
    }
  });

  it('gives a match only to a label no other entity of its type bears, and then to its entity', async () => {
    const byName = new Map<string, number>();
    for (const e of entities) byName.set(`${e.entity_type}\u0000${e.label.toLowerCase()}`, (byName.get(`${e.entity_type}\u0000${e.label.toLowerCase()}`) ?? 0) + 1);
    let matched = 0;
    let namesakes = 0;
    for (const e of entities) {
      const c = await matchNames(release, { name: e.label, type: e.entity_type as EntityType });
      if (byName.get(`${e.entity_type}\u0000${e.label.toLowerCase()}`)! > 1) {
        namesakes++;
        expect(isClearMatch(c), e.label).toBe(false);
      } else if (isClearMatch(c)) {
        matched++;
        expect(c[0].reep_id, e.label).toBe(e.reep_id);
      }
    }
    expect(namesakes).toBeGreaterThan(0);
    expect(matched).toBeGreaterThan(entities.length / 2);
  });

  it('never gives a match of a type other than the one asked for', async () => {
    for (const e of entities.slice(0, 200)) {
      const other = ENTITY_TYPES.find((t) => t !== e.entity_type && t !== 'match')!;
      const c = await matchNames(release, { name: e.label, type: other });
      if (isClearMatch(c)) expect(c[0].entity_type).toBe(other);
      for (const x of c) if (x.entity_type !== other) expect(x.score).toBeLessThan(MATCH_SCORE);
    }
  });

  it('orders candidates by score, then register ID, and keeps to the limit', async () => {
    const c = await matchNames(release, { name: entities[0].label, limit: 3 });
    expect(c.length).toBeLessThanOrEqual(3);
    for (let i = 1; i < c.length; i++) expect(c[i - 1].score > c[i].score || (c[i - 1].score === c[i].score && c[i - 1].reep_id < c[i].reep_id)).toBe(true);
    expect(await matchNames(release, { name: '--' })).toEqual([]);
    expect(await matchNames(release, { name: 'Zzyzx Qwvbnm' })).toEqual([]);
  });

  it('finds a player by a variant: no diacritics, another word order, an initial', async () => {
    const p = entities.find((e) => e.entity_type === 'player' && /[^\x00-\x7f]/.test(e.label) && e.label.split(' ').length === 2 && !/[^\x00-\u024f]/.test(e.label))!;
    const [first, last] = p.label.split(' ');
    const plain = p.label.normalize('NFKD').replace(/\p{M}/gu, '');
    for (const variant of [plain, `${last} ${first}`, `${first[0]}. ${last}`]) {
      const c = await matchNames(release, { name: variant, type: 'player', limit: 50 });
      expect(c.map((x) => x.reep_id), variant).toContain(p.reep_id);
    }
  });
});

describe('scoreNameOf', () => {
  it('scores one entity as matchNames does, and is null for an ID that is not live itself', async () => {
    for (const e of entities.slice(0, 50)) {
      const q = { name: e.label, type: e.entity_type as EntityType };
      const one = await scoreNameOf(release, e.reep_id, q);
      expect(one).toMatchObject({ reep_id: e.reep_id, label: e.label, features: { exact: 1, normalised: 1 } });
      const found = (await matchNames(release, { ...q, limit: 50 })).find((x) => x.reep_id === e.reep_id)!;
      expect(one!.score).toBe(found.score);
    }
    expect(await scoreNameOf(release, 'rt0000000000000f', { name: 'x' })).toBeNull();
    const retired = table(join(root, 'releases', NEXT), 'redirects');
    expect(retired.length).toBeGreaterThan(0);
    for (const r of retired.slice(0, 5)) expect(await scoreNameOf(next, r.from_id, { name: 'x' })).toBeNull();
  });

  it('weighs the type and the country', async () => {
    const p = entities.find((e) => e.entity_type === 'player' && e.country)!;
    const right = await scoreNameOf(release, p.reep_id, { name: p.label, type: 'player', country: p.country });
    const unknown = await scoreNameOf(release, p.reep_id, { name: p.label });
    const wrong = await scoreNameOf(release, p.reep_id, { name: p.label, type: 'team', country: 'Nowhere' });
    expect(right!.score).toBe(1);
    expect(right!.features).toEqual({ exact: 1, normalised: 1, alias: 0, token_overlap: 1, initials: 1, type: 1, country: 1 });
    expect(unknown!.features).toMatchObject({ type: 0.5, country: 0.5 });
    expect(wrong!.features).toMatchObject({ type: 0, country: 0 });
    expect(right!.score - unknown!.score).toBeGreaterThan(0);
    expect(wrong!.score).toBeLessThan(MATCH_SCORE);
    expect(Object.keys(right!.features)).toEqual(['exact', 'normalised', 'alias', 'token_overlap', 'initials', 'type', 'country']);
  });
});

describe('isClearMatch', () => {
  const none: NameFeatures = { exact: 0, normalised: 0, alias: 0, token_overlap: 0, initials: 0, type: 0, country: 0 };
  const cand = (score: number): NameCandidate => ({ reep_id: 'rt0000000000000a', entity_type: 'team', label: '', score, features: none });
  it('needs MATCH_SCORE and a lead of CLEAR_LEAD, counted in thousandths', () => {
    expect(isClearMatch([])).toBe(false);
    expect(isClearMatch([cand(MATCH_SCORE)])).toBe(true);
    expect(isClearMatch([cand(0.849)])).toBe(false);
    expect(isClearMatch([cand(0.96), cand(0.96 - CLEAR_LEAD)])).toBe(true);
    expect(isClearMatch([cand(0.96), cand(0.961 - CLEAR_LEAD)])).toBe(false);
  });
});

describe('matchNames over the real v0 data', () => {
  let real: Release;
  let teams: { id: string; name: string; country: string }[];
  beforeAll(async () => {
    const compiled = await compiledRealData(V0, REAL_STAMP);
    real = await open(compiled.dist, REAL_STAMP);
    // reep_id, key_wikidata, name, country: the first four columns, none of them quoted in the rows kept here.
    teams = readFileSync(join(V0, 'teams.csv'), 'utf8').split('\n').slice(1).filter((l) => l && !l.includes('"')).map((l) => {
      const f = l.split(',');
      return { id: f[0], name: f[2], country: f[3] };
    });
  });

  it('finds real teams by their names and by variants of them', async () => {
    const arsenal = await matchNames(real, { name: 'Arsenal F.C.', type: 'team', country: 'United Kingdom' });
    expect(arsenal[0].label).toBe('Arsenal F.C.');
    expect(isClearMatch(arsenal)).toBe(true);
    // "Arsenal" alone is the label of a team in Lesotho and the core of a dozen more: never a match.
    expect(isClearMatch(await matchNames(real, { name: 'Arsenal', type: 'team' }))).toBe(false);
    const sample = teams.filter((_, i) => i % 500 === 0);
    let found = 0;
    for (const t of sample) {
      const c = await matchNames(real, { name: t.name.toUpperCase(), type: 'team', limit: 50 });
      if (c.some((x) => x.label === t.name)) found++;
    }
    expect(found).toBe(sample.length);
  });
});
