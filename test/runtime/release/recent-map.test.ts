// RecentMap keeps exactly the last `capacity` keys added, first in first out, whatever the hits in between.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RecentMap, RecentRing } from '../../../runtime/release/recent-map.ts';

describe('RecentMap', () => {
  it('drops the oldest key once full, and a hit does not keep a key longer', () => {
    const m = new RecentMap<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c'].entries()) m.set(k, i);
    expect(m.get('a')).toBe(0); // a hit: no effect on the order keys leave in
    m.set('d', 3);
    expect(m.get('a')).toBeUndefined();
    expect([m.get('b'), m.get('c'), m.get('d')]).toEqual([1, 2, 3]);
    expect(m.size).toBe(3);
  });

  it('gives a key set again its new value without taking a second place', () => {
    const m = new RecentMap<string, number>(2);
    m.set('a', 1);
    m.set('a', 2);
    m.set('b', 3);
    expect([m.get('a'), m.get('b'), m.size]).toEqual([2, 3, 2]);
    m.set('c', 4);
    expect([m.get('a'), m.get('b'), m.get('c')]).toEqual([undefined, 3, 4]);
  });

  it('matches a list of the last `capacity` distinct keys added, for any sequence', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 60 }), (capacity, keys) => {
        const m = new RecentMap<number, number>(capacity);
        const order: number[] = [];
        const value = new Map<number, number>();
        keys.forEach((k, i) => {
          m.set(k, i);
          if (!order.includes(k)) {
            order.push(k);
            if (order.length > capacity) value.delete(order.shift()!);
          }
          value.set(k, i);
        });
        expect(m.size).toBe(order.length);
        for (let k = 0; k < 10; k++) expect(m.get(k)).toBe(value.get(k));
      }),
    );
  });

  it('bounds maps that share a ring together: the last `capacity` keys added to any of them stay, counted in bytes', () => {
    const ring = new RecentRing(3 * 100, 100);
    const a = new RecentMap<string, number>(ring);
    const b = new RecentMap<string, number>(ring);
    a.set('a1', 1);
    b.set('b1', 2);
    a.set('a2', 3);
    expect(ring.bytes).toBe(300);
    b.set('b2', 4); // a1, the oldest of either map, leaves
    expect([a.get('a1'), b.get('b1'), a.get('a2'), b.get('b2')]).toEqual([undefined, 2, 3, 4]);
    expect(a.size + b.size).toBe(3);
    expect(ring.bytes).toBe(300);
    expect(() => new RecentRing(99, 100)).toThrow(RangeError);
  });

  it('refuses a capacity that is not a whole number of at least 1', () => {
    for (const c of [0, -1, 1.5, Number.NaN]) expect(() => new RecentMap(c)).toThrow(RangeError);
  });
});
