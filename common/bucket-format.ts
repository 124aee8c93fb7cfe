// The on-disk shape of a bucketed family (entity index, resolve, search, search docs): one pack of msgpack buckets
// plus a directory of (offset, length) pairs, so a reader fetches one bucket with one positioned read or Range request.
import { Packr } from 'msgpackr';

// Fixed options: no record extension (plain arrays and maps only), so any msgpack reader can decode the buckets
// and the bytes depend only on the values.
export const packr = new Packr({ useRecords: false, mapsAsObjects: false, variableMapSize: true });

export const encodeMsgpack = (value: unknown): Uint8Array => packr.pack(value);
export const decodeMsgpack = <T = unknown>(bytes: Uint8Array): T => packr.unpack(bytes) as T;

/** Bytes per directory entry: u32 offset, u32 length, u32 CRC-32 (checksum32) of the bucket's bytes, little-endian. */
export const DIRECTORY_ENTRY_BYTES = 12;

/** Describes one bucketed family inside release.json. */
export interface BucketFamily {
  /** Number of buckets, a power of two for hashed families. */
  buckets: number;
  /** How a key picks its bucket: `fnv1a32-top-bits` of the key, or `ordinal` (bucket = floor(key / per_bucket)). */
  addressing: 'fnv1a32-top-bits' | 'ordinal';
  /** For `ordinal` addressing: keys per bucket. */
  per_bucket?: number;
  /** Path (relative to public/) of the directory: `buckets` entries of DIRECTORY_ENTRY_BYTES (offset, length, checksum). */
  directory: string;
  /** Path (relative to public/) of the pack holding the buckets back to back. */
  pack: string;
  /** Number of keys over all buckets. */
  entries: number;
}

/**
 * A hashed bucket is a msgpack array `[k0, v0, k1, v1, ...]` with keys in ascending JS string order; an ordinal
 * bucket is an array of values. Readers keep the bucket's bytes and walk them: a lookup compares keys in place,
 * skips the values before its own and decodes only that one, so a lookup allocates one value, not the bucket
 * (a few thousand short-lived objects per lookup otherwise, which the GC then has to chase). A bucket read often
 * can be indexed once (indexBucket: where each entry starts), after which a lookup binary-searches the keys or
 * jumps to the n-th value instead of skipping the values before it.
 */

/**
 * Where each entry of a bucket starts (the key of a hashed bucket's pair, the value of an ordinal bucket's), and
 * at the last slot where the bucket ends: 2 bytes a slot for buckets under 64 KiB, else 4.
 */
export type BucketIndex = Uint16Array | Uint32Array;

/** The value stored under `key` in a hashed bucket's bytes, or undefined. Throws on bytes that are not a bucket. */
export function findInBucket<V>(bucket: Uint8Array, key: string, index?: BucketIndex): V | undefined {
  const at = locateInBucket(bucket, key, index);
  return at ? (decodeValue(bucket, at[0], at[1]) as V) : undefined;
}

/** The value at position `n` of an ordinal bucket's bytes, or undefined past its end. */
export function valueInBucket<V>(bucket: Uint8Array, n: number, index?: BucketIndex): V | undefined {
  const at = locateValue(bucket, n, index);
  return at ? (decodeValue(bucket, at[0], at[1]) as V) : undefined;
}

/**
 * The msgpack value in b[start, end), exactly as packr.unpack gives it. Values the compiler writes (arrays of
 * small integers and strings, nil, booleans) are read here directly, which costs a fraction of a general unpack
 * call per value; any other type (maps, floats, 64-bit integers, bin, ext) hands the whole value to msgpackr.
 */
export function decodeValue(b: Uint8Array, start: number, end: number): unknown {
  decodePos = start;
  decodeEnd = end;
  try {
    const v = readValue(b);
    if (decodePos === end) return v;
  } catch (err) {
    if (err !== UNSUPPORTED) throw err;
  }
  return packr.unpack(b.subarray(start, end));
}

// Decoder state: where the next byte is read, and where the value must end.
let decodePos = 0;
let decodeEnd = 0;
/** Thrown by readValue for a type it leaves to msgpackr (an object, so no stack trace is built). */
const UNSUPPORTED = { unsupported: true };
const utf8Decoder = new TextDecoder();

