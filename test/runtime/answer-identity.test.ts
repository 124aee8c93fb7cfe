// What the server answers, byte for byte: a fixed request set (every route of the API and of the server root, hits,
// misses and refusals, HEAD, preflights, revalidations, each identity-coded and coded) is put to the hand world, the
// sample releases and the real data, and every answer's status, headers (but Date) and wire bytes are compared with
// the recording kept beside this file. Moving code between the router, its steps and the adapter must change none
// of them; a change that means to alter an answer updates the recording (`npx vitest run -u` on this file) and the
// diff shows which answers it altered.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { compiledRealData, compiledSamples } from '../fixtures/compiled-fixtures.ts';
import { ID, makeHandWorld } from '../fixtures/hand-world.ts';
import { validatePageResponse, validateProtocolRefusal, validateResponse } from '../helpers/openapi-validator.ts';
import { rawRequest, type RawSample } from '../helpers/raw-http.ts';

/** Every clock reading of the runtime and of the keys: the credit, rate and expiry headers then never move. */
const NOW = Date.parse('2026-11-20T12:00:00Z');
const clock = { now: () => NOW };
const CURSOR_SECRET = 'answer-identity test secret, not a deployment one';
/** Headers that differ between two runs of the same requests. */
const SKIP = new Set(['date', 'keep-alive']);
/** Bodies that say how this process is doing rather than what the release says: status and headers only. */
const UNSTABLE_BODY = new Set(['/metrics']);

interface Served {
  rt: Runtime;
  partner: string;
  opta: string;
  /** The keys' IDs, random, so written as `<key id>` in the recording (GET /key names its key). */
  keyIds: string[];
}

const opened: Runtime[] = [];
afterAll(async () => {
  for (const rt of opened) await rt.close();
});

async function serve(dist: string, root: string): Promise<Served> {
  const keys = join(root, 'keys.json');
  const now = new Date(NOW);
  const p = await addKey({ file: keys, name: 'partner', quota: 100_000, rate: 100_000, now });
  const o = await addKey({ file: keys, name: 'opta', quota: 100_000, rate: 100_000, provider: 'opta', now });
  const rt = await startRuntime({ dist, keys, state: 'memory:', port: 0, clock, cursorSecret: CURSOR_SECRET, matchPageBytes: 4096 });
  opened.push(rt);
  return { rt, partner: p.key, opta: o.key, keyIds: [p.record.id, o.record.id] };
}

/** A release's first rows of a CSV file (plain or gzipped), by column name; none when the file is absent. */
function rows(release: string, name: string): Record<string, string>[] {
  let text: string;
  try {
    text = readFileSync(join(release, 'csv', `${name}.csv`), 'utf8');
  } catch {
    try {
      text = gunzipSync(readFileSync(join(release, 'csv', `${name}.csv.gz`))).toString('utf8');
    } catch {
      return [];
    }
  }
  const [head, ...lines] = text.split(/\r?\n/).filter(Boolean);
  const cols = head.split(',');
  // Only the leading, unquoted columns (IDs, types, statuses) are read.
  return lines.slice(0, 5000).map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}

/** The IDs a request set needs, taken from a release's own files. */
interface Ids {
  team: string;
  player: string;
  match: string;
  season: string;
  merged: string | null;
  bridge: { provider: string; namespace: string; id: string } | null;
}

function idsOf(release: string): Ids {
  const entities = rows(release, 'entities');
  const first = (type: string) => entities.find((e) => e.entity_type === type && e.status === 'active')?.reep_id ?? entities[0].reep_id;
  const merged = rows(release, 'redirects')[0]?.from_id ?? null;
  const b = rows(release, 'bridges').find((r) => /^[A-Za-z0-9]+$/.test(r.external_id));
  return {
    team: first('team'), player: first('player'), match: first('match'), season: first('season'), merged,
    bridge: b ? { provider: b.provider, namespace: b.namespace, id: b.external_id } : null,
  };
}

interface Req {
  method: string;
  path: string;
  key?: 'partner' | 'opta' | 'none' | 'bad';
  headers?: Record<string, string>;
  body?: string;
  /** The answer disagrees with the document today, so it is recorded without the check. */
  unchecked?: true;
}

