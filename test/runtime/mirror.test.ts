// A mirror: only the public part of dist (index.json and <stamp>/public) is uploaded to a static host that
// honours Range requests (the `serve` package here). The runtime reading it over HTTP answers byte-identical
// bodies to the runtime reading the local disk, and never needs anything private from the host.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';
import { client } from '../helpers/api-client.ts';
import { ID, makeHandWorld, type World } from '../fixtures/hand-world.ts';

let world: World;
let upload: string;
let mirror: ServedDir;
let local: Runtime;
let remote: Runtime;
let key: string;

beforeAll(async () => {
  world = await makeHandWorld();
  upload = mkdtempSync(join(tmpdir(), 'ir-mirror-'));
  cpSync(join(world.dist, 'index.json'), join(upload, 'index.json'));
  for (const stamp of readdirSync(world.dist).filter((n) => /^\d{8}T\d{6}Z$/.test(n))) {
    mkdirSync(join(upload, stamp), { recursive: true });
    cpSync(join(world.dist, stamp, 'public'), join(upload, stamp, 'public'), { recursive: true });
  }
  mirror = await serveDir(upload);
  const keys = join(world.root, 'keys.json');
  key = (await addKey({ file: keys, name: 'p', quota: 100000, rate: 100000, provider: 'opta' })).key;
  local = await startRuntime({ dist: world.dist, keys, state: join(world.root, 'state-local'), port: 0 });
  remote = await startRuntime({ dist: mirror.baseUrl, privateDist: world.dist, keys, state: join(world.root, 'state-remote'), port: 0 });
});
afterAll(async () => {
  await local?.close();
  await remote?.close();
  await mirror?.close();
});

describe('serving a mirror over HTTP', () => {
  it('answers the same bytes as the local dist', async () => {
    const a = client(local.url + '/api/v1', key);
    const b = client(remote.url + '/api/v1', key);
    const paths = [
      '/', '/meta', '/providers', '/coverage', '/provider-notices/summary',
      `/entities/${ID.arsenal}?include=aliases,attributes,bridges,relationships,overlay`, `/entities/${ID.mergedOld}`, `/entities/${ID.tomb}`,
      `/entities/${ID.never}`, `/entities/${ID.arsenal}/bridges`, `/entities/${ID.season}/relationships`,
      '/resolve/transfermarkt/11?namespace=verein', '/resolve/transfermarkt/500?namespace=verein', '/resolve/flashscore/palmer-cole%2Fh8agbDt7',
      '/search?q=arsenal', '/search?q=cole%20pal', '/changes/releases', '/changes?limit=5', '/changes/summary',
    ];
    for (const p of paths) {
      const [x, y] = await Promise.all([a(p), b(p)]);
      expect(y.status, p).toBe(x.status);
      expect(y.text, p).toBe(x.text);
      expect(y.headers.get('x-register-release-stamp')).toBe(x.headers.get('x-register-release-stamp'));
    }
    const r = await b('/batch', { body: { requests: [{ type: 'entity', id: ID.arsenal }, { type: 'resolve', provider: 'fbref', external_id: 'old1' }] } });
    expect(r.status).toBe(200);
  });

  it('reads notices from the local private part, never from the host', async () => {
    const b = client(remote.url + '/api/v1', key);
    const r = await b('/notices');
    expect(r.json.total).toBe(3);
    expect(mirror.log.some((q) => q.url.includes('private'))).toBe(false);
  });

  it('overlaps batches that wait on the host, rather than composing them a couple at a time as over a local disk', async () => {
    // A slow host: every pack read answers after 60 ms. Six batches of one uncached entity each, sent together.
    const serveHandler = createRequire(import.meta.url)('serve-handler') as (req: IncomingMessage, res: ServerResponse, config: object) => Promise<void>;
    let inFlight = 0;
    let most = 0;
    mirror.hook = (req, res) => {
      if (!/\.(pack|jsonl)$/.test((req.url ?? '').split('?')[0])) return false;
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        void serveHandler(req, res, { public: upload, directoryListing: false, cleanUrls: false, etag: true });
      }, 60);
      return true;
    };
    const fresh = await startRuntime({ dist: mirror.baseUrl, privateDist: world.dist, keys: join(world.root, 'keys.json'), state: join(world.root, 'state-slow'), port: 0 });
    try {
      const b = client(fresh.url + '/api/v1', key);
      await b('/meta'); // the release and its directories are loaded before the batches race
      const ids = [ID.arsenal, ID.chelsea, ID.palmer, ID.match, ID.league, ID.season];
      const answers = await Promise.all(ids.map((id) => b('/batch', { body: { requests: [{ type: 'entity', id }] } })));
      for (const [i, r] of answers.entries()) expect(r.json.results[0], ids[i]).toMatchObject({ status: 200, body: { reep_id: ids[i] } });
      // Two batches at a time would never have more than two pack reads waiting at once.
      expect(most).toBeGreaterThan(2);
    } finally {
      mirror.hook = null;
      await fresh.close();
    }
  });

  it('reads buckets with Range requests, not whole packs', () => {
    const packReads = mirror.log.filter((q) => /\.(pack|jsonl)$/.test(q.url.split('?')[0]));
    expect(packReads.length).toBeGreaterThan(0);
    expect(packReads.every((q) => q.range !== undefined)).toBe(true);
  });
});

