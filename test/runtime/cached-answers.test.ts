// Cached answers change nothing a client can see: over real HTTP, a runtime that keeps finished entity answers and
// one that keeps none answer every entity question (each include set in any order, with and without lang, live,
// merged, retired and unknown IDs, both namespaces, single and batched) with the same status and the same bytes,
// first time and every time after.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../runtime/node-adapter.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { ID } from '../fixtures/hand-world.ts';
import { serveHandWorld } from '../fixtures/served-world.ts';
import { INCLUDES } from '../../common/ids.ts';

let keeping: InProcessRuntime;
let plain: InProcessRuntime;
let key: string;

beforeAll(async () => {
  const served = await serveHandWorld({ partner: { quota: 1_000_000, rate: 1_000_000 } });
  keeping = served.rt;
  key = served.keys.partner;
  // The second runtime over the same world and keys, keeping no answers.
  plain = await openInProcess({ dist: served.world.dist, keys: served.keysFile, state: join(served.world.root, 'state-plain'), bodyCacheBytes: 0 });
});
afterAll(async () => {
  await keeping?.close();
  await plain?.close();
});

/** The hand world's IDs, and one only the staging release (served under next) has: v1 answers it 404. */
const NEXT_ONLY = 'rp00000000000e77';
const IDS = [...Object.values(ID), NEXT_ONLY];

/** Every subset of the includes, written in the contract's order and reversed (the body must not depend on it). */
const includeLists: [string, string][] = [];
for (let bits = 0; bits < 1 << INCLUDES.length; bits++) {
  const names = INCLUDES.filter((_, i) => bits & (1 << i));
  includeLists.push([names.join(','), [...names].reverse().join(',')]);
}

