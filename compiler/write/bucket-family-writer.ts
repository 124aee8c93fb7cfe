// Writes bucketed families (common/bucket-format.ts): a pack of msgpack buckets plus a directory of
// (offset, length) pairs. Hashed families take entries in any order with bounded memory; ordinal ones stream.
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DIRECTORY_ENTRY_BYTES, encodeMsgpack, type BucketFamily } from '../../common/bucket-format.ts';
import { checksum32 } from '../../common/checksum.ts';
import { RegisterError } from '../../common/errors.ts';
import { fnv1a32 } from '../../common/hash.ts';
import { ContentFileWriter, writeContentFile, type ContentFile } from './content-file.ts';
import { MsgpackOut, strHeaderBytes, writeArrayHeader, writeStrHeader, writeUtf8 } from './msgpack-out.ts';

/** Options of a HashedFamilyWriter. */
export interface HashedFamilyOptions {
  /** The public root; the family's paths are relative to it. */
  root: string;
  /** Family name, used as file prefix: `entities/index` gives `entities/index-<hash>.pack` and `entities/index-dir-<hash>.bin`. */
  name: string;
  /** Directory for spill and temp files (created if missing; only this writer's own files are removed). */
  tmpDir: string;
  /** Average encoded bytes per bucket to aim for; the bucket count is the nearest power of two (at least 256). Default 64 KiB. */
  targetBucketBytes?: number;
  /** Memory cap for buffered entries before they spill to disk. Default 64 MiB. */
  spillBytes?: number;
  /** See ContentFileOptions.ledger. */
  ledger?: Map<string, ContentFile>;
}

/** Options of an OrdinalFamilyWriter. */
export interface OrdinalFamilyOptions {
  /** The public root; the family's paths are relative to it. */
  root: string;
  /** Family name, used as file prefix (see HashedFamilyOptions.name). */
  name: string;
  /** Directory for the temp file (created if missing). Default: `root`. */
  tmpDir?: string;
  /** Values per bucket. Default 256. */
  perBucket?: number;
  /** See ContentFileOptions.ledger. */
  ledger?: Map<string, ContentFile>;
}

/** Entries are spilled in 256 groups by the top 8 bits of the key hash; with >= 256 buckets, a group is a bucket range. */
const GROUP_BITS = 8;
const GROUPS = 1 << GROUP_BITS;
/** Hash groups of a GroupedHashedFamilyWriter: group = bucketOf(key, HASH_GROUPS). */
export const HASH_GROUPS = GROUPS;
/** The hash group of a key whose fnv1a32 is `hash`: its top GROUP_BITS bits, as bucketOf(key, HASH_GROUPS). */
export const hashGroupOf = (hash: number): number => hash >>> (32 - GROUP_BITS);
const MIN_BUCKETS = GROUPS;
/** Caps the directory at 128 MiB; far beyond any pack that fits u32 offsets at sane bucket sizes. */
const MAX_BUCKETS = 1 << 24;
const MAX_PACK_BYTES = 0xffffffff;
/** Spill record header: u32 hash, u32 key UTF-8 length, u32 value length (little-endian). */
const RECORD_HEADER = 12;
// A lone surrogate cannot survive UTF-8: the key read back would differ from the key hashed, so refuse it.
const LONE_SURROGATE = /\p{Cs}/u;

let serial = 0;
/** A key as an error message shows it: JSON-escaped (NUL separators stay visible), cut if long. */
const showKey = (key: string): string => JSON.stringify(key.length > 120 ? key.slice(0, 120) + '…' : key);
const tempName = (kind: string): string => `.${kind}-${process.pid}-${++serial}-${randomBytes(4).toString('hex')}.tmp`;

/**
 * Builds a hashed family from entries added in any order; the output bytes depend only on the set of entries.
 * Memory stays near `spillBytes`: entries are encoded at once and appended to per-group buffers, and a full
 * buffer is appended to one spill file. `finish` then loads one group at a time, sorts it and writes its buckets.
 */
export class HashedFamilyWriter {
  private readonly root: string;
  private readonly name: string;
  private readonly tmpDir: string;
  private readonly targetBucketBytes: number;
  /** Bytes one group may buffer before it is spilled. */
  private readonly groupCap: number;
  private readonly bufs: (Buffer | null)[] = new Array(GROUPS).fill(null);
  private readonly used = new Int32Array(GROUPS);
  private readonly counts = new Int32Array(GROUPS);
  /** Per group: flat (offset, length) pairs of its spilled segments. */
  private readonly segments: number[][] = Array.from({ length: GROUPS }, () => []);
  private spillPath: string | null = null;
  private spillFd: number | null = null;
  private spillEnd = 0;
  private count = 0;
  /** Encoded bytes of all keys and values: what the buckets will hold, less their array headers. */
  private payload = 0;
  private done = false;

