// Runs fuzzed requests against the runtime, in-process (app.fetch, fast) or over a real socket, and records each
// exchange with the key's credits before and after, for the oracle in request-fuzzer.ts. Also lists the gaps
// between what the runtime answers and what the OpenAPI document describes, found by this fuzzing.
import { request as httpRequest, Agent } from 'node:http';
import { buildApp } from '../../../runtime/server.ts';

/** The fuzzed runtimes sign /matches cursors with this. */
export const FUZZ_CURSOR_SECRET = 'the fuzz tests sign /matches cursors with this';
import { openKeyStore } from '../../../runtime/keys/key-store.ts';
import { createFsSource } from '../../../runtime/source/fs-source.ts';
import { createMemoryStore } from '../../../runtime/state/memory-store.ts';
import { quotaPeriod } from '../../../runtime/state/quota-period.ts';
import type { App } from '../../../runtime/app.ts';
import type { InspectableStateStore } from '../../../runtime/state/state-core.ts';
import { ID, STAMPS } from '../../fixtures/hand-world.ts';
import { keyId, type FuzzWorld } from './reliability-world.ts';
import { type Exchange, type FuzzRequest, type FuzzTargets, type KnownGap } from './request-fuzzer.ts';

/** The hand world's real values, so that most generated requests are well-formed enough to reach a lookup. */
export function fuzzTargets(world: FuzzWorld): FuzzTargets {
  return {
    keys: { ...world.keys },
    // Mostly keys that get past auth, quota and rate, so that requests reach the lookups; the others now and then.
    keyWeights: { partner: 6, opta: 2, fbref: 1, tiny: 1, slow: 2, revoked: 1, expired: 1 },
    ids: Object.values(ID),
    stamps: [...STAMPS, '20200101T000000Z'],
    providers: ['transfermarkt', 'fbref', 'flashscore', 'opta', 'wyscout'],
    externalIds: ['11', '500', '631', '632', '18bb7c10', 'palmer-cole/h8agbDt7', 'g1', 'w1', 'old1'],
    bridges: [
      { provider: 'transfermarkt', namespace: 'verein', externalId: '11' },
      // Two entities: 409. Listed three times so that the rarest answer of the contract comes up in every run.
      { provider: 'transfermarkt', namespace: 'verein', externalId: '500' },
      { provider: 'transfermarkt', namespace: 'verein', externalId: '500' },
      { provider: 'transfermarkt', namespace: 'verein', externalId: '500' },
      { provider: 'transfermarkt', namespace: 'verein', externalId: '632' },
      { provider: 'fbref', namespace: '', externalId: '18bb7c10' },
      { provider: 'fbref', namespace: '', externalId: 'old1' }, // a merged ID
      { provider: 'flashscore', namespace: '', externalId: 'palmer-cole/h8agbDt7' }, // a slash inside the ID
      { provider: 'opta', namespace: '', externalId: 'g1' },
      { provider: 'wyscout', namespace: '', externalId: 'w1' },
    ],
    namespaces: ['', 'verein'],
    findingIds: ['opta-1', 'opta-2', 'opta-3', 'fb-1'],
    batchIds: [7, 3],
    searchTerms: ['arsenal', 'cole palm', 'lodz', 'ŁKS Łódź', 'premier league', 'chelsea fc', 'the gunners'],
    families: ['participates_in', 'season_of', 'match_in'],
    anchors: { team: [ID.arsenal, ID.chelsea], opponent: [ID.chelsea, ID.arsenal], competition: [ID.league], season: [ID.season] },
  };
}

/** 5xx answers that are the documented truth for this world: /api/next serves a release that ships no notice summary. */
export const ALLOWED_5XX = ['summary_unavailable'];


/**
 * Answers the runtime gives that the document does not describe. Empty now: every gap the fuzzing found (414,
 * 415, 400 on free documents, empty path segments) was closed, and fuzz.test.ts keeps a regression test for each.
 * A new one goes here, with an `it.fails` that pins it, until it is fixed.
 */
export const KNOWN_GAPS: KnownGap[] = [];

export interface Exchanger {
  exchange(r: FuzzRequest): Promise<Exchange>;
  close(): Promise<void>;
}

/** A clock the harness moves forward by `stepMs` per request, so rate windows open and close deterministically. */
export class SteppingClock {
  constructor(
    public t: number,
    private readonly stepMs: number,
  ) {}
  now(): number {
    return this.t;
  }
  step(): void {
    this.t += this.stepMs;
  }
}

async function credits(store: InspectableStateStore, world: FuzzWorld, r: FuzzRequest, now: number): Promise<number | null> {
  if (!r.keyName) return null;
  const id = keyId(world.keys[r.keyName as keyof FuzzWorld['keys']]);
  return store.remaining(id, quotaPeriod(now), world.quotas.get(id)!);
}

/** Exchanges through `app.fetch` with a memory store: no socket, thousands of requests a second. */
export function inProcessExchanger(world: FuzzWorld, start = Date.now()): Exchanger & { app: App; store: InspectableStateStore; clock: SteppingClock } {
  const clock = new SteppingClock(start, 37);
  const store = createMemoryStore();
  const keyStore = openKeyStore({ file: world.keysFile });
  const source = createFsSource({ root: world.dist });
  // Without the pages: a Request resolves `/api/..` to `/` before the app sees it, and the fuzzer judges that answer
  // as one to an API path. Over a socket (targets sent byte for byte) the pages are fuzzed with the rest.
  const { app } = buildApp({ dist: world.dist, source, store, keyStore, clock, cursorSecret: FUZZ_CURSOR_SECRET, pages: null });
  return {
    app,
    store,
    clock,
    async exchange(r) {
      clock.step();
      const before = await credits(store, world, r, clock.t);
      const res = await app.fetch(new Request(`http://127.0.0.1${r.target}`, { method: r.method, headers: r.headers, body: r.body }));
      const body = await res.text();
      return { request: r, status: res.status, headers: res.headers, body, creditsBefore: before, creditsAfter: await credits(store, world, r, clock.t) };
    },
    async close() {
      keyStore.close();
      await source.close();
    },
  };
}

/** Exchanges over a real socket with node:http, which sends the target byte for byte (fetch would normalise it). */
export function httpExchanger(baseUrl: string, world: FuzzWorld, store: InspectableStateStore, clock: SteppingClock): Exchanger {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(baseUrl);
  return {
    async exchange(r) {
      clock.step();
      const before = await credits(store, world, r, clock.t);
      const res = await new Promise<{ status: number; headers: Headers; body: string }>((resolve, reject) => {
        // An explicit length: node:http sends a DELETE body with neither Content-Length nor chunking, and the server
        // would rightly read those bytes as the next request.
        const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
        const req = httpRequest({ host: url.hostname, port: url.port, method: r.method, path: r.target, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
            resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(r.body);
      });
      return { request: r, ...res, creditsBefore: before, creditsAfter: await credits(store, world, r, clock.t) };
    },
    async close() {
      agent.destroy();
    },
  };
}
