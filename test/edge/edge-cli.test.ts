// The edge's commands as an operator runs them: `register edge build`, `edge publish --local` (twice: the second
// uploads nothing; nothing private in the public bucket), `edge dev` over what was published, keys managed with
// `register keys … --edge` through the admin route, and a SIGKILL of `edge dev` under load: started again on the same
// --persist, every answered charge and every acknowledgement is still there.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wranglerToml } from '../../edge/bundle.ts';
import { startLocalEdge } from '../../edge/local-edge.ts';
import { makeHandWorld, ID, type World } from '../fixtures/hand-world.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { runToExit } from '../helpers/run-command.ts';
import { ADMIN_TOKEN, CURSOR_SECRET, edgeOver, workerFile } from './edge-support.ts';
import { edgeKeyRepository } from '../../runtime/keys/edge-key-repository.ts';
import { addKey } from '../../runtime/keys/key-file.ts';

const env = { ...process.env, REGISTER_EDGE_ADMIN_TOKEN: ADMIN_TOKEN, REGISTER_CURSOR_SECRET: CURSOR_SECRET };
const register = (args: string[]) => runToExit(process.execPath, ['bin/register.mjs', ...args], { env });

let world: World;
let persist: string;
const running = new Set<ChildProcess>();

afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

beforeAll(async () => {
  world = await makeHandWorld();
  persist = join(mkdtempSync(join(tmpdir(), 'edge-cli-')), 'persist');
});

/** `register edge dev` on the test's dist and --persist (the tier's bundle); resolves with its URL once it listens. */
async function startDev(): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawnDev(['--port', '0', '--persist', persist]);
  child.once('exit', () => running.delete(child));
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`edge dev did not start: ${err}`)), 120_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`edge dev exited ${code}: ${err}`)));
  });
  return { child, url, stderr: () => err };
}