  private readonly ledger: Map<string, ContentFile> | undefined;

  constructor(opts: HashedFamilyOptions) {
    this.ledger = opts.ledger;
    this.root = resolve(opts.root);
    this.name = opts.name;
    this.tmpDir = resolve(opts.tmpDir);
    this.targetBucketBytes = Math.max(1, opts.targetBucketBytes ?? 64 * 1024);
    this.groupCap = Math.max(64, Math.floor((opts.spillBytes ?? 64 * 1024 * 1024) / GROUPS));
  }

  /** Entries added so far. */
  get entries(): number {
    return this.count;
  }

  /** Bytes spilled to disk so far (for progress and tests). */
  get spilledBytes(): number {
    return this.spillEnd;
  }

  /** Adds one entry. Keys must be unique; a duplicate is reported by `finish` (checking here would need every key in memory). */
  add(key: string, value: unknown): void {
    if (this.done) throw new RegisterError('compile', 'add after finish', this.name);
    if (typeof key !== 'string') throw new RegisterError('compile', `key must be a string, got ${typeof key}`, this.name);
    const hash = fnv1a32(key);
    const enc = encodeMsgpack(value);
    const g = hashGroupOf(hash);
    // Worst case UTF-8 is 3 bytes per UTF-16 unit; the key is written straight into the buffer.
    const need = RECORD_HEADER + key.length * 3 + enc.byteLength;
    let buf = this.bufs[g];
    let at = this.used[g];
    if (buf === null || at + need > buf.length) {
      if (at > 0 && at + need > this.groupCap) {
        this.spill(g);
        at = 0;
        buf = this.bufs[g];
      }
      if (buf === null || at + need > buf.length) buf = this.grow(g, at + need);
    }
    const klen = writeUtf8(buf, key, at + RECORD_HEADER);
    // Only a non-ASCII key can hold a lone surrogate (checked after the write, which `used` does not count yet).
    if (klen !== key.length && LONE_SURROGATE.test(key)) {
      throw new RegisterError('compile', `key ${showKey(key)} holds a lone surrogate`, this.name);
    }
    buf.writeUInt32LE(hash, at);
    buf.writeUInt32LE(klen, at + 4);
    buf.writeUInt32LE(enc.byteLength, at + 8);
    buf.set(enc, at + RECORD_HEADER + klen);
    at += RECORD_HEADER + klen + enc.byteLength;
    this.used[g] = at;
    this.counts[g]++;
    this.count++;
    this.payload += strHeaderBytes(klen) + klen + enc.byteLength;
    // An oversized record may push a group past its cap; spill it now so the cap holds between calls.
    if (at > this.groupCap) this.spill(g);
  }

  /** Sorts and writes every bucket, then the directory; removes the temp files. */
  async finish(): Promise<BucketFamily> {
    if (this.done) throw new RegisterError('compile', 'finish called twice', this.name);
    this.done = true;
    const buckets = chooseBuckets(this.payload, this.targetBucketBytes);
    const bits = 31 - Math.clz32(buckets);
    const perGroup = buckets / GROUPS;
    const dir = Buffer.alloc(buckets * DIRECTORY_ENTRY_BYTES);
    const pack = new ContentFileWriter({ root: this.root, tmpDir: this.tmpDir, bufferBytes: 4 * 1024 * 1024, ledger: this.ledger });
    try {
      let base = 0;
      for (let g = 0; g < GROUPS; g++) {
        const n = this.counts[g];
        const data = this.loadGroup(g);
        const out = this.encodeGroup(data, n, g * perGroup, perGroup, bits, dir, base);
        pack.write(out);
        base += out.byteLength;
        if (base > MAX_PACK_BYTES) throw new RegisterError('compile', `pack exceeds ${MAX_PACK_BYTES} bytes (u32 offsets)`, this.name);
      }
      this.dropSpill();
      return await publishHashed({ root: this.root, tmpDir: this.tmpDir, ledger: this.ledger }, this.name, buckets, dir, pack, this.count);
    } catch (err) {
      await pack.abort();
      this.dropSpill();
      throw err;
    }
  }

