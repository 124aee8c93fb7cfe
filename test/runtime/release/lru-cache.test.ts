// The weight-bounded LRU behind the http source and the bucket reader (runtime/release/lru-cache.ts).
import { describe, expect, it } from 'vitest';
import { LruCache } from '../../../runtime/release/lru-cache.ts';

describe('LruCache', () => {
  it('evicts least recently used entries to stay within its weight', () => {
    const c = new LruCache<string, string>({ maxWeight: 10 });
    c.set('a', 'A', 4);
    c.set('b', 'B', 4);
    expect(c.get('a')).toBe('A'); // a is now the most recent
    c.set('c', 'C', 4);
    expect(c.has('b')).toBe(false);
    expect(c.get('a')).toBe('A');
    expect(c.get('c')).toBe('C');
    expect(c.weight).toBe(8);
    c.set('a', 'A2', 1); // replacing re-weighs
    expect(c.weight).toBe(5);
    c.set('huge', 'H', 11); // heavier than the bound: never retained
    expect(c.has('huge')).toBe(false);
    expect(c.weight).toBe(5);
  });

  it('shares one in-flight load between concurrent callers', async () => {
    const c = new LruCache<string, number>({ maxWeight: 100 });
    let loads = 0;
    const loader = () => new Promise<number>((r) => setTimeout(() => r(++loads), 5));
    const got = await Promise.all(Array.from({ length: 5 }, () => c.getOrLoad('k', () => 1, loader)));
    expect(got).toEqual([1, 1, 1, 1, 1]);
    expect(loads).toBe(1);
    expect(await c.getOrLoad('k', () => 1, loader)).toBe(1);
    expect(loads).toBe(1);
    expect(c.pending).toBe(0);
  });

  it('does not retain failures, nor values weighing Infinity', async () => {
    const c = new LruCache<string, number>({ maxWeight: 100 });
    let calls = 0;
    await expect(c.getOrLoad('k', () => 1, async () => { calls++; throw new Error('boom'); })).rejects.toThrow('boom');
    await expect(c.getOrLoad('k', () => 1, () => { calls++; throw new Error('sync boom'); })).rejects.toThrow('sync boom');
    expect(await c.getOrLoad('k', () => Infinity, async () => ++calls)).toBe(3);
    expect(c.has('k')).toBe(false);
    expect(c.pending).toBe(0);
  });

  it('does not resurrect a key deleted or cleared while loading', async () => {
    const c = new LruCache<string, number>({ maxWeight: 100 });
    let release!: () => void;
    const p = c.getOrLoad('k', () => 1, () => new Promise<number>((r) => (release = () => r(7))));
    c.delete('k');
    release();
    expect(await p).toBe(7);
    expect(c.has('k')).toBe(false);
  });

  it('keeps recency exactly as a list model does, through hits, replacements and deletes', () => {
    // Reference: an array ordered oldest first, evicting from the front.
    const model: { key: number; weight: number }[] = [];
    const c = new LruCache<number, number>({ maxWeight: 40 });
    let x = 7;
    const rand = (n: number) => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % n);
    for (let step = 0; step < 20_000; step++) {
      const key = rand(30);
      const op = rand(10);
      const at = model.findIndex((e) => e.key === key);
      if (op < 6) {
        const got = c.get(key);
        expect(got === undefined).toBe(at < 0);
        if (at >= 0) model.push(...model.splice(at, 1));
      } else if (op < 9) {
        const weight = 1 + rand(12);
        c.set(key, key, weight);
        if (at >= 0) model.splice(at, 1);
        model.push({ key, weight });
        while (model.reduce((n, e) => n + e.weight, 0) > 40) model.shift();
      } else {
        expect(c.delete(key)).toBe(at >= 0);
        if (at >= 0) model.splice(at, 1);
      }
      expect(c.size).toBe(model.length);
      expect(c.weight).toBe(model.reduce((n, e) => n + e.weight, 0));
    }
    for (const e of model) expect(c.has(e.key)).toBe(true);
    c.clear();
    expect([c.size, c.weight]).toEqual([0, 0]);
    c.set(1, 1, 1);
    expect(c.get(1)).toBe(1);
  });
});
