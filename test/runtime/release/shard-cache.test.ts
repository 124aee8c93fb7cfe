// The shard ring: whatever sequence of reads and writes, a lookup answers the exact bytes retained under its key or
// nothing, never bytes the ring has since overwritten; copies are the caller's own; the maps stay bounded.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ShardCache, shardCacheKey } from '../../../runtime/release/shard-cache.ts';

/** Shard bytes are a function of their key (packs are content-addressed), with lengths that vary by key. */
const bytesOf = (key: number): Uint8Array => {
  const n = 1 + ((key * 7919) % 63);
  return Uint8Array.from({ length: n }, (_, i) => (key * 31 + i * 17) & 0xff);
};

describe('ShardCache', () => {
  it('answers the retained bytes or nothing, under any mix of puts and gets (model check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8192 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 200 })), { minLength: 200, maxLength: 3000 }),
        (capacity, ops) => {
          const cache = new ShardCache(capacity);
          const put = new Set<number>();
          let lastPut = -1;
          for (const [isPut, key] of ops) {
            if (isPut) {
              cache.put(key, bytesOf(key));
              put.add(key);
              lastPut = key;
              continue;
            }
            const got = cache.get(key, bytesOf(key).length);
            // Just written and small enough to keep: it must be there.
            if (key === lastPut && bytesOf(key).length <= cache.largest) expect(got).toBeDefined();
            lastPut = -1;
            if (got === undefined) continue;
            expect(put.has(key)).toBe(true);
            expect(Buffer.from(got).equals(Buffer.from(bytesOf(key)))).toBe(true);
          }
          // Only what fits can be indexed: every retained shard holds at least one byte of the ring.
          expect(cache.size).toBeLessThanOrEqual(capacity);
          // The ring and its keys, as counted, within the budget.
          expect(cache.accountedBytes).toBeLessThanOrEqual(capacity);
        },
      ),
      { seed: 20261123, numRuns: 200 },
    );
  });

  it('hands out copies: changing one changes neither the ring nor the next answer', () => {
    const cache = new ShardCache(1 << 16);
    const key = shardCacheKey(3, 4096);
    cache.put(key, Uint8Array.from([1, 2, 3, 4]));
    const first = cache.get(key, 4)!;
    first.fill(9);
    expect([...cache.get(key, 4)!]).toEqual([1, 2, 3, 4]);
    // Copies held at the same time share no bytes, however many are handed out.
    cache.put(8, Uint8Array.from([5, 6, 7]));
    const held = Array.from({ length: 30_000 }, (_, i) => cache.get(i % 2 ? key : 8, i % 2 ? 4 : 3)!);
    held.forEach((h, i) => h.fill(i & 0xff));
    held.forEach((h, i) => expect(h.every((b) => b === (i & 0xff))).toBe(true));
  });

  it('refuses a lookup whose length differs from the retained shard', () => {
    const cache = new ShardCache(1 << 16);
    cache.put(7, Uint8Array.from([1, 2, 3]));
    expect(cache.get(7, 4)).toBeUndefined();
    expect(cache.get(7, 3)).toBeDefined();
  });

  it('keeps a shard that is read often while a stream of shards read once goes through the ring', () => {
    const cache = new ShardCache(64 * 1024);
    const hot = shardCacheKey(0, 0);
    cache.put(hot, new Uint8Array(600).fill(1));
    let misses = 0;
    for (let i = 1; i <= 20_000; i++) {
      cache.put(shardCacheKey(1, i * 1000), new Uint8Array(500).fill(2));
      if (i % 20 === 0 && !cache.get(hot, 600)) {
        misses++;
        cache.put(hot, new Uint8Array(600).fill(1));
      }
    }
    expect(misses).toBe(0);
    // The one-off shards have long been overwritten, and their keys left the index with them.
    expect(cache.get(shardCacheKey(1, 1000), 500)).toBeUndefined();
    expect(cache.size).toBeLessThanOrEqual((64 * 1024) / 500 + 1);
  });

  it('does not retain a shard larger than a 64th of the ring, nor anything in a ring of size 0', () => {
    const cache = new ShardCache(64 * 1024);
    // The ring is the budget less its keys' eighth.
    expect(cache.largest).toBe(Math.floor((64 * 1024 * 7) / 8 / 64));
    cache.put(1, new Uint8Array(cache.largest + 1));
    cache.put(2, new Uint8Array(cache.largest));
    expect(cache.get(1, cache.largest + 1)).toBeUndefined();
    expect(cache.get(2, cache.largest)).toBeDefined();
    const none = new ShardCache(0);
    none.put(1, new Uint8Array(1));
    expect(none.get(1, 1)).toBeUndefined();
    expect(() => new ShardCache(-1)).toThrow(RangeError);
  });
});
