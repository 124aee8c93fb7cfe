// FNV-1a (32-bit) over the UTF-8 bytes of a string: the one bucket hash that compiler and runtime must agree on.
// Written out by hand (no Buffer) so an edge runtime computes the same value, and so a key is hashed without copying.

const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** FNV-1a 32 of the UTF-8 encoding of `s`, as an unsigned 32-bit integer. */
export function fnv1a32(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      h = Math.imul(h ^ c, FNV_PRIME);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    } else if (c >= 0xd800 && c <= 0xdfff) {
      c = 0xfffd; // lone surrogate: TextEncoder writes U+FFFD, so do we
    }
    if (c < 0x800) {
      h = Math.imul(h ^ (0xc0 | (c >> 6)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | (c & 63)), FNV_PRIME);
    } else if (c < 0x10000) {
      h = Math.imul(h ^ (0xe0 | (c >> 12)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 63)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | (c & 63)), FNV_PRIME);
    } else {
      h = Math.imul(h ^ (0xf0 | (c >> 18)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 12) & 63)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 63)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | (c & 63)), FNV_PRIME);
    }
  }
  return h >>> 0;
}

/** The bucket of `key` among `buckets` (a power of two): the top bits of the hash, so bucket ranges nest. */
export function bucketOf(key: string, buckets: number): number {
  if (buckets <= 1) return 0;
  const bits = 31 - Math.clz32(buckets);
  return fnv1a32(key) >>> (32 - bits);
}

/**
 * FNV-1a 32 of `bytes[start, end)`: fnv1a32 of the string those bytes encode, when they are valid UTF-8. The
 * compiler hashes keys straight from the CSV bytes it reads, without making their strings.
 */
export function fnv1a32Bytes(bytes: Uint8Array, start: number, end: number, h = FNV_OFFSET): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME);
  return h >>> 0;
}

/** bucketOf over bytes (see fnv1a32Bytes). */
export function bucketOfBytes(bytes: Uint8Array, start: number, end: number, buckets: number): number {
  if (buckets <= 1) return 0;
  return fnv1a32Bytes(bytes, start, end) >>> (32 - (31 - Math.clz32(buckets)));
}
