// A hashed family (common/bucket-format.ts) from entries handed over one hash group at a time, written as they come.
import { DIRECTORY_ENTRY_BYTES, type BucketFamily } from '../../common/bucket-format.ts';
import { RegisterError } from '../../common/errors.ts';
import { ContentFileWriter, type ContentFile } from './content-file.ts';
import { MsgpackOut, writeStrHeader } from './msgpack-out.ts';
import { byBucket, HASH_GROUPS, MAX_PACK_BYTES, MAX_BUCKETS, publishHashed, setDirectoryEntry, showKey, hashGroupOf } from './family-buckets.ts';

/** Options of a GroupedHashedFamilyWriter. */
export interface GroupedHashedFamilyOptions {
  /** The public root; the family's paths are relative to it. */
  root: string;
  /** Family name, used as file prefix (see HashedFamilyOptions.name). */
  name: string;
  /** Directory for the pack's temp file (created if missing). */
  tmpDir: string;
  /**
   * Number of buckets: a power of two from 256 to 2^24, fixed before any entry is seen (chooseBuckets over an
   * estimate of the entries' bytes), since it decides which bucket each key lands in.
   */
  buckets: number;
  /** See ContentFileOptions.ledger. */
  ledger?: Map<string, ContentFile>;
}

/**
 * Builds a hashed family from entries handed over one hash group at a time, in ascending group order, where group
 * `g` holds exactly the keys with `bucketOf(key, HASH_GROUPS) === g`. A group is a contiguous run of buckets, so
 * each group is sorted and written to the pack as it comes: no spill file and no second pass over the entries,
 * which HashedFamilyWriter needs for entries in any order. For the same bucket count the bytes are the same.
 */
export class GroupedHashedFamilyWriter {
  private readonly opts: GroupedHashedFamilyOptions;
  private readonly bits: number;
  private readonly perGroup: number;
  private readonly dir: Buffer;
  private readonly pack: ContentFileWriter;
  private readonly out = new MsgpackOut(1024 * 1024);
  /** The lowest group that may still be written. */
  private next = 0;
  private count = 0;
  private done = false;

  constructor(opts: GroupedHashedFamilyOptions) {
    const b = opts.buckets;
    if (!Number.isInteger(b) || b < HASH_GROUPS || b > MAX_BUCKETS || (b & (b - 1)) !== 0) {
      throw new RegisterError('compile', `bucket count must be a power of two from ${HASH_GROUPS} to ${MAX_BUCKETS}, got ${b}`, opts.name);
    }
    this.opts = opts;
    this.bits = 31 - Math.clz32(b);
    this.perGroup = b / HASH_GROUPS;
    this.dir = Buffer.alloc(b * DIRECTORY_ENTRY_BYTES);
    this.pack = new ContentFileWriter({ root: opts.root, tmpDir: opts.tmpDir, bufferBytes: 4 * 1024 * 1024, ledger: opts.ledger });
  }

  /** Entries written so far. */
  get entries(): number {
    return this.count;
  }

  /**
   * Writes group `g`, whose keys are held as UTF-8 bytes (the records a caller spilled): key i is
   * `data[keyAt[i], keyAt[i] + keyLength[i])` with fnv1a32 `hashes[i]`, for i below `n`, and every key must belong to
   * `g`; groups come in ascending order (a group may be skipped: its buckets stay empty). Entries whose keys are
   * equal are one entry (a key may be named by several records): `value(out, order, lo, hi)` appends the value of
   * the key shared by entries `order[lo]` to `order[hi - 1]`, listed in input order. No string is made per key: at
   * full size the resolve family's 10M keys as strings (decoded, merged through a Map, sorted, encoded again) cost
   * more than the rest of its stage.
   */
  writeGroup(
    g: number, data: Uint8Array, keyAt: Int32Array, keyLength: Int32Array, hashes: Uint32Array, n: number,
    value: (out: MsgpackOut, order: Int32Array, lo: number, hi: number) => void,
  ): void {
    const name = this.opts.name;
    this.startGroup(g);
    if (n === 0) return;
    if (keyAt.length < n || keyLength.length < n || hashes.length < n) throw new RegisterError('compile', `${n} keys but fewer offsets, lengths or hashes`, name);
    const { bits, perGroup } = this;
    const first = g * perGroup;
    // Equal keys have equal hashes: comparing those first spares most byte comparisons.
    const same = (x: number, y: number) => hashes[x] === hashes[y] && sameBytes(data, keyAt[x], keyLength[x], keyAt[y], keyLength[y]);
    const local = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (hashGroupOf(hashes[i]) !== g) throw new RegisterError('compile', `key ${showKey(utf8Text(data, keyAt[i], keyLength[i]))} does not belong to group ${g}`, name);
      local[i] = (hashes[i] >>> (32 - bits)) - first;
    }
    const { starts, order } = orderBytesByBucket(local, data, keyAt, keyLength, perGroup);

