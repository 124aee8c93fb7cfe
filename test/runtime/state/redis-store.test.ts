// The Redis store against a real redis-server: the shared contract, then what only a networked store must do:
// stay exact across clients, answer 503 (StateUnavailableError) while Redis is away and recover by itself, give
// back what a script charged when its answer was lost, and refuse acknowledgements Redis would not make durable.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateUnavailableError, type StateStore } from '../../../runtime/interfaces.ts';
import { refuseAcknowledgements } from '../../../runtime/state/read-only-store.ts';
import { openRedisStore, type RedisStateStore } from '../../../runtime/state/redis-store.ts';
import { startRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { stateStoreContract } from './state-store-contract.ts';
import { eventually } from '../../helpers/eventually.ts';

let redis: RedisServer;
beforeAll(async () => {
  // DEBUG SLEEP holds the server while a test cuts a connection whose scripts it has already received.
  redis = await startRedis(['--enable-debug-command', 'yes']);
});
afterAll(async () => {
  await redis?.dispose();
});

const P = '2026-11';
let db = 0;
/** Each store gets its own key prefix, so tests share one server without seeing each other's keys. */
const open = (prefix = `t${++db}:`, log: (m: string) => void = () => {}) => openRedisStore({ url: redis.url, prefix, log });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const prefixes = new WeakMap<StateStore, string>();
const tracked = async (prefix = `t${++db}:`): Promise<StateStore> => {
  const s = await open(prefix);
  prefixes.set(s, prefix);
  return s;
};
stateStoreContract('redis', () => tracked(), {
  reopen: async (store) => {
    await store.close();
    return tracked(prefixes.get(store));
  },
  sibling: (store) => tracked(prefixes.get(store)),
});
stateStoreContract('redis, read-only mirror', async () => refuseAcknowledgements(await open()), { acknowledges: false });

describe('redis store', () => {
  it('runs one script per costing request, and the scripts of one turn as one pipeline', async () => {
    const s = await open();
    await Promise.all(Array.from({ length: 200 }, (_, i) => s.admit!('k1', 10_000 + i, 1_000_000, P, 1, 1000)));
    expect(s.counters.scripts).toBe(200);
    expect(s.counters.pipelines).toBe(1);
    await s.close();
  });

  it('answers StateUnavailableError while Redis is down, charges nothing, and recovers by itself', async () => {
    const lines: string[] = [];
    const s = await open(undefined, (m) => lines.push(m));
    expect(await s.charge('k1', P, 2, 10)).toEqual({ ok: true, remaining: 8 });
    await redis.stop();
    try {
      await eventually('the client to notice', async () => s.client.status !== 'ready');
      await expect(s.charge('k1', P, 1, 10)).rejects.toBeInstanceOf(StateUnavailableError);
      await expect(s.admit!('k1', 1, 10, P, 1, 10)).rejects.toBeInstanceOf(StateUnavailableError);
      await expect(s.acknowledge('acme', 1, ['f1'], 'x', null, null)).rejects.toBeInstanceOf(StateUnavailableError);
      await expect(s.ping()).rejects.toBeInstanceOf(StateUnavailableError);
    } finally {
      await redis.start();
    }
    await eventually('the client to reconnect', async () => s.client.status === 'ready');
    expect(await s.remaining('k1', P, 10)).toBe(8);
    expect(await s.charge('k1', P, 1, 10)).toEqual({ ok: true, remaining: 7 });
    expect(lines.filter((l) => /unreachable/.test(l))).toHaveLength(1);
    expect(lines.some((l) => /reachable again/.test(l))).toBe(true);
    await s.close();
  });

  it('refunds exactly what scripts charged when their answers were lost with the connection', async () => {
    const prefix = `lost${++db}:`;
    const s = await open(prefix);
    const observer = await open(prefix);
    expect(await s.charge('k1', P, 5, 1000)).toEqual({ ok: true, remaining: 995 });
    // Hold the server (DEBUG SLEEP) so the next charges are sent and run, but their answers go to a closed socket.
    const sleeper = await open(prefix);
    const held = sleeper.client.call('DEBUG', 'SLEEP', '0.3').catch(() => {});
    await sleep(50);
    const lost = Promise.allSettled(Array.from({ length: 20 }, () => s.charge('k1', P, 1, 1000)));
    await sleep(20);
    s.client.stream.destroy(); // the connection drops with 20 scripts queued in Redis, unanswered
    const outcomes = await lost;
    await held;
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
    await eventually('the lost charges to be refunded', async () => (await observer.remaining('k1', P, 1000)) === 995);
    // Settling again (another reconnect) gives nothing twice.
    s.client.stream.destroy();
    await eventually('the client to notice', async () => s.client.status !== 'ready');
    await eventually('the client to reconnect', async () => s.client.status === 'ready');
    expect(await s.charge('k1', P, 1, 1000)).toEqual({ ok: true, remaining: 994 });
    await Promise.all([s.close(), observer.close(), sleeper.close()]);
  });

  it('keeps a refund it cannot send and gives it back once, when Redis answers again', async () => {
    const s = await open();
    await s.charge('k1', P, 4, 10);
    await redis.stop();
    try {
      await eventually('the client to notice', async () => s.client.status !== 'ready');
      await s.refund('k1', P, 3); // queued, not lost
    } finally {
      await redis.start();
    }
    await eventually('the refund to arrive', async () => s.client.status === 'ready' && (await s.remaining('k1', P, 10)) === 9);
    await sleep(100);
    expect(await s.remaining('k1', P, 10)).toBe(9);
    await s.close();
  });

  it('refuses acknowledgements (writable false, one log line) when Redis does not fsync before replying', async () => {
    const lax = await startRedis(['--appendfsync', 'everysec']);
    try {
      const lines: string[] = [];
      const s = await openRedisStore({ url: lax.url, log: (m) => lines.push(m) });
      expect(s.writable).toBe(false);
      await expect(s.acknowledge('acme', 1, ['f1'], 'x', null, null)).rejects.toThrow(/appendfsync everysec/);
      expect(lines.filter((l) => /ack_storage_unavailable/.test(l))).toHaveLength(1);
      // Quota still works: only acknowledgements need the fsync.
      expect(await s.charge('k1', P, 1, 10)).toEqual({ ok: true, remaining: 9 });
      await s.close();
    } finally {
      await lax.dispose();
    }
  });

  it('starts while Redis is down and serves once it is up', async () => {
    const later = await startRedis();
    await later.stop();
    try {
      const lines: string[] = [];
      const s: RedisStateStore = await openRedisStore({ url: later.url, log: (m) => lines.push(m) });
      expect(lines.join('\n')).toMatch(/unreachable/);
      await expect(s.charge('k1', P, 1, 10)).rejects.toBeInstanceOf(StateUnavailableError);
      await later.start();
      await eventually('the client to connect', async () => s.client.status === 'ready');
      expect(await s.charge('k1', P, 1, 10)).toEqual({ ok: true, remaining: 9 });
      // The persistence settings are read on connecting: acknowledgements are accepted once they are known.
      await eventually('the durability check', async () => s.writable);
      await s.close();
    } finally {
      await later.dispose();
    }
  });
});