function spawnDev(args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['bin/register.mjs', 'edge', 'dev', '--dist', world.dist, '--worker', workerFile(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  return child;
}

/** A port free a moment ago, for a test that must poll it before the process it starts says which it took. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const json = (r: { body: Buffer }) => JSON.parse(r.body.toString());

/** The answering isolate's dist reads (R2 operations, Cache API hits and stores), through the admin route. */
async function sourceStats(url: string): Promise<{ reads: number; cacheHits: number; cachePuts: number }> {
  // Not rawRequest: the admin route is no part of the public API document.
  const r = await fetch(`${url}/_admin/source`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(r.status).toBe(200);
  return (await r.json()) ?? { reads: 0, cacheHits: 0, cachePuts: 0 };
}

/**
 * Every module the written bundle imports (static, dynamic or `require`), as esbuild parses it: the bundle carries
 * the pages' scripts as strings, whose text may mention `require(` without the Worker importing anything.
 */
async function importsOf(file: string): Promise<string[]> {
  const seen = new Set<string>();
  await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    logLevel: 'silent',
    plugins: [{ name: 'list', setup: (b) => b.onResolve({ filter: /.*/ }, (a) => (a.kind === 'entry-point' ? undefined : (seen.add(a.path), { path: a.path, external: true }))) }],
  });
  return [...seen].sort();
}

describe('register edge', () => {
  it('build writes one ES-module bundle without Node built-ins and a wrangler.toml with its bindings', async () => {
    const out = join(world.root, 'edge-build');
    const r = await register(['edge', 'build', '--out', out, '--bucket', 'reg-dist', '--private-bucket', 'reg-private']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/worker\.mjs \([\d.]+ KiB, [\d.]+ KiB gzipped\)/);
    expect(await importsOf(join(out, 'worker.mjs'))).toEqual(['cloudflare:workers']);
    const toml = readFileSync(join(out, 'wrangler.toml'), 'utf8');
    for (const want of ['binding = "DIST"', 'bucket_name = "reg-dist"', 'binding = "PRIVATE"', 'bucket_name = "reg-private"', 'class_name = "KeyObject"', 'class_name = "ProviderObject"', 'new_sqlite_classes', 'no_bundle = true']) expect(toml).toContain(want);
    expect(toml).not.toMatch(/^compatibility_flags/m);
    // Over a static host: the origin as a var, in place of the public bucket (the private one stays).
    const overHost = wranglerToml({ name: 'w', bucket: 'reg-dist', privateBucket: 'reg-private', origin: 'https://cdn.example.org/dist/' });
    expect(overHost).toContain('[vars]\nDIST_ORIGIN = "https://cdn.example.org/dist/"');
    expect(overHost).not.toContain('binding = "DIST"');
    expect(overHost).toContain('bucket_name = "reg-private"');
  });

  it('publish --local uploads the dist once, a second time nothing, and never a private file into the public bucket', async () => {
    const args = ['edge', 'publish', '--dist', world.dist, '--bucket', 'dist', '--private-bucket', 'private', '--local', '--persist', persist];
    const first = await register(args);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/ [1-9]\d* object\(s\) uploaded/);
    const again = await register(args);
    expect(again.stdout).toMatch(/ 0 object\(s\) uploaded \(0\.0 KiB of [\d.]+ KiB, 0\.0%\), [1-9]\d* already there/);
    const local = await startLocalEdge({ port: null, persist });
    try {
      type Bucket = {
        list(o: object): Promise<{ objects: { key: string }[]; truncated: boolean; cursor?: string }>;
        head(k: string): Promise<{ httpMetadata?: { cacheControl?: string } } | null>;
      };
      const bucket = async (b: string) => (await local.mf.getR2Bucket(b)) as unknown as Bucket;
      const keysIn = async (b: Bucket) => {
        const out: string[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 100; page++) {
          const listed = await b.list({ limit: 1000, cursor });
          out.push(...listed.objects.map((o) => o.key));
          if (!listed.truncated) break;
          cursor = listed.cursor;
        }
        return out;
      };
      const [pub, priv] = [await bucket('DIST'), await bucket('PRIVATE')];
      const pubKeys = await keysIn(pub);
      const privKeys = await keysIn(priv);
      expect(pubKeys.filter((k) => k.includes('/private/'))).toEqual([]);
      expect(privKeys.length).toBeGreaterThan(0);
      expect(privKeys.every((k) => /^\d{8}T\d{6}Z\/private\//.test(k))).toBe(true);
      expect((await pub.head('index.json'))?.httpMetadata?.cacheControl).toBe('public, max-age=5');
      const stamped = pubKeys.find((k) => k.endsWith('/public/manifest.json'))!;
      expect((await pub.head(stamped))?.httpMetadata?.cacheControl).toBe('public, max-age=31536000, immutable');
    } finally {
      await local.close();
    }
  });

  it('dev serves the published stamp; keys come and go through the CLI; a SIGKILL under load loses no answered charge or acknowledgement', async () => {
    const dev = await startDev();
    expect(dev.stderr()).toMatch(/ 0 object\(s\) uploaded/);
    const add = async (name: string, extra: string[] = []) => {
      const r = await register(['keys', 'add', '--name', name, '--quota', '500', '--rate', '1000', ...extra, '--edge', dev.url]);
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n').pop()!;
    };
    const key = await add('load');
    const opta = await add('opta', ['--provider', 'opta']);
    const listed = await register(['keys', 'list', '--edge', dev.url]);
    expect(listed.stdout).toMatch(/load .* active/);
    expect(listed.stdout).not.toMatch(/[0-9a-f]{64}/);
    const as = (k: string) => ({ authorization: `Bearer ${k}` });

    // The admin token opens the admin route and nothing else; an API key does not open the admin route.
    expect(json(await rawRequest(`${dev.url}/api/v1/key`, { headers: as(ADMIN_TOKEN) })).error).toBe('invalid_key');
    // Not rawRequest: the admin route is no part of the public API document.
    expect((await fetch(`${dev.url}/_admin/keys`, { headers: as(key) })).status).toBe(401);
    expect((await fetch(`${dev.url}/_admin/keys`)).status).toBe(401);

    const ack = await rawRequest(`${dev.url}/api/v1/notices/ack`, { method: 'POST', headers: { ...as(opta), 'content-type': 'application/json' }, body: JSON.stringify({ finding_ids: ['opta-2'], actor: 'ops', note: 'kept' }) });
    expect(ack.status).toBe(200);

    // The same five lookups on this isolate and, after the restart below, on a fresh one over the same Cache API:
    // the fresh isolate finds the immutable pieces there and reads fewer objects from R2.
    const ids = Object.values(ID).slice(0, 5);
    const lookups = async (url: string) => {
      const before = await sourceStats(url);
      for (const id of ids) expect((await rawRequest(`${url}/api/v1/entities/${id}?include=bridges`, { headers: as(opta) })).status).toBe(200);
      const after = await sourceStats(url);
      return { reads: after.reads - before.reads, cacheHits: after.cacheHits - before.cacheHits, cachePuts: after.cachePuts - before.cachePuts };
    };
    const cold = await lookups(dev.url);
    expect(cold.reads).toBeGreaterThan(0);
    expect(cold.cachePuts).toBeGreaterThan(0);

    // Lookups 8 at a time; edge dev is killed once 40 are answered, with more in flight.
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    let answered = 0;
    let killed = false;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < 400 && !killed; i += 8) {
          const r = await rawRequest(`${dev.url}/api/v1/entities/${ids[i % ids.length]}`, { headers: as(key), agent }).catch(() => null);
          if (r?.status === 200) answered++;
          if (answered >= 40 && !killed) {
            killed = true;
            dev.child.kill('SIGKILL');
          }
        }
      }),
    );
    agent.destroy();
    await new Promise((r) => (dev.child.exitCode !== null || dev.child.signalCode !== null ? r(null) : dev.child.once('exit', r)));
    expect(dev.stderr()).not.toContain(ADMIN_TOKEN);

    const again = await startDev();
    try {
      const credits = json(await rawRequest(`${again.url}/api/v1/key`, { headers: as(key) })).key.credits_remaining;
      expect(500 - credits).toBeGreaterThanOrEqual(answered);
      const notices = json(await rawRequest(`${again.url}/api/v1/notices`, { headers: as(opta) }));
      expect(notices.findings.find((f: { finding_id: string }) => f.finding_id === 'opta-2')).toMatchObject({ acknowledged: true });
      const warm = await lookups(again.url);
      expect(warm.cacheHits).toBeGreaterThan(0);
      expect(warm.reads).toBeLessThan(cold.reads);

      const revoked = await register(['keys', 'revoke', key.slice(3, 11), '--edge', again.url]);
      expect(revoked.status, revoked.stderr).toBe(0);
      expect(json(await rawRequest(`${again.url}/api/v1/entities/${ID.arsenal}`, { headers: as(key) })).error).toBe('revoked_key');
      expect((await register(['keys', 'list', '--edge', again.url])).stdout).toMatch(/load .* revoked/);
      const wrong = await runToExit(process.execPath, ['bin/register.mjs', 'keys', 'list', '--edge', again.url], { env: { ...env, REGISTER_EDGE_ADMIN_TOKEN: 'x'.repeat(40) } });
      expect(wrong.status).toBe(1);
      expect(wrong.stderr).toContain('refused the admin token');
    } finally {
      again.child.kill('SIGTERM');
      await new Promise((r) => (again.child.exitCode !== null ? r(null) : again.child.once('exit', r)));
    }
    expect(again.stderr()).not.toContain(ADMIN_TOKEN);
  });
  it('dev answers nothing until its local R2 is loaded: polled from its start, the port refuses, then answers 200', async () => {
    // A key in the Durable Objects of a --persist folder whose R2 is empty, so that dev loads the whole dist.
    const folder = join(mkdtempSync(join(tmpdir(), 'edge-cli-')), 'persist');
    const keyed = await edgeOver(null, folder);
    let key: string;
    try {
      ({ key } = await addKey({ repository: edgeKeyRepository(keyed.url!, ADMIN_TOKEN), name: 'waiter', quota: 1000, rate: 1000 }));
    } finally {
      await keyed.close();
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const paths = ['/', '/api/v1/meta', '/api/v1/providers'];
    const child = spawnDev(['--port', String(port), '--persist', folder]);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    let listening = false;
    /** Answers seen before `listening` was printed, and how many polls found the port closed then. */
    const early: string[] = [];
    let refused = 0;
    const poll = async (path: string): Promise<number | null> => {
      try {
        return (await rawRequest(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } })).status;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED' || (e as NodeJS.ErrnoException).code === 'ECONNRESET') return null;
        throw e;
      }
    };
    try {
      // Bounded by the dev process: it prints `listening`, or exits.
      let ended = false;
      void exited.then(() => (ended = true));
      while (!listening && !ended) {
        const seenBefore = /\[edge\] listening on /.test(err);
        for (const path of paths) {
          const status = await poll(path);
          if (status === null) {
            if (!seenBefore) refused++;
          } else if (!seenBefore) early.push(`${path} ${status}`);
        }
        listening = seenBefore;
        if (!listening) await new Promise((r) => setTimeout(r, 20));
      }
      expect(listening, err).toBe(true);
      expect(err).toMatch(/loaded .* into the local R2: .* [1-9]\d* object\(s\) uploaded/);
      expect(err.indexOf('loaded ')).toBeLessThan(err.indexOf('listening on '));
      // The port was polled while it loaded, and whatever answered before the line (the moment between workerd
      // binding the port and the line reaching here) answered from the loaded dist.
      expect(refused).toBeGreaterThan(0);
      expect(early.filter((e) => !e.endsWith(' 200'))).toEqual([]);
      for (const path of paths) expect(await poll(path), path).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
