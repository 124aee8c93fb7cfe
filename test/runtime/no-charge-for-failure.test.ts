// Nobody pays for a server error: a lookup answered 503 (a damaged file, a mirror origin that is down) gives its
// charge back exactly once, under concurrency too; a batch answers its other items and charges only them; each
// damaged file writes one log line naming the file and the check, never a key; an origin that fails writes one line
// when it goes and one when it returns, however many requests fail meanwhile, and /readyz says 503 while it is away.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import type { LogRecord } from '../../runtime/problem-log.ts';
import { client } from '../helpers/api-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';
import { ID, makeHandWorld, STAMPS, type World } from '../fixtures/hand-world.ts';

let world: World;
let damaged: string;
let keysFile: string;
let key: string;
let rt: InProcessRuntime;
const logs: LogRecord[] = [];
const temps: string[] = [];

/** Flips one byte inside `id`'s shard, wherever its pack is. Returns the pack's name. */
function flipShardOf(dist: string, stamp: string, id: string): string {
  const shards = join(dist, stamp, 'public', 'shards');
  const marker = `{"reep_id":"${id}"`;
  const pack = readdirSync(shards).find((n) => readFileSync(join(shards, n)).includes(marker))!;
  const bytes = readFileSync(join(shards, pack));
  bytes[bytes.indexOf(marker) + 40] ^= 0x20;
  writeFileSync(join(shards, pack), bytes);
  return pack;
}

