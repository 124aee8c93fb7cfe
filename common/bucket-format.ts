// The on-disk shape of a bucketed family (entity index, resolve, search, search docs): one pack of msgpack buckets
// plus a directory of (offset, length) pairs, so a reader fetches one bucket with one positioned read or Range request.
import { Packr } from 'msgpackr';

// Fixed options: no record extension (plain arrays and maps only), so any msgpack reader can decode the buckets
// and the bytes depend only on the values.
export const packr = new Packr({ useRecords: false, mapsAsObjects: false, variableMapSize: true });

export const encodeMsgpack = (value: unknown): Uint8Array => packr.pack(value);
export const decodeMsgpack = <T = unknown>(bytes: Uint8Array): T => packr.unpack(bytes) as T;

/** Bytes per directory entry: u32 offset, u32 length, u32 fnv1a32 of the bucket's bytes, little-endian. */
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
 * A hashed bucket is a msgpack array `[k0, v0, k1, v1, ...]` with keys in ascending JS string order, so a reader
 * binary-searches it without building a map (and keys like `__proto__` stay data). An ordinal bucket is an array
 * of values.
 */
export function findInBucket<V>(flat: unknown[], key: string): V | undefined {
  let lo = 0;
  let hi = flat.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = flat[mid * 2] as string;
    if (k === key) return flat[mid * 2 + 1] as V;
    if (k < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** One directory entry; `checksum` is fnv1a32Bytes of the bucket's bytes, checked before a bucket is decoded. */
export function readDirectoryEntry(dir: Uint8Array, bucket: number): { offset: number; length: number; checksum: number } {
  const view = new DataView(dir.buffer, dir.byteOffset, dir.byteLength);
  const at = bucket * DIRECTORY_ENTRY_BYTES;
  return { offset: view.getUint32(at, true), length: view.getUint32(at + 4, true), checksum: view.getUint32(at + 8, true) };
}
