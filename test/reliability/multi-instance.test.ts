// Several instances, as docs/operations.md ("Several instances") runs them, here as processes: three `register serve`
// on three ports share one redis-server (state and keys) and read one dist from a static host (serve-handler, the
// `serve` package's core), with the private part local. Credits stay exact across them, an acknowledgement made
// through one is seen through the others, a revocation through the CLI reaches all three within a second, a
// SIGKILLed instance loses no charge, and while Redis is stopped costing requests answer 503 and charge nothing.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { expectBySecondCheck, keyChecksOf } from '../helpers/key-checks.ts';
import { startRedis, type RedisServer } from '../helpers/redis-server.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { spawnServe, type ServerProcess } from './support/child-server.ts';
import { CRASH_BATCH, makeCrashWorld, type CrashWorld } from './support/reliability-world.ts';

const BIN = fileURLToPath(new URL('../../bin/register.mjs', import.meta.url));
const PUBLISH = fileURLToPath(new URL('../../scripts/publish-public.sh', import.meta.url));
const run = promisify(execFile);

let world: CrashWorld;
let redis: RedisServer;
let cdn: ServedDir;
let upload: string;
const instances: ServerProcess[] = [];
const bases: string[] = [];

/** `register keys …` as an operator types it, against the shared Redis. */
async function keys(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, 'keys', ...args, '--state', redis.url]);
  return stdout;
}
/** Adds a key through the CLI and waits until every live instance knows it: by its second key check after the add. */
async function addKey(name: string, quota: number, provider?: string): Promise<string> {
  const out = await keys('add', '--name', name, '--quota', String(quota), '--rate', '1000000', ...(provider ? ['--provider', provider] : []));
  const key = out.trim().split('\n').at(-1)!;
  const live = bases.filter((_, i) => instances[i].proc.exitCode === null && instances[i].proc.signalCode === null);
  await Promise.all(
    live.map((base) =>
      expectBySecondCheck(() => keyChecksOf(new URL(base).origin), async () => (await fetch(`${base}/key`, { headers: { authorization: `Bearer ${key}` } })).status === 200, `${base}: the new key`),
    ),
  );
  return key;
}

