// One app: the API, the operational endpoints and the pages are routes of one table served by one router, the
// document a server serves is the document of that table, a 5xx's code reaches the metrics from the failure itself
// (not parsed back out of the body), and the Node adapter reports a failure it cannot explain instead of passing
// it off as a bad request.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../runtime/app.ts';
import { buildDocument } from '../../runtime/contract/document.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { openKeyStore } from '../../runtime/keys/key-store.ts';
import { listen } from '../../runtime/node-adapter.ts';
import type { LogRecord } from '../../runtime/problem-log.ts';
import { buildApp, openRuntime, type OpenedRuntime } from '../../runtime/server.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createMemoryStore } from '../../runtime/state/memory-store.ts';
import { makeHandWorld, type World } from '../fixtures/hand-world.ts';
import { validateProtocolRefusal, validateResponse } from '../helpers/openapi-validator.ts';
import { rawRequest } from '../helpers/raw-http.ts';

let world: World;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  world = await makeHandWorld();
  await addKey({ file: join(world.root, 'keys.json'), name: 'unused' });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** The whole runtime without a socket (openRuntime), as route specs use it. */
async function opened(pages?: null): Promise<OpenedRuntime> {
  const rt = await openRuntime({ dist: world.dist, keys: join(world.root, 'keys.json'), state: 'memory:', pages, log: () => {} });
  closers.push(() => rt.close());
  return rt;
}

function appOver(dist: string): ReturnType<typeof buildApp> {
  const source = createFsSource({ root: dist });
  const keyStore = openKeyStore({ file: join(world.root, 'keys.json') });
  const built = buildApp({ dist, source, store: createMemoryStore(), keyStore, log: () => {} });
  closers.push(() => source.close(), () => keyStore.close(), () => built.close());
  return built;
}

/** One request to the app in process, its answer validated against the document like any over HTTP. */
async function ask(app: App, path: string, method = 'GET') {
  const res = await app.fetch(new Request(`http://127.0.0.1${path}`, { method }));
  const body = await res.text();
  validateResponse({ method, path, status: res.status, headers: res.headers, body });
  return { status: res.status, body };
}

const ROOT_ROUTES = ['operations /healthz', 'operations /readyz', 'operations /metrics', 'pages /', 'pages /docs', 'pages /assets/{file}'];
const ADMIN_ROUTES = ['admin /_admin/keys', 'admin /_admin/keys', 'admin /_admin/keys/{id}/revoke', 'admin /_admin/keys/{id}/stats', 'admin /_admin/source'];

describe('one app', () => {
  it('holds the operational endpoints and the pages in its own route table, and serves the document of that table', async () => {
    const { app } = await opened();
    expect(app.routes.filter((r) => (r.scope ?? 'api') !== 'api').map((r) => `${r.scope} ${r.path}`)).toEqual([...ROOT_ROUTES, ...ADMIN_ROUTES]);
    const served = JSON.parse((await ask(app, '/api/v1/openapi.json')).body);
    expect(served).toEqual(buildDocument(app.routes));
    // The admin routes are the operator's: in the table, never in the published document.
    expect(JSON.stringify(served)).not.toContain('_admin');
    expect(Object.keys(served['x-pages'])).toEqual(['/', '/docs', '/assets/{file}']);
    // The same router answers them: no wrapper in front of it.
    expect((await ask(app, '/healthz')).body).toBe('{"status":"ok"}');
    expect((await app.answer(new Request('http://127.0.0.1/readyz'))).route).toBe('/readyz');
  });

  it('without pages, has no page routes and documents none', async () => {
    const { app } = await opened(null);
    expect(app.routes.some((r) => r.scope === 'pages')).toBe(false);
    expect(JSON.parse((await ask(app, '/api/v1/openapi.json')).body)['x-pages']).toEqual({});
    expect((await ask(app, '/docs')).status).toBe(404);
  });

  it("counts a 5xx under the failure's own code", async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ir-one-app-'));
    const { app, metrics } = appOver(empty);
    expect((await ask(app, '/readyz')).status).toBe(503);
    expect(await metrics.registry.metrics()).toMatch(/register_server_errors_total\{code="not_ready"\} 1/);
  });

  it('has the Node adapter report a failure it cannot explain, and answer it with an Error body', async () => {
    const log: LogRecord[] = [];
    const broken: App = { routes: [], fetch: () => Promise.reject(new Error('unused')), answer: () => Promise.reject(new Error('the app fell over')) };
    const server = await listen(broken, { port: 0, log: (r) => log.push(r) });
    closers.push(() => server.close());
    const r = await rawRequest(`${server.url}/healthz`, {}); // /healthz: raw-http validates no page or API here
    validateProtocolRefusal({ status: r.status, headers: r.headers, body: r.body });
    expect(log.map((l) => l.event)).toEqual(['internal_error']);
    expect(log[0].line).toContain('the app fell over');
  });
});
