// The real v0 register data (../shared/real-data, read at test time, never committed) converted into a release,
// compiled and served: the API answers real questions, and real quirks (shared provider IDs, slashes, CRLF,
// diacritics) come through.
import { mkdtempSync } from 'node:fs';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importV0 } from '../../generator/from-v0.ts';
import { compileAll } from '../../compiler/compile.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { client } from '../helpers/api-client.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
let rt: Runtime;
let call: ReturnType<typeof client>;
let apiKey: string;

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
  const root = mkdtempSync(join(tmpdir(), 'ir-real-'));
  await importV0({ from: V0, out: join(root, 'releases', '20260401T000000Z') });
  await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false });
  const keys = join(root, 'keys.json');
  const { key } = await addKey({ file: keys, name: 'real', quota: 100000, rate: 100000 });
  apiKey = key;
  rt = await startRuntime({ dist: join(root, 'dist'), keys, state: join(root, 'state'), port: 0, cursorSecret: 'real-data test secret, not a deployment one' });
  call = client(rt.url + '/api/v1', key);
}, 120_000);
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
    const auth = { authorization: `Bearer ${apiKey}` };
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
});
