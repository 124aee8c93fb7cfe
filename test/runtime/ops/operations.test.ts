// What an operator watches, over HTTP against a real server: /healthz, /readyz (a release loaded and the state store
// answering, each named when missing), /metrics in the Prometheus format, and one access-log line per request with
// its fields and no key material.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../../runtime/keys/key-file.ts';
import { createLogger } from '../../../runtime/ops/logger.ts';
import { startRuntime, type Runtime } from '../../../runtime/server.ts';
import { client } from '../../helpers/api-client.ts';
import { startRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { ID, makeHandWorld, type World } from '../../fixtures/hand-world.ts';

let world: World;
let keys: string;
let key: string;
let rt: Runtime;
let logFile: string;
const temps: string[] = [];

beforeAll(async () => {
  world = await makeHandWorld();
  keys = join(world.root, 'keys.json');
  key = (await addKey({ file: keys, name: 'ops', quota: 100, rate: 1000 })).key;
  const dir = mkdtempSync(join(tmpdir(), 'ir-ops-'));
  temps.push(dir);
  logFile = join(dir, 'access.log');
  rt = await startRuntime({ dist: world.dist, keys, state: join(dir, 'state'), port: 0, logger: createLogger({ destination: logFile, sync: true }) });
});
afterAll(async () => {
  await rt?.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const lines = (): Record<string, unknown>[] =>
  readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('operational endpoints', () => {
  it('/healthz answers 200 without a key', async () => {
    const res = await client(rt.url)('/healthz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 with the served stamp once a release is loaded and the state store answers', async () => {
    const res = await client(rt.url)('/readyz');
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('ready');
    expect(res.json.release).toBe(res.headers.get('x-register-release-stamp'));
  });

  it('/readyz answers 503 not_ready while no release is loaded', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ir-ops-empty-'));
    temps.push(empty);
    const bare = await startRuntime({ dist: empty, keys, state: 'memory:', port: 0 });
    try {
      const res = await client(bare.url)('/readyz');
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({ error: 'not_ready', message: 'No compiled release is loaded yet.' });
      expect((await client(bare.url)('/healthz')).status).toBe(200);
    } finally {
      await bare.close();
    }
  });

  it('/readyz answers 503 not_ready while Redis is down, and 200 once it is back', async () => {
    const redis: RedisServer = await startRedis();
    const onRedis = await startRuntime({ dist: world.dist, keys, state: redis.url, port: 0, log: () => {} });
    try {
      expect((await client(onRedis.url)('/readyz')).status).toBe(200);
      await redis.stop();
      const down = await client(onRedis.url)('/readyz');
      expect(down.status).toBe(503);
      expect(down.json.message).toBe('The state store does not answer.');
      await redis.start();
      const end = Date.now() + 10_000;
      let status = 0;
      while (status !== 200 && Date.now() < end) {
        status = (await client(onRedis.url)('/readyz')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(200);
    } finally {
      await onRedis.close();
      await redis.dispose();
    }
  });

  it('/metrics counts requests by route and status, latency, cache hits and credits charged, in the Prometheus format', async () => {
    const api = client(`${rt.url}/api/v1`, key);
    for (let i = 0; i < 3; i++) expect((await api(`/entities/${ID.arsenal}`)).status).toBe(200);
    expect((await api(`/entities/${ID.never}`)).status).toBe(404);
    const res = await client(rt.url)('/metrics');
    expect(res.status).toBe(200);
    const text = res.text;
    expect(text).toMatch(/^register_http_requests_total\{route="\/entities\/\{reep_id\}",status="200"\} 3$/m);
    expect(text).toMatch(/^register_http_requests_total\{route="\/entities\/\{reep_id\}",status="404"\} 1$/m);
    expect(text).toMatch(/^register_http_request_duration_seconds_count\{route="\/entities\/\{reep_id\}"\} 4$/m);
    expect(text).toMatch(/^register_credits_charged_total 4$/m);
    // The second and third lookups of the same body were answered from the kept bodies.
    expect(Number(/^register_cache_hits_total\{cache="body"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^# TYPE register_state_errors_total counter$/m);
    expect(text).toMatch(/^# TYPE register_server_errors_total counter$/m);
  });
});

describe('access log', () => {
  it('writes one JSON line per request: time, method, path without the query, status, duration, bytes, key ID, request ID; never key material', async () => {
    const api = client(`${rt.url}/api/v1`, key);
    const before = lines().length;
    const res = await api(`/search?q=${encodeURIComponent('arsenal secret-looking-query')}`, { headers: { 'x-request-id': 'lb-1234' } });
    expect(res.status).toBe(200);
    expect((await client(`${rt.url}/api/v1`, 'rk_00000000_' + 'x'.repeat(32))('/key')).status).toBe(401);
    const added = lines().slice(before);
    expect(added).toHaveLength(2);
    const [search, refused] = added;
    expect(search).toMatchObject({ level: 'info', method: 'GET', path: '/api/v1/search', route: '/search', status: 200, key_id: key.slice(3, 11), request_id: 'lb-1234' });
    expect(Date.parse(search.time as string)).not.toBeNaN();
    expect(search.duration_ms).toBeGreaterThanOrEqual(0);
    expect(search.bytes).toBe(Buffer.byteLength(res.text));
    expect(refused).toMatchObject({ status: 401, key_id: null, path: '/api/v1/key' });
    expect(refused.request_id).toMatch(/^[0-9a-f-]{36}$/);
    const text = readFileSync(logFile, 'utf8');
    expect(text).not.toContain(key.slice(12)); // the secret
    expect(text).not.toContain('x'.repeat(32));
    expect(text).not.toContain('secret-looking-query');
    expect(text).not.toMatch(/authorization/i);
  });
});