function readValue(b: Uint8Array): unknown {
  if (decodePos >= decodeEnd) throw UNSUPPORTED; // past the value: let msgpackr report it
  const t = b[decodePos++];
  if (t < 0x80) return t;
  if (t >= 0xe0) return t - 0x100;
  if (t >= 0xa0 && t <= 0xbf) return readString(b, t & 0x1f);
  if (t >= 0x90 && t <= 0x9f) return readArray(b, t & 0x0f);
  const p = decodePos;
  switch (t) {
    case 0xc0: return null;
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xcc: decodePos += 1; return b[p];
    case 0xcd: decodePos += 2; return u16(b, p);
    case 0xce: decodePos += 4; return u32(b, p);
    case 0xd0: decodePos += 1; return (b[p] << 24) >> 24;
    case 0xd1: decodePos += 2; return (u16(b, p) << 16) >> 16;
    case 0xd2: decodePos += 4; return u32(b, p) | 0;
    case 0xd9: decodePos += 1; return readString(b, b[p]);
    case 0xda: decodePos += 2; return readString(b, u16(b, p));
    case 0xdb: decodePos += 4; return readString(b, u32(b, p));
    case 0xdc: decodePos += 2; return readArray(b, u16(b, p));
    case 0xdd: decodePos += 4; return readArray(b, u32(b, p));
    default: throw UNSUPPORTED;
  }
}

function readArray(b: Uint8Array, n: number): unknown[] {
  // Every element takes at least one byte: a count beyond the bytes left is not this decoder's to handle.
  if (n > decodeEnd - decodePos) throw UNSUPPORTED;
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) {
    // Search postings are long arrays of small deltas: a positive fixint is taken without a call.
    const t = b[decodePos];
    if (t < 0x80 && decodePos < decodeEnd) {
      out[i] = t;
      decodePos++;
    } else out[i] = readValue(b);
  }
  return out;
}

