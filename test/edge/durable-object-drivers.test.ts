// The edge's state and key drivers (edge/edge-state.ts over the Durable Objects of edge/durable-objects.ts) run the
// same contract suites as the memory, SQLite and Redis drivers, on workerd (miniflare), not on mocks: a test Worker
// (support/drivers-worker.ts) calls the drivers as the Worker does and hands their answers back to Node. Two copies
// of it, each its own isolate over the same Durable Object classes, stand for two instances of the Worker (the
// contract's sibling handles); restarting workerd over the same persisted folder is the contract's restart. The keys
// are managed as an operator manages them, through the Worker's admin route (the tier's bundle, edgeKeyRepository),
// and checked by the edge gate (edgeGate) as the Worker checks them, each call at the moment the case names.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare, type MiniflareOptions } from 'miniflare';
import { afterAll, beforeAll } from 'vitest';
import { DURABLE_CLASSES } from '../../edge/bindings.ts';
import { bundleWorker, COMPATIBILITY_DATE } from '../../edge/bundle.ts';
import { StateUnavailableError, type AuthResult, type StateStore } from '../../runtime/interfaces.ts';
import { edgeKeyRepository } from '../../runtime/keys/edge-key-repository.ts';
import { keyRepositoryContract, type OpenedKeys } from '../runtime/keys/key-store-contract.ts';
import { stateStoreContract } from '../runtime/state/state-store-contract.ts';
import { ADMIN_TOKEN, workerCode } from './edge-support.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const INSTANCES = ['a', 'b'] as const;
type Instance = (typeof INSTANCES)[number];

/** workerd with the drivers' Worker twice (a and b, the Durable Objects a's), over `persist`; replaced by restart(). */
let mf: Miniflare;
let options: MiniflareOptions;

/** The drivers' Worker, bundled as the Worker is (edge/bundle.ts). */
const workerModules = bundleWorker(undefined, join(ROOT, 'test/edge/support/drivers-worker.ts')).then((b) => [
  { type: 'ESModule' as const, path: join(ROOT, 'drivers.mjs'), contents: b.code },
]);

beforeAll(async () => {
  const persist = mkdtempSync(join(tmpdir(), 'do-drivers-'));
  const modules = await workerModules;
  options = {
    durableObjectsPersist: persist,
    host: '127.0.0.1',
    workers: INSTANCES.map((name) => ({
      name,
      compatibilityDate: COMPATIBILITY_DATE,
      modules,
      routes: [`${name}.drivers/*`],
      // The classes are a's; b binds a's (two Workers of one deployment share its Durable Objects).
      durableObjects: name === 'a' ? { ...DURABLE_CLASSES } : Object.fromEntries(Object.entries(DURABLE_CLASSES).map(([binding, className]) => [binding, { className, scriptName: 'a' }])),
    })),
  };
  mf = new Miniflare(options);
  await mf.ready;
});
afterAll(async () => {
  await mf?.dispose();
});

/** workerd stopped and started again over the same persisted Durable Objects. */
async function restart(): Promise<void> {
  await mf.dispose();
  mf = new Miniflare(options);
  await mf.ready;
}

/** The errors a contract case expects by class, rebuilt from the name the Worker sent. */
function rebuilt(e: { name: string; message: string }): Error {
  if (e.name === 'RangeError') return new RangeError(e.message);
  if (e.name === 'StateUnavailableError') return new StateUnavailableError(e.message);
  return Object.assign(new Error(e.message), { name: e.name });
}

const revive = (v: unknown): unknown => (v !== null && typeof v === 'object' && '$map' in v ? new Map((v as { $map: [unknown, unknown][] }).$map) : v);

type Answer = { value: unknown } | { error: { name: string; message: string } };
type Pending = { call: object; settle: (a: Answer) => void; fail: (e: unknown) => void };

/** The calls waiting to go to each Worker, sent together once the tick that made them ends. */
const queues = new Map<string, { via: Miniflare; on: Instance; calls: Pending[] }>();
/** Calls per request: a bound on one request's work (each call is a Durable Object request of its own). */
const BATCH = 250;

