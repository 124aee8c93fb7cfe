// Sorting an entity's short lists (its bridges, aliases, attribute names, relationship families) without the
// allocation Array.prototype.sort makes, and an entity's bridges as its shard and its change events take them.
import type { Bridge } from '../../records/entity-rows.ts';

/** Compares strings as JSON keys and register IDs are ordered everywhere in the dist: by UTF-16 code units. */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Sorts `list` in place as `list.sort(compare)` would (both are stable). Array.prototype.sort copies a list into a
 * work array before sorting it, a large share of a compile's allocation over millions of short lists; an insertion
 * sort allocates nothing. A longer list goes to sort.
 */
export function sortShort<T>(list: T[], compare: (a: T, b: T) => number): T[] {
  if (list.length > 16) return list.sort(compare);
  for (let i = 1; i < list.length; i++) {
    const x = list[i];
    let j = i - 1;
    for (; j >= 0 && compare(list[j], x) > 0; j--) list[j + 1] = list[j];
    list[j + 1] = x;
  }
  return list;
}

const compareBridges = (x: Bridge, y: Bridge) => cmp(x[0], y[0]) || cmp(x[1], y[1]) || cmp(x[2], y[2]);

/**
 * Sorts and deduplicates an ID's own bridge list in place (gathering made it; nothing else holds it) and returns
 * it. The list may be the shared frozen empty list, which is left as it is.
 */
export function dedupeBridges(list: Bridge[]): Bridge[] {
  sortShort(list, compareBridges);
  let k = 0;
  for (let i = 0; i < list.length; i++) {
    const b = list[i];
    if (k > 0 && b[0] === list[k - 1][0] && b[1] === list[k - 1][1] && b[2] === list[k - 1][2]) continue;
    list[k++] = b;
  }
  // Only when shorter: a frozen list's length cannot be set, even to what it is.
  if (k < list.length) list.length = k;
  return list;
}