describe('cached entity answers', () => {
  it('answer the same bytes as composing each time, for single lookups in both namespaces', async () => {
    const first: string[] = [];
    const again: string[] = [];
    // next first: a body kept for its release must not answer the same question put to v1's.
    for (const ns of ['next', 'v1'])
      for (const id of IDS)
        for (const [inc, reversed] of includeLists)
          for (const lang of [null, 'en']) {
            const q = (list: string) => `/api/${ns}/entities/${id}?include=${list}${lang ? `&lang=${lang}` : ''}`;
            first.push(q(inc));
            again.push(q(reversed));
          }
    // Each question once to fill the cache, then again spelt the other way round, in an order that mixes namespaces,
    // IDs and includes, so a cached answer under a wrong key would meet another question.
    const order = [...first, ...again.map((_, i) => again[(i * 7919) % again.length])];
    let kept = 0;
    for (const path of order) {
      const [a, b] = await Promise.all([client(keeping.url, key)(path), client(plain.url, key)(path)]);
      expect(a.status, path).toBe(b.status);
      expect(a.text, path).toBe(b.text);
      if (a.status === 200) kept++;
    }
    // The question set reaches live and merged IDs (answered 200) as well as retired and unknown ones.
    expect(kept).toBeGreaterThan(order.length / 2);
    expect((await client(plain.url, key)(`/api/v1/entities/${NEXT_ONLY}`)).status).toBe(404);
    expect((await client(plain.url, key)(`/api/next/entities/${NEXT_ONLY}`)).status).toBe(200);
  }); // a few thousand requests in turn: the suite's bound (vitest.config.ts) lets a busy machine finish them

  it('stay intact when answered through the Web-standard fetch, which hands the bytes to a Response', async () => {
    // The Node adapter writes the kept pieces themselves: its answers before and after fetch's are compared.
    const [plainWire, keepingWire] = [await listen(plain.app, { port: 0 }), await listen(keeping.app, { port: 0 })];
    try {
      const path = `/api/v1/entities/${ID.arsenal}?include=aliases,bridges,overlay`;
      const viaHttp = (await client(plainWire.url, key)(path)).text;
      for (let i = 0; i < 3; i++) {
        const res = await keeping.app.fetch(new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${key}` } }));
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(viaHttp);
      }
      expect((await client(keepingWire.url, key)(path)).text).toBe(viaHttp);
    } finally {
      await Promise.all([plainWire.close(), keepingWire.close()]);
    }
  });

  it('answer the same bytes inside a batch, mixed with single lookups of the same entities', async () => {
    const ids = Object.values(ID);
    for (const inc of ['aliases,bridges,overlay', 'bridges', '']) {
      for (let round = 0; round < 3; round++) {
        const body = { include: inc || undefined, requests: [...ids, ...ids.slice().reverse()].map((id) => ({ type: 'entity', id })) };
        const [a, b] = await Promise.all([client(keeping.url, key)('/api/v1/batch', { body }), client(plain.url, key)('/api/v1/batch', { body })]);
        expect(a.status).toBe(200);
        expect(a.text).toBe(b.text);
        const single = await client(keeping.url, key)(`/api/v1/entities/${ID.arsenal}${inc ? `?include=${inc}` : ''}`);
        const item = a.json.results[ids.indexOf(ID.arsenal)];
        expect(item.status).toBe(200);
        expect(single.json).toEqual(item.body);
      }
    }
  });
});

/** The runtime's count of `cache`'s hits, from its /metrics. */
async function cacheHits(rt: InProcessRuntime, cache: 'body' | 'bucket'): Promise<number> {
  const text = (await client(rt.url, key)('/metrics')).text;
  const m = new RegExp(`^register_cache_hits_total\\{cache="${cache}"\\} (\\d+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${cache} hits in /metrics`);
  return Number(m[1]);
}

describe('cached resolve and search answers', () => {
  // Providers, namespaces and IDs whose answers differ between v1 and next (631 → 632, w1 on a merged ID), a
  // merged ID's bridge, an ambiguous one (409), a miss, type filters and include sets in both orders, with lang.
  const resolves = [
    '/resolve/transfermarkt/11?namespace=verein', '/resolve/transfermarkt/631?namespace=verein', '/resolve/transfermarkt/632?namespace=verein',
    '/resolve/wyscout/w1', '/resolve/fbref/old1', '/resolve/transfermarkt/500?namespace=verein', '/resolve/transfermarkt/11', '/resolve/opta/g1?type=match',
    '/resolve/opta/g1?type=team', '/resolve/flashscore/palmer-cole%2Fh8agbDt7', '/resolve/fbref/18bb7c10?include=aliases,bridges,overlay&lang=en',
    '/resolve/fbref/18bb7c10?include=overlay,bridges,aliases&lang=en', '/resolve/fbref/18bb7c10?include=aliases', '/resolve/fbref/18bb7c10?include=aliases&lang=en',
  ];
  const searches = ['/search?q=arsenal', '/search?q=ARSENAL', '/search?q=COLE%20palm', '/search?q=lodz&type=team', '/search?q=lodz&type=player', '/search?q=premier%20league&sort=bridges&limit=1', '/search?q=premier%20league&limit=1', '/search?q=chelsea'];

  it('answer the same bytes as looking up each time, in both namespaces, first time and after', async () => {
    const paths = ['next', 'v1'].flatMap((ns) => [...resolves, ...searches].map((p) => `/api/${ns}${p}`));
    for (const path of [...paths, ...paths.map((_, i) => paths[(i * 13) % paths.length])]) {
      const [a, b] = await Promise.all([client(keeping.url, key)(path), client(plain.url, key)(path)]);
      expect(a.status, path).toBe(b.status);
      expect(a.text, path).toBe(b.text);
      expect(a.headers.get('etag'), path).toBe(b.headers.get('etag'));
    }
  });

  it('answer a question asked again from its kept bytes, with no index read', async () => {
    for (const path of ['/api/next/resolve/wyscout/w1', '/api/v1/search?q=gunners&limit=3']) {
      const first = await client(keeping.url, key)(path);
      expect(first.status).toBe(200);
      const [bodies, buckets] = [await cacheHits(keeping, 'body'), await cacheHits(keeping, 'bucket')];
      const again = await client(keeping.url, key)(path);
      expect(again.text).toBe(first.text);
      expect(await cacheHits(keeping, 'body'), path).toBe(bodies + 1);
      expect(await cacheHits(keeping, 'bucket'), path).toBe(buckets);
    }
  });
});
