// The token and typeahead prefix lists: a token's sorted, capped list and the k-way merge of several must give
// exactly what sorting (and deduplicating) with a comparator and cutting gives.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ascendingCapped, smallestOrdinals } from '../../compiler/stages/build-search.ts';

const naive = (lists: number[][], cap: number): number[] => {
  const all = lists.flat().map((v) => v >> 2).sort((a, b) => a - b);
  return all.filter((v, i) => i === 0 || v !== all[i - 1]).slice(0, cap);
};

describe('smallestOrdinals', () => {
  it('equals sort + dedupe + cap over any sorted posting lists', () => {
    // Posting values are ordinal * 4 + source, ascending within a list, one per entity.
    const list = fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 60 }).map((ords) =>
      ords.sort((a, b) => a - b).map((o, i) => o * 4 + 1 + (i % 3)),
    );
    fc.assert(
      fc.property(fc.array(list, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 80 }), (lists, cap) => {
        expect(smallestOrdinals(lists, cap)).toEqual(naive(lists, cap));
      }),
      { numRuns: 500 },
    );
  });
});

describe('ascendingCapped', () => {
  it('equals a comparator sort cut to the cap, on both sides of the typed-array threshold', () => {
    // Values up to the largest posting of a full-size release (2.04M ordinals × 4 + source) and beyond.
    const values = fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { maxLength: 300 });
    fc.assert(
      fc.property(values, fc.integer({ min: 1, max: 400 }), (list, cap) => {
        const want = list.slice().sort((a, b) => a - b).slice(0, cap);
        expect(Array.from(ascendingCapped(list.slice(), cap))).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });

  it('merges typed and plain lists alike', () => {
    const long = ascendingCapped(Array.from({ length: 200 }, (_, i) => (199 - i) * 4 + 1), 100);
    const short = ascendingCapped([9, 5, 1], 100);
    expect(long).toBeInstanceOf(Int32Array);
    expect(smallestOrdinals([long, short], 5)).toEqual([0, 1, 2, 3, 4]);
  });
});
