// The pages at the server root over real HTTP: the explorer at `/`, the reference at `/docs`, their hashed assets
// cached forever and coded once per coding, nothing named from outside the server, HEAD like GET, and a clear 503
// when the pages were not built.
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_COMPRESS_BYTES, wholeBodiesCoded } from '../../runtime/compress.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { PAGE_CACHE, PAGE_TYPES } from '../../runtime/pages/page-routes.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { makeHandWorld, type World } from '../fixtures/hand-world.ts';
import { assertErrorBody, validatePageResponse } from '../helpers/openapi-validator.ts';

let world: World;
let rt: Runtime;

beforeAll(async () => {
  world = await makeHandWorld();
  // The pages need no key; the server needs a keys file to start.
  await addKey({ file: join(world.root, 'keys.json'), name: 'unused' });
  rt = await startRuntime({ dist: world.dist, keys: join(world.root, 'keys.json'), state: 'memory:', port: 0 });
});
afterAll(async () => {
  await rt?.close();
});

async function page(path: string, method = 'GET', base = rt.url) {
  const res = await fetch(base + path, { method });
  const text = await res.text();
  validatePageResponse({ method, path, status: res.status, headers: res.headers, body: text });
  return { status: res.status, headers: res.headers, text };
}

/** A GET over node:http with this Accept-Encoding, the body as sent (fetch would decode it). */
function wire(url: string, acceptEncoding: string): Promise<{ headers: Record<string, string | string[] | undefined>; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => (res.statusCode === 200 ? resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }) : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every `src` and `href` of an HTML page. */
const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);

describe('pages', () => {
  it('/ and /docs are HTML pages naming only hashed assets of this server, each cached forever', async () => {
    for (const path of ['/', '/docs']) {
      const r = await page(path);
      expect(r.headers.get('content-type')).toBe(PAGE_TYPES.html);
      expect(r.headers.get('cache-control')).toBe(PAGE_CACHE.page);
      const refs = references(r.text);
      // Same origin only: a path of this server, or the empty inline icon (so the browser asks for no favicon).
      for (const ref of refs) expect(ref, `${path} names ${ref}`).toMatch(/^(\/(?!\/)|data:,$)/);
      const assets = refs.filter((u) => u.startsWith('/assets/'));
      expect(assets.length, path).toBeGreaterThanOrEqual(2);
      for (const ref of assets) {
        expect(ref, `${path} names ${ref}`).toMatch(/^\/assets\/[a-z-]+-[A-Z0-9]{8}\.(js|css)$/);
        const asset = await page(ref);
        expect(asset.headers.get('cache-control')).toBe(PAGE_CACHE.asset);
        expect(asset.headers.get('content-type')).toBe(ref.endsWith('.js') ? PAGE_TYPES.js : PAGE_TYPES.css);
        expect(asset.text).not.toMatch(/https?:\/\/fonts\.googleapis|\/\/cdn\.|unpkg\.com|jsdelivr/);
      }
    }
  });

  it('HEAD answers the GET headers and length without the bytes', async () => {
    const get = await page('/');
    const head = await page('/', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
  });

  it('codes each asset and /openapi.json once per coding, however many ask (4 at once, then twice more): the same bytes, decoding to the identity bytes', async () => {
    // A runtime of its own, so nothing coded its assets before; the count is this process's (compress.ts).
    const own = await startRuntime({ dist: world.dist, keys: join(world.root, 'keys.json'), state: 'memory:', port: 0 });
    try {
      const html = await (await fetch(`${own.url}/docs`)).text();
      // The bundles worth coding (the docs entry script is under MIN_COMPRESS_BYTES, sent as it is).
      const assets = references(html).filter((u) => u.startsWith('/assets/'));
      const sizes = await Promise.all(assets.map(async (a) => (await wire(own.url + a, 'identity')).bytes.length));
      const coded = assets.filter((_, i) => sizes[i] >= MIN_COMPRESS_BYTES);
      expect(coded).toContainEqual(expect.stringMatching(/^\/assets\/swagger-ui-.*\.js$/));
      const paths = [...coded, '/api/v1/openapi.json'];
      for (const coding of ['br', 'gzip'] as const) {
        // /openapi.json's bytes are the process's, which other test files share (isolate: false), so it may have
        // been coded before: asked once first, it must not be coded again. This runtime's assets never were.
        await wire(`${own.url}/api/v1/openapi.json`, coding);
        const before = wholeBodiesCoded[coding];
        for (const path of paths) {
          const identity = await wire(own.url + path, 'identity');
          expect(identity.headers['content-encoding'], path).toBeUndefined();
          const first = await Promise.all([1, 2, 3, 4].map(() => wire(own.url + path, coding)));
          const later = [await wire(own.url + path, coding), await wire(own.url + path, coding)];
          for (const r of [...first, ...later]) {
            expect(r.headers['content-encoding'], path).toBe(coding);
            expect(r.bytes.equals(first[0].bytes), `${coding} ${path}: the same bytes each time`).toBe(true);
            expect(r.headers['content-length'], path).toBe(String(r.bytes.length));
          }
          const decoded = coding === 'br' ? brotliDecompressSync(first[0].bytes) : gunzipSync(first[0].bytes);
          expect(decoded.equals(identity.bytes), `${coding} ${path} decodes to the identity bytes`).toBe(true);
        }
        expect(wholeBodiesCoded[coding] - before, coding).toBe(coded.length);
      }
    } finally {
      await own.close();
    }
  });

  it('an asset name that is not a built one is 404 not_found; the API and the operational paths are untouched', async () => {
    for (const path of ['/assets/explorer-ZZZZZZZZ.js', '/assets/..%2f..%2fpackage.json']) {
      const r = await page(path);
      expect(r.status, path).toBe(404);
      assertErrorBody(r.text, 'not_found');
    }
    expect((await fetch(`${rt.url}/api/v1/`)).status).toBe(200);
    expect((await fetch(`${rt.url}/healthz`)).status).toBe(200);
  });

  it('without built pages, / is 503 pages_unavailable naming the missing file; serving with pages: null leaves / to the API 404', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ir-no-pages-'));
    const bare = await startRuntime({ dist: world.dist, keys: join(world.root, 'keys.json'), state: 'memory:', port: 0, pages: empty });
    const none = await startRuntime({ dist: world.dist, keys: join(world.root, 'keys.json'), state: 'memory:', port: 0, pages: null });
    try {
      const r = await page('/', 'GET', bare.url);
      expect(r.status).toBe(503);
      expect(assertErrorBody(r.text, 'pages_unavailable').message).toContain(join(empty, 'index.html'));
      const off = await fetch(`${none.url}/docs`);
      expect(off.status).toBe(404);
      assertErrorBody(await off.text(), 'not_found');
    } finally {
      await bare.close();
      await none.close();
    }
  });
});
