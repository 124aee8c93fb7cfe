// Node and the edge on the sample releases (releases/) and, where it is beside the clone, the real v0 data: requests
// found by walking each release (search, then each found entity with and without every include, then a resolve of
// each of its bridges, its matches and the changelog) give the same status, body bytes and headers but Date on both
// runtimes, each answer validated against the OpenAPI document. On the samples, a second edge reads the dist not from
// R2 but from a static host (serve's handler over the dist folder, the Worker's DIST_ORIGIN): the same bytes again.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalEdge, type LocalEdge } from '../../edge/local-edge.ts';
import { publishDist } from '../../edge/publish.ts';
import { edgeKeyRepository } from '../../runtime/keys/edge-key-repository.ts';
import type { KeyEntry } from '../../runtime/interfaces.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { compiledRealData, compiledSamples } from '../fixtures/compiled-fixtures.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { serveDir } from '../helpers/serve-dir.ts';
import { ADMIN_TOKEN, comparable, CURSOR_SECRET, edgeOver, issueKeys, keysFileIn, workerCode } from './edge-support.ts';

const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of open.reverse()) await o.close();
});

/** Node and an edge over R2 on `dist`, and with `origin`, a second edge reading the dist from that static host. */
async function allOver(dist: string, root: string, origin: string | null = null): Promise<{ node: Runtime; edges: LocalEdge[]; key: string }> {
  // Started side by side: each is a workerd of its own.
  const [overR2, fromOrigin] = await Promise.all([
    edgeOver(dist),
    origin === null ? null : workerCode().then((code) => startLocalEdge({ port: 0, origin, adminToken: ADMIN_TOKEN, cursorSecret: CURSOR_SECRET, code })),
  ]);
  open.push(overR2);
  const edges = [overR2];
  const { key } = await issueKeys(overR2.url!, keysFileIn(root), { key: { name: 'walk', quota: 1_000_000, rate: 1_000_000 } });
  if (fromOrigin !== null) {
    open.push(fromOrigin);
    edges.push(fromOrigin);
    // Its private part (notices) from its own local R2, as on any edge; no public file goes there.
    await publishDist(dist, null, await fromOrigin.target('private'));
    const repository = edgeKeyRepository(fromOrigin.url!, ADMIN_TOKEN);
    for (const entry of (await edgeKeyRepository(edges[0].url!, ADMIN_TOKEN).entries()) as KeyEntry[]) expect(await repository.insert(entry)).toBe(true);
  }
  const node = await startRuntime({ dist, keys: keysFileIn(root), state: 'memory:', port: 0, cursorSecret: CURSOR_SECRET, log: () => {} });
  open.push(node);
  return { node, edges, key };
}

/** Sends `path` to Node and each edge, compares, and returns Node's parsed body (for the walk). */
async function same(node: Runtime, edges: LocalEdge[], key: string, path: string): Promise<unknown> {
  const headers = { authorization: `Bearer ${key}` };
  // Each server answers its own sequence in order; the servers are asked at once.
  const [a, ...answers] = await Promise.all([node.url, ...edges.map((e) => e.url!)].map((base) => rawRequest(base + path, { headers })));
  for (const b of answers) {
    expect(b.status, path).toBe(a.status);
    expect(comparable(b.headers), path).toEqual(comparable(a.headers));
    expect(b.body.toString('latin1'), path).toBe(a.body.toString('latin1'));
  }
  try {
    return JSON.parse(a.body.toString());
  } catch {
    return null;
  }
}

/** Walks a release from a few searches; returns how many requests were compared. */
async function walk(node: Runtime, edges: LocalEdge[], key: string, queries: string[], max: number): Promise<number> {
  let n = 0;
  const ask = async (path: string) => {
    n++;
    return same(node, edges, key, path);
  };
  for (const p of ['/api/v1/', '/api/v1/meta', '/api/v1/providers', '/api/v1/coverage', '/api/v1/changes/releases', '/api/v1/changes/summary', '/api/v1/changes?limit=20']) await ask(p);
  const ids = new Set<string>();
  for (const q of queries) {
    const found = (await ask(`/api/v1/search?q=${encodeURIComponent(q)}&limit=20`)) as { results?: { reep_id: string }[] } | null;
    for (const r of found?.results ?? []) if (ids.size < max) ids.add(r.reep_id);
  }
  for (const id of ids) {
    await ask(`/api/v1/entities/${id}`);
    const full = (await ask(`/api/v1/entities/${id}?include=aliases,attributes,bridges,relationships,overlay`)) as { bridges?: { provider: string; namespace?: string; external_id: string }[]; entity_type?: string } | null;
    for (const b of (full?.bridges ?? []).slice(0, 2)) {
      await ask(`/api/v1/resolve/${encodeURIComponent(b.provider)}/${encodeURIComponent(b.external_id)}${b.namespace ? `?namespace=${encodeURIComponent(b.namespace)}` : ''}`);
    }
    if (full?.entity_type === 'team') await ask(`/api/v1/matches?team=${id}&from=1900-01-01&limit=5`);
  }
  return n;
}

describe('the edge answers as Node does on the sample releases and the real data', () => {
  it('the sample releases', async () => {
    // The run's shared compile of the samples: both runtimes only read it.
    const { dist } = await compiledSamples();
    const root = mkdtempSync(join(tmpdir(), 'edge-samples-'));
    const host = await serveDir(dist);
    open.push(host);
    const { node, edges, key } = await allOver(dist, root, host.baseUrl);
    expect(await walk(node, edges, key, ['united', 'real', 'city', 'fc', 'sport'], 40)).toBeGreaterThanOrEqual(100);
    // The origin edge read the dist over HTTP, ranges included, and nothing of the public tree from its own R2.
    expect(host.log.some((r) => r.range !== undefined)).toBe(true);
    expect(host.log.filter((r) => r.url.endsWith('/index.json')).length).toBeGreaterThan(0);
    const originBucket = (await edges[1].mf.getR2Bucket('DIST')) as unknown as { list(): Promise<{ objects: unknown[] }> };
    expect((await originBucket.list()).objects).toEqual([]);
  });

  it.skipIf(!existsSync(V0))('the real v0 data', async () => {
    const { dist } = await compiledRealData(V0, '20260401T000000Z');
    const root = mkdtempSync(join(tmpdir(), 'edge-real-'));
    const { node, edges, key } = await allOver(dist, root);
    expect(await walk(node, edges, key, ['arsenal', 'real madrid', 'united', 'city', 'bayern', 'premier league'], 40)).toBeGreaterThanOrEqual(100);
  });
});
