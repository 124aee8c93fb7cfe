// A request holds a bounded number of bytes: a 100-item batch of the largest entity the compiler accepts (a shard
// just under MAX_SHARD_BYTES as the runtime expands it, nearly all bridges, ~25 MB of answer) raises the serving
// process's peak RSS by at most twice its answer (docs/integrity.md states the budget). Measured on the real server,
// a child process, through /proc/<pid>/status.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SHARD_BYTES } from '../../common/limits.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { MAX_BATCH_ITEMS } from '../../common/request-limits.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { LARGE_ID, makeLargeEntityWorld } from '../fixtures/large-entity.ts';
import { spawnServe, type ServerProcess } from './support/child-server.ts';

const ALL = 'aliases,attributes,bridges,relationships,overlay';
let root: string;
let server: ServerProcess;
let base: string;
let key: string;
let shardBytes: number;

/** VmRSS and VmHWM (peak) of the server process, in bytes. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-batch-memory-'));
  const world = await makeLargeEntityWorld(root);
  shardBytes = world.shardBytes;
  const keys = join(root, 'keys.json');
  writeFileSync(keys, '{"keys":[]}\n');
  key = (await addKey({ file: keys, name: 'big', quota: 1_000_000, rate: 1000 })).key;
  // A young generation of 1 MiB a half: V8's default lets up to 16 MiB of garbage pile up per half before a
  // scavenge, so the peak would say as much about when V8 collected as about what the request holds (it read 36
  // to 59 MiB for the same batch).
  server = spawnServe(['--dist', world.dist, '--keys', keys, '--state', join(root, 'state'), '--port', '0'], ['--max-semi-space-size=1']);
  base = await server.ready;
});
afterAll(async () => {
  await server?.kill();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('memory of one request', () => {
  it('a 100-item batch of the largest entity stays within twice its answer over the RSS before it', async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    expect(shardBytes).toBeGreaterThan(MAX_SHARD_BYTES * 0.99);
    // Warm: the release open, its buckets and the shard read once, the code paths compiled.
    const single = await fetch(`${base}/entities/${LARGE_ID}?include=${ALL}`, { headers });
    const one = await single.text();
    validateResponse({ method: 'GET', path: `/api/v1/entities/${LARGE_ID}`, status: single.status, headers: single.headers, body: one });
    await (await fetch(`${base}/batch`, { method: 'POST', headers, body: JSON.stringify({ include: ALL, requests: [{ type: 'entity', id: LARGE_ID }] }) })).arrayBuffer();

    // Reset the process's peak to its current RSS (Linux clear_refs 5), so the peak after is this request's and not
    // start-up's (the contract's compiled checks and the warm-up allocate and free more than a batch holds).
    writeFileSync(`/proc/${server.proc.pid}/clear_refs`, '5');
    const before = memory();
    const res = await fetch(`${base}/batch`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ include: ALL, requests: Array.from({ length: MAX_BATCH_ITEMS }, () => ({ type: 'entity', id: LARGE_ID })) }),
    });
    const text = await res.text();
    const after = memory();
    validateResponse({ method: 'POST', path: '/api/v1/batch', status: res.status, headers: res.headers, body: text });
    const answer = Buffer.byteLength(text);
    // Every item is the single lookup's bytes: nothing was cut to stay within the budget.
    expect(answer).toBe(`{"results":[],"count":${MAX_BATCH_ITEMS}}`.length + MAX_BATCH_ITEMS * (`{"status":200,"body":}`.length + Buffer.byteLength(one)) + MAX_BATCH_ITEMS - 1);
    const grew = after.peak - before.rss;
    console.log(`[batch-memory] shard ${shardBytes} B, answer ${(answer / 2 ** 20).toFixed(1)} MiB; RSS ${(before.rss / 2 ** 20).toFixed(0)} MiB before, peak ${(after.peak / 2 ** 20).toFixed(0)} MiB after (+${(grew / 2 ** 20).toFixed(0)} MiB)`);
    expect(grew).toBeLessThanOrEqual(2 * answer);
  });
});
