// Finished answers, kept by what was asked (entity: release, ID, includes, lang; resolve and search likewise, see
// resolve-answer.ts and routes/search.ts), so a popular entity costs one map lookup instead of an index lookup, a
// shard copy and a compose.
//
// Why: on the full-size dist, an entity answer with includes spent about a quarter of the app's CPU on composing it
// (splicing the stored bridges back, joining the sections, copying the shard out of its ring) for bytes that are the
// same every time: an answer is a pure function of the stamp and the request. A hit hands out the cached bytes
// themselves, which nobody writes to, so it costs neither a copy nor an allocation.
//
// Memory: bodies are laid one after another in 256 KiB slabs; keys leave first in, first out once the byte budget
// is spent, so a slab is dropped (garbage) once every body in it has left. What is held stays within the budget plus
// the current slab and the unused tails of slabs (each under `largest` bytes).

import { ownCopy } from '../../common/own-copy.ts';

/**
 * Default budget. The benchmark's 4,000 sampled entities with includes (~3.5 MiB of answers) stay well inside, and
 * so do its 4,000 resolves or its ~4,000 searches (at most 20 results, ~2.6 KiB an answer) beside them.
 */
export const DEFAULT_BODY_CACHE_BYTES = 16 * 1024 * 1024;

const SLAB_BYTES = 256 * 1024;

export class BodyCache {
  private readonly map = new Map<string, Uint8Array>();
  // Keys in the order they were kept, with their sizes: the oldest leave first once the budget is spent.
  private order: string[] = [];
  private sizes: number[] = [];
  private first = 0;
  private used = 0;
  private slab = new Uint8Array(0);
  private slabAt = 0;

  /** Bodies longer than this are not kept: one must not flush a large share of the budget. */
  readonly largest: number;

  constructor(readonly capacity: number) {
    if (!(capacity >= 0) || !Number.isSafeInteger(capacity)) throw new RangeError(`BodyCache: capacity must be a whole number >= 0, got ${capacity}`);
    this.largest = Math.min(16 * 1024, Math.floor(capacity / 64));
  }

  /** Number of bodies kept. */
  get size(): number {
    return this.map.size;
  }

  /** Lookups that found a body, and that did not (for /metrics). */
  hits = 0;
  misses = 0;

  /** The body kept under `key`; never write to it. */
  get(key: string): Uint8Array | undefined {
    const body = this.map.get(key);
    if (body === undefined) this.misses++;
    else this.hits++;
    return body;
  }

  /**
   * Keeps `parts[from..]` joined as the body of `key` and returns the cached bytes (the same bytes, ready to send), or
   * null when the body is too large to keep or `key` is already kept.
   */
  keep(key: string, parts: readonly Uint8Array[], from = 0): Uint8Array | null {
    let length = 0;
    for (let i = from; i < parts.length; i++) length += parts[i].length;
    if (length === 0 || length > this.largest || this.map.has(key)) return null;
    // Aligned to 8 like Node's pool, so bodies never share a word.
    const size = (length + 7) & ~7;
    while (this.used + size > this.capacity && this.first < this.order.length) this.forgetOldest();
    if (this.slabAt + length > this.slab.length) {
      this.slab = new Uint8Array(SLAB_BYTES);
      this.slabAt = 0;
    }
    const body = this.slab.subarray(this.slabAt, this.slabAt + length);
    let at = 0;
    for (let i = from; i < parts.length; i++) {
      body.set(parts[i], at);
      at += parts[i].length;
    }
    this.slabAt += size;
    this.used += size;
    // A key of its own: one cut from a request would keep the request's text alive with it.
    const own = ownCopy(key);
    this.map.set(own, body);
    this.order.push(own);
    this.sizes.push(size);
    return body;
  }

  private forgetOldest(): void {
    this.map.delete(this.order[this.first]);
    this.used -= this.sizes[this.first];
    this.first++;
    // Drop the spent front of the queues now and then rather than shifting them per key.
    if (this.first > 4096 && this.first * 2 > this.order.length) {
      this.order = this.order.slice(this.first);
      this.sizes = this.sizes.slice(this.first);
      this.first = 0;
    }
  }
}
