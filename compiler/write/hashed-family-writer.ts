// A hashed family (common/bucket-format.ts) from entries added in any order, spilled to disk in hash groups and
// written one group at a time.
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DIRECTORY_ENTRY_BYTES, encodeMsgpack, type BucketFamily } from '../../common/bucket-format.ts';
import { RegisterError } from '../../common/errors.ts';
import { fnv1a32 } from '../../common/hash.ts';
import { ContentFileWriter, type ContentFile } from './content-file.ts';
import { strHeaderBytes, writeArrayHeader, writeStrHeader, writeUtf8 } from './msgpack-out.ts';
import { byBucket, HASH_GROUPS, MAX_PACK_BYTES, publishHashed, setDirectoryEntry, showKey, chooseBuckets, hashGroupOf } from './family-buckets.ts';

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


/** Spill record header: u32 hash, u32 key UTF-8 length, u32 value length (little-endian). */
const RECORD_HEADER = 12;
// A lone surrogate cannot survive UTF-8: the key read back would differ from the key hashed, so refuse it.
const LONE_SURROGATE = /\p{Cs}/u;

let serial = 0;
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
  private readonly bufs: (Buffer | null)[] = new Array(HASH_GROUPS).fill(null);
  private readonly used = new Int32Array(HASH_GROUPS);
  private readonly counts = new Int32Array(HASH_GROUPS);
  /** Per group: flat (offset, length) pairs of its spilled segments. */
  private readonly segments: number[][] = Array.from({ length: HASH_GROUPS }, () => []);
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
    this.groupCap = Math.max(64, Math.floor((opts.spillBytes ?? 64 * 1024 * 1024) / HASH_GROUPS));
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
    const perGroup = buckets / HASH_GROUPS;
    const dir = Buffer.alloc(buckets * DIRECTORY_ENTRY_BYTES);
    const pack = new ContentFileWriter({ root: this.root, tmpDir: this.tmpDir, bufferBytes: 4 * 1024 * 1024, ledger: this.ledger });
    try {
      let base = 0;
      for (let g = 0; g < HASH_GROUPS; g++) {
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

