// HEAD is a GET without a body, on every GET path: the same status and headers (Content-Length the GET body's),
// charged and rate-limited like the GET on a costing path (so it is no free existence oracle), and a HEAD of
// /notices marks nothing seen. With Accept-Encoding, the coded GET's headers: the pages, their assets and
// /healthz too.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { client } from '../helpers/api-client.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { ID, makeHandWorld, type World } from '../fixtures/hand-world.ts';

let world: World;
let rt: Runtime;
let partner: string;
let opta: string;
let slow: string;

beforeAll(async () => {
  world = await makeHandWorld();
  const file = join(world.root, 'keys.json');
  partner = (await addKey({ file, name: 'partner', quota: 1000, rate: 1000 })).key;
  opta = (await addKey({ file, name: 'opta', quota: 1000, rate: 1000, provider: 'opta' })).key;
  slow = (await addKey({ file, name: 'slow', quota: 1000, rate: 1 })).key;
  rt = await startRuntime({ dist: world.dist, keys: file, state: join(world.root, 'state'), port: 0 });
});
afterAll(async () => {
  await rt?.close();
});

/** Every GET path of the API, with a hit, a miss and a refusal among them. */
const PATHS = [
  '/', '/meta', '/providers', '/coverage', '/provider-notices/summary', '/key', '/openapi.json',
  `/entities/${ID.arsenal}?include=aliases,bridges,overlay`, `/entities/${ID.mergedOld}`, `/entities/${ID.tomb}`, `/entities/${ID.never}`, '/entities/nope',
  `/entities/${ID.arsenal}/bridges`, `/entities/${ID.arsenal}/overlay`, `/entities/${ID.season}/relationships`,
  '/resolve/transfermarkt/11?namespace=verein', '/resolve/transfermarkt/500?namespace=verein', '/resolve/nobody/1',
  '/search?q=arsenal', '/search?q=ab', '/changes/releases', '/changes/summary', '/changes?limit=2', '/nope',
];
// The credits and the live rate-limit field change with every charged request.
const SKIP_HEADERS = new Set(['date', 'x-register-credits-remaining', 'ratelimit', 'keep-alive', 'connection']);
const headersOf = (h: Headers) => {
  const out: [string, string][] = [];
  h.forEach((v, k) => void (SKIP_HEADERS.has(k) || out.push([k, v])));
  return out.sort();
};
const credits = (h: Headers) => Number(h.get('x-register-credits-remaining'));
const sortedHeaders = (h: Record<string, string>) => Object.entries(h).filter(([k]) => !SKIP_HEADERS.has(k)).sort();

/** One request over node:http, the body kept as it came off the wire; raw-http validates it by family. */
const wire = async (url: string, method: string, headers: Record<string, string>) => {
  const r = await rawRequest(url, { method, headers });
  return { status: r.status, headers: r.headers, bytes: r.wire };
};

describe('HEAD', () => {
  it('answers every GET path with the GET status and headers, Content-Length the GET body length, and no body', async () => {
    const call = client(rt.url + '/api/v1', partner);
    // Identity coding: a HEAD answer is never coded, so its length is compared with the uncoded GET's.
    const headers = { 'accept-encoding': 'identity' };
    for (const path of PATHS) {
      const get = await call(path, { headers });
      const head = await call(path, { method: 'HEAD', headers }); // validated against the document as a HEAD: no body, a length
      expect(head.status, path).toBe(get.status);
      expect(head.text, path).toBe('');
      expect(headersOf(head.headers), path).toEqual(headersOf(get.headers));
      expect(head.headers.get('content-length'), path).toBe(String(Buffer.byteLength(get.text)));
    }
  });

  it('with Accept-Encoding br or gzip, carries exactly the coded GET headers (coding, coded ETag, coded length) on every path family', async () => {
    const html = (await wire(`${rt.url}/`, 'GET', {})).bytes.toString('utf8');
    const assets = [...html.matchAll(/"(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    const urls = [...PATHS.map((p) => `${rt.url}/api/v1${p}`), `${rt.url}/`, `${rt.url}/docs`, ...assets.map((a) => rt.url + a), `${rt.url}/healthz`];
    const coded = new Set<string>();
    for (const coding of ['br', 'gzip']) {
      for (const url of urls) {
        const headers = { authorization: `Bearer ${partner}`, 'accept-encoding': coding };
        const get = await wire(url, 'GET', headers);
        const head = await wire(url, 'HEAD', headers);
        expect(head.status, url).toBe(get.status);
        expect(head.bytes.length, url).toBe(0);
        expect(sortedHeaders(head.headers), `${coding} ${url}`).toEqual(sortedHeaders(get.headers));
        if (get.headers['content-encoding'] === coding) coded.add(new URL(url).pathname);
      }
    }
    // Not vacuous: each family had answers large enough to be coded.
    for (const path of ['/api/v1/openapi.json', `/api/v1/entities/${ID.arsenal}`, ...assets]) expect(coded, path).toContain(path);
  });

  it('costs what the GET costs, and shows the credits after it', async () => {
    const call = client(rt.url + '/api/v1', partner);
    for (const path of [`/entities/${ID.arsenal}`, `/entities/${ID.never}`, `/entities/${ID.tomb}`, '/resolve/fbref/old1', '/search?q=chelsea', '/meta']) {
      const before = (await call('/key')).json.key.credits_remaining;
      const get = await call(path);
      const mid = (await call('/key')).json.key.credits_remaining;
      const head = await call(path, { method: 'HEAD' });
      const after = (await call('/key')).json.key.credits_remaining;
      expect(before - mid, path).toBe(mid - after);
      if (get.headers.has('x-register-credits-remaining')) expect(credits(head.headers), path).toBe(after);
    }
  });

  it('is rate-limited like the GET', async () => {
    const call = client(rt.url + '/api/v1', slow);
    const first = await call(`/entities/${ID.palmer}`, { method: 'HEAD' });
    const second = await call(`/entities/${ID.palmer}`, { method: 'HEAD' });
    expect([first.status, second.status]).toEqual([200, 429]);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('of /notices marks nothing seen', async () => {
    const call = client(rt.url + '/api/v1', opta);
    const head = await call('/notices?limit=2', { method: 'HEAD' });
    expect(head.status).toBe(200);
    const first = await call('/notices?limit=2');
    expect(first.json.findings.map((f: { seen: boolean }) => f.seen)).toEqual([false, false]);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));
    expect((await call('/notices?limit=2')).json.findings.map((f: { seen: boolean }) => f.seen)).toEqual([true, true]);
  });
});