/** Sends `calls` in parts of BATCH, all parts at once (so all the calls race in the Worker). */
async function send(via: Miniflare, on: Instance, calls: Pending[]): Promise<void> {
  const parts = Array.from({ length: Math.ceil(calls.length / BATCH) }, (_, i) => calls.slice(i * BATCH, (i + 1) * BATCH));
  await Promise.all(
    parts.map(async (part) => {
      try {
        const res = await via.dispatchFetch(`http://${on}.drivers/`, { method: 'POST', body: JSON.stringify(part.map((p) => p.call)) });
        if (res.status !== 200) throw new Error(`drivers worker answered ${res.status}: ${await res.text()}`);
        const answers = (await res.json()) as Answer[];
        part.forEach((p, j) => p.settle(answers[j]));
      } catch (e) {
        part.forEach((p) => p.fail(e));
      }
    }),
  );
}

/**
 * One call of a driver's method in instance `on`'s isolate, on the objects of `scope` (null: the Worker's own
 * names). The calls of one tick go in one request and are made at once in the Worker: a race stays a race, on
 * one connection rather than thousands (which a busy machine answers with resets).
 */
function call(on: Instance, driver: 'state' | 'auth', scope: string | null, method: string, args: unknown[], via: Miniflare = mf): Promise<unknown> {
  const body = { driver, scope, method, args: args.map((a) => (a instanceof Date ? { $date: a.toISOString() } : a)) };
  return new Promise<Answer>((settle, fail) => {
    const key = `${on}@${via === mf ? 'state' : 'keys'}`;
    let queue = queues.get(key);
    if (!queue || queue.via !== via) {
      const q = { via, on, calls: [] as Pending[] };
      queues.set(key, q);
      setTimeout(() => {
        if (queues.get(key) === q) queues.delete(key);
        void send(q.via, q.on, q.calls);
      }, 0);
      queue = q;
    }
    queue.calls.push({ call: body, settle, fail });
  }).then((out) => {
    if ('error' in out) throw rebuilt(out.error);
    return revive(out.value);
  });
}

const STATE_METHODS = ['charge', 'refund', 'remaining', 'hit', 'admit', 'notices', 'markSeen', 'acknowledge', 'close'] as const;

/** edgeStateStore as instance `on` runs it, on the objects of `scope`. */
async function edgeStore(on: Instance, scope: string): Promise<StateStore> {
  const methods = Object.fromEntries(STATE_METHODS.map((m) => [m, (...args: unknown[]) => call(on, 'state', scope, m, args)]));
  return { ...methods, writable: (await call(on, 'state', scope, 'writable', [])) as boolean, scope } as unknown as StateStore;
}
const scopeOf = (store: StateStore): string => (store as StateStore & { scope: string }).scope;

let scopes = 0;
stateStoreContract('durable objects (edge)', () => edgeStore('a', `state${++scopes}`), {
  reopen: async (store) => {
    await store.close();
    await restart();
    return edgeStore('a', scopeOf(store));
  },
  sibling: (store) => edgeStore('b', scopeOf(store)),
});

/**
 * The key contract's edge: the Worker (the tier's bundle) with its admin route on a free port, and the drivers'
 * Worker (a) on its Durable Objects; a fresh workerd for each case, since the admin route deletes no key.
 */
async function edgeKeys(): Promise<OpenedKeys> {
  const drivers = (await workerModules)[0];
  const edge = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    workers: [
      {
        name: 'register',
        compatibilityDate: COMPATIBILITY_DATE,
        modules: [{ type: 'ESModule', path: join(ROOT, 'worker.mjs'), contents: await workerCode() }],
        durableObjects: { ...DURABLE_CLASSES },
        // Bound as in every deployment (wrangler.toml), and empty: the admin routes need no release.
        r2Buckets: ['DIST'],
        bindings: { ADMIN_TOKEN },
      },
      {
        name: 'a',
        compatibilityDate: COMPATIBILITY_DATE,
        modules: [drivers],
        routes: ['a.drivers/*'],
        durableObjects: Object.fromEntries(Object.entries(DURABLE_CLASSES).map(([binding, className]) => [binding, { className, scriptName: 'register' }])),
      },
    ],
  });
  const url = (await edge.ready).toString().replace(/\/$/, '');
  const opened = (owner: boolean): OpenedKeys => ({
    repository: edgeKeyRepository(url, ADMIN_TOKEN),
    sibling: async () => opened(false),
    async serve() {
      let checks = 0;
      return {
        async authenticate(authorization: string | null, now: Date) {
          const result = (await call('a', 'auth', null, 'authenticate', [authorization, now], edge)) as AuthResult;
          checks++;
          return result;
        },
        checks: () => checks,
        close() {},
      };
    },
    close: async () => void (owner && (await edge.dispose())),
  });
  return opened(true);
}

keyRepositoryContract('durable objects (edge)', edgeKeys, { damages: false });