  /** Drops buffered entries and temp files (after an error elsewhere). */
  async abort(): Promise<void> {
    this.done = true;
    this.bufs.fill(null);
    this.dropSpill();
  }

  private grow(g: number, min: number): Buffer {
    const old = this.bufs[g];
    // Double up to the cap (so small families stay small); a single huge record may exceed it.
    const size = Math.max(min, Math.min(this.groupCap, old ? old.length * 2 : 4096));
    const buf = Buffer.allocUnsafe(size);
    if (old) old.copy(buf, 0, 0, this.used[g]);
    this.bufs[g] = buf;
    return buf;
  }

  private spill(g: number): void {
    const n = this.used[g];
    if (n === 0) return;
    if (this.spillFd === null) {
      mkdirSync(this.tmpDir, { recursive: true });
      this.spillPath = join(this.tmpDir, tempName('spill'));
      this.spillFd = openSync(this.spillPath, 'wx+');
    }
    const buf = this.bufs[g]!;
    let done = 0;
    while (done < n) done += writeSync(this.spillFd, buf, done, n - done, this.spillEnd + done);
    this.segments[g].push(this.spillEnd, n);
    this.spillEnd += n;
    this.used[g] = 0;
    // A buffer grown past the cap for one huge record is not kept: the cap holds again after the spill.
    if (buf.length > this.groupCap) this.bufs[g] = null;
  }

