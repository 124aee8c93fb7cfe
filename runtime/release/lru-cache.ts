// A small least-recently-used cache bounded by total weight (bytes), which also shares in-flight loads so that
// concurrent requests for the same key cost one load (the Pagefind pattern: no chunk is fetched twice).

/** Options of an LruCache. */
export interface LruCacheOptions {
  /** Upper bound on the summed weight of retained values (usually bytes). Values heavier than this are returned but never retained. */
  maxWeight: number;
}

interface Slot<K, V> {
  key: K;
  value: V;
  weight: number;
  // Neighbours in recency order: `older` towards the least recently used end.
  older: Slot<K, V> | null;
  newer: Slot<K, V> | null;
}

export class LruCache<K, V> {
  readonly maxWeight: number;
  // Recency is a doubly linked list, not Map insertion order: re-inserting into a Map on every hit leaves a
  // deleted entry behind each time, and eviction, which iterates from the oldest end, had to step over all of
  // them (measured: most of a search request's cache cost with ~20k retained buckets).
  private readonly slots = new Map<K, Slot<K, V>>();
  private oldest: Slot<K, V> | null = null;
  private newest: Slot<K, V> | null = null;
  private readonly inflight = new Map<K, Promise<V>>();
  private total = 0;

  constructor(opts: LruCacheOptions) {
    if (!(opts.maxWeight >= 0)) throw new RangeError(`LruCache: maxWeight must be >= 0, got ${opts.maxWeight}`);
    this.maxWeight = opts.maxWeight;
  }

  /** Summed weight of the retained values. */
  get weight(): number {
    return this.total;
  }

  /** Number of retained values. */
  get size(): number {
    return this.slots.size;
  }

  /** Number of loads in flight. */
  get pending(): number {
    return this.inflight.size;
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  /** get() calls that found a value, and that did not (for /metrics). */
  hits = 0;
  misses = 0;

  /** The retained value under `key` (marking it recently used), or undefined. */
  get(key: K): V | undefined {
    const slot = this.slots.get(key);
    if (!slot) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.touch(slot);
    return slot.value;
  }

  /** Retains `value` under `key`, evicting least recently used values until the bound holds. */
  set(key: K, value: V, weight: number): void {
    this.drop(key);
    if (!(weight >= 0) || weight > this.maxWeight) return;
    const slot: Slot<K, V> = { key, value, weight, older: this.newest, newer: null };
    if (this.newest) this.newest.newer = slot;
    else this.oldest = slot;
    this.newest = slot;
    this.slots.set(key, slot);
    this.total += weight;
    while (this.total > this.maxWeight && this.oldest) this.remove(this.oldest);
  }

  delete(key: K): boolean {
    this.inflight.delete(key);
    return this.drop(key);
  }

  clear(): void {
    this.slots.clear();
    this.inflight.clear();
    this.oldest = this.newest = null;
    this.total = 0;
  }

  /**
   * The value under `key`: retained, already loading (the same promise is shared), or loaded now by `loader`.
   * A failed load is not cached, so the next call retries. `weightOf` may return Infinity to share the
   * in-flight load without retaining the result.
   */
  getOrLoad(key: K, weightOf: (value: V) => number, loader: () => Promise<V>): Promise<V> {
    const slot = this.slots.get(key);
    if (slot) {
      this.touch(slot);
      return Promise.resolve(slot.value);
    }
    const running = this.inflight.get(key);
    if (running) return running;
    let started: Promise<V>;
    try {
      started = loader();
    } catch (err) {
      started = Promise.reject(err);
    }
    // Retain the result only if this load is still the registered one: delete() or clear() meanwhile means the
    // caller no longer wants it kept.
    const promise: Promise<V> = started.then(
      (value) => {
        if (this.inflight.get(key) === promise) {
          this.inflight.delete(key);
          this.set(key, value, weightOf(value));
        }
        return value;
      },
      (err: unknown) => {
        if (this.inflight.get(key) === promise) this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, promise);
    return promise;
  }

  /** Makes `slot` the most recently used. */
  private touch(slot: Slot<K, V>): void {
    if (slot === this.newest) return;
    this.unlink(slot);
    slot.older = this.newest;
    slot.newer = null;
    this.newest!.newer = slot; // not the newest, so the list has another slot
    this.newest = slot;
  }

  private unlink(slot: Slot<K, V>): void {
    if (slot.older) slot.older.newer = slot.newer;
    else this.oldest = slot.newer;
    if (slot.newer) slot.newer.older = slot.older;
    else this.newest = slot.older;
  }

  private remove(slot: Slot<K, V>): void {
    this.unlink(slot);
    this.slots.delete(slot.key);
    this.total -= slot.weight;
  }

  private drop(key: K): boolean {
    const slot = this.slots.get(key);
    if (!slot) return false;
    this.remove(slot);
    return true;
  }
}
