// Search ordinals: the radix sort must give exactly the order of (bridge count desc, register ID asc).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ordinalOrder } from '../../compiler/stages/build-search.ts';

const byComparator = (ids: string[], bridges: number[]): number[] =>
  ids.map((_, i) => i).sort((a, b) => bridges[b] - bridges[a] || (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));

// Few digits and letters, so IDs share long prefixes and differ in either half of their hex.
const hex = fc.string({ unit: fc.constantFrom('0', '9', 'a', 'f'), minLength: 14, maxLength: 14 });
const id = fc.tuple(fc.constantFrom('a', 'c', 'p', 'z'), hex).map(([l, h]) => `r${l}${h}`);
const count = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 70_000 }), fc.constantFrom(65_535, 65_536, 2 ** 24 + 1, 2 ** 32 - 1));

describe('ordinalOrder', () => {
  it('orders by bridge count descending, then register ID ascending', () => {
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 200 }).chain((ids) => fc.tuple(fc.constant(ids), fc.array(count, { minLength: ids.length, maxLength: ids.length }))), ([ids, bridges]) => {
        expect(Array.from(ordinalOrder(ids, bridges))).toEqual(byComparator(ids, bridges));
      }),
      { numRuns: 300 },
    );
  });

  it('falls back to comparing strings for an ID outside the register pattern', () => {
    const ids = ['rp00000000000001', 'legacy-7', 'rA00000000000000', 'rp0000000000000G', 'rc00000000000000'];
    const bridges = [1, 1, 1, 1, 2];
    expect(Array.from(ordinalOrder(ids, bridges))).toEqual(byComparator(ids, bridges));
  });
});
