// The typeahead prefix lists: a k-way merge must give exactly what concatenating, sorting, deduplicating and
// capping every token list gives.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { smallestOrdinals } from '../../compiler/stages/build-search.ts';

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