/** One lookup through instance `i`, validated against the document; null when the instance did not answer. */
async function lookup(i: number, key: string, id: string): Promise<{ status: number; error?: string } | null> {
  try {
    const res = await fetch(`${bases[i]}/entities/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.text();
    validateResponse({ method: 'GET', path: `/entities/${id}`, status: res.status, headers: res.headers, body });
    return { status: res.status, error: res.status >= 400 && res.status !== 404 && res.status !== 410 ? (JSON.parse(body) as { error: string }).error : undefined };
  } catch (e) {
    if ((e as Error).message.startsWith('[openapi]')) throw e;
    return null; // the instance was killed under this request
  }
}
/**
 * Lookups charged to `key`, as /key on instance `i` tells, once it tells: just after Redis came back, an instance
 * whose connection is still being made again answers /key 503 state_unavailable for a moment.
 */
async function used(i: number, key: string, quota: number): Promise<number> {
  let credits: number | undefined;
  await eventually(`GET /key on instance ${i} to answer`, async () => {
    const r = await client(bases[i], key)('/key');
    credits = r.status === 200 ? r.json.key.credits_remaining : undefined;
    return credits !== undefined;
  }, 60_000);
  return quota - credits!;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  world = await makeCrashWorld(20);
  redis = await startRedis();
  // Only the public part goes to the static host, published as docs/operations.md says; the private part (the notices)
  // stays with the instances.
  upload = mkdtempSync(join(tmpdir(), 'ir-cdn-'));
  await run('bash', [PUBLISH, world.dist, upload]);
  expect(readdirSync(upload).sort()).toEqual([...readdirSync(world.dist).filter((n) => /^\d{8}T\d{6}Z$/.test(n)), 'index.json'].sort());
  for (const stamp of readdirSync(upload).filter((n) => n !== 'index.json')) expect(readdirSync(join(upload, stamp))).toEqual(['public']);
  cdn = await serveDir(upload);
  for (let i = 0; i < 3; i++) {
    instances.push(spawnServe(['--dist', cdn.baseUrl, '--private-dist', world.dist, '--state', redis.url, '--keys', 'state', '--port', '0', '--access-log', 'off']));
  }
  for (const s of instances) bases.push(await s.ready);
});

afterAll(async () => {
  await Promise.all(instances.map((s) => s.kill()));
  await cdn?.close();
  await redis?.dispose();
  if (upload) rmSync(upload, { recursive: true, force: true });
  if (world) rmSync(world.root, { recursive: true, force: true });
});

describe('three instances, one Redis, one static dist', () => {
  it('2,000 concurrent lookups spread over the three on a key with 1,000 credits: 1,000 answered, the rest 402, each answer charged once', async () => {
    const key = await addKey('race', 1000);
    const ids = world.lookupIds;
    const results = await Promise.all(Array.from({ length: 2000 }, (_, n) => lookup(n % 3, key, ids[n % ids.length])));
    const statuses = results.map((r) => r!.status);
    const tally = (pick: (s: number) => boolean) => statuses.filter(pick).length;
    const answered = tally((s) => [200, 404, 409, 410].includes(s));
    const refused = tally((s) => s === 402);
    // On a machine busy enough, the static host or Redis may time out under this burst: such a request is a 503
    // that charged nothing (its charge was refunded), and a 402 may have been decided while that charge was
    // still held. The counts then shift by at most the 503s; with none, exactly 1,000 and 1,000.
    const failed = tally((s) => s === 503);
    const seen = JSON.stringify(Object.fromEntries([...new Set(results.map((r) => `${r!.status} ${r!.error ?? ''}`))].map((s) => [s, results.filter((r) => `${r!.status} ${r!.error ?? ''}` === s).length])));
    expect(answered + refused + failed, seen).toBe(2000);
    expect(answered, seen).toBeLessThanOrEqual(1000);
    expect(answered, seen).toBeGreaterThanOrEqual(1000 - failed);
    if (failed === 0) expect(refused, seen).toBe(1000);
    // Every answered lookup charged, nothing else: the credits agree on all three instances.
    for (let i = 0; i < 3; i++) expect(await used(i, key, 1000)).toBe(answered);
  });

  it('an acknowledgement made through one instance is seen through the others', async () => {
    const opta = await addKey('opta', 1000, 'opta');
    const ack = await client(bases[0], opta)('/notices/ack', { body: { finding_ids: ['opta-3'], actor: 'ops', note: 'through instance 1' } });
    expect(ack.status).toBe(200);
    for (const i of [1, 2]) {
      const page = await client(bases[i], opta)('/notices?limit=100');
      expect(page.json.batch_id).toBe(CRASH_BATCH);
      expect(page.json.findings.find((f: { finding_id: string }) => f.finding_id === 'opta-3')).toMatchObject({ acknowledged: true });
    }
  });

  it('a key revoked through the CLI is refused by all three by their second key check (within a second)', async () => {
    const key = await addKey('to revoke', 1000);
    for (let i = 0; i < 3; i++) expect((await lookup(i, key, world.lookupIds[0]))!.status).toBe(200);
    await keys('revoke', key.slice(3, 11));
    await Promise.all(
      bases.map((base, i) =>
        expectBySecondCheck(() => keyChecksOf(new URL(base).origin), async () => (await lookup(i, key, world.lookupIds[0]))!.status === 401, `instance ${i + 1}`),
      ),
    );
  });

  it('a SIGKILLed instance loses no charge: every answered lookup stays charged, nothing more than was sent', async () => {
    const quota = 1_000_000;
    const key = await addKey('kill', quota);
    let sent = 0;
    let answered = 0;
    const load = async (i: number, until: () => boolean) => {
      while (!until()) {
        sent++;
        const r = await lookup(i, key, world.lookupIds[sent % world.lookupIds.length]);
        if (r && [200, 404, 410].includes(r.status)) answered++;
        // A 503 (an origin or Redis timing out on a busy machine) charges nothing and is not counted as answered.
        else if (r && r.status !== 503) throw new Error(`lookup answered ${r.status} ${r.error}`);
      }
    };
    // Counted, not timed: the kill lands once the load is under way, and the stop once the survivors answered more.
    const until = (done: () => boolean) => eventually('the lookups counted', done, 60_000);
    let stop = false;
    const loads = [0, 1, 2].flatMap((i) => [load(i, () => stop), load(i, () => stop)]);
    try {
      await until(() => answered >= 60);
      await instances[2].kill();
      const atKill = answered;
      await until(() => answered >= atKill + 30);
    } finally {
      stop = true;
      await Promise.all(loads);
    }
    const charged = await used(0, key, quota);
    expect(charged).toBeGreaterThanOrEqual(answered);
    expect(charged).toBeLessThanOrEqual(sent);
    expect(answered).toBeGreaterThan(50);
  });

  it('Redis stopped mid-load: costing requests answer 503 state_unavailable and charge nothing; restarted, answers resume', async () => {
    const quota = 1_000_000;
    const key = await addKey('outage', quota);
    let answered = 0;
    let unavailable = 0;
    let phase: 'up' | 'down' | 'back' | 'stop' = 'up';
    const load = async (i: number) => {
      while (phase !== 'stop') {
        const r = (await lookup(i, key, world.lookupIds[0]))!;
        if (r.status === 200) answered++;
        else {
          expect(r).toEqual({ status: 503, error: 'state_unavailable' });
          unavailable++;
        }
        if (phase === 'down') await sleep(10);
      }
    };
    const loads = [0, 1, 0, 1].map(load);
    // Counted, not timed: Redis goes once lookups are answered, comes back once the outage was seen, and the load
    // stops once answers resumed; each wait is bounded only to end a test that would never get there.
    try {
      await eventually('lookups answered before the outage', () => answered > 0);
      phase = 'down';
      await redis.stop();
      const free = await client(bases[0])('/'); // free endpoints keep answering
      expect(free.status).toBe(200);
      await eventually('a lookup refused while Redis is down', () => unavailable > 0);
      await redis.start();
      phase = 'back';
      const answeredBefore = answered;
      await eventually('answers to resume by themselves', () => answered >= answeredBefore + 20, 60_000);
    } finally {
      if (redis.pid() === null) await redis.start();
      phase = 'stop';
      await Promise.all(loads);
    }
    // Exactly the answered lookups are charged, once what scripts charged with their answers lost is refunded.
    await eventually('the charges to equal the answers', async () => (await used(0, key, quota)) === answered).catch(() => {});
    expect(await used(0, key, quota)).toBe(answered);
  });
});
