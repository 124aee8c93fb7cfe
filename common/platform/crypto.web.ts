// The platform seam for hashing and byte text where there are no Node built-ins (workerd, browsers): the same
// functions as crypto.ts, synchronous like Node's (the core hashes inside synchronous code, where Web Crypto's
// promises would not do), from @noble/hashes, and byte text in plain JavaScript. Selected by the `workerd`
// condition of package.json's "imports" (`#platform/crypto`).
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

const utf8 = new TextEncoder();
const bytesOf = (data: string | Uint8Array): Uint8Array => (typeof data === 'string' ? utf8.encode(data) : data);

export const sha256 = (data: string | Uint8Array): Uint8Array => nobleSha256(bytesOf(data));

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const toHex = (b: Uint8Array): string => {
  let s = '';
  for (let i = 0; i < b.length; i++) s += HEX[b[i]];
  return s;
};

export const sha256Hex = (data: string | Uint8Array): string => toHex(sha256(data));

export const hmacSha256 = (key: string, data: string): Uint8Array => hmac(nobleSha256, utf8.encode(key), utf8.encode(data));

export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
};

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
// Buffer's decoder reads standard base64 too: `+` and `/` decode as `-` and `_` do.
VALUE['+'.charCodeAt(0)] = 62;
VALUE['/'.charCodeAt(0)] = 63;

export const toBase64url = (b: Uint8Array): string => {
  let s = '';
  let i = 0;
  for (; i + 2 < b.length; i += 3) {
    const n = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    s += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63] + ALPHABET[(n >> 6) & 63] + ALPHABET[n & 63];
  }
  if (i < b.length) {
    const n = (b[i] << 16) | ((b[i + 1] ?? 0) << 8);
    s += ALPHABET[n >> 18] + ALPHABET[(n >> 12) & 63];
    if (i + 1 < b.length) s += ALPHABET[(n >> 6) & 63];
  }
  return s;
};

/** Bytes of base64url text, lenient like Buffer's decoder: characters outside the alphabet are skipped, `=` ends it. */
export const fromBase64url = (text: string): Uint8Array => {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 61) break; // '='
    const v = c < 128 ? VALUE[c] : -1;
    if (v < 0) continue;
    acc = ((acc << 6) | v) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
  }
  return Uint8Array.from(out);
};

export const fromHex = (text: string): Uint8Array => {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) {
    const v = parseInt(text.slice(2 * i, 2 * i + 2), 16);
    if (Number.isNaN(v)) return out.subarray(0, i);
    out[i] = v;
  }
  return out;
};

/** No native CRC-32 here: common/checksum.ts uses its table. */
export const nativeCrc32: ((data: Uint8Array, value?: number) => number) | undefined = undefined;
