// The R2 ShardSource driver against the shared contract, over a real R2 bucket: workerd's local R2 (miniflare),
// reached from Node through miniflare's binding proxy, loaded with the contract's folder.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll } from 'vitest';
import { createR2Source, type R2BucketLike } from '../../../runtime/source/r2-source.ts';
import { shardSourceContract } from './shard-source-contract.ts';

const instances: Miniflare[] = [];
afterAll(async () => {
  for (const mf of instances) await mf.dispose();
});

function filesUnder(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(root, join(dir, e.name)) : [relative(root, join(dir, e.name))]));
}

type Bucket = R2BucketLike & { put(key: string, value: Uint8Array): Promise<unknown> };
const buckets = new Map<string, Bucket>();

shardSourceContract('r2', async (root, opts) => {
  let bucket = buckets.get(root);
  if (!bucket) {
    const mf = new Miniflare({ modules: true, script: 'export default { fetch() { return new Response(null, { status: 404 }); } }', r2Buckets: ['DIST'], compatibilityDate: '2026-04-01' });
    instances.push(mf);
    bucket = (await mf.getR2Bucket('DIST')) as unknown as Bucket;
    for (const path of filesUnder(root)) await bucket.put(path, new Uint8Array(readFileSync(join(root, path))));
    buckets.set(root, bucket);
  }
  const b = bucket;
  const source = createR2Source({ bucket: b, name: 'dist', cacheBytes: opts.small ? 2500 : undefined });
  return {
    source,
    fetches: () => source.stats().reads,
    retained: () => ({ used: source.stats().cachedBytes, limit: source.stats().cacheBytes }),
    changed: async (path) => void (await b.put(path, new Uint8Array(readFileSync(join(root, path))))),
  };
});