beforeAll(async () => {
  world = await makeHandWorld();
  damaged = mkdtempSync(join(tmpdir(), 'ir-nocharge-'));
  temps.push(damaged);
  cpSync(world.dist, damaged, { recursive: true });
  flipShardOf(damaged, STAMPS[1], ID.arsenal);
  keysFile = join(world.root, 'keys.json');
  key = (await addKey({ file: keysFile, name: 'partner', quota: 100_000, rate: 100_000 })).key;
  // The SQLite state store: credits as durable state, read back over HTTP.
  rt = await openInProcess({ dist: damaged, keys: keysFile, state: join(world.root, 'state'), problems: (r) => logs.push(r) });
});
afterAll(async () => {
  await rt?.close();
  for (const d of [...temps, world?.root]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('no charge for a failure', () => {
  it('300 concurrent requests, a third failing after their charge: every failed lookup is refunded exactly once', async () => {
    const call = client(rt.url + '/api/v1', key);
    const before = (await call('/key')).json.key.credits_remaining;
    logs.length = 0;
    const batch = { requests: [{ type: 'entity', id: ID.chelsea }, { type: 'entity', id: ID.arsenal }, { type: 'entity', id: ID.palmer }, { type: 'entity', id: ID.never }] };
    const jobs = Array.from({ length: 100 }, () => [
      call(`/entities/${ID.arsenal}?include=bridges`),
      call(`/entities/${ID.chelsea}`),
      call('/batch', { body: batch }),
    ]).flat();
    const answers = await Promise.all(jobs);
    for (const [i, r] of answers.entries()) {
      if (i % 3 === 0) {
        expect(r.status).toBe(503);
        expect(r.json).toMatchObject({ error: 'artefact_corrupt', detail: ID.arsenal });
      } else if (i % 3 === 1) expect(r.status).toBe(200);
      else {
        expect(r.status).toBe(200);
        expect(r.json.results.map((x: { status: number }) => x.status)).toEqual([200, 503, 200, 404]);
        expect(r.json.results[1].body).toMatchObject({ error: 'artefact_corrupt', detail: ID.arsenal });
      }
    }
    const after = (await call('/key')).json.key.credits_remaining;
    // Charged: 100 single lookups answered, and 3 of each batch's 4 items (the 404 is a lookup).
    expect(before - after).toBe(100 + 100 * 3);
    // Each failure, single or in a batch, wrote one line naming the pack and the check, and no key.
    const failures = logs.filter((l) => l.event === 'artefact_corrupt');
    expect(failures.length).toBe(200);
    for (const l of failures) {
      expect(l.line).toMatch(new RegExp(`^\\[serve\\] artefact_corrupt: ${damaged}/${STAMPS[1]}/public/shards/pack-[0-9a-f]+\\.jsonl: crc32 of bytes \\d+\\+\\d+ does not match the index entry of ${ID.arsenal}$`));
      expect(l.line).not.toContain(key.slice(12));
    }
  });

  it('shows the credits after the give-back on the failed answer itself', async () => {
    const call = client(rt.url + '/api/v1', key);
    const before = (await call('/key')).json.key.credits_remaining;
    const r = await call(`/entities/${ID.arsenal}`);
    expect(r.status).toBe(503);
    expect(Number(r.headers.get('x-register-credits-remaining'))).toBe(before);
    const b = await call('/batch', { body: { requests: [{ type: 'entity', id: ID.arsenal }, { type: 'entity', id: ID.palmer }] } });
    expect(Number(b.headers.get('x-register-credits-remaining'))).toBe(before - 1);
    expect((await call('/key')).json.key.credits_remaining).toBe(before - 1);
  });
});

describe('a mirror whose origin fails', () => {
  let upload: string;
  let mirror: ServedDir;
  let remote: InProcessRuntime;

  beforeAll(async () => {
    upload = mkdtempSync(join(tmpdir(), 'ir-nocharge-mirror-'));
    temps.push(upload);
    cpSync(join(world.dist, 'index.json'), join(upload, 'index.json'));
    for (const stamp of STAMPS) {
      mkdirSync(join(upload, stamp), { recursive: true });
      cpSync(join(world.dist, stamp, 'public'), join(upload, stamp, 'public'), { recursive: true });
    }
    mirror = await serveDir(upload);
    remote = await openInProcess({ dist: mirror.baseUrl, privateDist: null, keys: keysFile, state: join(world.root, 'state-mirror'), problems: (r) => logs.push(r) });
  });
  afterAll(async () => {
    await remote?.close();
    await mirror?.close();
  });

  it('answers 503 upstream_unavailable when the origin answers 5xx, charges nothing, logs the outage once and its end once; a wrong byte from it stays artefact_corrupt', async () => {
    const call = client(remote.url + '/api/v1', key);
    expect((await call('/meta')).status).toBe(200); // release and directories loaded while the origin is fine
    const before = (await call('/key')).json.key.credits_remaining;
    logs.length = 0;
    mirror.hook = (req, res) => {
      if (!/\/shards\//.test(req.url ?? '')) return false;
      res.writeHead(502);
      res.end('bad gateway');
      return true;
    };
    const r = await call(`/entities/${ID.palmer}`);
    expect(r.status).toBe(503);
    expect(r.json.error).toBe('upstream_unavailable');
    const b = await call('/batch', { body: { requests: [{ type: 'entity', id: ID.match }, { type: 'resolve', provider: 'transfermarkt', namespace: 'verein', external_id: '11' }] } });
    expect(b.json.results.map((x: { status: number; body: { error?: string } }) => [x.status, x.body.error])).toEqual([[503, 'upstream_unavailable'], [503, 'upstream_unavailable']]);
    // Twenty more failing lookups add no line: the outage is one line, naming the URL that failed and why.
    const more = await Promise.all(Array.from({ length: 20 }, () => call(`/entities/${ID.palmer}`)));
    expect(more.map((m) => m.json.error)).toEqual(Array(20).fill('upstream_unavailable'));
    expect((await call('/key')).json.key.credits_remaining).toBe(before);
    const lines = logs.filter((l) => l.event === 'upstream_unavailable');
    expect(lines.length).toBe(1);
    expect(lines[0].line).toMatch(new RegExp(`^\\[serve\\] upstream_unavailable: GET ${mirror.baseUrl}${STAMPS[1]}/public/shards/pack-[0-9a-f]+\\.jsonl \\(bytes=\\d+-\\d+\\): HTTP 502; what needs the origin answers 503 until it answers again$`));
    expect(logs.filter((l) => l.event === 'upstream_available')).toEqual([]);

    // The origin recovers: nothing was cached from the failure, and one line says it answers again.
    mirror.hook = null;
    expect((await call(`/entities/${ID.palmer}`)).status).toBe(200);
    expect(logs.filter((l) => l.event === 'upstream_available').map((l) => l.line)).toEqual([`[serve] ${mirror.baseUrl}: the origin answers again`]);
    expect(logs.filter((l) => l.event === 'upstream_unavailable')).toHaveLength(1);

    // The origin answers, with a flipped byte: that is damage, not an outage.
    mirror.hook = (req, res) => {
      if (!/\/shards\//.test(req.url ?? '') || !req.headers.range) return false;
      const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range)!;
      const file = join(upload, decodeURIComponent((req.url ?? '').split('?')[0]));
      const bytes = readFileSync(file).subarray(Number(m[1]), Number(m[2]) + 1);
      bytes[bytes.length >> 1] ^= 0x01;
      res.writeHead(206, { 'content-range': `bytes ${m[1]}-${m[2]}/${readFileSync(file).length}`, 'content-length': bytes.length });
      res.end(bytes);
      return true;
    };
    try {
      const flipped = await call(`/entities/${ID.chelsea}/bridges`);
      expect([flipped.status, flipped.json.error]).toEqual([503, 'artefact_corrupt']);
    } finally {
      mirror.hook = null;
    }
  });

  it('/readyz answers 503 while the origin drops every connection, and 200 once it answers again', async () => {
    const ops = client(remote.url);
    // (No /readyz before the outage: its answer would be kept for a second.)
    logs.length = 0;
    mirror.hook = (req) => {
      req.socket.destroy();
      return true;
    };
    try {
      // The origin is asked at most once a second, so the first 503 may take that long to come.
      await eventually('/readyz to say 503', async () => (await ops('/readyz')).status === 503);
      const down = await ops('/readyz');
      expect([down.status, down.json.error, down.json.message]).toEqual([503, 'not_ready', "The mirror's origin does not answer."]);
      expect((await ops('/healthz')).status).toBe(200);
    } finally {
      mirror.hook = null;
    }
    await eventually('/readyz to say 200', async () => (await ops('/readyz')).status === 200);
    expect(logs.filter((l) => l.event.startsWith('upstream_')).map((l) => l.event)).toEqual(['upstream_unavailable', 'upstream_available']);
  });

  it('answers 503 upstream_unavailable when the origin cannot be reached at all, at no charge', async () => {
    const call = client(remote.url + '/api/v1', key);
    expect((await call('/meta')).status).toBe(200);
    const before = (await call('/key')).json.key.credits_remaining;
    logs.length = 0;
    await mirror.close(); // connections refused from now on
    const r = await call(`/entities/${ID.season}/relationships`);
    expect([r.status, r.json.error]).toEqual([503, 'upstream_unavailable']);
    expect((await call('/key')).json.key.credits_remaining).toBe(before);
    expect(logs.filter((l) => l.event === 'upstream_unavailable').map((l) => l.file)).toEqual([expect.stringMatching(new RegExp(`^GET ${mirror.baseUrl}${STAMPS[1]}/public/`))]);
  });
});
