// The same router on two runtimes: Node (runtime/server.ts) and the Worker on workerd (edge/worker.ts, run by
// miniflare), over the same compiled dist and the same keys. Over 200 requests covering every route (with and without
// include, redirects, tombstones, 409s, errors, HEAD, CORS, ETag/304) give the same status, the same body bytes and
// the same headers but Date on both, and every answer is validated against the OpenAPI document. Then the edge's
// exact credits and rate under concurrency, one call to the key's Durable Object per request, and its answer to a
// damaged object in R2.
import { readdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Response as WorkerResponse } from 'miniflare';
import type { LocalEdge } from '../../edge/local-edge.ts';
import { pieceCacheKey } from '../../runtime/source/r2-source.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { ID, STAMPS, makeHandWorld, type World } from '../fixtures/hand-world.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { rawRequest, type RawResponse } from '../helpers/raw-http.ts';
import { ADMIN_TOKEN, comparable, CURSOR_SECRET, edgeOver, issueKeys, keysFileIn } from './edge-support.ts';

let world: World;
let edge: LocalEdge;
/** A second world and edge, started beside the first, whose R2 the integrity test damages before its first request. */
let damaged: World;
let bad: LocalEdge;
let node: Runtime;
let keys: Record<string, string>;

beforeAll(async () => {
  [world, damaged] = await Promise.all([makeHandWorld(), makeHandWorld()]);
  [edge, bad] = await Promise.all([edgeOver(world.dist), edgeOver(damaged.dist)]);
  const big = { quota: 1_000_000, rate: 1_000_000 };
  keys = await issueKeys(edge.url!, keysFileIn(world.root), {
    partner: { name: 'partner', ...big },
    opta: { name: 'opta', ...big, provider: 'opta' },
    fbref: { name: 'fbref', ...big, provider: 'fbref' },
    tiny: { name: 'tiny', quota: 3, rate: 1_000_000 },
    revoked: { name: 'revoked', ...big },
    credits: { name: 'credits', quota: 1000, rate: 1_000_000 },
    slow: { name: 'slow', quota: 1_000_000, rate: 5 },
    counted: { name: 'counted', quota: 1_000, rate: 1_000_000 },
  });
  node = await startRuntime({ dist: world.dist, keys: keysFileIn(world.root), state: 'memory:', port: 0, cursorSecret: CURSOR_SECRET, log: () => {} });
});

afterAll(async () => {
  await node?.close();
  await edge?.close();
  await bad?.close();
});

interface Probe {
  method?: string;
  path: string;
  key?: keyof typeof keys | null | string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Times in the body are the request's own (a notice's seen_at): compared with them blanked. */
  timed?: boolean;
}

