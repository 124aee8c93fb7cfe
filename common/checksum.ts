// CRC-32 (IEEE 802.3, the zlib/gzip polynomial): the integrity checksum of every shard and bucket in a dist.
//
// It replaced FNV-1a over bytes (dist format 2) because it is checked on every read: zlib's native crc32 runs at
// ~3 GB/s against ~0.8 GB/s for FNV-1a in JavaScript, which was the largest single cost of a 100-item batch.
// Where node:zlib has no crc32 (Node < 20.15, or another runtime) the same value comes from a table in JS.
import { nativeCrc32 as native } from '#platform/crypto';

let table: Uint32Array | null = null;
function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** CRC-32 in JavaScript; exported so a test can hold it equal to the native one. */
export function crc32Js(bytes: Uint8Array, start = 0, end = bytes.length, seed = 0): number {
  const t = crcTable();
  let c = ~seed;
  for (let i = start; i < end; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * CRC-32 of bytes[start, end). `seed` continues a checksum over bytes that arrive in pieces (pass the previous
 * result): checksum32(b, 0, n, checksum32(a)) equals the checksum of a followed by b.
 */
export function checksum32(bytes: Uint8Array, start = 0, end = bytes.length, seed = 0): number {
  if (native === undefined) return crc32Js(bytes, start, end, seed);
  const view = start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end);
  return native(view, seed) >>> 0;
}
