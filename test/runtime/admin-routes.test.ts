// The admin routes on Node: routes of the one table over the keys the server serves, opened by the admin token
// (REGISTER_ADMIN_TOKEN for `register serve`), closed (503 admin_disabled) without one. `register keys … --edge URL`
// manages a Node server's keys as it does an edge deployment's: a key added works at the key store's next check, a
// key revoked is refused at it. Their body is checked by its TypeBox schema, and none of them is in the document.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, listKeys, revokeKey } from '../../runtime/keys/key-file.ts';
import { edgeKeyRepository } from '../../runtime/keys/edge-key-repository.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { makeHandWorld, ID, type World } from '../fixtures/hand-world.ts';

const TOKEN = 'the-admin-token-of-the-admin-routes-test';
let world: World;
let keys: string;
const running: Runtime[] = [];

beforeAll(async () => {
  world = await makeHandWorld();
  keys = join(world.root, 'keys.json');
  await addKey({ file: keys, name: 'first' });
});
afterAll(async () => {
  for (const rt of running) await rt.close();
});

async function serve(adminToken: string | null): Promise<Runtime> {
  const rt = await startRuntime({ dist: world.dist, keys, state: 'memory:', port: 0, adminToken, log: () => {} });
  running.push(rt);
  return rt;
}

const admin = (rt: Runtime, path: string, init: RequestInit = {}, token = TOKEN) =>
  fetch(`${rt.url}/_admin/${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

/** Polls until the key answers `want`: the key store serves a change at its next check of the keys file (every 250 ms). */
async function checked(rt: Runtime, key: string, want: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await fetch(`${rt.url}/api/v1/key`, { headers: { authorization: `Bearer ${key}` } });
    if (r.status === want) return;
    if (Date.now() > deadline) throw new Error(`the key still answers ${r.status}, not ${want}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the admin routes on Node', () => {
  it('answer 503 admin_disabled without a token, naming how to set one', async () => {
    const rt = await serve(null);
    const r = await admin(rt, 'keys');
    expect(r.status).toBe(503);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const body = (await r.json()) as { error: string; message: string };
    expect(body.error).toBe('admin_disabled');
    expect(body.message).toContain('REGISTER_ADMIN_TOKEN');
    // Not a route of the published document.
    const doc = await (await fetch(`${rt.url}/api/v1/openapi.json`)).text();
    expect(doc).not.toContain('_admin');
  });

  it('refuse to start with a token shorter than 32 characters, which would leave them closed unsaid', async () => {
    await expect(startRuntime({ dist: world.dist, keys, state: 'memory:', port: 0, adminToken: 'short', log: () => {} })).rejects.toThrow(/REGISTER_ADMIN_TOKEN must be at least 32 characters/);
  });

  it('refuse any other token, and an API key, with 401 before reading the body', async () => {
    const rt = await serve(TOKEN);
    const { key } = await addKey({ file: keys, name: 'not an admin' });
    for (const token of ['x'.repeat(40), key]) {
      const r = await admin(rt, 'keys', { method: 'POST', body: '{not json' }, token);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: string }).error).toBe('invalid_token');
      expect(r.headers.get('www-authenticate')).toBe('Bearer realm="identity-register-admin"');
    }
  });

  it('manage the served keys as `register keys … --edge URL` does: added keys work, revoked ones are refused', async () => {
    const rt = await serve(TOKEN);
    const repository = edgeKeyRepository(rt.url, TOKEN);
    const { record, key } = await addKey({ repository, name: 'added over the admin routes', quota: 5 });
    expect((await listKeys({ file: keys })).map((k) => k.id)).toContain(record.id);
    expect((await listKeys({ repository })).map((k) => k.id)).toContain(record.id);
    await checked(rt, key, 200);
    const lookup = await fetch(`${rt.url}/api/v1/entities/${ID.palmer}`, { headers: { authorization: `Bearer ${key}` } });
    expect(lookup.status).toBe(200);
    expect(lookup.headers.get('x-register-credits-remaining')).toBe('4');
    await revokeKey(record.id, { repository });
    await checked(rt, key, 401);
  });

  it('check a new key by its schema (400 invalid_body), refuse a taken id (409), and know no unknown key (404)', async () => {
    const rt = await serve(TOKEN);
    const entry = { id: 'abcdef01', name: 'n', hash: 'a'.repeat(64), plan: { quota: 1, rate: 1 }, meta: {}, expires_at: null, revoked: false, created_at: new Date().toISOString() };
    for (const bad of [{ ...entry, hash: 'short' }, { ...entry, revoked: true }, { ...entry, plan: { quota: 1.5, rate: 1 } }, { ...entry, id: undefined }]) {
      const r = await admin(rt, 'keys', { method: 'POST', body: JSON.stringify(bad) });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(((await r.json()) as { error: string }).error).toBe('invalid_body');
    }
    expect((await admin(rt, 'keys', { method: 'POST', body: JSON.stringify(entry) })).status).toBe(201);
    expect((await admin(rt, 'keys', { method: 'POST', body: JSON.stringify(entry) })).status).toBe(409);
    expect((await admin(rt, 'keys', { method: 'POST', body: JSON.stringify({ ...entry, name: 'x'.repeat(17 * 1024) }) })).status).toBe(413);
    expect((await admin(rt, 'keys/0000ffff/revoke', { method: 'POST' })).status).toBe(404);
    expect((await admin(rt, 'keys/not-a-key/revoke', { method: 'POST' })).status).toBe(404);
    // Call counts are the edge's key objects'; Node keeps none.
    expect((await admin(rt, 'keys/abcdef01/stats')).status).toBe(404);
    expect((await admin(rt, 'keys', { method: 'PUT' })).status).toBe(405);
    const source = await admin(rt, 'source');
    expect(source.status).toBe(200);
    expect(await source.json()).toMatchObject({});
  });
});
