// /reconcile, the Reconciliation Service API 0.2: every answer validated against the spec's own JSON schemas
// (test/fixtures/reconciliation-api-0.2/, copied from its repository) as well as the OpenAPI document (the test
// client), over the hand world (every answer known), the generated sample releases and the real v0 data.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { MAX_RECONCILE_QUERIES } from '../../common/request-limits.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { createLogger } from '../../runtime/ops/logger.ts';
import type { LogRecord } from '../../runtime/problem-log.ts';
import { CLEAR_LEAD, MATCH_SCORE } from '../../runtime/release/name-match.ts';
import { compiledRealData, compiledSamples, copyCompiled } from '../fixtures/compiled-fixtures.ts';
import { ID } from '../fixtures/hand-world.ts';
import { serveHandWorld, type ServedWorld } from '../fixtures/served-world.ts';
import { client, type ApiResponse } from '../helpers/api-client.ts';
import { fetchAny, openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';

// ---------------------------------------------------------------------------------------------------------------
// The spec's schemas. They name `http://json-schema.org/schema#` ("the latest draft" when written; they use
// draft-07 keywords such as `contains`), which ajv's default class reads as draft-07 (it maps that URI to its
// draft-07 meta-schema), as the spec's own tests ran them with ajv-cli 3. `openapi.json` is the Swagger 2.0 schema
// the manifest's `authentication` refers to, shipped in the same folder of the spec's repository.
const SPEC = join(import.meta.dirname, '../fixtures/reconciliation-api-0.2');
const spec = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS: depending on the loader its default import is the plugin or its module object.
(((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default)(spec);
expect(spec.getSchema('http://json-schema.org/schema')?.schema).toMatchObject({ $id: 'http://json-schema.org/draft-07/schema#' });
for (const f of readdirSync(SPEC).filter((n) => n.endsWith('.json'))) spec.addSchema(JSON.parse(readFileSync(join(SPEC, f), 'utf8')) as object);
const specSchema = (file: string): ValidateFunction => spec.getSchema(JSON.parse(readFileSync(join(SPEC, file), 'utf8')).$id)!;
const validManifest = specSchema('manifest.json');
const validResults = specSchema('reconciliation-result-batch.json');
const validQueries = specSchema('reconciliation-query-batch.json');

function bySpec(check: ValidateFunction, body: unknown): void {
  expect(check(body), JSON.stringify(check.errors)).toBe(true);
}

type Candidate = { id: string; name: string; type: { id: string; name: string }[]; score: number; match: boolean; features: { id: string; value: number }[] };
type Results = Record<string, { result: Candidate[]; error?: { error: string } }>;

/** A batch asked by GET `queries=`, validated against the spec's query and result schemas (the client checks the document's). */
async function reconcile(call: ReturnType<typeof client>, queries: Record<string, unknown>, via: 'get' | 'form' | 'json' = 'get', key?: string): Promise<ApiResponse & { results: Results }> {
  if (Object.values(queries).every((q) => typeof q === 'object' && q !== null && !('bad' in q))) bySpec(validQueries, queries);
  const text = JSON.stringify(queries);
  const keyed = key === undefined ? '' : `key=${encodeURIComponent(key)}`;
  const r =
    via === 'get'
      ? await call(`/reconcile?queries=${encodeURIComponent(text)}${keyed ? `&${keyed}` : ''}`)
      : await call(`/reconcile${keyed ? `?${keyed}` : ''}`, via === 'form'
          ? { rawBody: new URLSearchParams({ queries: text }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
          : { rawBody: text });
  if (r.status === 200) bySpec(validResults, r.json);
  return { ...r, results: r.json as Results };
}

const credits = (r: ApiResponse): number => Number(r.headers.get('x-register-credits-remaining'));

/** What `match` promises: only the first candidate, and only when it is sure (an ID hit, or a clear name match). */
function matchIsSound(candidates: Candidate[]): void {
  candidates.slice(1).forEach((c) => expect(c.match).toBe(false));
  const [first, second] = candidates;
  if (!first?.match) return;
  const byId = first.features.some((f) => f.id === 'provider_id' || f.id === 'register_id');
  if (byId) return expect(candidates.filter((c) => c.score === 1 && c.features.some((f) => f.id === 'provider_id')).length).toBeLessThanOrEqual(1);
  expect(first.score).toBeGreaterThanOrEqual(MATCH_SCORE);
  if (second) expect(Math.round((first.score - second.score) * 1000)).toBeGreaterThanOrEqual(Math.round(CLEAR_LEAD * 1000));
}

describe('the hand world', () => {
  let served: ServedWorld<'any' | 'small'>;
  let api: ReturnType<typeof client>;
  let anon: ReturnType<typeof client>;
  beforeAll(async () => {
    served = await serveHandWorld({ any: { quota: 1000, rate: 1000 }, small: { quota: 3, rate: 1000 } });
    api = served.api('v1', served.keys.any);
    anon = served.api('v1');
  });
  afterAll(async () => {
    await served?.rt.close();
  });

  it('serves the manifest without a key and at no cost, valid by the spec, its view the explorer\'s entity page', async () => {
    const r = await anon('/reconcile');
    expect(r.status).toBe(200);
    bySpec(validManifest, r.json);
    expect(r.json.versions).toEqual(['0.2']);
    expect(r.json.defaultTypes.map((t: { id: string }) => t.id)).toEqual(['coach', 'competition', 'match', 'player', 'referee', 'season', 'stage', 'team']);
    expect(r.json.view.url).toBe(`${served.rt.url}/#/entity/{{id}}`);
    expect(r.json.identifierSpace).toBe(`${served.rt.url}/api/v1/entities/`);
    expect(r.json.authentication).toMatchObject({ type: 'apiKey', in: 'query', name: 'key' });
    expect(r.json.batchSize).toBe(MAX_RECONCILE_QUERIES);
    expect(r.headers.get('x-register-credits-remaining')).toBeNull();
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    // A key in the query (OpenRefine adds it to every call) changes nothing for the manifest, a bad one included.
    expect((await anon('/reconcile?key=rk_not_a_key')).text).toBe(r.text);
    // The spec's own example of a bad security scheme is refused by the same schema, so the check is not empty.
    expect(validManifest({ ...r.json, authentication: { foo: 'bar' } })).toBe(false);
  });

  it('answers a provider-ID property with its one entity as the match, and a name with scored candidates', async () => {
    const r = await reconcile(api, {
      q0: { query: 'Arsenal', type: 'team', properties: [{ pid: 'transfermarkt:verein', v: '11' }] },
      q1: { query: 'Chelsea FC', type: 'team', limit: 3 },
      q2: { query: 'Arsenal', properties: [{ pid: 'transfermarkt:verein', v: 500 }] },
    });
    expect(r.status).toBe(200);
    const [hit] = r.results.q0.result;
    expect(hit).toMatchObject({ id: ID.arsenal, name: 'Arsenal F.C.', type: [{ id: 'team', name: 'Team' }], score: 1, match: true });
    expect(hit.features.map((f) => f.id)).toEqual(['exact', 'normalised', 'alias', 'token_overlap', 'initials', 'type', 'country', 'provider_id']);
    expect(r.results.q1.result[0]).toMatchObject({ id: ID.chelsea, name: 'Chelsea FC' });
    expect(r.results.q1.result.length).toBeLessThanOrEqual(3);
    // Two entities hold transfermarkt verein 500: both listed with score 1, neither a match.
    expect(r.results.q2.result.slice(0, 2).map((c) => [c.id, c.score, c.match]).sort()).toEqual([[ID.arsenal, 1, false], [ID.chelsea, 1, false]]);
    for (const q of Object.values(r.results)) matchIsSound(q.result);
    expect(r.headers.get('x-register-credits-remaining')).not.toBeNull();
  });

  it('follows merged IDs to their survivor, for a provider ID and for a register ID as the query', async () => {
    const r = await reconcile(api, { byId: { query: ID.mergedOld }, byBridge: { properties: [{ pid: 'wyscout', v: 'w1' }] }, gone: { query: ID.never } });
    expect(r.results.byId.result).toEqual([expect.objectContaining({ id: ID.arsenal, score: 1, match: true })]);
    expect(r.results.byId.result[0].features.at(-1)).toEqual({ id: 'register_id', value: 1 });
    expect(r.results.byBridge.result).toEqual([expect.objectContaining({ id: ID.arsenal, match: true })]);
    expect(r.results.gone.result).toEqual([]);
  });

  it('answers the same bytes to GET, the form OpenRefine posts and a JSON body, with the key as a header or in the query', async () => {
    const queries = { a: { query: 'Cole Palmer', type: 'player' }, b: { query: 'Arsenal', properties: [{ pid: 'fbref', v: '18bb7c10' }, { pid: 'country', v: 'England' }] } };
    const get = await reconcile(api, queries, 'get');
    const form = await reconcile(api, queries, 'form');
    const json = await reconcile(api, queries, 'json');
    const inQuery = await reconcile(anon, queries, 'form', served.keys.any);
    const getInQuery = await reconcile(anon, queries, 'get', served.keys.any);
    for (const r of [form, json, inQuery, getInQuery]) expect(r.text).toBe(get.text);
    expect(get.results.a.result[0]).toMatchObject({ id: ID.palmer, match: true });
    expect(credits(inQuery)).toBe(credits(json) - 2);
  });

  it('refuses queries without credentials with 401, as 0.2 asks, and a bad key in the query as a bad header', async () => {
    const queries = { q: { query: 'Arsenal' } };
    expect((await reconcile(anon, queries)).status).toBe(401);
    expect((await reconcile(anon, queries, 'form')).status).toBe(401);
    const bad = await reconcile(anon, queries, 'get', 'rk_00000000_' + 'x'.repeat(32));
    expect([bad.status, bad.json.error]).toEqual([401, 'invalid_key']);
    expect(bad.text).not.toContain('x'.repeat(32));
    // The key is read from the query on /reconcile only.
    expect((await anon(`/search?q=arsenal&key=${served.keys.any}`)).status).toBe(401);
  });

  it('answers a query that cannot be asked in place, free; refuses a batch that cannot be read whole, free', async () => {
    const first = await reconcile(api, { ok: { query: 'Arsenal' } });
    const before = credits(first);
    const r = await reconcile(api, {
      ok: { query: 'Arsenal' },
      type: { query: 'Arsenal', type: 'club' },
      provider: { query: 'Arsenal', properties: [{ pid: 'nosuch', v: '1' }] },
      empty: { query: '  ' },
      shape: { bad: true },
    });
    expect(r.status).toBe(200);
    expect(Object.fromEntries(Object.entries(r.results).map(([k, v]) => [k, v.error?.error ?? null]))).toEqual({
      ok: null, type: 'unknown_entity_type', provider: 'unknown_provider', empty: 'invalid_query', shape: 'invalid_query',
    });
    expect(credits(r)).toBe(before - 1);
    const refusals: [string, number, string][] = [
      ['not json', 400, 'invalid_body'],
      ['[]', 400, 'invalid_body'],
      ['{}', 400, 'empty_batch'],
      [JSON.stringify(Object.fromEntries(Array.from({ length: MAX_RECONCILE_QUERIES + 1 }, (_, i) => [`q${i}`, { query: 'Arsenal' }]))), 413, 'payload_too_large'],
    ];
    for (const [text, status, code] of refusals) {
      const refused = await api('/reconcile', { rawBody: text });
      expect([refused.status, refused.json.error], text.slice(0, 40)).toEqual([status, code]);
      expect(credits(refused)).toBe(before - 1);
    }
    const noField = await api('/reconcile', { rawBody: 'q=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([noField.status, noField.json.error]).toEqual([400, 'invalid_body']);
    const plain = await api('/reconcile', { rawBody: 'queries={}', headers: { 'content-type': 'text/plain' } });
    expect([plain.status, plain.json.error]).toEqual([400, 'invalid_body']);
  });

  it('charges one lookup per query and refuses a batch the allowance cannot pay for whole (402), charging nothing', async () => {
    const small = served.api('v1', served.keys.small);
    const two = await reconcile(small, { a: { query: 'Arsenal' }, b: { query: 'Chelsea' } });
    expect(credits(two)).toBe(1);
    const over = await reconcile(small, { a: { query: 'Arsenal' }, b: { query: 'Chelsea' } });
    expect([over.status, credits(over)]).toEqual([402, 1]);
  });

  it('answers a CORS preflight of /reconcile without a key, and every answer carries the CORS headers', async () => {
    const preflight = await fetchAny(`${served.rt.url}/api/v1/reconcile`, { method: 'OPTIONS', headers: { origin: 'https://openrefine.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST, HEAD');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    const refused = await reconcile(anon, { q: { query: 'x' } });
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('the key in the query is logged nowhere', () => {
  it('neither in the access log, nor in a problem record, nor in an answer', async () => {
    const served = await serveHandWorld({ any: { quota: 1000, rate: 1000 } });
    await served.rt.close();
    const logFile = join(mkdtempSync(join(tmpdir(), 'ir-reconcile-log-')), 'access.log');
    const problems: LogRecord[] = [];
    const rt = await openInProcess({ dist: served.world.dist, keys: served.keysFile, state: join(served.world.root, 'state'), logger: createLogger({ destination: logFile, sync: true }), problems: (r) => void problems.push(r) });
    try {
      const anon = client(`${rt.url}/api/v1`);
      const key = served.keys.any;
      const texts: string[] = [];
      for (const r of [
        await reconcile(anon, { q: { query: 'Arsenal' } }, 'get', key),
        await reconcile(anon, { q: { query: 'Arsenal' } }, 'form', key),
        await reconcile(anon, { q: { query: 'Arsenal', type: 'club' } }, 'json', key),
        await anon(`/reconcile?key=${key}&queries=not-json`),
        await anon(`/reconcile?key=${key}`),
        await anon(`/reconcile?key=${key.slice(0, -1)}x&queries=%7B%7D`),
      ]) texts.push(r.text, JSON.stringify([...(r.headers as unknown as Iterable<[string, string]>)]));
      const log = readFileSync(logFile, 'utf8');
      const lines = log.trim().split('\n').map((l) => JSON.parse(l) as { path: string; route: string; status: number });
      expect(lines.map((l) => [l.path, l.status])).toEqual([
        ['/api/v1/reconcile', 200], ['/api/v1/reconcile', 200], ['/api/v1/reconcile', 200], ['/api/v1/reconcile', 400], ['/api/v1/reconcile', 200], ['/api/v1/reconcile', 401],
      ]);
      const secret = key.slice(12);
      for (const text of [log, JSON.stringify(problems), ...texts]) expect(text).not.toContain(secret);
    } finally {
      await rt.close();
    }
  });
});

/** Rows of one table of a release folder, by column name. */
async function table(release: string, name: string): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  let header: string[] = [];
  await readCsv(join(release, 'csv', `${name}.csv.gz`), name, { header: (h) => void (header = h), row: (f) => void out.push(Object.fromEntries(header.map((h, i) => [h, f[i]]))) });
  return out;
}

describe('a generated release', () => {
  let rt: InProcessRuntime;
  let api: ReturnType<typeof client>;
  let release: string;
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-reconcile-gen-'));
    const { releases, dist } = copyCompiled(await compiledSamples(), root);
    const keys = join(root, 'keys.json');
    const { key } = await addKey({ file: keys, name: 'r', quota: 1_000_000, rate: 1_000_000 });
    rt = await openInProcess({ dist, keys, state: join(root, 'state') });
    api = client(`${rt.url}/api/v1`, key);
    release = join(releases, (await api('/reconcile')).headers.get('x-register-release-stamp')!);
  });
  afterAll(async () => {
    await rt?.close();
  });

  it("finds teams by their label and by each provider ID they alone hold, valid by the spec's schemas", async () => {
    const teams = (await table(release, 'entities')).filter((e) => e.entity_type === 'team' && e.status === 'active').slice(0, 40);
    const bridges = await table(release, 'bridges');
    const holders = new Map<string, Set<string>>();
    for (const b of bridges) {
      const k = `${b.provider}:${b.namespace}\u0000${b.external_id}`;
      (holders.get(k) ?? holders.set(k, new Set()).get(k)!).add(b.reep_id);
    }
    for (let i = 0; i < teams.length; i += 10) {
      const chunk = teams.slice(i, i + 10);
      const queries: Record<string, unknown> = {};
      chunk.forEach((t, j) => {
        const b = bridges.find((x) => x.reep_id === t.reep_id && holders.get(`${x.provider}:${x.namespace}\u0000${x.external_id}`)!.size === 1);
        queries[`n${j}`] = { query: t.label, type: 'team', limit: 10 };
        if (b) queries[`p${j}`] = { query: t.label, properties: [{ pid: b.namespace ? `${b.provider}:${b.namespace}` : b.provider, v: b.external_id }] };
      });
      const r = await reconcile(api, queries, 'form');
      expect(r.status).toBe(200);
      chunk.forEach((t, j) => {
        const named = r.results[`n${j}`].result;
        expect(named.map((c) => c.id), t.label).toContain(t.reep_id);
        matchIsSound(named);
        const byId = r.results[`p${j}`]?.result;
        if (byId) expect(byId[0]).toMatchObject({ id: t.reep_id, score: 1, match: true });
      });
    }
  });
});

describe('the real v0 data', () => {
  let rt: InProcessRuntime;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-reconcile-real-'));
    const compiled = await compiledRealData(resolve(process.cwd(), '../shared/real-data/v0-register'), '20260401T000000Z');
    const keys = join(root, 'keys.json');
    const { key } = await addKey({ file: keys, name: 'r', quota: 1_000_000, rate: 1_000_000 });
    rt = await openInProcess({ dist: compiled.dist, keys, state: join(root, 'state') });
    api = client(`${rt.url}/api/v1`, key);
  }, 300_000);
  afterAll(async () => {
    await rt?.close();
  });

  it('matches "Arsenal" with its Transfermarkt club ID, and answers OpenRefine\'s form', async () => {
    const r = await reconcile(api, {
      q0: { query: 'Arsenal', type: 'team', properties: [{ pid: 'transfermarkt:verein', v: '11' }] },
      q1: { query: 'Arsenal', type: 'team' },
      q2: { query: 'Juventus', type: 'team', properties: [{ pid: 'country', v: 'Italy' }] },
    }, 'form');
    expect(r.status).toBe(200);
    const [arsenal] = r.results.q0.result;
    expect(arsenal).toMatchObject({ name: expect.stringMatching(/Arsenal/), type: [{ id: 'team', name: 'Team' }], score: 1, match: true });
    const resolved = await api('/resolve/transfermarkt/11?namespace=verein');
    expect(arsenal.id).toBe(resolved.json.results[0].reep_id);
    expect(r.results.q1.result.map((c) => c.id)).toContain(arsenal.id);
    for (const q of Object.values(r.results)) matchIsSound(q.result);
    expect(r.results.q2.result.length).toBeGreaterThan(0);
  });
});
