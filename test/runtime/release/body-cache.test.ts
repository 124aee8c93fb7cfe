// The answer cache: a lookup answers exactly the bytes kept under its key or nothing; what it holds stays
// within its budget; bytes handed out never change afterwards, however many bodies are kept or dropped since.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BodyCache } from '../../../runtime/release/body-cache.ts';

/** A body is a function of its key, split into a few parts the way the composer hands them over. */
const bodyOf = (key: number): Uint8Array[] => {
  const n = 1 + ((key * 7919) % 700);
  const bytes = Uint8Array.from({ length: n }, (_, i) => (key * 31 + i * 17) & 0xff);
  return [bytes.subarray(0, n >> 2), bytes.subarray(n >> 2, n >> 1), bytes.subarray(n >> 1)];
};
const joined = (parts: Uint8Array[]) => Buffer.concat(parts);

describe('BodyCache', () => {
  it('answers the cached bytes or nothing, and stays within its budget, under any mix of keeps and gets (model check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 64 * 1024 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 300 })), { minLength: 100, maxLength: 2000 }),
        (capacity, ops) => {
          const cache = new BodyCache(capacity);
          const kept = new Map<string, number>(); // key -> aligned size, for the budget
          for (const [isKeep, k] of ops) {
            const key = `k${k}`;
            if (isKeep) {
              const parts = bodyOf(k);
              const size = joined(parts).length;
              const out = cache.keep(key, [new Uint8Array([9, 9]), ...parts], 1);
              if (out) {
                expect(Buffer.from(out).equals(joined(parts))).toBe(true);
                // Just kept: it must be there.
                expect(cache.get(key)).toBe(out);
              } else {
                expect(size > cache.largest || cache.get(key) !== undefined).toBe(true);
              }
              continue;
            }
            const got = cache.get(key);
            if (got !== undefined) expect(Buffer.from(got).equals(joined(bodyOf(k)))).toBe(true);
          }
          for (let k = 0; k <= 300; k++) {
            const got = cache.get(`k${k}`);
            if (got) kept.set(`k${k}`, (got.length + 7) & ~7);
          }
          expect([...kept.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(capacity);
          // The bodies' slabs and keys, as counted, within the budget too.
          expect(cache.accountedBytes).toBeLessThanOrEqual(capacity);
          expect(cache.size).toBe(kept.size);
        },
      ),
      { seed: 20261124, numRuns: 150 },
    );
  });

  it('never changes bytes it handed out, while later bodies push them out', () => {
    const cache = new BodyCache(64 * 1024);
    const held = Array.from({ length: 50 }, (_, k) => cache.keep(`first${k}`, bodyOf(k))!);
    // Far more than the budget, so every first body has left and their slabs are behind the current one.
    for (let k = 0; k < 5000; k++) cache.keep(`later${k}`, bodyOf(k + 1000));
    held.forEach((h, k) => {
      expect(cache.get(`first${k}`)).toBeUndefined();
      expect(Buffer.from(h).equals(joined(bodyOf(k)))).toBe(true);
    });
  });

  it('keeps nothing with a zero budget, nor a body larger than its share, nor a key twice', () => {
    expect(new BodyCache(0).keep('a', [new Uint8Array(10)])).toBeNull();
    const cache = new BodyCache(64 * 1024);
    expect(cache.keep('big', [new Uint8Array(cache.largest + 1)])).toBeNull();
    expect(cache.keep('empty', [])).toBeNull();
    const first = cache.keep('a', [Uint8Array.from([1, 2, 3])])!;
    expect(cache.keep('a', [Uint8Array.from([4, 5, 6])])).toBeNull();
    expect([...cache.get('a')!]).toEqual([1, 2, 3]);
    expect(cache.get('a')).toBe(first);
  });
});