/** The API requests for a world with these IDs, under namespace `ns`. */
function apiRequests(ns: string, ids: Ids): Req[] {
  const api = (path: string, rest: Omit<Req, 'path' | 'method'> & { method?: string } = {}): Req => ({ method: 'GET', ...rest, path: `/api/${ns}${path}` });
  const resolvePath = ids.bridge ? `/resolve/${ids.bridge.provider}/${ids.bridge.id}${ids.bridge.namespace ? `?namespace=${ids.bridge.namespace}` : ''}` : '/resolve/opta/1';
  const batch = JSON.stringify({ include: 'bridges', requests: [{ type: 'entity', id: ids.team }, { type: 'entity', id: 'rt00000000000bad' }, { type: 'entity', id: 'nope' }] });
  return [
    api('/'), api('/meta'), api('/providers'), api('/coverage'), api('/provider-notices/summary'), api('/key'), api('/openapi.json'),
    api(`/entities/${ids.team}?include=aliases,bridges,overlay`), api(`/entities/${ids.player}`), api(`/entities/${ids.match}?lang=en`),
    api(`/entities/${ids.team}/bridges`), api(`/entities/${ids.team}/overlay`), api(`/entities/${ids.season}/relationships`),
    ...(ids.merged ? [api(`/entities/${ids.merged}`)] : []),
    api('/entities/rt00000000000bad'), api('/entities/nope'), api('/entities/%ZZ'), api(`/entities/${ids.team}?include=nope`),
    api(resolvePath), api('/resolve/transfermarkt/999999999?namespace=verein'), api('/resolve/nobody/1'),
    api('/search?q=ar'), api('/search?q=a'), api('/search?q=united&type=team&limit=3'),
    api('/changes/releases'), api('/changes/summary'), api('/changes?limit=2'), api('/changes?limit=0'),
    api(`/matches?team=${ids.team}&from=1900-01-01&limit=3`), api('/matches'), api('/matches?team=x&bogus=1'),
    api('/notices?limit=2', { key: 'opta' }), api('/notices', { key: 'partner' }),
    api('/notices/ack', { method: 'POST', key: 'opta', headers: { 'content-type': 'application/json' }, body: '{"finding_ids":["does-not-exist"]}' }),
    api('/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: batch }),
    api('/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"requests":' }),
    api('/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"requests":[],"pad":"${'x'.repeat(300 * 1024)}"}` }),
    api('/meta', { key: 'none' }), api(`/entities/${ids.team}`, { key: 'none' }), api(`/entities/${ids.team}`, { key: 'bad' }),
    api('/meta', { method: 'POST' }), api('/meta', { method: 'DELETE' }), api('/nope'), api(`/entities/${ids.team}/nope`),
    api(`/search?q=${'a'.repeat(5000)}`), api(`/nope?q=${'a'.repeat(5000)}`),
    api(`/entities/${ids.team}`, { method: 'OPTIONS', key: 'none', headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' } }),
    api('/nope', { method: 'OPTIONS', key: 'none', headers: { 'access-control-request-method': 'GET' } }),
    api('/meta', { method: 'OPTIONS' }),
    api(`/entities/${ids.team}`, { method: 'HEAD' }), api('/openapi.json', { method: 'HEAD', key: 'none' }), api('/nope', { method: 'HEAD' }),
  ];
}

/** The paths at the server root, outside /api. */
function rootRequests(assets: string[]): Req[] {
  const get = (path: string, method = 'GET'): Req => ({ method, path, key: 'none' });
  return [
    get('/'), get('/docs'), ...assets.map((a) => get(a)), get('/assets/nope-AAAAAAAA.js'), get('/assets/..%2Fpackage.json'),
    get('/', 'HEAD'), get('/docs', 'HEAD'), ...assets.map((a) => get(a, 'HEAD')), get('/docs', 'POST'), get('/docs/'), get('/favicon.ico'),
    get('/healthz'), get('/readyz'), get('/metrics'), get('/healthz', 'HEAD'), { ...get('/readyz', 'POST'), unchecked: true }, { ...get('/metrics', 'DELETE'), unchecked: true }, get('/healthz?x=1'),
    get('/api'), get('/api/v2/meta'),
  ];
}

/** Requests Node cannot hand the app (or that it refuses before routing), written straight to a socket. */
const RAW: [string, string][] = [
  ['not HTTP', 'GARBAGE\r\n\r\n'],
  ['CONNECT', 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n'],
  ['no Host', 'GET /api/v1/meta HTTP/1.1\r\n\r\n'],
  ['bad Expect', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n'],
  ['101 header fields', `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 100 }, (_, i) => `X-F${i}: 1\r\n`).join('')}Connection: close\r\n\r\n`],
];

const PAGES = /^\/(docs)?$|^\/assets\/[^/]+$/;

/**
 * One request over node:http, the body kept as it came off the wire, and its decoded answer validated: the API and
 * the operational paths against the document's paths (an undocumented path may only be 404, another method only
 * 405), the pages' GET and HEAD against `x-pages`.
 */
function exchange(url: string, method: string, headers: Record<string, string>, body?: string, check = true): Promise<{ status: number; headers: Record<string, string>; wire: Buffer; decoded: Buffer }> {
  const validate = (sample: RawSample): void => {
    if (!check) return;
    const { pathname } = new URL(url);
    const isApi = pathname === '/api' || pathname.startsWith('/api/') || !PAGES.test(pathname) || (method !== 'GET' && method !== 'HEAD');
    if (isApi) validateResponse(sample);
    else validatePageResponse(sample);
  };
  return rawRequest(url, { method, headers, ...(body !== undefined ? { body } : {}), validate }).then((r) => ({ status: r.status, headers: r.headers, wire: r.wire, decoded: r.body }));
}

/** Everything a raw socket reads back until the server closes it, Date left out. */
function rawExchange(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', fail);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      // Each refusal is checked against components/responses/ProtocolRefusal before it is recorded.
      const [head, body = ''] = text.split('\r\n\r\n');
      const [status, ...fields] = head.split('\r\n');
      const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
      try {
        validateProtocolRefusal({ status: Number(status.split(' ')[1]), headers, body });
      } catch (e) {
        fail(e);
        return;
      }
      done(text.replace(/\r\nDate: [^\r]*/i, ''));
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}

/** One answer as a line of the recording: status, headers, and the wire bytes (short ones as text, else a digest). */
function line(req: Req, coding: string, r: { status: number; headers: Record<string, string>; wire: Buffer; decoded: Buffer }, keyIds: string[]): string {
  const unstable = UNSTABLE_BODY.has(req.path);
  const kept = Object.entries(r.headers).filter(([k]) => !SKIP.has(k) && !(unstable && k === 'content-length')).sort(([a], [b]) => (a < b ? -1 : 1));
  const text = r.decoded.toString('utf8');
  const masked = keyIds.reduce((t, id) => t.replaceAll(id, '<key id>'), text);
  // A body naming a key is recorded decoded, the key masked; every other body as its wire bytes.
  const bytes = masked !== text ? Buffer.from(masked) : r.wire;
  const digest = () => `${bytes.length} bytes${masked !== text ? ' decoded' : ''} sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}`;
  const body = unstable ? '(not recorded)' : bytes.length <= 240 && (masked !== text || !r.headers['content-encoding']) ? JSON.stringify(bytes.toString('utf8')) : digest();
  const { status } = r;
  const name = `${req.method} ${req.path.length > 120 ? `${req.path.slice(0, 100)}…(${req.path.length})` : req.path}${req.key && req.key !== 'partner' ? ` [${req.key} key]` : ''} [${coding}]`;
  return [`${name} → ${status}`, ...kept.map(([k, v]) => `  ${k}: ${v}`), `  body: ${body}`].join('\n');
}

async function record(s: Served, reqs: Req[]): Promise<string> {
  const out: string[] = [];
  for (const coding of ['identity', 'gzip', 'br']) {
    for (const req of reqs) {
      const headers: Record<string, string> = { 'accept-encoding': coding, ...req.headers };
      const key = req.key ?? 'partner';
      if (key === 'partner' || key === 'opta') headers.authorization = `Bearer ${s[key]}`;
      if (key === 'bad') headers.authorization = 'Bearer not-a-key';
      const r = await exchange(s.rt.url + req.path, req.method, headers, req.body, !req.unchecked);
      out.push(line(req, coding, r, s.keyIds));
    }
  }
  for (const [name, text] of RAW) out.push(`RAW ${name}\n${(await rawExchange(s.rt.url, text)).replace(/^/gm, '  ')}`);
  return out.join('\n') + '\n';
}

/** The hashed assets the explorer page names. */
async function assetsOf(s: Served): Promise<string[]> {
  const html = (await exchange(`${s.rt.url}/`, 'GET', { 'accept-encoding': 'identity' })).wire.toString('utf8');
  return [...new Set([...html.matchAll(/"(\/assets\/[^"]+)"/g)].map((m) => m[1]))].sort();
}

async function recordWorld(s: Served, ids: Ids, file: string): Promise<void> {
  const reqs = [...apiRequests('v1', ids), ...apiRequests('next', ids).slice(0, 8), ...rootRequests(await assetsOf(s))];
  await expect(await record(s, reqs)).toMatchFileSnapshot(file);
}

const HAND_IDS: Ids = { team: ID.arsenal, player: ID.palmer, match: ID.match, season: ID.season, merged: ID.mergedOld, bridge: { provider: 'transfermarkt', namespace: 'verein', id: '11' } };

describe('answers, byte for byte', () => {
  it('of the hand world', async () => {
    const world = await makeHandWorld();
    await recordWorld(await serve(world.dist, world.root), HAND_IDS, 'recorded/answers.hand-world.txt');
  });

  it('of the sample releases', async () => {
    const { releases, dist } = await compiledSamples();
    await recordWorld(await serve(dist, mkdtempSync(join(tmpdir(), 'ir-identity-samples-'))), idsOf(join(releases, '20261008T120000Z')), 'recorded/answers.samples.txt');
  });

  it('of the real data', async () => {
    const { releases, dist } = await compiledRealData(resolve(process.cwd(), '../shared/real-data/v0-register'), '20260401T000000Z');
    await recordWorld(await serve(dist, mkdtempSync(join(tmpdir(), 'ir-identity-real-'))), idsOf(join(releases, '20260401T000000Z')), 'recorded/answers.real-data.txt');
  });
});
