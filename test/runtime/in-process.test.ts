// Route specs call openRuntime's app in process (test/helpers/in-process.ts) and trust that it is what a server
// serves: here the same requests, on the same world, in process and over a socket to startRuntime, give the same
// status, headers and bytes, for the API, the pages and the operational paths alike. The adapter's own headers on the
// wire (Vary, Content-Length, Connection) are the one difference, and they are named here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { ID } from '../fixtures/hand-world.ts';
import { serveHandWorld, type ServedWorld } from '../fixtures/served-world.ts';
import { fetchAny } from '../helpers/in-process.ts';
import { validatePageResponse, validateResponse } from '../helpers/openapi-validator.ts';
import { rawRequest } from '../helpers/raw-http.ts';

/** Headers only the Node adapter writes. */
const ADAPTER_HEADERS = ['vary', 'content-length', 'connection', 'keep-alive', 'date', 'transfer-encoding'];

/** One instant for both runtimes, so their rate-limit headers (seconds to the reset) agree. */
const clock = { now: () => Date.parse('2026-11-10T12:00:00Z') };
let served: ServedWorld<'partner'>;
let wire: Runtime;

beforeAll(async () => {
  served = await serveHandWorld({ partner: { quota: 1000, rate: 1000 } }, { state: 'memory:', clock });
  wire = await startRuntime({ dist: served.world.dist, keys: served.keysFile, state: 'memory:', port: 0, clock });
});
afterAll(async () => {
  await served?.rt.close();
  await wire?.close();
});

const withoutAdapter = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !ADAPTER_HEADERS.includes(k)).sort());

describe('the app in process', () => {
  it('answers what the server answers over a socket: the API, the pages and the operations, GET and HEAD', async () => {
    const auth = { authorization: `Bearer ${served.keys.partner}` };
    const paths = ['/api/v1/', '/api/v1/meta', `/api/v1/entities/${ID.arsenal}?include=bridges`, `/api/next/entities/${ID.never}`, '/api/v1/nope', '/', '/docs', '/healthz'];
    for (const path of paths)
      for (const method of ['GET', 'HEAD']) {
        const where = `${method} ${path}`;
        const res = await fetchAny(served.rt.url + path, { method, headers: auth });
        const body = Buffer.from(await res.arrayBuffer());
        const headers: Record<string, string> = {};
        res.headers.forEach((v, k) => (headers[k] = v));
        const sample = { method, path, status: res.status, headers, body };
        if (path.startsWith('/api/')) validateResponse(sample);
        else if (path !== '/healthz') validatePageResponse(sample);
        const got = await rawRequest(wire.url + path, { method, headers: { ...auth, 'accept-encoding': 'identity' } });
        expect(res.status, where).toBe(got.status);
        expect(body.equals(got.body), where).toBe(true);
        expect(withoutAdapter(headers), where).toEqual(withoutAdapter(got.headers));
      }
  });

  it('is closed with its runtime: its origin no longer reaches an app', async () => {
    const own = await serveHandWorld({ holder: {} }, { state: 'memory:', pages: null });
    expect((await fetchAny(`${own.rt.url}/healthz`)).status).toBe(200);
    await own.rt.close();
    await expect(fetchAny(`${own.rt.url}/healthz`)).rejects.toThrow();
  });
});
