// A map that keeps only the last `capacity` keys added, for memos whose values are cheap to make again.

/**
 * Keys leave in the order they came (first in, first out), through a ring of the keys added: one array slot and
 * one map entry per key, no per-hit bookkeeping. A hit costs a single Map lookup, which is the point: for hot
 * keys this replaces work that touches several cache lines (a hash, an LRU touch, a binary search in a bucket).
 */
export class RecentMap<K, V> {
  private readonly map = new Map<K, V>();
  private readonly ring: (K | undefined)[];
  private next = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`RecentMap: capacity must be a whole number >= 1, got ${capacity}`);
    this.ring = new Array<K | undefined>(capacity).fill(undefined);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  /** Adds `key` (a key already present keeps its place in line and takes the new value). */
  set(key: K, value: V): void {
    if (this.map.has(key)) {
      this.map.set(key, value);
      return;
    }
    const old = this.ring[this.next];
    if (old !== undefined) this.map.delete(old);
    this.ring[this.next] = key;
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1;
    this.map.set(key, value);
  }
}
