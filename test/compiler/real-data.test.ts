// The real v0 register data (../shared/real-data, read at test time, never committed) converted into a release,
// compiled and served: the API answers real questions, and real quirks (shared provider IDs, slashes, CRLF,
// diacritics) come through.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importV0 } from '../../generator/from-v0.ts';
import { compileAll } from '../../compiler/compile.ts';
import type { CompileReport } from '../../compiler/compile-release.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { compiledRealData, copyCompiled } from '../fixtures/compiled-fixtures.ts';
import { client } from '../helpers/api-client.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const STAMP = '20260401T000000Z';
let rt: Runtime;
let call: ReturnType<typeof client>;
let root: string;
let keys: string;
let key: string;
let report: CompileReport;

/** Values of one column of a v0 CSV file, read with the project's RFC 4180 reader (quoted rows included). */
async function column(file: string, name: string): Promise<string[]> {
  const out: string[] = [];
  let col = -1;
  await readCsv(join(V0, file), file, { header: (h) => (col = h.indexOf(name)), row: (f) => void (f[col] && out.push(f[col])) });
  return out;
}

/** Transfermarkt club IDs that appear on more than one team in teams.csv (computed from the source file). */
async function sharedTransfermarktIds(): Promise<string[]> {
  const seen = new Map<string, number>();
  for (const v of await column('teams.csv', 'key_transfermarkt')) seen.set(v, (seen.get(v) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-real-'));
  const compiled = await compiledRealData(V0, STAMP);
  copyCompiled(compiled, root);
  [report] = compiled.reports;
  keys = join(root, 'keys.json');
  key = (await addKey({ file: keys, name: 'real', quota: 100000, rate: 100000 })).key;
  rt = await startRuntime({ dist: join(root, 'dist'), keys, state: join(root, 'state'), port: 0, cursorSecret: 'real-data test secret, not a deployment one' });
  call = client(rt.url + '/api/v1', key);
});
afterAll(async () => {
  await rt?.close();
});

describe('real v0 register data', () => {
  it('Transfermarkt club 11 in namespace verein is Arsenal F.C., with its other providers', async () => {
    const r = await call('/resolve/transfermarkt/11?namespace=verein&include=bridges,overlay');
    expect(r.json.count).toBe(1);
    const arsenal = r.json.results[0];
    expect(arsenal.name_en).toBe('Arsenal F.C.');
    expect(arsenal.overlay.kb.qid).toBe('Q9617');
    const fbref = arsenal.bridges.find((b: { provider: string }) => b.provider === 'fbref');
    expect(fbref.external_id).toBe('18bb7c10');
    // And back: FBref's ID resolves to the same register ID.
    expect((await call('/resolve/fbref/18bb7c10')).json.results[0].reep_id).toBe(arsenal.reep_id);
  });

  it('the 32 Transfermarkt club IDs shared by two teams each resolve to 409 with both candidates', async () => {
    const shared = await sharedTransfermarktIds();
    expect(shared.length).toBe(32);
    for (const id of shared) {
      const r = await call(`/resolve/transfermarkt/${encodeURIComponent(id)}?namespace=verein`);
      expect(r.status, id).toBe(409);
      expect(r.json.count).toBe(2);
      expect(new Set(r.json.results.map((e: { reep_id: string }) => e.reep_id)).size).toBe(2);
    }
  });

  it('/matches finds SPAL\'s matches of the v0 sample from its Transfermarkt club ID, newest first, with their provider IDs', async () => {
    // The sample names sides by FBref's short names; SPAL is a side in these rows (computed from the source file).
    const rows: Record<string, string>[] = [];
    let header: string[] = [];
    await readCsv(join(V0, 'match_dictionary.csv'), 'match_dictionary.csv', {
      header: (h) => (header = h),
      row: (f) => void rows.push(Object.fromEntries(header.map((h, i) => [h, f[i]]))),
    });
    const spal = rows.filter((m) => m.fbref_home_team === 'SPAL' || m.fbref_away_team === 'SPAL').sort((a, b) => (a.date < b.date ? 1 : -1));
    expect(spal.length).toBeGreaterThanOrEqual(2);
    const r = await call('/matches?team=transfermarkt:verein:2722&from=2000-01-01');
    expect(r.status).toBe(200);
    expect(r.json.unresolved).toEqual([]);
    expect(r.json.matches.map((m: { played_on: string }) => m.played_on)).toEqual(spal.map((m) => m.date));
    for (const [i, m] of r.json.matches.entries()) {
      expect(m.away?.label ?? m.home?.label).toBe('SPAL');
      expect([m.home_score, m.away_score]).toEqual([Number(spal[i].home_goals), Number(spal[i].away_goals)]);
      expect(m.bridges).toContainEqual({ provider: 'fotmob', namespace: '', external_id: spal[i].fotmob_match_id });
      // v0 links no match to a competition, season or stage: null, nothing inferred.
      expect([m.competition, m.season, m.stage]).toEqual([null, null, null]);
    }
    const away = spal.filter((m) => m.fbref_away_team === 'SPAL').length;
    expect((await call('/matches?team=transfermarkt:verein:2722&from=2000-01-01&venue=away')).json.count).toBe(away);
    expect((await call('/matches?team=transfermarkt:verein:2722&from=2000-01-01&venue=home')).json.count).toBe(spal.length - away);
  });

  it('search folds diacritics and keeps digits and non-Latin scripts', async () => {
    const lodz = await call('/search?q=LODZ');
    expect(lodz.json.results.map((x: { label: string }) => x.label)).toContain('ŁKS Łódź');
    const hoff = await call('/search?q=hoffenheim%201899');
    expect(hoff.json.results[0].label).toBe('TSG 1899 Hoffenheim');
  });

  it('Arsenal with every include: a strong ETag, a charged 304, br and gzip that decode to the identity bytes, a preflight', async () => {
    const id = (await call('/resolve/fbref/18bb7c10')).json.results[0].reep_id;
    const url = `${rt.url}/api/v1/entities/${id}?include=aliases,attributes,bridges,relationships,overlay`;
    const auth = { authorization: `Bearer ${key}` };
    const identity = await rawRequest(url, { headers: { ...auth, 'accept-encoding': 'identity' } });
    expect(identity.status).toBe(200);
    const etag = identity.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const again = await rawRequest(url, { headers: { ...auth, 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(Number(again.headers['x-register-credits-remaining'])).toBe(Number(identity.headers['x-register-credits-remaining']) - 1);
    for (const coding of ['br', 'gzip']) {
      const coded = await rawRequest(url, { headers: { ...auth, 'accept-encoding': coding } });
      expect(coded.headers['content-encoding']).toBe(coding);
      expect(coded.body.equals(identity.body)).toBe(true);
      expect(coded.wire.length).toBeLessThan(identity.body.length);
    }
    const pre = await rawRequest(url, { method: 'OPTIONS', headers: { origin: 'https://partner.example', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
  });

  it('a Flashscore ID with a slash resolves through an encoded path segment', async () => {
    const withSlash = (await column('teams.csv', 'key_flashscore')).find((v) => v.includes('/'))!;
    expect(withSlash).toBeTruthy();
    const r = await call(`/resolve/flashscore/${encodeURIComponent(withSlash)}`);
    expect(r.json.count).toBeGreaterThanOrEqual(1);
  });

  it('every match carries `match`: FBref goals and date, its sides where named, form unknown and basis single_source', async () => {
    expect(report.slack.filter((x) => x.what.startsWith('csv/matches'))).toEqual([]);
    // The release's own rows say which sides v0 named (FBref's short names find few clubs unambiguously).
    const rows = new Map<string, { home: string; away: string }>();
    let c: Record<string, number> = {};
    await readCsv(join(root, 'releases', STAMP, 'csv', 'matches.csv.gz'), 'matches', {
      header: (h) => (c = Object.fromEntries(h.map((name, i) => [name, i]))),
      row: (f) => void rows.set(f[c.reep_id], { home: f[c.home_id], away: f[c.away_id] }),
    });
    expect(rows.size).toBe(50);
    let sides = 0;
    for (const [id, row] of rows) {
      const m = (await call(`/entities/${id}`)).json.match;
      expect(Object.keys(m)).toEqual(['home_score', 'away_score', 'result_form', 'shootout_home', 'shootout_away', 'score_basis', 'home_id', 'away_id', 'played_on']);
      expect(m).toMatchObject({ result_form: 'unknown', score_basis: 'single_source', shootout_home: null, shootout_away: null });
      expect(Number.isInteger(m.home_score) && Number.isInteger(m.away_score)).toBe(true);
      expect(m.played_on).toMatch(/^20\d\d-\d\d-\d\d$/);
      // A side v0 named is the club it names; one it could not name stays null, never a guess.
      expect([m.home_id, m.away_id]).toEqual([row.home || null, row.away || null]);
      for (const side of [m.home_id, m.away_id].filter(Boolean)) {
        sides++;
        expect((await call(`/entities/${side}`)).json.entity_type).toBe('team');
      }
    }
    expect(sides).toBeGreaterThan(0);
    // Hellas Verona 1-1 Fiorentina, 22 December 2021, as v0 holds it.
    const verona = 'rm' + createHash('sha256').update('https://fbref.com/en/matches/efd40d81/Hellas-Verona-Fiorentina-December-22-2021-Serie-A').digest('hex').slice(0, 14);
    expect((await call(`/entities/${verona}`)).json.match).toMatchObject({ home_score: 1, away_score: 1, played_on: '2021-12-22' });
    expect((await call('/resolve/transfermarkt/11?namespace=verein')).json.results[0]).not.toHaveProperty('match');
  });

  it('a second import with --prior is a proper successor: a club v0 dropped answers 410 and /changes says entity_removed', async () => {
    // v0 as it might be later: the first club row gone.
    const later = join(root, 'v0-later');
    mkdirSync(later);
    for (const f of ['competitions.csv', 'seasons.csv', 'match_dictionary.csv']) copyFileSync(join(V0, f), join(later, f));
    const teams = readFileSync(join(V0, 'teams.csv'), 'utf8');
    const dropped = 'reep_te8766ef1';
    expect(teams.includes(`\n${dropped},`)).toBe(true);
    writeFileSync(join(later, 'teams.csv'), teams.replace(new RegExp(`\n${dropped},[^\n]*`), ''));
    const next = '20260501T000000Z';
    const manifest = await importV0({ from: later, out: join(root, 'releases', next), prior: join(root, 'releases', STAMP) });
    expect(manifest.prior).toBe(STAMP);
    // Nothing vanishes, so even --strict accepts it.
    const [second] = await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), strict: true, progress: false });
    expect(second.stamp).toBe(next);
    const gone = 'rt' + createHash('sha256').update(dropped).digest('hex').slice(0, 14);
    const fresh = await startRuntime({ dist: join(root, 'dist'), keys, state: 'memory:', port: 0 });
    try {
      const api = client(fresh.url + '/api/v1', key);
      expect((await api(`/entities/${gone}`)).status).toBe(410);
      expect((await api(`/changes?since=${STAMP}&type=entity_removed`)).json.events).toEqual([{ type: 'entity_removed', reep_id: gone }]);
      const summary = (await api(`/changes/summary?since=${STAMP}`)).json;
      expect(summary).toMatchObject({ since: STAMP, from: STAMP, to: next, chain: [next] });
      expect(Object.entries(summary.counts).filter(([, n]) => n !== 0)).toEqual([['entity_removed', 1]]);
    } finally {
      await fresh.close();
    }
  });
});