function readString(b: Uint8Array, n: number): string {
  const start = decodePos;
  const end = start + n;
  if (!(end <= decodeEnd)) throw UNSUPPORTED;
  decodePos = end;
  // Register IDs and labels are short and mostly ASCII: built in JS, they skip a native call each.
  if (n <= 32) {
    let s = '';
    for (let i = start; i < end; i++) {
      const c = b[i];
      if (c >= 0x80) return utf8Decoder.decode(b.subarray(start, end));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return utf8Decoder.decode(b.subarray(start, end));
}

/** Entries in a bucket (pairs for a hashed one), read from its array header. */
export function bucketEntries(b: Uint8Array, hashed: boolean): number {
  arrayHeader(b, 0);
  if (hashed && headerCount % 2 !== 0) throw new BucketFormatError('hashed bucket with an odd element count', 0);
  return hashed ? headerCount / 2 : headerCount;
}

/** Walks a whole bucket once and records where each entry starts (see BucketIndex); checks its shape on the way. */
export function indexBucket(b: Uint8Array, hashed: boolean): BucketIndex {
  const n = bucketEntries(b, hashed);
  let pos = arrayHeader(b, 0);
  const index = b.length <= 0xffff ? new Uint16Array(n + 1) : new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    index[i] = pos;
    if (hashed) {
      pos = strHeader(b, pos) + headerCount;
      if (pos > b.length) throw new BucketFormatError('key runs past the bucket', index[i]);
    }
    pos = skipMsgpack(b, pos);
  }
  if (pos !== b.length) throw new BucketFormatError('bytes after the bucket', pos);
  index[n] = pos;
  return index;
}

/** Byte range [start, end) of the value under `key` in a hashed bucket, or null. */
export function locateInBucket(b: Uint8Array, key: string, index?: BucketIndex): [number, number] | null {
  if (index) {
    let lo = 0;
    let hi = index.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const start = strHeader(b, index[mid]);
      const end = start + headerCount;
      const order = compareUtf8ToString(b, start, end, key);
      if (order === 0) return [end, index[mid + 1]];
      if (order < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  }
  let pos = arrayHeader(b, 0);
  const count = headerCount;
  if (count % 2 !== 0) throw new BucketFormatError('hashed bucket with an odd element count', 0);
  for (let i = 0; i < count; i += 2) {
    const start = strHeader(b, pos);
    const end = start + headerCount;
    if (end > b.length) throw new BucketFormatError('key runs past the bucket', pos);
    const order = compareUtf8ToString(b, start, end, key);
    // Keys ascend, so a larger one means the key is absent: the rest of the bucket is never read.
    if (order > 0) return null;
    pos = skipMsgpack(b, end);
    if (order === 0) return [end, pos];
  }
  return null;
}

/** Byte range [start, end) of the `n`-th element of an ordinal bucket, or null past its end. */
/** Where the value at position `n` of an ordinal bucket's bytes starts and ends, or null past its end. */
export function locateValue(b: Uint8Array, n: number, index?: BucketIndex): [number, number] | null {
  if (index) return Number.isInteger(n) && n >= 0 && n < index.length - 1 ? [index[n], index[n + 1]] : null;
  let pos = arrayHeader(b, 0);
  if (!Number.isInteger(n) || n < 0 || n >= headerCount) return null;
  for (let i = 0; i < n; i++) pos = skipMsgpack(b, pos);
  return [pos, skipMsgpack(b, pos)];
}

/** Thrown for bytes that are not the msgpack a bucket holds (truncated, reserved byte 0xc1, wrong shape). */
export class BucketFormatError extends Error {
  constructor(what: string, readonly at: number) {
    super(`${what} at byte ${at}`);
  }
}

const u16 = (b: Uint8Array, p: number): number => (b[p] << 8) | b[p + 1];
// `>>> 0` keeps a length with the top bit set positive (it then fails the bounds check instead of going negative).
const u32 = (b: Uint8Array, p: number): number => ((b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]) >>> 0;

// The header readers return where the content starts and leave the count here: no tuple per key on the hot path.
let headerCount = 0;

/** Offset of the first element of the array whose header starts at `pos`; its element count goes to headerCount. */
function arrayHeader(b: Uint8Array, pos: number): number {
  const t = b[pos];
  if (t >= 0x90 && t <= 0x9f) {
    headerCount = t & 0x0f;
    return pos + 1;
  }
  if (t === 0xdc && pos + 3 <= b.length) {
    headerCount = u16(b, pos + 1);
    return pos + 3;
  }
  if (t === 0xdd && pos + 5 <= b.length) {
    headerCount = u32(b, pos + 1);
    return pos + 5;
  }
  throw new BucketFormatError('bucket is not an array', pos);
}

/** Offset of the first byte of the string whose header starts at `pos`; its byte length goes to headerCount. */
function strHeader(b: Uint8Array, pos: number): number {
  const t = b[pos];
  if (t >= 0xa0 && t <= 0xbf) {
    headerCount = t & 0x1f;
    return pos + 1;
  }
  if (t === 0xd9 && pos + 2 <= b.length) {
    headerCount = b[pos + 1];
    return pos + 2;
  }
  if (t === 0xda && pos + 3 <= b.length) {
    headerCount = u16(b, pos + 1);
    return pos + 3;
  }
  if (t === 0xdb && pos + 5 <= b.length) {
    headerCount = u32(b, pos + 1);
    return pos + 5;
  }
  throw new BucketFormatError('bucket key is not a string', pos);
}

/**
 * Offset just past the msgpack value starting at `pos`, any type: a count of elements still owed replaces
 * recursion, so a deep or long value costs one loop. Throws when the value runs past the end of `b`.
 */
export function skipMsgpack(b: Uint8Array, pos: number): number {
  const end = b.length;
  let owed = 1;
  // Negated comparisons also catch NaN: a length read past the end (b[pos] undefined) makes pos NaN.
  while (owed > 0) {
    if (!(pos < end)) throw new BucketFormatError('value runs past the bucket', pos);
    owed--;
    const t = b[pos++];
    if (t < 0x80 || t >= 0xe0) continue; // positive and negative fixint
    if (t <= 0x8f) owed += 2 * (t & 0x0f); // fixmap
    else if (t <= 0x9f) owed += t & 0x0f; // fixarray
    else if (t <= 0xbf) pos += t & 0x1f; // fixstr
    else {
      switch (t) {
        case 0xc0: case 0xc2: case 0xc3: break; // nil, false, true
        case 0xcc: case 0xd0: pos += 1; break; // uint8, int8
        case 0xcd: case 0xd1: pos += 2; break; // uint16, int16
        case 0xca: case 0xce: case 0xd2: pos += 4; break; // float32, uint32, int32
        case 0xcb: case 0xcf: case 0xd3: pos += 8; break; // float64, uint64, int64
        case 0xd4: pos += 2; break; // fixext 1 (type byte + data)
        case 0xd5: pos += 3; break;
        case 0xd6: pos += 5; break;
        case 0xd7: pos += 9; break;
        case 0xd8: pos += 17; break;
        case 0xc4: case 0xd9: pos += 1 + b[pos]; break; // bin8, str8
        case 0xc5: case 0xda: pos += 2 + u16(b, pos); break; // bin16, str16
        case 0xc6: case 0xdb: pos += 4 + u32(b, pos); break; // bin32, str32
        case 0xc7: pos += 2 + b[pos]; break; // ext8: length, type, data
        case 0xc8: pos += 3 + u16(b, pos); break;
        case 0xc9: pos += 5 + u32(b, pos); break;
        case 0xdc: owed += u16(b, pos); pos += 2; break; // array16
        case 0xdd: owed += u32(b, pos); pos += 4; break; // array32
        case 0xde: owed += 2 * u16(b, pos); pos += 2; break; // map16
        case 0xdf: owed += 2 * u32(b, pos); pos += 4; break; // map32
        default: throw new BucketFormatError(`reserved msgpack byte 0x${t.toString(16)}`, pos - 1);
      }
    }
  }
  if (!(pos <= end)) throw new BucketFormatError('value runs past the bucket', end);
  return pos;
}

/**
 * Compares the UTF-8 bytes b[start, end) with `key` in JS string order (UTF-16 code units), the order the
 * compiler sorts keys in: sign of (stored - key). Code points are decoded and compared as the code units a JS
 * string holds, so a supplementary character (a surrogate pair) sorts below U+E000..U+FFFF as it does in JS,
 * although its UTF-8 bytes sort above; and a lone surrogate in `key` equals no stored key (UTF-8 cannot hold one).
 */
export function compareUtf8ToString(b: Uint8Array, start: number, end: number, key: string): number {
  const n = key.length;
  let i = start;
  let j = 0;
  for (;;) {
    if (i >= end) return j < n ? -1 : 0;
    if (j >= n) return 1;
    const c = b[i];
    if (c < 0x80) {
      const d = c - key.charCodeAt(j);
      if (d !== 0) return d;
      i++;
      j++;
      continue;
    }
    let cp: number;
    if (c < 0xe0) {
      cp = ((c & 0x1f) << 6) | (b[i + 1] & 0x3f);
      i += 2;
    } else if (c < 0xf0) {
      cp = ((c & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f);
      i += 3;
    } else {
      cp = ((c & 0x07) << 18) | ((b[i + 1] & 0x3f) << 12) | ((b[i + 2] & 0x3f) << 6) | (b[i + 3] & 0x3f);
      i += 4;
    }
    if (cp < 0x10000) {
      const d = cp - key.charCodeAt(j++);
      if (d !== 0) return d;
      continue;
    }
    const high = 0xd800 + ((cp - 0x10000) >> 10);
    const d = high - key.charCodeAt(j++);
    if (d !== 0) return d;
    if (j >= n) return 1;
    const low = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    const e = low - key.charCodeAt(j++);
    if (e !== 0) return e;
  }
}

/** One directory entry; `checksum` is checksum32 (CRC-32) of the bucket's bytes, checked before a bucket is decoded. */
export function readDirectoryEntry(dir: Uint8Array, bucket: number): { offset: number; length: number; checksum: number } {
  const view = new DataView(dir.buffer, dir.byteOffset, dir.byteLength);
  const at = bucket * DIRECTORY_ENTRY_BYTES;
  return { offset: view.getUint32(at, true), length: view.getUint32(at + 4, true), checksum: view.getUint32(at + 8, true) };
}