    const out = this.out;
    out.pos = 0;
    const base = this.pack.bytes;
    for (let b = 0; b < perGroup; b++) {
      const lo = starts[b];
      const hi = starts[b + 1];
      if (hi === lo) continue;
      let distinct = 1;
      for (let k = lo + 1; k < hi; k++) if (!same(order[k - 1], order[k])) distinct++;
      this.count += distinct;
      const start = out.pos;
      out.arrayHeader(distinct * 2);
      for (let k = lo; k < hi; ) {
        const e = order[k];
        const at = keyAt[e];
        const len = keyLength[e];
        let end = k + 1;
        while (end < hi && same(e, order[end])) end++;
        out.ensure(5 + len);
        const buf = out.buf;
        let pos = writeStrHeader(buf, out.pos, len);
        for (let q = 0; q < len; q++) buf[pos + q] = data[at + q];
        out.pos = pos + len;
        value(out, order, k, end);
        k = end;
      }
      setDirectoryEntry(this.dir, first + b, base + start, out.buf, start, out.pos);
    }
    if (base + out.pos > MAX_PACK_BYTES) throw new RegisterError('compile', `pack exceeds ${MAX_PACK_BYTES} bytes (u32 offsets)`, name);
    this.pack.write(out.bytes());
  }

  /** Checks that group `g` may come next (groups ascend) and makes it the last one written. */
  private startGroup(g: number): void {
    const name = this.opts.name;
    if (this.done) throw new RegisterError('compile', 'writeGroup after finish', name);
    if (!Number.isInteger(g) || g < this.next || g >= HASH_GROUPS) {
      throw new RegisterError('compile', `group ${g} out of order (next may be ${this.next} to ${HASH_GROUPS - 1})`, name);
    }
    this.next = g + 1;
  }

  /** Writes the directory and names both files. */
  async finish(): Promise<BucketFamily> {
    const { root, tmpDir, ledger, name, buckets } = this.opts;
    if (this.done) throw new RegisterError('compile', 'finish called twice', name);
    this.done = true;
    try {
      return await publishHashed({ root, tmpDir, ledger }, name, buckets, this.dir, this.pack, this.count);
    } catch (err) {
      await this.pack.abort();
      throw err;
    }
  }

  /** Drops the temp file (after an error elsewhere). */
  async abort(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.pack.abort();
  }
}

/**
 * orderByBucket for keys held as UTF-8 bytes (see GroupedHashedFamilyWriter.writeGroup): within a bucket, entries
 * are in JS string order of their keys, and entries with equal keys are next to each other in input order. Nothing
 * is refused.
 */
function orderBytesByBucket(local: Int32Array, data: Uint8Array, keyAt: Int32Array, keyLength: Int32Array, count: number): { starts: Int32Array; order: Int32Array } {
  const { starts, order } = byBucket(local, count);
  // Entry indexes break ties, so equal keys keep input order whatever the sort.
  const byKey = (x: number, y: number): number => compareUtf8(data, keyAt[x], keyLength[x], keyAt[y], keyLength[y]) || x - y;
  for (let b = 0; b < count; b++) {
    const lo = starts[b];
    const hi = starts[b + 1];
    if (hi - lo < 2) continue;
    if (hi - lo <= 16) {
      // A short run: insertion sort. Longer ones (a point-lookup bucket holds ~90 keys) sorted faster natively.
      for (let k = lo + 1; k < hi; k++) {
        const e = order[k];
        let j = k - 1;
        while (j >= lo && byKey(order[j], e) > 0) {
          order[j + 1] = order[j];
          j--;
        }
        order[j + 1] = e;
      }
    } else order.subarray(lo, hi).sort(byKey);
  }
  return { starts, order };
}

function sameBytes(data: Uint8Array, a: number, aLength: number, b: number, bLength: number): boolean {
  if (aLength !== bLength) return false;
  for (let i = 0; i < aLength; i++) if (data[a + i] !== data[b + i]) return false;
  return true;
}

/**
 * Compares two UTF-8 byte strings in the JS string order of what they decode to (UTF-16 code units). Byte order is
 * code point order, which differs from it only where a character above U+FFFF meets one from U+E000 to U+FFFF; so
 * bytes decide while they are ASCII, and two keys first differing beyond ASCII are decoded and compared as strings.
 */
function compareUtf8(data: Uint8Array, a: number, aLength: number, b: number, bLength: number): number {
  const n = Math.min(aLength, bLength);
  for (let i = 0; i < n; i++) {
    const x = data[a + i];
    const y = data[b + i];
    if (x === y) continue;
    if (x < 0x80 && y < 0x80) return x - y;
    const s = utf8Text(data, a, aLength);
    const t = utf8Text(data, b, bLength);
    return s < t ? -1 : s > t ? 1 : 0;
  }
  return aLength - bLength;
}

/** The text of the UTF-8 bytes `data[at, at + length)`. */
const utf8Text = (data: Uint8Array, at: number, length: number): string => Buffer.from(data.buffer, data.byteOffset + at, length).toString('utf8');