function probes(): Probe[] {
  const out: Probe[] = [];
  const ids = Object.values(ID);
  const includes = ['', 'aliases', 'attributes', 'bridges', 'relationships', 'overlay', 'overlay,relationships,bridges,attributes,aliases', 'bridges,aliases', 'nope'];
  for (const ns of ['v1', 'next']) {
    for (const p of ['/', '/meta', '/providers', '/coverage', '/provider-notices/summary', '/key', '/openapi.json', '/changes/releases', '/changes/summary', '/changes', `/changes?since=${STAMPS[0]}`, '/changes?limit=2', '/changes?since=zzz']) out.push({ path: `/api/${ns}${p}` });
    for (const id of ids) for (const inc of includes) out.push({ path: `/api/${ns}/entities/${id}${inc ? `?include=${inc}` : ''}` });
    for (const p of ['/resolve/transfermarkt/11?namespace=verein&include=bridges', '/resolve/flashscore/palmer-cole%2Fh8agbDt7', '/resolve/transfermarkt/11', '/resolve/transfermarkt/500?namespace=verein', '/resolve/fbref/old1', '/resolve/transfermarkt/500?namespace=verein&type=player', '/resolve/nobody/1', '/resolve/transfermarkt/11?type=dog']) out.push({ path: `/api/${ns}${p}` });
    for (const q of ['arsenal', 'COLE%20palm', 'gunners', 'lodz&type=team', 'premier%20league&sort=bridges&limit=1', 'arsenal&type=player', 'arsenal&limit=21', 'arsenal&sort=popularity', '', 'a']) out.push({ path: `/api/${ns}/search?q=${q}` });
  }
  out.push({ method: 'POST', path: '/api/v1/batch', body: { requests: ids.map((id) => ({ type: 'entity', id })), include: 'bridges' } });
  out.push({ method: 'POST', path: '/api/v1/batch', body: { requests: [{ type: 'resolve', provider: 'transfermarkt', external_id: '500', namespace: 'verein' }, { type: 'entity', id: ID.tomb }, { type: 'entity', id: ID.mergedOld }] } });
  out.push({ method: 'POST', path: '/api/v1/batch', body: { requests: [] } });
  out.push({ method: 'POST', path: '/api/v1/batch', body: '{"requests":[' });
  out.push({ method: 'POST', path: '/api/v1/batch', key: 'tiny', body: { requests: [{ type: 'entity', id: ID.arsenal }, { type: 'entity', id: ID.chelsea }, { type: 'entity', id: ID.palmer }, { type: 'entity', id: ID.lodz }] } });
  out.push({ method: 'GET', path: '/api/v1/batch' });
  // POST /contributions/check: the same result bytes and ETag from workerd as from Node, for JSON and CSV bodies.
  const rows = [
    { provider: 'transfermarkt', external_id: '11', name: 'Arsenal', type: 'team' },
    { provider: 'fotmob', external_id: 'c-1', name: 'Arsenal FC', type: 'team', transfermarkt_id: '11', note: 'x' },
    { provider: 'fotmob', external_id: 'c-2', name: 'Chelsea', type: 'team' },
    { provider: 'fotmob', external_id: 'c-3', reep_id: ID.mergedOld },
    { provider: 'fotmob', external_id: 'c-4', reep_id: ID.tomb },
    { provider: 'nobody', external_id: '1' },
  ];
  out.push({ method: 'POST', path: '/api/v1/contributions/check', body: { rows, first_row: 3 } });
  out.push({ method: 'POST', path: '/api/next/contributions/check', body: { rows } });
  const csv = 'Provider,External_ID,Name,Type,Transfermarkt_ID\r\ntransfermarkt,500,,team,\r\n\r\nfotmob,c-5,"Palmer, Cole",player,\r\n';
  out.push({ method: 'POST', path: '/api/v1/contributions/check?first_row=7', body: csv, headers: { 'content-type': 'text/csv' } });
  out.push({ method: 'POST', path: '/api/v1/contributions/check', body: 'name\n1\n', headers: { 'content-type': 'text/csv' } });
  out.push({ method: 'POST', path: '/api/v1/contributions/check', body: 'provider\n1\n', headers: { 'content-type': 'text/plain' } });
  out.push({ path: '/api/v1/notices?limit=2', key: 'opta', timed: true });
  out.push({ path: '/api/v1/notices', key: 'fbref', timed: true });
  out.push({ method: 'POST', path: '/api/v1/notices/ack', key: 'opta', body: { finding_ids: ['opta-2'], actor: 'ops', note: 'checked' } });
  out.push({ method: 'POST', path: '/api/v1/notices/ack', key: 'fbref', body: { finding_ids: ['opta-1'] } });
  out.push({ method: 'POST', path: '/api/v1/notices/ack', key: 'fbref', body: { batch_id: 7 } });
  out.push({ path: '/api/v1/notices', key: 'opta', timed: true });
  out.push({ path: '/api/v1/notices' });
  out.push({ path: `/api/v1/matches?team=${ID.arsenal}&from=1900-01-01&limit=1` });
  out.push({ path: '/api/v1/matches?team=nope' });
  out.push({ path: '/api/v1/matches?cursor=forged.sig' });
  // Errors before and after auth, and the order of checks.
  for (const key of [null, 'rk_00000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'revoked', 'Basic abc', 'not a key']) out.push({ path: `/api/v1/entities/${ID.arsenal}`, key });
  // A bad key and a bad request: the key's 401 comes first, on both runtimes.
  for (const key of [null, 'rk_00000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
    out.push({ path: '/api/v1/entities/%E0%A4%A', key });
    out.push({ path: `/api/v1/entities/${ID.arsenal}?include=nope`, key });
    out.push({ method: 'POST', path: '/api/v1/batch', key, body: '{"requests":[' });
  }
  for (const p of ['/api/v2/meta', '/api/v1/nope', '/api/v1/entities/', `/api/v1/entities/${'x'.repeat(600)}`, '/api/v1/entities/%E0%A4%A', `/api/v1/search?q=${'a'.repeat(5000)}`]) out.push({ path: p });
  out.push({ method: 'DELETE', path: `/api/v1/entities/${ID.arsenal}` });
  // HEAD, CORS preflight, conditional requests.
  for (const p of ['/api/v1/', `/api/v1/entities/${ID.arsenal}?include=bridges`, '/api/v1/meta', `/api/v1/entities/${ID.tomb}`]) out.push({ method: 'HEAD', path: p });
  out.push({ method: 'OPTIONS', path: '/api/v1/batch', key: null, headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' } });
  out.push({ method: 'OPTIONS', path: '/api/v1/nope', key: null, headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' } });
  // The operational routes a load balancer asks, with and without a key (they take none and cost nothing).
  for (const path of ['/healthz', '/readyz', '/healthz?probe=1', '/healthz/', '/readyz/x']) for (const method of ['GET', 'HEAD']) for (const key of [null, undefined]) out.push({ method, path, key });
  // The pages, which the Worker carries in its bundle and Node reads from build/pages/: each asset as built, a
  // hashed name that was never built and a name that is no asset's; GET and HEAD.
  const assets = readdirSync(join(import.meta.dirname, '../../build/pages/assets')).map((f) => `/assets/${f}`);
  expect(assets.length).toBeGreaterThanOrEqual(4);
  for (const path of ['/', '/docs', ...assets, '/assets/explorer-AAAAAAAA.js', '/assets/nope.js']) for (const method of ['GET', 'HEAD']) out.push({ method, path, key: null });
  return out;
}

async function send(base: string, p: Probe, extra: Record<string, string> = {}): Promise<RawResponse> {
  const key = p.key === undefined ? keys.partner : p.key === null ? null : (keys[p.key] ?? p.key);
  const headers: Record<string, string> = { ...p.headers, ...extra };
  if (key) headers.authorization = key.startsWith('rk_') || key === 'not a key' ? `Bearer ${key}` : key;
  const body = p.body === undefined ? undefined : typeof p.body === 'string' ? p.body : JSON.stringify(p.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  // The operational routes are the document's too, at the server root (raw-http validates the API by its prefix).
  const validate = OPERATIONS.test(p.path) ? validateResponse : undefined;
  return rawRequest(base + p.path, { method: p.method ?? 'GET', headers, body, validate });
}

const OPERATIONS = /^\/(healthz|readyz|metrics)([/?]|$)/;

/** The calls the key's Durable Object has answered, through the admin route (no API key reaches it). */
async function callsOf(key: string): Promise<number> {
  // Not rawRequest: the admin route is no part of the public API document.
  const r = await fetch(`${edge.url}/_admin/keys/${key.slice(3, 11)}/stats`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { calls: number }).calls;
}

const ISO_TIME = /"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"/g;

describe('the edge answers as Node does', () => {
  it('gives the same status, body bytes and headers but Date for 200+ requests over every route', async () => {
    const list = probes();
    expect(list.length).toBeGreaterThanOrEqual(200);
    const etags: { probe: Probe; etag: string }[] = [];
    for (const p of list) {
      // Each runtime answers the probes in order; the two are asked at once.
      const [a, b] = await Promise.all([send(node.url, p), send(edge.url!, p)]).catch((e: Error) => {
        throw new Error(`${p.method ?? 'GET'} ${p.path}: ${e.message}`);
      });
      const what = `${p.method ?? 'GET'} ${p.path} (${String(p.key ?? '-')})`;
      expect(b.status, what).toBe(a.status);
      expect(comparable(b.headers), what).toEqual(comparable(a.headers));
      const [x, y] = p.timed ? [a.body.toString().replace(ISO_TIME, '"T"'), b.body.toString().replace(ISO_TIME, '"T"')] : [a.body.toString('latin1'), b.body.toString('latin1')];
      expect(y, what).toBe(x);
      if (a.headers.etag && a.status === 200 && (p.method ?? 'GET') === 'GET') etags.push({ probe: p, etag: a.headers.etag });
    }
    // An ETag either runtime issued is honoured by both (304, charged like the 200 on a costing route).
    expect(etags.length).toBeGreaterThan(20);
    for (const { probe, etag } of etags.slice(0, 30)) {
      const [a, b] = await Promise.all([send(node.url, probe, { 'if-none-match': etag }), send(edge.url!, probe, { 'if-none-match': etag })]);
      expect([a.status, b.status], probe.path).toEqual([304, 304]);
      expect(comparable(b.headers)).toEqual(comparable(a.headers));
    }
  });

  it('lets the platform compress: a client that accepts gzip gets the same body, decoded', async () => {
    const p = { path: `/api/v1/entities/${ID.arsenal}?include=overlay,relationships,bridges,attributes,aliases` };
    const a = await send(node.url, p, { 'accept-encoding': 'gzip' });
    const b = await send(edge.url!, p, { 'accept-encoding': 'gzip' });
    expect(b.status).toBe(a.status);
    expect(b.body.equals(a.body)).toBe(true);
  });
});

describe('the operational routes at the edge', () => {
  // /healthz and /readyz are compared byte for byte with the API (above). /metrics is the one route whose content
  // differs by design: Node's counters are its process's, while an isolate's would be one random slice of the
  // traffic, gone when the isolate is evicted, so the Worker answers an exposition without samples (one comment
  // saying so) and leaves counting to the platform's analytics. What it must hold is the rest of the answer: the
  // same status, content type and headers, a body a Prometheus scraper parses, no key needed, nothing charged.
  it('/metrics answers as Node does but for the body, which is an exposition without samples at the edge', async () => {
    for (const method of ['GET', 'HEAD']) {
      for (const key of [null, undefined]) {
        const p: Probe = { method, path: '/metrics', key };
        const [a, b] = [await send(node.url, p), await send(edge.url!, p)];
        expect([a.status, b.status]).toEqual([200, 200]);
        const { 'content-length': nodeLength, ...nodeRest } = comparable(a.headers);
        const { 'content-length': edgeLength, ...edgeRest } = comparable(b.headers);
        expect(edgeRest, `${method} /metrics`).toEqual(nodeRest);
        expect(edgeRest['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
        expect(edgeRest['cache-control']).toBe('no-store');
        expect(edgeRest['x-register-credits-remaining']).toBeUndefined();
        expect(Number(nodeLength)).toBeGreaterThan(0);
        if (method === 'HEAD') continue;
        expect(a.body.toString()).toMatch(/^# TYPE register_http_requests_total counter$/m);
        // Comment lines only: no sample a scraper could take for a count of the edge's traffic.
        const lines = b.body.toString().split('\n');
        expect(lines.pop()).toBe('');
        expect(lines.length).toBeGreaterThan(0);
        expect(lines.every((l) => l.startsWith('# ') && !/^# (HELP|TYPE) /.test(l))).toBe(true);
        expect(Number(edgeLength)).toBe(b.body.length);
      }
    }
  });
});

describe('exact state at the edge', () => {
  it('charges exactly 1,000 of 2,000 concurrent lookups on a 1,000-credit key, the rest 402', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    try {
      const before = await callsOf(keys.credits);
      const answers = await Promise.all(Array.from({ length: 2000 }, (_, i) => rawRequest(`${edge.url}/api/v1/entities/${Object.values(ID)[i % 5]}`, { headers: { authorization: `Bearer ${keys.credits}` }, agent })));
      const by = (s: number) => answers.filter((r) => r.status === s).length;
      expect([by(200), by(402)]).toEqual([1000, 1000]);
      // One call to the key's object each, answered or refused.
      expect((await callsOf(keys.credits)) - before).toBe(2000);
      const key = JSON.parse((await rawRequest(`${edge.url}/api/v1/key`, { headers: { authorization: `Bearer ${keys.credits}` } })).body.toString());
      expect(key.key.credits_remaining).toBe(0);
    } finally {
      agent.destroy();
    }
  });

  it('admits exactly 5 of 200 concurrent costing requests at a rate of 5/s', async () => {
    // The key's object is warmed first, so the 200 arrive within one second of each other on a quiet machine.
    const remaining = async () =>
      JSON.parse((await rawRequest(`${edge.url}/api/v1/key`, { headers: { authorization: `Bearer ${keys.slow}` } })).body.toString()).key.credits_remaining as number;
    const credits = await remaining();
    const agent = new Agent({ keepAlive: true, maxSockets: 200 });
    try {
      const before = await callsOf(keys.slow);
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 200 }, () => rawRequest(`${edge.url}/api/v1/entities/${ID.arsenal}`, { headers: { authorization: `Bearer ${keys.slow}` }, agent })));
      const seconds = (performance.now() - started) / 1000;
      const admitted = answers.filter((r) => r.status === 200).length;
      // On a busy machine the 200 may span more than a second: then each second of the span admits at most 5 more.
      if (seconds < 1) expect(admitted).toBe(5);
      else expect(admitted, `${seconds.toFixed(1)} s`).toBeLessThanOrEqual(5 * (Math.floor(seconds) + 1));
      expect(admitted).toBeGreaterThanOrEqual(5);
      expect(answers.filter((r) => r.status !== 200).every((r) => r.status === 429 && Number(r.headers['retry-after']) >= 1)).toBe(true);
      // A 429 is one call too: its credits header comes from the call that refused it.
      expect((await callsOf(keys.slow)) - before).toBe(200);
      // Exactly the admitted ones are charged.
      expect(await remaining()).toBe(credits - admitted);
      expect(answers.every((r) => Number(r.headers['x-register-credits-remaining']) >= credits - admitted)).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});

describe('one call to the key\'s Durable Object per request at the edge', () => {
  it('checks the key, the rate and the charge of a costing request in one call; a refused or free request is one call too', async () => {
    const key = keys.counted;
    const id = key.slice(3, 11);
    const forged = `rk_${id}_${'A'.repeat(32)}`;
    const calls = async (method: string, path: string, k: string, body?: string) => {
      const before = await callsOf(key);
      const headers: Record<string, string> = { authorization: `Bearer ${k}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const r = await rawRequest(edge.url + path, { method, headers, body });
      const credits = r.headers['x-register-credits-remaining'];
      return { status: r.status, error: r.status >= 400 ? (JSON.parse(r.body.toString()) as { error: string }).error : null, credits: credits === undefined ? null : Number(credits), calls: (await callsOf(key)) - before };
    };
    const entity = `/api/v1/entities/${ID.arsenal}`;
    const batch = JSON.stringify({ requests: [ID.arsenal, ID.chelsea, ID.palmer].map((e) => ({ type: 'entity', id: e })) });

    expect(await calls('GET', entity, key)).toEqual({ status: 200, error: null, credits: 999, calls: 1 });
    expect(await calls('HEAD', entity, key)).toEqual({ status: 200, error: null, credits: 998, calls: 1 });
    expect(await calls('GET', '/api/v1/search?q=arsenal', key)).toEqual({ status: 200, error: null, credits: 997, calls: 1 });
    expect(await calls('POST', '/api/v1/batch', key, batch)).toEqual({ status: 200, error: null, credits: 994, calls: 1 });
    // Refused by validation: one call, which checks the key and charges nothing.
    expect(await calls('GET', '/api/v1/entities/%E0%A4%A', key)).toEqual({ status: 400, error: 'invalid_parameter', credits: 994, calls: 1 });
    expect(await calls('POST', '/api/v1/batch', key, '{"requests":[')).toMatchObject({ status: 400, credits: 994, calls: 1 });
    // A wrong secret under this key's id is refused by its object, before a 400, in one call.
    expect(await calls('GET', entity, forged)).toEqual({ status: 401, error: 'invalid_key', credits: null, calls: 1 });
    expect(await calls('GET', '/api/v1/entities/%E0%A4%A', forged)).toEqual({ status: 401, error: 'invalid_key', credits: null, calls: 1 });
    // A free request checks the key in one call; /key then reads the credits it shows.
    expect(await calls('GET', '/api/v1/changes/releases', key)).toMatchObject({ status: 200, calls: 1 });
    expect(await calls('GET', '/api/v1/key', key)).toMatchObject({ status: 200, calls: 2 });

    // A revocation applies to the very next request, costing or not, and still comes before a 400.
    const revoked = await fetch(`${edge.url}/_admin/keys/${id}/revoke`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoked.status).toBe(200);
    expect(await calls('GET', entity, key)).toEqual({ status: 401, error: 'revoked_key', credits: null, calls: 1 });
    expect(await calls('GET', '/api/v1/entities/%E0%A4%A', key)).toEqual({ status: 401, error: 'revoked_key', credits: null, calls: 1 });
    expect(await calls('GET', '/api/v1/changes/releases', key)).toEqual({ status: 401, error: 'revoked_key', credits: null, calls: 1 });
    // The counter is the admin route's alone: an API key gets no further than elsewhere on it.
    expect((await fetch(`${edge.url}/_admin/keys/${id}/stats`, { headers: { authorization: `Bearer ${keys.partner}` } })).status).toBe(401);
  });
});

describe('integrity at the edge', () => {
  it('answers 503 artefact_corrupt for a damaged, truncated or missing object in R2, charging nothing; other answers unchanged', async () => {
    {
      const key = (await issueKeys(bad.url!, keysFileIn(damaged.root), { k: { name: 'k', quota: 1000, rate: 1_000_000 } })).k;
      const auth = { authorization: `Bearer ${key}` };
      const stamp = STAMPS[1];
      const bucket = (await bad.mf.getR2Bucket('DIST')) as unknown as {
        get(k: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
        put(k: string, v: Uint8Array): Promise<unknown>;
        delete(k: string): Promise<void>;
        list(o: { prefix: string }): Promise<{ objects: { key: string }[] }>;
      };
      const under = async (dir: string) => (await bucket.list({ prefix: `${stamp}/public/${dir}/` })).objects.map((o) => o.key);
      const packs = await under('shards');
      const search = await under('search');
      expect(packs.length).toBeGreaterThanOrEqual(2);
      expect(search.length).toBeGreaterThan(0);
      const bytesOf = async (k: string) => new Uint8Array(await (await bucket.get(k))!.arrayBuffer());
      // One byte flipped in the middle of one pack, another cut short, the search files gone.
      const flipped = await bytesOf(packs[0]);
      flipped[flipped.length >> 1] ^= 0xff;
      await bucket.put(packs[0], flipped);
      const whole = await bytesOf(packs[1]);
      await bucket.put(packs[1], whole.subarray(0, whole.length >> 1));
      for (const k of search) await bucket.delete(k);
      // The Cache API holds a damaged copy of the resolve directory, whose object in R2 is intact: the copy is read
      // instead of R2 and refused by the same check as R2's bytes.
      type Cached = { status: number; arrayBuffer(): Promise<ArrayBuffer> } | undefined;
      const cache = ((await bad.mf.getCaches()) as unknown as { default: { match(k: string): Promise<Cached>; put(k: string, r: WorkerResponse): Promise<void> } }).default;
      const resolveDir = (await under('resolve')).find((k) => /\/keys-dir-[0-9a-f]+\.bin$/.test(k))!;
      const copy = await bytesOf(resolveDir);
      copy[copy.length >> 1] ^= 0xff;
      await cache.put(pieceCacheKey('DIST', resolveDir, ''), new WorkerResponse(copy, { headers: { 'cache-control': 'public, max-age=86400' } }));

      const credits = async () => JSON.parse((await rawRequest(`${bad.url}/api/v1/key`, { headers: auth })).body.toString()).key.credits_remaining as number;
      const corrupt: string[] = [];
      for (const path of [...[ID.arsenal, ID.chelsea, ID.lodz, ID.palmer, ID.match, ID.league, ID.season].map((id) => `/api/v1/entities/${id}`), '/api/v1/search?q=arsenal', '/api/v1/resolve/transfermarkt/11?namespace=verein']) {
        const before = await credits();
        const r = await rawRequest(bad.url + path, { headers: auth });
        if (r.status === 503) {
          expect(JSON.parse(r.body.toString()).error, path).toBe('artefact_corrupt');
          expect(await credits(), path).toBe(before);
          corrupt.push(path);
        } else {
          const n = await rawRequest(node.url + path, { headers: { authorization: `Bearer ${keys.partner}` } });
          expect(r.status, path).toBe(n.status);
          expect(r.body.equals(n.body), path).toBe(true);
        }
      }
      // Both packs hold some of these entities, and search needs its files.
      expect(corrupt.length).toBeGreaterThanOrEqual(3);
      expect(corrupt).toContain('/api/v1/search?q=arsenal');
      expect(corrupt).toContain('/api/v1/resolve/transfermarkt/11?namespace=verein');
      // The refused copy is not read again: the next lookup reads R2, whose object is whole, and stores it over the copy.
      await rawRequest(`${bad.url}/api/v1/resolve/transfermarkt/11?namespace=verein`, { headers: auth });
      const restored = await cache.match(pieceCacheKey('DIST', resolveDir, ''));
      expect(restored?.status).toBe(200);
      expect(Buffer.from(await restored!.arrayBuffer()).equals(Buffer.from(await bytesOf(resolveDir)))).toBe(true);
      // What the Worker read from R2 and found whole is in the Cache API now, as R2 holds it: the entities' directory.
      const entityDir = (await under('entities')).find((k) => /\/index-dir-[0-9a-f]+\.bin$/.test(k))!;
      const cached = await cache.match(pieceCacheKey('DIST', entityDir, ''));
      expect(cached?.status).toBe(200);
      expect(Buffer.from(await cached!.arrayBuffer()).equals(Buffer.from(await bytesOf(entityDir)))).toBe(true);
      // What needs none of the damaged objects answers as before.
      for (const path of ['/api/v1/', '/api/v1/meta', '/api/v1/providers', '/api/v1/changes/releases']) {
        const [a, b] = [await rawRequest(node.url + path, { headers: { authorization: `Bearer ${keys.partner}` } }), await rawRequest(bad.url + path, { headers: auth })];
        expect(b.status, path).toBe(a.status);
        expect(b.body.equals(a.body), path).toBe(true);
      }
    }
  });
});
