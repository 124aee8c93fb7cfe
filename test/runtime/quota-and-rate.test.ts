// Credits and rate limits are exact: concurrency never over-spends, the rolling window admits exactly `rate`
// per second, the month boundary (a leap day too) resets once, and counters survive a restart.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { openKeyStore } from '../../runtime/keys/key-store.ts';
import { buildApp } from '../../runtime/server.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createMemoryStore } from '../../runtime/state/memory-store.ts';
import { openSqliteStore } from '../../runtime/state/sqlite-store.ts';
import type { StateStore } from '../../runtime/interfaces.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { ID, makeHandWorld, type World } from '../fixtures/hand-world.ts';

let world: World;
const opened: { close(): unknown }[] = [];
beforeAll(async () => {
  world = await makeHandWorld();
});
afterAll(async () => {
  for (const o of opened) await o.close();
});

class FakeClock {
  constructor(public t: number) {}
  now() {
    return this.t;
  }
}

async function setup(opts: { quota: number; rate: number; start: string; store?: StateStore }) {
  const file = join(mkdtempSync(join(tmpdir(), 'ir-keys-')), 'keys.json');
  const { key } = await addKey({ file, name: 'k', quota: opts.quota, rate: opts.rate });
  const clock = new FakeClock(Date.parse(opts.start));
  const store = opts.store ?? createMemoryStore();
  const source = createFsSource({ root: world.dist });
  const keyStore = openKeyStore({ file });
  opened.push(source, keyStore);
  const { app } = buildApp({ dist: world.dist, source, store, keyStore, clock });
  const get = async (path: string, init: RequestInit = {}) => {
    const res = await app.fetch(new Request(`http://test/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } }));
    const text = await res.text();
    validateResponse({ method: init.method ?? 'GET', path, status: res.status, headers: res.headers, body: text });
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
  };
  return { get, clock, store, key };
}

describe('quota', () => {
  it('2,000 concurrent lookups on 1,000 credits: exactly 1,000 answered, the rest 402, never below zero', async () => {
    const { get } = await setup({ quota: 1000, rate: 1_000_000, start: '2026-11-10T12:00:00Z' });
    const ids = [ID.arsenal, ID.never, ID.tomb, ID.mergedOld];
    const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => get(`/entities/${ids[i % 4]}`)));
    const answered = results.filter((r) => [200, 404, 410].includes(r.status)).length;
    expect(answered).toBe(1000);
    expect(results.filter((r) => r.status === 402).length).toBe(1000);
    expect(Math.min(...results.map((r) => Number(r.headers.get('x-register-credits-remaining'))))).toBe(0);
  });

  it('concurrent 100-item batches against 250 credits: exactly two succeed, no partial charge', async () => {
    const { get } = await setup({ quota: 250, rate: 1_000_000, start: '2026-11-10T12:00:00Z' });
    const body = JSON.stringify({ requests: Array.from({ length: 100 }, () => ({ type: 'entity', id: ID.arsenal })) });
    const results = await Promise.all(Array.from({ length: 6 }, () => get('/batch', { method: 'POST', body, headers: { 'content-type': 'application/json' } })));
    expect(results.filter((r) => r.status === 200).length).toBe(2);
    expect(results.filter((r) => r.status === 402).length).toBe(4);
    expect((await get('/key')).json.key.credits_remaining).toBe(50);
  });

  it('resets exactly once at the month boundary, leap day included', async () => {
    const { get, clock } = await setup({ quota: 2, rate: 1_000_000, start: '2028-02-29T23:59:58Z' });
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(200);
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(200);
    const spent = await get(`/entities/${ID.arsenal}`);
    expect(spent.status).toBe(402);
    expect(spent.json.error).toBe('quota_exceeded');
    clock.t = Date.parse('2028-02-29T23:59:59.999Z');
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(402);
    clock.t = Date.parse('2028-03-01T00:00:00.000Z');
    const fresh = await get(`/entities/${ID.arsenal}`);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-register-credits-remaining')).toBe('1');
    expect((await get('/key')).json.key.credits_reset_at).toBe('2028-04-01T00:00:00.000Z');
  });

  it('counters survive a restart of the SQLite store', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ir-state-')), 'register.db');
    const first = await setup({ quota: 10, rate: 1_000_000, start: '2026-11-10T12:00:00Z', store: await openSqliteStore({ file }) });
    for (let i = 0; i < 3; i++) await first.get(`/entities/${ID.arsenal}`);
    await first.store.close();
    const store = await openSqliteStore({ file });
    expect(await store.remaining((await import('../../runtime/keys/key-entry.ts')).API_KEY.exec(first.key)![1], '2026-11', 10)).toBe(7);
    await store.close();
  });
});

describe('rate limit', () => {
  it('admits exactly `rate` per rolling second and says when to retry', async () => {
    const { get, clock } = await setup({ quota: 100000, rate: 2, start: '2026-11-10T12:00:00.000Z' });
    const t0 = clock.t;
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(200);
    clock.t = t0 + 400;
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(200);
    const limited = await get(`/entities/${ID.arsenal}`);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');
    const creditsAt429 = limited.headers.get('x-register-credits-remaining');
    clock.t = t0 + 999;
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(429);
    clock.t = t0 + 1000; // the first request left the window (t-1000, t]
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(200);
    expect(creditsAt429).toBe('99998');
  });

  it('over 50 windows at 0.9x, 1x and 10x the plan rate admits exactly what the rule allows', async () => {
    for (const factor of [0.9, 1, 10]) {
      const { get, clock } = await setup({ quota: 1_000_000, rate: 10, start: '2026-11-10T12:00:00.000Z' });
      const t0 = clock.t;
      const perSecond = Math.round(10 * factor);
      let admitted = 0;
      for (let s = 0; s < 50; s++) {
        for (let i = 0; i < perSecond; i++) {
          clock.t = t0 + s * 1000 + Math.floor((i * 1000) / perSecond);
          if ((await get(`/entities/${ID.arsenal}`)).status === 200) admitted++;
        }
      }
      expect(admitted).toBe(50 * Math.min(perSecond, 10));
    }
  });

  it('a batch is one request for the rate limit; 401 precedes 400 precedes 429 precedes 402', async () => {
    const { get } = await setup({ quota: 1, rate: 1, start: '2026-11-10T12:00:00Z' });
    const body = JSON.stringify({ requests: [{ type: 'entity', id: ID.arsenal }, { type: 'entity', id: ID.chelsea }] });
    const batch = await get('/batch', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect(batch.status).toBe(402); // admitted by the rate limit as one request, then too few credits
    expect((await get('/entities/bad')).status).toBe(400); // validation before rate
    expect((await get(`/entities/${ID.arsenal}`)).status).toBe(429); // rate before quota
    const noKey = await get('/entities/bad', { headers: { authorization: '' } });
    expect(noKey.status).toBe(401);
  });
});
