// Verified entity shards kept in one fixed ring of bytes, so a popular ID costs neither a read nor a checksum.
//
// Why a ring and not an LruCache of small arrays: a batch of 100 entities read through the page cache spent about a
// third of its CPU on the positioned read and the checksum of each shard (measured in-process on the full-size
// dist: ~0.85 ms per batch without a cache, ~0.55 ms with every shard retained). Retaining each shard as its own
// ArrayBuffer would put one allocation, with its external-memory accounting, on every miss, and a pooled slice
// would pin its whole 8 KiB slab. Here a miss copies the shard into the ring and a hit copies it out into a shared
// chunk: no allocation per shard that the garbage collector has to account for.
//
// Bytes are copied out, never lent: a caller may hold a shard across an await (a batch composing its items) while
// later misses overwrite that part of the ring.

/** A shard's cache key: its pack's number (pack-numbers.ts) and the shard's offset in it. */
export const shardCacheKey = (pack: number, offset: number): number => pack * 2 ** 32 + offset;

/** Size of the shared chunks that hits are copied out into (see copyOut). */
const COPY_OUT_CHUNK = 64 * 1024;
/** Each entry in the ring starts with its shard's length. */
const LENGTH_BYTES = 4;
/**
 * What a retained shard's key costs besides its bytes in the ring: its Map entry and its two queue slots (keys past
 * 2^31 are heap numbers, in the map and in the queue).
 */
const KEY_BYTES = 64;
/** The part of the budget that pays for keys, the rest is the ring: an eighth, room for shards of ~450 bytes on average. */
const KEY_SHARE = 8;

export class ShardCache {
  private ring: Uint8Array | null = null;
  /** Bytes written so far, as if the ring never wrapped; a shard at `at` is intact while `at >= head - capacity`. */
  private head = 0;
  /**
   * key → virtual position of its entry: the shard's length (u32, little-endian), then its bytes. The length lives
   * in the ring beside the bytes, not in a second map: one hash lookup per hit, and the length is read from the
   * cache line the copy reads next anyway.
   */
  private readonly where = new Map<number, number>();
  // Insertion order, so keys whose bytes the ring has overwritten leave the maps (they are bounded by what fits).
  private queueKeys: number[] = [];
  private queueAt: number[] = [];
  private queueStart = 0;

  /** Shards longer than this are not cached: one must not flush a large share of the ring. */
  readonly largest: number;
  /** Bytes of the ring, the budget less what its keys may cost. */
  readonly capacity: number;
  /** Most keys retained at once: past it the oldest key is forgotten, so keys stay within their part of the budget. */
  private readonly maxKeys: number;

  /** `budget`: bytes the ring and its keys may hold together (0 keeps none). */
  constructor(readonly budget: number) {
    if (!(budget >= 0) || !Number.isSafeInteger(budget)) throw new RangeError(`ShardCache: budget must be a whole number >= 0, got ${budget}`);
    this.maxKeys = Math.floor(budget / KEY_SHARE / KEY_BYTES);
    this.capacity = budget - this.maxKeys * KEY_BYTES;
    this.largest = this.maxKeys === 0 ? 0 : Math.floor(this.capacity / 64);
  }

  /** Bytes held, as counted against the budget: the ring once allocated, and the keys retained. */
  get accountedBytes(): number {
    return (this.ring ? this.ring.length : 0) + this.where.size * KEY_BYTES;
  }

  /** Number of shards retained. */
  get size(): number {
    return this.where.size;
  }

  /** Lookups that found a shard, and that did not (for /metrics). */
  hits = 0;
  misses = 0;

  /** A copy of the shard under `key` if it is retained with exactly `length` bytes, else undefined. */
  get(key: number, length: number): Uint8Array | undefined {
    this.misses++; // taken back below on a hit: one counter bump on every path out
    const at = this.where.get(key);
    if (at === undefined) return undefined;
    if (at < this.head - this.capacity) return undefined;
    const ring = this.ring!;
    const start = at % this.capacity;
    if ((ring[start] | (ring[start + 1] << 8) | (ring[start + 2] << 16) | (ring[start + 3] << 24)) >>> 0 !== length) return undefined;
    this.misses--;
    this.hits++;
    const out = this.copyOut(length);
    out.set(ring.subarray(start + LENGTH_BYTES, start + LENGTH_BYTES + length));
    // Second chance: a shard in the older half of the ring is written again at the head, so a popular shard stays
    // while one read once is overwritten (close to least-recently-used, at the cost of one copy now and then).
    if (at < this.head - this.capacity / 2) this.put(key, out);
    return out;
  }

  /**
   * Room for one shard handed out: a plain Uint8Array view of a shared 64 KiB chunk, taken in turn (a chunk is
   * freed once no answer holds a view of it). Not Node's Buffer pool: slicing a Buffer goes through its species
   * constructor, and the composer slices every shard into sections (measured ~15% of a cached batch item).
   */
  private copyOut(length: number): Uint8Array {
    if (this.outAt + length > this.out.length) {
      this.out = new Uint8Array(Math.max(COPY_OUT_CHUNK, length));
      this.outAt = 0;
    }
    const view = this.out.subarray(this.outAt, this.outAt + length);
    // Aligned to 8, as Node's pool does, so views never share a word.
    this.outAt += (length + 7) & ~7;
    return view;
  }
  private out = new Uint8Array(0);
  private outAt = 0;

  /** Retains a verified shard (a copy of `bytes`). */
  put(key: number, bytes: Uint8Array): void {
    const length = bytes.byteLength;
    if (length === 0 || length > this.largest) return;
    const ring = (this.ring ??= new Uint8Array(this.capacity));
    const size = LENGTH_BYTES + length;
    let start = this.head % this.capacity;
    // An entry never straddles the end: skip the tail, which counts as written (what was there is dropped below).
    if (start + size > this.capacity) {
      this.head += this.capacity - start;
      start = 0;
    }
    this.head += size;
    this.forgetOverwritten();
    if (this.where.size >= this.maxKeys) this.forgetOldestKey();
    ring[start] = length & 0xff;
    ring[start + 1] = (length >>> 8) & 0xff;
    ring[start + 2] = (length >>> 16) & 0xff;
    ring[start + 3] = length >>> 24;
    ring.set(bytes, start + LENGTH_BYTES);
    const at = this.head - size;
    this.where.set(key, at);
    this.queueKeys.push(key);
    this.queueAt.push(at);
  }

  /** Drops the oldest key still retained (its bytes stay in the ring until overwritten, unreachable). */
  private forgetOldestKey(): void {
    let i = this.queueStart;
    for (; i < this.queueKeys.length; i++) {
      const key = this.queueKeys[i];
      if (this.where.get(key) === this.queueAt[i]) {
        this.where.delete(key);
        i++;
        break;
      }
    }
    this.queueStart = i;
  }

  /** Drops the keys whose bytes lie where the ring has been written since. */
  private forgetOverwritten(): void {
    const oldestIntact = this.head - this.capacity;
    let i = this.queueStart;
    for (; i < this.queueKeys.length && this.queueAt[i] < oldestIntact; i++) {
      const key = this.queueKeys[i];
      // A key written again later has a newer position; only its stale queue entry goes.
      if (this.where.get(key) === this.queueAt[i]) this.where.delete(key);
    }
    this.queueStart = i;
    if (i > 4096 && i * 2 > this.queueKeys.length) {
      this.queueKeys = this.queueKeys.slice(i);
      this.queueAt = this.queueAt.slice(i);
      this.queueStart = 0;
    }
  }
}
