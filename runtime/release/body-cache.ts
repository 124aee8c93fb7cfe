// Finished answers, kept by what was asked (entity: release, ID, includes, lang; resolve and search likewise, see
// resolve-answer.ts and routes/search.ts), so a popular entity costs one map lookup instead of an index lookup, a
// shard copy and a compose.
//
// Why: on the full-size dist, an entity answer with includes spent about a quarter of the app's CPU on composing it
// (splicing the stored bridges back, joining the sections, copying the shard out of its ring) for bytes that are the
// same every time: an answer is a pure function of the stamp and the request. A hit hands out the cached bytes
// themselves, which nobody writes to, so it costs neither a copy nor an allocation.
//
// Memory: bodies are laid one after another in slabs (256 KiB, an eighth of a smaller budget); keys leave first in,
// first out once the budget is spent, so a slab is garbage once every body in it has left. What is counted against
// the budget (accountedBytes): each key and its entry, the current slab whole, and each earlier slab whole as long
// as its last body (first in, first out: the last of its bodies to leave) is kept.

import { ownCopy } from '../../common/own-copy.ts';

const SLAB_BYTES = 256 * 1024;
/** What a kept body's entry costs besides its bytes and its key's characters: the Map entry, the string's header, the queues' slots. */
const ENTRY_BYTES = 64;

export class BodyCache {
  private readonly map = new Map<string, Uint8Array>();
  // Keys in the order they were kept, with their sizes: the oldest leave first once the budget is spent.
  private order: string[] = [];
  private sizes: number[] = [];
  private first = 0;
  private used = 0;
  private slab = new Uint8Array(0);
  private slabAt = 0;
  /** Bodies written into the current slab. */
  private inSlab = 0;

  /** Bodies longer than this are not kept: one must not flush a large share of the budget. */
  readonly largest: number;
  /** Bytes of a slab: at most an eighth of the budget, since the part not yet written counts against it. */
  private readonly slabBytes: number;

  constructor(readonly capacity: number) {
    if (!(capacity >= 0) || !Number.isSafeInteger(capacity)) throw new RangeError(`BodyCache: capacity must be a whole number >= 0, got ${capacity}`);
    // Below 4 KiB a slab and an entry's key would not leave room for bodies worth keeping.
    this.largest = capacity < 4096 ? 0 : Math.min(16 * 1024, Math.floor(capacity / 64));
    this.slabBytes = Math.min(SLAB_BYTES, Math.floor(capacity / 8 / 8) * 8);
  }

  /** Bytes held, as counted against the budget (see Memory above). */
  get accountedBytes(): number {
    return this.used + this.slab.length;
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
   * null when the body is too large to keep, `key` is already kept, or the key alone is too long for the budget.
   */
  keep(key: string, parts: readonly Uint8Array[], from = 0): Uint8Array | null {
    let length = 0;
    for (let i = from; i < parts.length; i++) length += parts[i].length;
    if (length === 0 || length > this.largest || this.map.has(key)) return null;
    // Aligned to 8 like Node's pool, so bodies never share a word.
    const aligned = (length + 7) & ~7;
    // Key characters at two bytes each: a search's text may hold any.
    const entry = 2 * key.length + ENTRY_BYTES;
    const newSlab = this.slabAt + aligned > this.slab.length;
    // The current slab, closed, stays as long as its last body does: charged to that body (when none of its bodies
    // is kept any more, it is let go with this call).
    if (newSlab && this.inSlab > 0 && this.first < this.order.length) {
      this.sizes[this.sizes.length - 1] += this.slab.length;
      this.used += this.slab.length;
    }
    const slabCharge = newSlab ? this.slabBytes : this.slab.length;
    while (this.used + entry + slabCharge > this.capacity && this.first < this.order.length) this.forgetOldest();
    if (this.used + entry + slabCharge > this.capacity) {
      if (newSlab) this.closeSlab();
      return null;
    }
    if (newSlab) {
      this.slab = new Uint8Array(this.slabBytes);
      this.slabAt = 0;
      this.inSlab = 0;
    }
    const body = this.slab.subarray(this.slabAt, this.slabAt + length);
    let at = 0;
    for (let i = from; i < parts.length; i++) {
      body.set(parts[i], at);
      at += parts[i].length;
    }
    this.slabAt += aligned;
    this.inSlab++;
    this.used += entry;
    // A key of its own: one cut from a request would keep the request's text alive with it.
    const own = ownCopy(key);
    this.map.set(own, body);
    this.order.push(own);
    this.sizes.push(entry);
    return body;
  }

  /** Lets the current slab go (its charge, if any body of it is kept, is on its last body). */
  private closeSlab(): void {
    this.slab = new Uint8Array(0);
    this.slabAt = 0;
    this.inSlab = 0;
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
