// `register serve --workers 2`: two worker processes answer on one port, each with its own connection to the one
// SQLite state database. Limits stay exact across the workers, acknowledgements are durable, SIGTERM stops every
// process cleanly, and every response still matches the OpenAPI document.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { openSqliteStore } from '../../runtime/state/sqlite-store.ts';
import { client } from '../helpers/api-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { ID } from '../fixtures/hand-world.ts';
import { spawnServe, type ServerProcess } from '../reliability/support/child-server.ts';
import { makeFuzzWorld, type FuzzWorld } from '../reliability/support/reliability-world.ts';

let world: FuzzWorld;
let server: ServerProcess;
let base: string;
let state: string;
const keys = { counted: '', limited: '' };

beforeAll(async () => {
  world = await makeFuzzWorld();
  keys.counted = (await addKey({ file: world.keysFile, name: 'counted', quota: 40, rate: 1_000_000 })).key;
  keys.limited = (await addKey({ file: world.keysFile, name: 'limited', quota: 1_000_000, rate: 3 })).key;
  state = join(world.root, 'state');
  server = spawnServe(['--dist', world.dist, '--keys', world.keysFile, '--state', state, '--port', '0', '--workers', '2']);
  base = await server.ready;
});

afterAll(async () => {
  await server?.kill();
});

describe('serve --workers 2', () => {
  it('runs two worker processes under the primary, whose listening line names the state store and the keys', () => {
    // Only the forked workers run the register command (the loader may have an esbuild service child too).
    const children = execFileSync('pgrep', ['-P', String(server.proc.pid), '-f', 'register.mjs serve'], { encoding: 'utf8' }).trim().split('\n');
    expect(children).toHaveLength(2);
    expect(server.stderr()).toContain(`(dist ${world.dist}, state sqlite:${join(state, 'register.db')}, keys ${world.keysFile}, 2 worker processes)\n`);
  });

  it('spends a key exactly once across workers: 100 concurrent lookups on 40 credits answer 40', async () => {
    // Separate connections, so the primary hands them to both workers.
    const call = client(base, keys.counted);
    const results = await Promise.all(Array.from({ length: 100 }, () => call(`/entities/${ID.arsenal}`, { headers: { connection: 'close' } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(40);
    expect(results.filter((r) => r.status === 402)).toHaveLength(60);
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-register-credits-remaining')));
    expect(new Set(remaining).size).toBe(40); // no two answers were given the same credit
    expect(Math.min(...remaining)).toBe(0);
  });

  it('holds one rate window for a key across workers', async () => {
    // 12 requests at once on a key with 3 a second. Each is admitted, if at all, between its sending and its answer
    // (this process's clock, the one the workers read too), so an interval is all a test can know of the moment. On a
    // quiet machine they all fall within one second, and exactly 3 are admitted; on a busy one the burst may spread
    // over more than a second, and more may be admitted in later windows. What holds at any speed: the first 3 are
    // admitted (the window starts empty), the rest are refused with 429, and no 4 admitted requests fit in one second,
    // as one window per worker would let them (up to 6 in a short burst).
    const call = client(base, keys.limited);
    const timed = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const sent = performance.now();
        const r = await call(`/entities/${ID.arsenal}`, { headers: { connection: 'close' } });
        return { status: r.status, sent, answered: performance.now() };
      }),
    );
    const admitted = timed.filter((r) => r.status === 200);
    expect(timed.filter((r) => r.status !== 200 && r.status !== 429)).toEqual([]);
    expect(admitted.length).toBeGreaterThanOrEqual(3);
    // Any 4 admitted: their admissions span at least the window (1000 ms, less 1 ms for the server's whole-ms clock).
    // A burst answered within a second therefore admits exactly 3.
    for (const four of subsets(admitted, 4)) {
      const span = Math.max(...four.map((r) => r.answered)) - Math.min(...four.map((r) => r.sent));
      expect(span, `4 requests admitted within ${Math.round(span)} ms`).toBeGreaterThanOrEqual(999);
    }
  });

  it('answers an acknowledgement once it is durable, and SIGTERM stops every process with exit 0', async () => {
    const ack = await client(base, world.keys.opta)('/notices/ack', { body: { finding_ids: ['opta-2'], actor: 'ops', note: null } });
    expect(ack.status).toBe(200);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(() => execFileSync('pgrep', ['-f', state])).toThrow(); // no worker left behind
    const store = await openSqliteStore({ file: join(state, 'register.db'), log: () => {} });
    try {
      const detail = (await store.noticeDetails('opta', 7, ['opta-2'])).get('opta-2');
      expect(detail?.acknowledged_at).not.toBeNull();
      expect(detail?.actor).toBe('ops');
    } finally {
      await store.close();
    }
  });

  it('after a SIGKILL of the primary, the workers go too, and a restart on the same state keeps every answered charge', async () => {
    const started = spawnServe(['--dist', world.dist, '--keys', world.keysFile, '--state', state, '--port', '0', '--workers', '2']);
    const call = client(await started.ready, keys.counted);
    const before = await call(`/entities/${ID.arsenal}`); // the quota was spent above: answers 402 with the count
    expect(before.status).toBe(402);
    const partner = client(await started.ready, world.keys.partner);
    const answered = (await Promise.all(Array.from({ length: 20 }, () => partner(`/entities/${ID.arsenal}`)))).filter((r) => r.status === 200);
    const left = Math.min(...answered.map((r) => Number(r.headers.get('x-register-credits-remaining'))));
    await started.kill();
    // No orphaned worker keeps serving without its state store: each notices its primary's death and exits.
    await eventually('the workers to exit after their primary', () => pgrepCount(state) === 0);
    const again = spawnServe(['--dist', world.dist, '--keys', world.keysFile, '--state', state, '--port', '0', '--workers', '2']);
    try {
      const after = await client(await again.ready, world.keys.partner)(`/entities/${ID.arsenal}`);
      expect(after.status).toBe(200);
      expect(Number(after.headers.get('x-register-credits-remaining'))).toBe(left - 1);
    } finally {
      again.proc.kill('SIGTERM');
      await again.exited;
    }
  });
});

function pgrepCount(pattern: string): number {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').length;
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
}

/** Every `k`-element subset of `items`. */
function subsets<T>(items: T[], k: number): T[][] {
  if (k === 0) return [[]];
  return items.flatMap((item, i) => subsets(items.slice(i + 1), k - 1).map((rest) => [item, ...rest]));
}
