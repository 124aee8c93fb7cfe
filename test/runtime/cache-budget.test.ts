// The caches' one budget: divided by its rule, and held. Over the compiled sample releases (v1 and next, two
// releases sharing the caches), thousands of distinct requests of every kind that keeps something (entities with
// includes, resolves, searches, /matches pages) leave each cache's accounted bytes within its share and their sum
// within the budget, while each cache is used (a cache that counted nothing would pass the bound alone).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { openKeyStore } from '../../runtime/keys/key-store.ts';
import { CACHE_SHARE_RULE, DEFAULT_CACHE_MIB, divideCacheBudget, type CacheShares } from '../../runtime/release/cache-budget.ts';
import { buildApp } from '../../runtime/server.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createMemoryStore } from '../../runtime/state/memory-store.ts';
import { compiledSamples, copyCompiled } from '../fixtures/compiled-fixtures.ts';

const STAMP = '20261008T120000Z';
const MIB = 1024 * 1024;
/** Small enough that the requests below overflow every cache many times over. */
const BUDGET = 1 * MIB;

let root: string;
let built: ReturnType<typeof buildApp>;
let auth: string;
const closers: (() => unknown)[] = [];

/** One column of a table of the successor release. */
async function column(table: string, name: string): Promise<string[]> {
  const out: string[] = [];
  let at = -1;
  await readCsv(join(root, 'releases', STAMP, 'csv', `${table}.csv.gz`), table, {
    header: (h) => void (at = h.indexOf(name)),
    row: (f) => void out.push(f[at]),
  });
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-budget-'));
  const { dist } = copyCompiled(await compiledSamples(), root);
  const keys = join(root, 'keys.json');
  auth = `Bearer ${(await addKey({ file: keys, name: 'budget', quota: 1_000_000_000, rate: 1_000_000 })).key}`;
  const source = createFsSource({ root: dist });
  const keyStore = openKeyStore({ file: keys });
  built = buildApp({ dist, source, store: createMemoryStore(), keyStore, log: () => {}, pages: null, cacheBudgetBytes: BUDGET, cursorSecret: 'the cache budget test signs cursors with this' });
  closers.push(() => source.close(), () => keyStore.close(), () => built.close());
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe('the cache budget', () => {
  it('is divided by its rule: shares summing to at most the budget, an override replacing only its own share', () => {
    expect(Object.values(CACHE_SHARE_RULE).reduce((a, b) => a + b, 0)).toBe(32);
    for (const total of [0, 1, 4 * MIB + 17, DEFAULT_CACHE_MIB * MIB]) {
      const shares = divideCacheBudget(total);
      const sum = Object.values(shares).reduce((a, b) => a + b, 0);
      expect(sum).toBeLessThanOrEqual(total);
      expect(sum).toBeGreaterThan(total - 8); // only rounding is lost
    }
    const over = divideCacheBudget(32 * MIB, { answers: 0, buckets: undefined });
    expect(over).toEqual({ ...divideCacheBudget(32 * MIB), answers: 0 });
    expect(() => divideCacheBudget(-1)).toThrow(RangeError);
  });

  it('holds after thousands of distinct requests of every kind over two releases, and every cache is used', async () => {
    const ids = await column('entities', 'reep_id');
    const labels = await column('entities', 'label');
    const [providers, externals] = [await column('bridges', 'provider'), await column('bridges', 'external_id')];
    const namespaces = await column('bridges', 'namespace');
    const teams = await column('teams', 'reep_id');
    const paths: string[] = [];
    for (const ns of ['v1', 'next']) {
      for (const id of ids) paths.push(`/api/${ns}/entities/${id}?include=aliases,bridges,relationships`);
      for (let i = 0; i < providers.length; i += 3) {
        paths.push(`/api/${ns}/resolve/${encodeURIComponent(providers[i])}/${encodeURIComponent(externals[i])}${namespaces[i] ? `?namespace=${encodeURIComponent(namespaces[i])}` : ''}`);
      }
      for (const label of new Set(labels)) paths.push(`/api/${ns}/search?q=${encodeURIComponent(label)}`);
      for (const team of teams) paths.push(`/api/${ns}/matches?team=${team}&from=2020-01-01&to=2026-12-31`);
    }
    const shares: CacheShares = divideCacheBudget(BUDGET);
    const statuses = new Map<number, number>();
    const usages: ReturnType<typeof built.catalog.cacheUsage>[] = [];
    for (const [i, path] of paths.entries()) {
      const res = await built.app.fetch(new Request(`http://127.0.0.1${path}`, { headers: { authorization: auth } }));
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      // Checked along the way too, not only at the end: a bound that holds only once the load is over is none.
      if (i % 500 === 0) usages.push(built.catalog.cacheUsage());
    }
    usages.push(built.catalog.cacheUsage());
    // The requests were answered (most with 200), so the caches had something to keep.
    expect(statuses.get(200) ?? 0, JSON.stringify([...statuses])).toBeGreaterThan(paths.length * 0.8);
    for (const usage of usages) {
      for (const [name, bytes] of Object.entries(usage)) expect(bytes, name).toBeLessThanOrEqual(shares[name as keyof CacheShares]);
      expect(Object.values(usage).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(BUDGET - shares.pages);
    }
    const last = usages.at(-1)!;
    // Far more was asked than fits: the caches that every answer goes through are near full.
    for (const name of ['buckets', 'answers', 'shards', 'recentIds'] as const) expect(last[name], name).toBeGreaterThan(shares[name] * 0.75);
  });
});
