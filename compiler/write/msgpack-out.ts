// msgpack written straight into one growing buffer, byte for byte as the project's Packr (common/bucket-format.ts)
// would write each value. Bucket writers assemble millions of small values into buckets; packing each value on
// its own made a buffer per value and copied it again into the bucket.
import { packr } from '../../common/bucket-format.ts';

/** A growing output buffer that msgpack values and headers are appended to. */
export class MsgpackOut {
  buf: Buffer;
  /** Bytes written so far. */
  pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialBytes));
  }

  /** Room for `n` more bytes (the buffer is replaced by a larger one, so views taken before are stale). */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.pos + n, this.buf.length * 2));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** The bytes written so far (a view, valid until the next write). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  arrayHeader(n: number): void {
    this.ensure(5);
    this.pos = writeArrayHeader(this.buf, this.pos, n);
  }

  /** A string in the smallest header form for its UTF-8 length; returns that length. */
  string(s: string): number {
    this.ensure(5 + s.length * 3);
    const start = this.pos;
    // UTF-8 takes at least a byte per code unit, so the header is at least as wide as the length's: the bytes go
    // after that one, and move up only when multi-byte characters need a wider header.
    const guess = strHeaderBytes(s.length);
    const n = writeUtf8(this.buf, s, start + guess);
    const h = strHeaderBytes(n);
    if (h !== guess) this.buf.copyWithin(start + h, start + guess, start + guess + n);
    writeStrHeader(this.buf, start, n);
    this.pos = start + h + n;
    return n;
  }

  /**
   * Any value, as packr.pack writes it: arrays, strings, 32-bit integers, null and booleans here; anything else
   * (floats, larger integers, maps, objects, binary) is packed by packr and copied in.
   */
  value(v: unknown): void {
    if (typeof v === 'string') {
      this.string(v);
      return;
    }
    // -0 is left to packr (it is no integer to msgpack), as are integers beyond 32 bits.
    if (typeof v === 'number' && ((v | 0) === v || v >>> 0 === v) && !Object.is(v, -0)) {
      this.ensure(5);
      this.pos = writeInt(this.buf, this.pos, v);
      return;
    }
    if (Array.isArray(v)) {
      this.arrayHeader(v.length);
      for (let i = 0; i < v.length; i++) this.value(v[i]);
      return;
    }
    if (v === null || v === true || v === false) {
      this.ensure(1);
      this.buf[this.pos++] = v === null ? 0xc0 : v ? 0xc3 : 0xc2;
      return;
    }
    const packed = packr.pack(v);
    this.ensure(packed.byteLength);
    this.buf.set(packed, this.pos);
    this.pos += packed.byteLength;
  }
}

// Headers in their smallest form, as msgpackr writes them.

export function writeArrayHeader(out: Buffer, pos: number, n: number): number {
  if (n < 16) {
    out[pos] = 0x90 | n;
    return pos + 1;
  }
  if (n < 0x10000) {
    out[pos] = 0xdc;
    out.writeUInt16BE(n, pos + 1);
    return pos + 3;
  }
  out[pos] = 0xdd;
  out.writeUInt32BE(n, pos + 1);
  return pos + 5;
}

export function writeStrHeader(out: Buffer, pos: number, n: number): number {
  return writeSized(out, pos, n, 32, 0xa0, 0xd9, 0xda, 0xdb);
}

/**
 * A length or a non-negative integer `n` below 2^32 in msgpack's smallest form for it: one byte `fixBase | n` below
 * `fixLimit`, else `tag8`, `tag16` or `tag32` followed by `n` big-endian in 1, 2 or 4 bytes.
 */
function writeSized(out: Buffer, pos: number, n: number, fixLimit: number, fixBase: number, tag8: number, tag16: number, tag32: number): number {
  if (n < fixLimit) {
    out[pos] = fixBase | n;
    return pos + 1;
  }
  if (n < 0x100) {
    out[pos] = tag8;
    out[pos + 1] = n;
    return pos + 2;
  }
  if (n < 0x10000) {
    out[pos] = tag16;
    out.writeUInt16BE(n, pos + 1);
    return pos + 3;
  }
  out[pos] = tag32;
  out.writeUInt32BE(n, pos + 1);
  return pos + 5;
}

export const strHeaderBytes = (n: number): number => (n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);

/** Writes `s` as UTF-8 at `at` (room for 3 bytes per code unit is assumed); returns the byte count. */
export function writeUtf8(buf: Buffer, s: string, at: number): number {
  // Keys are mostly short ASCII IDs and tokens, where a loop beats the native call; anything else goes native.
  const len = s.length;
  if (len < 64) {
    let i = 0;
    for (; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at + i] = c;
    }
    if (i === len) return len;
  }
  return buf.write(s, at);
}

/** An integer from -2^31 to 2^32 - 1 in its smallest form (positive fixint or uint8/16/32; negative fixint or int8/16/32). */
function writeInt(out: Buffer, pos: number, v: number): number {
  if (v >= 0) return writeSized(out, pos, v, 0x80, 0x00, 0xcc, 0xcd, 0xce);
  if (v >= -0x20) {
    out[pos] = v & 0xff;
    return pos + 1;
  }
  if (v >= -0x80) {
    out[pos] = 0xd0;
    out.writeInt8(v, pos + 1);
    return pos + 2;
  }
  if (v >= -0x8000) {
    out[pos] = 0xd1;
    out.writeInt16BE(v, pos + 1);
    return pos + 3;
  }
  out[pos] = 0xd2;
  out.writeInt32BE(v, pos + 1);
  return pos + 5;
}
