// A map that keeps only the last keys added, for memos whose values are cheap to make again; several maps (one per
// release) may share one bound, a RecentRing, so a memo's budget holds however many releases are open.

/**
 * Keys leave in the order they came (first in, first out), through a ring of the keys added: one array slot and
 * one map entry per key, no per-hit bookkeeping. A hit costs a single Map lookup, which is the point: for hot
 * keys this replaces work that touches several cache lines (a hash, an LRU touch, a binary search in a bucket).
 */
export class RecentMap<K, V> {
  private readonly map = new Map<K, V>();
  private readonly ring: RecentRing;

  /** `bound`: a number of entries kept by this map alone, or a ring shared with other maps. */
  constructor(bound: number | RecentRing) {
    this.ring = typeof bound === 'number' ? new RecentRing(bound, 1) : bound;
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
    this.ring.add(this.map as Map<unknown, unknown>, key);
    this.map.set(key, value);
  }
}

/**
 * The bound of one or more RecentMaps: the last `capacity` keys added to any of them stay, each counted at
 * `entryBytes` (its measured cost: key, value and map entry). A map no longer used (a release let go) leaves its
 * keys in the ring until they come round, and is garbage once they have.
 */
export class RecentRing {
  readonly capacity: number;
  private readonly maps: (Map<unknown, unknown> | undefined)[];
  private readonly keys: unknown[];
  private next = 0;
  private filled = 0;

  /** `bytes`: what the memos may hold; `entryBytes`: what one entry costs. */
  constructor(
    bytes: number,
    readonly entryBytes: number,
  ) {
    const capacity = Math.floor(bytes / entryBytes);
    if (!Number.isInteger(bytes) || !(entryBytes > 0) || capacity < 1) {
      throw new RangeError(`RecentRing: room for at least one entry needed, got ${bytes} bytes at ${entryBytes} an entry`);
    }
    this.capacity = capacity;
    this.maps = new Array<Map<unknown, unknown> | undefined>(capacity).fill(undefined);
    this.keys = new Array<unknown>(capacity).fill(undefined);
  }

  /** Bytes the entries held stand for. */
  get bytes(): number {
    return this.filled * this.entryBytes;
  }

  /** Takes the next slot for `key` of `map`, dropping the key that held it from its map. */
  add(map: Map<unknown, unknown>, key: unknown): void {
    const old = this.maps[this.next];
    if (old !== undefined) old.delete(this.keys[this.next]);
    else this.filled++;
    this.maps[this.next] = map;
    this.keys[this.next] = key;
    this.next = this.next + 1 === this.capacity ? 0 : this.next + 1;
  }
}
