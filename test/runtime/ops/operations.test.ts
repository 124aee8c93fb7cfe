// What an operator watches, over HTTP against a real server: /healthz, /readyz (a release loaded and the state store
// taking writes, each named when missing), /metrics in the Prometheus format, one access-log line per request with
// its fields and no key material; and what the state store's troubles look like from outside: a Redis that goes
// away (three times), changes its persistence or eviction settings at run time, and a SQLite database whose write
// lock another process holds. Each outage writes one line when it starts and one when it ends.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../runtime/interfaces.ts';
import { addKey } from '../../../runtime/keys/key-file.ts';
import { keysCommand } from '../../../runtime/keys/keys-cli.ts';
import { createLogger } from '../../../runtime/ops/logger.ts';
import { startRuntime, type Runtime } from '../../../runtime/server.ts';
import { openSqliteStore } from '../../../runtime/state/sqlite-store.ts';
import { client } from '../../helpers/api-client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { ID, makeHandWorld, type World } from '../../fixtures/hand-world.ts';

let world: World;
let keys: string;
let key: string;
let rt: Runtime;
let logFile: string;
let stateDir: string;
/** The plain lines (state store outages) of `rt`. */
const rtLines: string[] = [];
const temps: string[] = [];

beforeAll(async () => {
  world = await makeHandWorld();
  keys = join(world.root, 'keys.json');
  key = (await addKey({ file: keys, name: 'ops', quota: 100, rate: 1000 })).key;
  const dir = mkdtempSync(join(tmpdir(), 'ir-ops-'));
  temps.push(dir);
  logFile = join(dir, 'access.log');
  stateDir = join(dir, 'state');
  rt = await startRuntime({ dist: world.dist, keys, state: stateDir, port: 0, logger: createLogger({ destination: logFile, sync: true }), log: (l) => rtLines.push(l) });
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
    // The second and third lookups of the same body were answered from the cached bodies.
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

describe('on Redis: outages and settings changed at run time', () => {
  let redis: RedisServer;
  let onRedis: Runtime;
  /** Keys kept in Redis (`--keys state`), so an outage reaches the key store too. */
  let roomyKey: string;
  let optaKey: string;
  const lines: string[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const issue = async (...argv: string[]): Promise<string> => {
      let out = '';
      await keysCommand(['add', ...argv, '--state', redis.url], { out: (t) => void (out += t), err: () => {} });
      return out.trim().split('\n').pop()!;
    };
    roomyKey = await issue('--name', 'roomy', '--quota', '1000000', '--rate', '1000000');
    optaKey = await issue('--name', 'opta', '--quota', '100', '--rate', '1000', '--provider', 'opta');
    onRedis = await startRuntime({ dist: world.dist, keys: 'state', state: redis.url, port: 0, log: (l) => lines.push(l) });
  });
  afterAll(async () => {
    await onRedis?.close();
    await redis?.dispose();
  });
  const redisConfig = (name: string, value: string): void => void execFileSync('redis-cli', ['-p', String(redis.port), 'CONFIG', 'SET', name, value]);

  it('three outages: lookups and /key answer 503 state_unavailable, /readyz 503, /healthz 200; one line as Redis goes and one as it returns, and no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const api = client(`${onRedis.url}/api/v1`, roomyKey);
      const ops = client(onRedis.url);
      expect((await ops('/readyz')).status).toBe(200);
      lines.length = 0;
      for (let outage = 0; outage < 3; outage++) {
        await redis.stop();
        const refused = await Promise.all(Array.from({ length: 30 }, () => api(`/entities/${ID.arsenal}`)));
        expect(refused.map((r) => `${r.status} ${r.json.error}`)).toEqual(Array(30).fill('503 state_unavailable'));
        // GET /key reads the credits from the store: its 503 is in the document (the client validates every answer).
        const k = await api('/key');
        expect([k.status, k.json.error]).toEqual([503, 'state_unavailable']);
        const down = await ops('/readyz');
        expect([down.status, down.json.error]).toEqual([503, 'not_ready']);
        expect((await ops('/healthz')).status).toBe(200);
        await redis.start();
        await eventually('Redis to answer again', async () => (await api(`/entities/${ID.arsenal}`)).status === 200);
        expect((await ops('/readyz')).status).toBe(200);
      }
      const state = lines.filter((l) => l.startsWith('[state]'));
      expect(state.filter((l) => /: unreachable \(/.test(l))).toHaveLength(3);
      expect(state.filter((l) => /: reachable again$/.test(l))).toHaveLength(3);
      expect(state).toHaveLength(6);
      // The key store reads Redis four times a second: an outage it saw is one line, and its end one.
      const count = (re: RegExp): number => lines.filter((l) => l.startsWith('[keys]') && re.test(l)).length;
      const unreadable = count(/: cannot read the keys \(.*\); keeping the last good version$/);
      expect(unreadable).toBeLessThanOrEqual(3);
      await eventually('the key store to read Redis again', () => count(/: readable again, unchanged$/) === unreadable);
      const keyLines = lines.filter((l) => l.startsWith('[keys]'));
      expect(keyLines).toHaveLength(2 * unreadable);
      expect(lines).toHaveLength(6 + 2 * unreadable);
      expect(warnings.filter((w) => /MaxListeners/.test(w))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('answers an acknowledgement 200 only while Redis fsyncs it: after CONFIG SET appendonly no, 503 ack_storage_unavailable at once (nothing recorded); 200 again once it is back', async () => {
    const opta = client(`${onRedis.url}/api/v1`, optaKey);
    expect((await opta('/notices/ack', { body: { finding_ids: ['opta-1'] } })).status).toBe(200);
    lines.length = 0;
    redisConfig('appendonly', 'no');
    try {
      const refused = await opta('/notices/ack', { body: { finding_ids: ['opta-2'] } });
      expect([refused.status, refused.json.error]).toEqual([503, 'ack_storage_unavailable']);
      const feed = await opta('/notices');
      expect(feed.json.findings.find((f: { finding_id: string }) => f.finding_id === 'opta-2').acknowledged).toBe(false);
    } finally {
      redisConfig('appendonly', 'yes');
    }
    await eventually('acknowledgements to be taken again', async () => (await opta('/notices/ack', { body: { finding_ids: ['opta-2'] } })).status === 200);
    expect(lines.filter((l) => /acknowledgements answer 503 ack_storage_unavailable: the server has appendonly no/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /acknowledgements are durable again/.test(l))).toHaveLength(1);
  });

  it('refuses to start on a Redis that may evict, naming maxmemory-policy; a change at run time answers 503 state_unavailable (one line) until it is noeviction again', async () => {
    const evicting = await startRedis(['--maxmemory-policy', 'allkeys-lru']);
    try {
      await expect(startRuntime({ dist: world.dist, keys, state: evicting.url, port: 0, log: () => {} })).rejects.toThrow(
        /refusing to start: maxmemory-policy is allkeys-lru: Redis may evict quota counters and revoked keys; set maxmemory-policy noeviction/,
      );
    } finally {
      await evicting.dispose();
    }
    const api = client(`${onRedis.url}/api/v1`, roomyKey);
    const ops = client(onRedis.url);
    const before = (await api('/key')).json.key.credits_remaining;
    lines.length = 0;
    let answered = 0;
    const lookup = async (): Promise<number> => {
      const { status } = await api(`/entities/${ID.arsenal}`);
      if (status === 200) answered++;
      return status;
    };
    redisConfig('maxmemory-policy', 'allkeys-lru');
    try {
      // The policy is read every second; lookups before that are answered and charged as usual.
      await eventually('costing requests to be refused', async () => (await lookup()) === 503);
      const refused = await api(`/entities/${ID.arsenal}`);
      expect([refused.status, refused.json.error]).toEqual([503, 'state_unavailable']);
      expect((await ops('/readyz')).status).toBe(503);
      expect((await ops('/healthz')).status).toBe(200);
    } finally {
      redisConfig('maxmemory-policy', 'noeviction');
    }
    await eventually('costing requests to be answered again', async () => (await lookup()) === 200);
    // Every 503 charged nothing.
    expect((await api('/key')).json.key.credits_remaining).toBe(before - answered);
    expect(lines.filter((l) => /maxmemory-policy is allkeys-lru/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /maxmemory-policy is noeviction again/.test(l))).toHaveLength(1);
  });
});

/** A second process holding the SQLite database's write lock (`BEGIN IMMEDIATE`) until told to release it. */
async function holdWriteLock(file: string): Promise<{ ask(line: string): Promise<string>; release(): Promise<void> }> {
  const script = `
    import { createRequire } from 'node:module';
    import { createInterface } from 'node:readline';
    const Database = createRequire(process.cwd() + '/')('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    console.log('locked');
    for await (const line of createInterface({ input: process.stdin })) {
      if (line === 'held?') console.log(db.inTransaction ? 'held' : 'free');
      if (line === 'release') {
        db.exec('COMMIT');
        db.close();
        console.log('released');
        break;
      }
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      waiting.shift()?.(line);
    }
  });
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      waiting.push(resolve);
      child.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
    });
  expect(await next()).toBe('locked');
  const ask = (line: string): Promise<string> => {
    const answer = next();
    child.stdin.write(`${line}\n`);
    return answer;
  };
  let released = false;
  return {
    ask,
    async release() {
      if (released) return;
      released = true;
      expect(await ask('release')).toBe('released');
      child.stdin.end();
    },
  };
}

describe('on SQLite: a write lock held by another process', () => {
  it('does not stall the server: /healthz and a free route answer while a lookup waits for the lock, and once it is released the lookup is answered and charged once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ir-ops-lock-'));
    temps.push(dir);
    const file = join(dir, 'register.db');
    // A wait far longer than the test, so the lookup is still waiting whatever the machine's speed.
    const store = await openSqliteStore({ file, lockWaitMs: 120_000, log: () => {} });
    let reached!: () => void;
    const admitted = new Promise<void>((resolve) => (reached = resolve));
    const watched: StateStore = {
      writable: true,
      admit: (...a) => {
        reached();
        return store.admit!(...a);
      },
      charge: (...a) => store.charge(...a),
      refund: (...a) => store.refund(...a),
      remaining: (...a) => store.remaining(...a),
      hit: (...a) => store.hit(...a),
      notices: (...a) => store.notices(...a),
      markSeen: (...a) => store.markSeen(...a),
      acknowledge: (...a) => store.acknowledge(...a),
      ping: () => store.ping!(),
      close: () => store.close(),
    };
    const patient = await startRuntime({ dist: world.dist, keys, store: watched, port: 0 });
    const api = client(`${patient.url}/api/v1`, key);
    const before = (await api('/key')).json.key.credits_remaining;
    const lock = await holdWriteLock(file);
    try {
      let settled = false;
      const waiting = api(`/entities/${ID.arsenal}`).finally(() => (settled = true));
      // The lookup's charge is queued: its transaction finds the lock taken. Were SQLite waiting for it on the
      // event loop, nothing below could run until that wait gave up.
      await admitted;
      expect((await client(patient.url)('/healthz')).status).toBe(200);
      expect((await api('/meta')).status).toBe(200);
      expect((await api('/key')).json.key.credits_remaining).toBe(before);
      expect(settled).toBe(false);
      expect(await lock.ask('held?')).toBe('held');
      await lock.release();
      const answered = await waiting;
      expect(answered.status).toBe(200);
      expect((await api('/key')).json.key.credits_remaining).toBe(before - 1);
    } finally {
      await lock.release();
      await patient.close();
    }
  });

  it('answers costing requests 503 state_unavailable (nothing charged) and /readyz 503 while it is held, /healthz and free routes 200; one line as writes fail and one as they succeed again', async () => {
    const api = client(`${rt.url}/api/v1`, key);
    const ops = client(rt.url);
    const before = (await api('/key')).json.key.credits_remaining;
    expect((await ops('/readyz')).status).toBe(200);
    rtLines.length = 0;
    const lock = await holdWriteLock(join(stateDir, 'register.db'));
    try {
      const refused = await Promise.all(Array.from({ length: 10 }, () => api(`/entities/${ID.arsenal}`)));
      expect(refused.map((r) => `${r.status} ${r.json.error}`)).toEqual(Array(10).fill('503 state_unavailable'));
      const down = await ops('/readyz');
      expect([down.status, down.json.error]).toEqual([503, 'not_ready']);
      expect((await ops('/healthz')).status).toBe(200);
      expect((await api('/meta')).status).toBe(200);
      expect((await api('/key')).json.key.credits_remaining).toBe(before);
      expect(await lock.ask('held?')).toBe('held');
    } finally {
      await lock.release();
    }
    await eventually('/readyz to say 200', async () => (await ops('/readyz')).status === 200);
    expect((await api(`/entities/${ID.arsenal}`)).status).toBe(200);
    expect((await api('/key')).json.key.credits_remaining).toBe(before - 1);
    expect(rtLines).toEqual([
      expect.stringMatching(/^\[state\] .*register\.db: cannot write the state database \(SQLITE_BUSY: another process holds the write lock\); state changes answer 503 until a write succeeds$/),
      expect.stringMatching(/^\[state\] .*register\.db: writes succeed again$/),
    ]);
  });
});