  /** All records of group `g` in one buffer: spilled segments in order, then what is still in memory. */
  private loadGroup(g: number): Buffer {
    const segs = this.segments[g];
    const mem = this.bufs[g];
    const memUsed = this.used[g];
    let total = memUsed;
    for (let i = 1; i < segs.length; i += 2) total += segs[i];
    if (segs.length === 0) {
      this.bufs[g] = null;
      return mem ? mem.subarray(0, memUsed) : Buffer.alloc(0);
    }
    const data = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = 0; i < segs.length; i += 2) {
      let done = 0;
      while (done < segs[i + 1]) {
        const r = readSync(this.spillFd!, data, at + done, segs[i + 1] - done, segs[i] + done);
        if (r === 0) throw new RegisterError('compile', 'spill file ended early', this.name);
        done += r;
      }
      at += segs[i + 1];
    }
    if (mem) mem.copy(data, at, 0, memUsed);
    this.bufs[g] = null;
    this.used[g] = 0;
    return data;
  }

  /**
   * Sorts a group's records by (bucket, key) and encodes buckets [first, first + count) back to back, filling
   * their directory entries (pack offsets start at `base`). Bucket bytes equal encodeMsgpack([k0, v0, ...]):
   * each value is already msgpack, so the array is its header plus the concatenated elements.
   */
  private encodeGroup(data: Buffer, n: number, first: number, count: number, bits: number, dir: Buffer, base: number): Buffer {
    const starts = new Float64Array(n);
    const local = new Int32Array(n);
    const keys = new Array<string>(n);
    let r = 0;
    for (let at = 0; at < data.length; r++) {
      const b = (data.readUInt32LE(at) >>> (32 - bits)) - first;
      const klen = data.readUInt32LE(at + 4);
      const vlen = data.readUInt32LE(at + 8);
      if (b < 0 || b >= count) throw new RegisterError('compile', `group holds a bucket outside ${first}..${first + count - 1}`, this.name);
      starts[r] = at;
      local[r] = b;
      keys[r] = data.toString('utf8', at + RECORD_HEADER, at + RECORD_HEADER + klen);
      at += RECORD_HEADER + klen + vlen;
    }
    if (r !== n) throw new RegisterError('compile', `group holds ${r} records, expected ${n}`, this.name);
    const { starts: bucketStart, order } = orderByBucket(local, keys, count, this.name);

    // The record headers (12 bytes) outweigh key string headers (<= 5), leaving room for array headers.
    const out = Buffer.allocUnsafe(data.length + count * 5);
    let pos = 0;
    for (let b = 0; b < count; b++) {
      const lo = bucketStart[b];
      const hi = bucketStart[b + 1];
      if (hi === lo) continue;
      const start = pos;
      pos = writeArrayHeader(out, pos, (hi - lo) * 2);
      for (let k = lo; k < hi; k++) {
        const at = starts[order[k]];
        const klen = data.readUInt32LE(at + 4);
        const len = klen + data.readUInt32LE(at + 8);
        pos = writeStrHeader(out, pos, klen);
        const from = at + RECORD_HEADER;
        // Most records are a few dozen bytes: a plain loop beats the native copy call.
        if (len < 64) for (let q = 0; q < len; q++) out[pos + q] = data[from + q];
        else data.copy(out, pos, from, from + len);
        pos += len;
      }
      setDirectoryEntry(dir, first + b, base + start, out, start, pos);
    }
    return out.subarray(0, pos);
  }

  private dropSpill(): void {
    if (this.spillFd !== null) closeSync(this.spillFd);
    if (this.spillPath !== null) rmSync(this.spillPath, { force: true });
    this.spillFd = null;
    this.spillPath = null;
  }
}

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
    if (!Number.isInteger(b) || b < MIN_BUCKETS || b > MAX_BUCKETS || (b & (b - 1)) !== 0) {
      throw new RegisterError('compile', `bucket count must be a power of two from ${MIN_BUCKETS} to ${MAX_BUCKETS}, got ${b}`, opts.name);
    }
    this.opts = opts;
    this.bits = 31 - Math.clz32(b);
    this.perGroup = b / GROUPS;
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
    if (!Number.isInteger(g) || g < this.next || g >= GROUPS) {
      throw new RegisterError('compile', `group ${g} out of order (next may be ${this.next} to ${GROUPS - 1})`, name);
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
 * One group's entries in bucket order and, within a bucket, in JS string order of their keys, as both hashed
 * writers lay them out: `local[i]` is entry i's bucket within the group's `count`. Bucket b's entries are
 * `order[starts[b]]` to `order[starts[b + 1] - 1]`. A key given twice is refused.
 */
function orderByBucket(local: Int32Array, keys: string[], count: number, name: string): { starts: Int32Array; order: Int32Array } {
  const { starts, order } = byBucket(local, count);
  const byKey = (x: number, y: number): number => (keys[x] < keys[y] ? -1 : keys[x] > keys[y] ? 1 : 0);
  for (let b = 0; b < count; b++) {
    const lo = starts[b];
    const hi = starts[b + 1];
    if (hi - lo < 2) continue;
    const run = order.subarray(lo, hi).sort(byKey);
    for (let k = 1; k < run.length; k++) {
      if (keys[run[k]] === keys[run[k - 1]]) throw new RegisterError('compile', `duplicate key ${showKey(keys[run[k]])}`, name);
    }
  }
  return { starts, order };
}

/**
 * Entries 0..n-1 counting-sorted by their bucket `local[i]` (buckets are a small dense range, `count` of them), in
 * input order within one: bucket b's entries are `order[starts[b]]` to `order[starts[b + 1] - 1]`. Both orderings
 * then sort each bucket by key.
 */
function byBucket(local: Int32Array, count: number): { starts: Int32Array; order: Int32Array } {
  const n = local.length;
  const starts = new Int32Array(count + 1);
  for (let i = 0; i < n; i++) starts[local[i] + 1]++;
  for (let b = 0; b < count; b++) starts[b + 1] += starts[b];
  const order = new Int32Array(n);
  const fill = starts.slice(0, count);
  for (let i = 0; i < n; i++) order[fill[local[i]]++] = i;
  return { starts, order };
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

/** Bucket `bucket`'s directory entry: where its bytes `bytes[start, end)` sit in the pack, their length and checksum. */
function setDirectoryEntry(dir: Buffer, bucket: number, offset: number, bytes: Uint8Array, start: number, end: number): void {
  const e = bucket * DIRECTORY_ENTRY_BYTES;
  dir.writeUInt32LE(offset, e);
  dir.writeUInt32LE(end - start, e + 4);
  dir.writeUInt32LE(checksum32(bytes, start, end), e + 8);
}

/** Writes a hashed family's directory, finishes its pack and names both. */
async function publishHashed(where: { root: string; tmpDir: string; ledger?: Map<string, ContentFile> }, name: string, buckets: number, dir: Buffer, pack: ContentFileWriter, entries: number): Promise<BucketFamily> {
  const directory = await writeContentFile(where, `${name}-dir`, 'bin', dir);
  const packFile = await pack.finish(name, 'pack');
  return { buckets, addressing: 'fnv1a32-top-bits', directory: directory.path, pack: packFile.path, entries };
}

/**
 * Builds an ordinal family from values pushed in ordinal order: bucket = floor(ordinal / perBucket), each bucket
 * the msgpack array of its values. Streams straight to the pack; memory holds one bucket.
 */
export class OrdinalFamilyWriter {
  private readonly root: string;
  private readonly name: string;
  private readonly tmpDir: string;
  private readonly perBucket: number;
  private readonly pack: ContentFileWriter;
  /** The current bucket's values, written as packr would write them, without a buffer per value. */
  private readonly stage = new MsgpackOut(64 * 1024);
  private inBucket = 0;
  private dir = Buffer.allocUnsafe(64 * DIRECTORY_ENTRY_BYTES);
  private buckets = 0;
  private count = 0;
  private done = false;

  private readonly ledger: Map<string, ContentFile> | undefined;

  constructor(opts: OrdinalFamilyOptions) {
    this.ledger = opts.ledger;
    this.root = resolve(opts.root);
    this.name = opts.name;
    this.tmpDir = resolve(opts.tmpDir ?? opts.root);
    this.perBucket = opts.perBucket ?? 256;
    if (!Number.isSafeInteger(this.perBucket) || this.perBucket < 1) {
      throw new RegisterError('compile', `perBucket must be a positive integer, got ${opts.perBucket}`, this.name);
    }
    this.pack = new ContentFileWriter({ root: this.root, tmpDir: this.tmpDir, ledger: this.ledger });
  }

  /** Values pushed so far (the next value's ordinal). */
  get entries(): number {
    return this.count;
  }

  push(value: unknown): void {
    if (this.done) throw new RegisterError('compile', 'push after finish', this.name);
    this.stage.value(value);
    this.count++;
    if (++this.inBucket === this.perBucket) this.flushBucket();
  }

  async finish(): Promise<BucketFamily> {
    if (this.done) throw new RegisterError('compile', 'finish called twice', this.name);
    this.done = true;
    try {
      if (this.inBucket > 0) this.flushBucket();
      const dir = this.dir.subarray(0, this.buckets * DIRECTORY_ENTRY_BYTES);
      const directory = await writeContentFile({ root: this.root, tmpDir: this.tmpDir, ledger: this.ledger }, `${this.name}-dir`, 'bin', dir);
      const pack = await this.pack.finish(this.name, 'pack');
      return {
        buckets: this.buckets,
        addressing: 'ordinal',
        per_bucket: this.perBucket,
        directory: directory.path,
        pack: pack.path,
        entries: this.count,
      };
    } catch (err) {
      await this.pack.abort();
      throw err;
    }
  }

  /** Drops the temp file (after an error elsewhere). */
  async abort(): Promise<void> {
    this.done = true;
    await this.pack.abort();
  }

  private flushBucket(): void {
    const offset = this.pack.bytes;
    const header = Buffer.allocUnsafe(5);
    const h = writeArrayHeader(header, 0, this.inBucket);
    this.pack.write(header.subarray(0, h));
    const staged = this.stage.pos;
    this.pack.write(this.stage.bytes());
    const length = h + staged;
    if (offset + length > MAX_PACK_BYTES) throw new RegisterError('compile', `pack exceeds ${MAX_PACK_BYTES} bytes (u32 offsets)`, this.name);
    if ((this.buckets + 1) * DIRECTORY_ENTRY_BYTES > this.dir.length) {
      const bigger = Buffer.allocUnsafe(this.dir.length * 2);
      this.dir.copy(bigger);
      this.dir = bigger;
    }
    this.dir.writeUInt32LE(offset, this.buckets * DIRECTORY_ENTRY_BYTES);
    this.dir.writeUInt32LE(length, this.buckets * DIRECTORY_ENTRY_BYTES + 4);
    const checksum = checksum32(this.stage.buf, 0, staged, checksum32(header, 0, h));
    this.dir.writeUInt32LE(checksum, this.buckets * DIRECTORY_ENTRY_BYTES + 8);
    this.buckets++;
    this.stage.pos = 0;
    this.inBucket = 0;
  }
}

/** Power of two >= 256 nearest (in log scale) to payload / target, so buckets average about the target size. */
export function chooseBuckets(payloadBytes: number, targetBucketBytes: number): number {
  const ideal = payloadBytes / targetBucketBytes;
  if (ideal <= MIN_BUCKETS) return MIN_BUCKETS;
  const b = 2 ** Math.round(Math.log2(ideal));
  return Math.min(MAX_BUCKETS, Math.max(MIN_BUCKETS, b));
}