describe('a mirror whose origin is repaired', () => {
  it('reads a piece that failed its check from the origin again, so it answers once the origin is whole, without a restart', async () => {
    // The stamp /api/v1 serves.
    const stamp: string = (await client(local.url + '/api/v1', key)('/meta')).headers.get('x-register-release-stamp')!;
    const dir = join(upload, stamp, 'public', 'resolve');
    const pack = join(dir, readdirSync(dir).find((f) => /^keys-[0-9a-f]+\.pack$/.test(f))!);
    const whole = readFileSync(pack);
    const path = '/resolve/transfermarkt/11?namespace=verein';
    const fresh = await startRuntime({ dist: mirror.baseUrl, privateDist: world.dist, keys: join(world.root, 'keys.json'), state: 'memory:', port: 0, problems: () => {} });
    try {
      // Every bucket of the pack damaged at the origin, same length: each read fails its CRC-32.
      writeFileSync(pack, whole.map((b) => b ^ 0xff));
      const damaged = await client(fresh.url + '/api/v1', key)(path);
      expect(damaged.status).toBe(503);
      expect(damaged.json.error).toBe('artefact_corrupt');
      writeFileSync(pack, whole);
      const [want, got] = [await client(local.url + '/api/v1', key)(path), await client(fresh.url + '/api/v1', key)(path)];
      expect(got.status).toBe(200);
      expect(got.text).toBe(want.text);
    } finally {
      writeFileSync(pack, whole);
      await fresh.close();
    }
  });
});

describe('a --read-only mirror', () => {
  it('keeps quota in its state store across a restart, and answers acknowledgements 503 ack_storage_unavailable', async () => {
    const state = join(world.root, 'state-read-only');
    const limited = (await addKey({ file: join(world.root, 'keys.json'), name: 'mirror user', quota: 5, rate: 100000, provider: 'opta' })).key;
    const start = () => startRuntime({ dist: mirror.baseUrl, privateDist: world.dist, keys: join(world.root, 'keys.json'), state, readOnly: true, port: 0 });
    const first = await start();
    try {
      const b = client(first.url + '/api/v1', limited);
      for (let i = 0; i < 3; i++) expect((await b(`/entities/${ID.arsenal}`)).status).toBe(200);
      const ack = await b('/notices/ack', { body: { finding_ids: ['f1'] } });
      expect(ack.status).toBe(503);
      expect(ack.json.error).toBe('ack_storage_unavailable');
    } finally {
      await first.close();
    }
    // A restart hands out no fresh allowance: the mirror's counters are in its store like any instance's.
    const second = await start();
    try {
      const r = await client(second.url + '/api/v1', limited)(`/entities/${ID.arsenal}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-register-credits-remaining')).toBe('1');
    } finally {
      await second.close();
    }
  });
});
