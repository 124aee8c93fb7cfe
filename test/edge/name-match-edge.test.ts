// Name matching reads the same on workerd as on Node: a test Worker (support/names-worker.ts) opens a compiled
// release from the local edge's R2, as the Worker does, and answers name keys and candidates; their JSON must be
// Node's, byte for byte (scores are rounded to thousandths so that it can be).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { nameKeys } from '../../common/name-keys.ts';
import { bundleWorker } from '../../edge/bundle.ts';
import { startLocalEdge, type LocalEdge } from '../../edge/local-edge.ts';
import { publishDist } from '../../edge/publish.ts';
import { generateRelease } from '../../generator/synthetic.ts';
import { createBucketCache } from '../../runtime/release/bucket-family-reader.ts';
import { matchNames, scoreNameOf, type NameQuery } from '../../runtime/release/name-match.ts';
import { loadRelease, type Release } from '../../runtime/release/open-release.ts';
import { createFsSource, type FsShardSource } from '../../runtime/source/fs-source.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const STAMP = '20261101T000000Z';
let root: string;
let edge: LocalEdge;
let source: FsShardSource;
let release: Release;
let manifestSha256: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-name-edge-'));
  await generateRelease({ out: join(root, 'releases', STAMP), entities: 800, seed: 7 });
  await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false });
  const code = (await bundleWorker(undefined, join(ROOT, 'test/edge/support/names-worker.ts'))).code;
  edge = await startLocalEdge({ port: 0, code });
  await publishDist(join(root, 'dist'), await edge.target('public'), await edge.target('private'));
  manifestSha256 = createHash('sha256').update(readFileSync(join(root, 'dist', STAMP, 'public', 'manifest.json'))).digest('hex');
  source = createFsSource({ root: join(root, 'dist'), reads: 'sync' });
  release = await loadRelease(source, STAMP, manifestSha256, createBucketCache(1 << 22));
});
afterAll(async () => {
  await edge?.close();
  await source?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('name matching on workerd', () => {
  it('gives the keys, candidates and scores Node gives, byte for byte', async () => {
    // Sixty entities that are not matches (matches have no name keys), most bridged first.
    const docs = [];
    for (let o = 0; docs.length < 60; o++) {
      const d = (await release.searchDoc(o))!;
      if (ENTITY_TYPES[d[1]] !== 'match') docs.push(d);
    }
    const labels = docs.map((d) => d[2]);
    const queries: NameQuery[] = [
      ...labels.map((name) => ({ name })),
      ...labels.map((name) => ({ name: name.toUpperCase(), type: 'player' as const, country: 'England' })),
      ...labels.map((name) => ({ name: name.split(' ').reverse().join(' '), limit: 10 })),
      { name: 'Спартак Москва' }, { name: 'Ολυμπιακός' }, { name: '北京国安' }, { name: 'J. Smith', type: 'player' }, { name: '' },
    ];
    const scores: [string, NameQuery][] = docs.map((d) => [d[0], { name: d[2].toLowerCase(), type: 'team' }]);
    scores.push(['rt0000000000000f', { name: 'nobody' }]);
    const res = await fetch(edge.url!, { method: 'POST', body: JSON.stringify({ stamp: STAMP, manifestSha256, queries, scores }) });
    expect(res.status).toBe(200);
    const matched = [];
    for (const q of queries) matched.push({ keys: nameKeys(q.name), candidates: await matchNames(release, q) });
    const scored = [];
    for (const [id, q] of scores) scored.push(await scoreNameOf(release, id, q));
    const onWorkerd = await res.text();
    expect(onWorkerd).toBe(JSON.stringify({ matched, scored }));
    // Not a vacuous comparison: candidates were found, with scores of every kind.
    expect(matched.filter((m) => m.candidates.length).length).toBeGreaterThan(100);
    expect(new Set(matched.flatMap((m) => m.candidates.map((c) => c.score))).size).toBeGreaterThan(3);
  });
});
