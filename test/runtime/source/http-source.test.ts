// The http ShardSource driver against the shared contract, served by serve-handler (the `serve` package's core)
// on 127.0.0.1, plus the ways a real CDN or mirror can misbehave.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../../runtime/read-errors.ts';
import { createHttpSource } from '../../../runtime/source/http-source.ts';
import { bytesOf, expectBytes, shardSourceContract } from './shard-source-contract.ts';
import { eventually } from '../../helpers/eventually.ts';
import { serveDir, type ServedDir } from '../../helpers/serve-dir.ts';

const servers = new Map<string, ServedDir>();
afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

shardSourceContract('http', async (root, opts) => {
  let server = servers.get(root);
  if (!server) servers.set(root, (server = await serveDir(root)));
  const served = server;
  const source = createHttpSource({ baseUrl: served.baseUrl, cacheBytes: opts.small ? 2500 : undefined });
  const start = served.log.length;
  return {
    source,
    fetches: () => served.log.length - start,
    retained: () => ({ used: source.stats().cachedBytes, limit: source.stats().cacheBytes }),
  };
});

describe('http source', () => {
  let root: string;
  let served: ServedDir;
  const data = bytesOf(50_000, 3);

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'http-source-'));
    // Not at the root: root files are mutable pointers, which the source never caches.
    mkdirSync(join(root, 'r'));
    writeFileSync(join(root, 'r/data.bin'), data);
    served = await serveDir(root);
  });
  afterAll(async () => {
    await served.close();
    rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    served.hook = null;
    served.log.length = 0;
  });

  it('is served by a server that honours Range (serve-handler)', async () => {
    const res = await fetch(`${served.baseUrl}r/data.bin`, { headers: { range: 'bytes=10-19' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 10-19/${data.length}`);
    expectBytes(new Uint8Array(await res.arrayBuffer()), data.subarray(10, 20));
  });

  it('shares a transient range while in flight but leaves keeping it to the caller', async () => {
    const source = createHttpSource({ baseUrl: served.baseUrl });
    const together = await Promise.all(Array.from({ length: 4 }, () => source.readRange('r/data.bin', 200, 64, true)));
    for (const r of together) expectBytes(r, data.subarray(200, 264));
    expect(served.log).toHaveLength(1);
    expect(source.stats().cachedBytes).toBe(0);
    expectBytes(await source.readRange('r/data.bin', 200, 64, true), data.subarray(200, 264));
    expect(served.log).toHaveLength(2);
    await source.close();
  });

  it('sends one Range request per read, uncompressed', async () => {
    const source = createHttpSource({ baseUrl: served.baseUrl });
    expectBytes(await source.readRange('r/data.bin', 100, 50), data.subarray(100, 150));
    expect(served.log).toEqual([expect.objectContaining({ method: 'GET', url: '/r/data.bin', range: 'bytes=100-149', acceptEncoding: 'identity' })]);
    await source.close();
  });

  it('slices the body when the server ignores Range, and keeps the whole file', async () => {
    served.hook = (req) => {
      delete req.headers.range;
      return false;
    };
    const source = createHttpSource({ baseUrl: served.baseUrl });
    expectBytes(await source.readRange('r/data.bin', 1000, 10), data.subarray(1000, 1010));
    expectBytes(await source.readRange('r/data.bin', 2000, 10), data.subarray(2000, 2010));
    expectBytes((await source.readFile('r/data.bin'))!, data);
    expect(served.log).toHaveLength(1);
    await expect(source.readRange('r/data.bin', data.length - 1, 2)).rejects.toThrow(/past the end/);
    await source.close();
  });

  it('refuses a 206 with the wrong Content-Range', async () => {
    served.hook = (_req, res) => {
      res.writeHead(206, { 'content-range': `bytes 0-9/${data.length}`, 'content-length': '10' });
      res.end(Buffer.from(data.subarray(0, 10)));
      return true;
    };
    const source = createHttpSource({ baseUrl: served.baseUrl });
    await expect(source.readRange('r/data.bin', 100, 10)).rejects.toThrow(/\/r\/data\.bin \(bytes=100-109\): server sent bytes 0-9/);
    await source.close();
  });

  it('names the URL and status on server errors as an upstream failure, and never the credentials', async () => {
    served.hook = (_req, res) => {
      res.writeHead(503);
      res.end('busy');
      return true;
    };
    const base = new URL(served.baseUrl);
    const source = createHttpSource({ baseUrl: `http://mirror-user:s3cret-pass@${base.host}/dist/` });
    expect(source.label).toBe(`http:http://${base.host}/dist/`);
    const err = await source.readFile('rel/public/release.json').catch((e: Error) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).url).toBe(`GET http://${base.host}/dist/rel/public/release.json`);
    expect((err as UpstreamError).reason).toBe('HTTP 503');
    expect((err as Error).message).not.toMatch(/s3cret|mirror-user/);
    // The credentials travel as Basic auth instead.
    expect(served.log[0].authorization).toBe('Basic ' + Buffer.from('mirror-user:s3cret-pass').toString('base64'));
    await source.close();
  });

  it('times out a request that hangs, naming the path', async () => {
    served.hook = () => true; // never answers
    // Long enough that the retry below (a local read) cannot time out on a busy machine; the hang is what times out.
    const source = createHttpSource({ baseUrl: served.baseUrl, timeoutMs: 2000 });
    await expect(source.readRange('r/data.bin', 0, 10)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/r\/data\.bin \(bytes=0-9\): timed out after 2000 ms$/);
    // The failure is not cached: the next read retries.
    served.hook = null;
    expectBytes(await source.readRange('r/data.bin', 0, 10), data.subarray(0, 10));
    await source.close();
  });

  it('aborts in-flight requests on close', async () => {
    served.hook = () => true;
    const source = createHttpSource({ baseUrl: served.baseUrl });
    const pending = source.readFile('r/data.bin');
    // In flight means the origin holds it: on a busy machine the request can arrive well after 20 ms, and would
    // then land in the next test's request log.
    await eventually('the read to reach the origin', () => served.log.some((r) => r.method === 'GET'));
    await source.close();
    await expect(pending).rejects.toThrow(/source closed/);
  });

  it('checks existence with HEAD for a zero-length range', async () => {
    const source = createHttpSource({ baseUrl: served.baseUrl });
    expect(await source.readRange('r/data.bin', data.length, 0)).toEqual(new Uint8Array(0));
    await expect(source.readRange('r/data.bin', data.length + 1, 0)).rejects.toThrow(/past the end/);
    expect(served.log.map((r) => r.method)).toEqual(['HEAD', 'HEAD']);
    await source.close();
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(() => createHttpSource({ baseUrl: 'file:///srv/dist/' })).toThrow(/http\(s\)/);
  });
});
