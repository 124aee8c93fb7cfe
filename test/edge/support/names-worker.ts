// A test Worker that runs name matching on workerd over a dist in its R2 bucket, as the Worker reads releases: each
// request names a stamp, the sha256 of its public manifest and the queries, and is answered with each query's keys
// (common/name-keys.ts) and candidates (runtime/release/name-match.ts), for Node to compare with its own.
import type { EdgeEnv } from '../../../edge/bindings.ts';
import { nameKeys } from '../../../common/name-keys.ts';
import { createBucketCache } from '../../../runtime/release/bucket-family-reader.ts';
import { matchNames, scoreNameOf, type NameQuery } from '../../../runtime/release/name-match.ts';
import { loadRelease } from '../../../runtime/release/open-release.ts';
import { createR2Source } from '../../../runtime/source/r2-source.ts';

// The local edge binds the Durable Object classes to whatever Worker it runs.
export { KeyDirectory, KeyObject, ProviderObject, TrustMarkObject } from '../../../edge/durable-objects.ts';

export default {
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    const { stamp, manifestSha256, queries, scores } = (await request.json()) as { stamp: string; manifestSha256: string; queries: NameQuery[]; scores: [string, NameQuery][] };
    const source = createR2Source({ bucket: env.DIST!, name: 'dist' });
    const release = await loadRelease(source, stamp, manifestSha256, createBucketCache(1 << 22));
    const matched = [];
    for (const q of queries) matched.push({ keys: nameKeys(q.name), candidates: await matchNames(release, q) });
    const scored = [];
    for (const [id, q] of scores) scored.push(await scoreNameOf(release, id, q));
    return new Response(JSON.stringify({ matched, scored }), { headers: { 'content-type': 'application/json' } });
  },
};
