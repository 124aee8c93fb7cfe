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
  }, 240_000); // a few thousand requests in turn: generous, so a machine busy with other work still finishes

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
