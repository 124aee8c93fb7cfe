// The platform seam for hashing and byte text on Node: native node:crypto and Buffer. The same functions for a
// runtime without Node built-ins (workerd) are in crypto.web.ts; package.json's "imports" picks one by condition
// (`#platform/crypto`), so the core imports neither directly.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as zlib from 'node:zlib';

/** sha256 of `data` (a string is hashed as UTF-8). */
export const sha256 = (data: string | Uint8Array): Uint8Array => createHash('sha256').update(data).digest();

/** sha256 of `data` in lower-case hex. */
export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** HMAC-SHA256 of `data` under `key` (both strings as UTF-8). */
export const hmacSha256 = (key: string, data: string): Uint8Array => createHmac('sha256', key).update(data).digest();

/** Whether two byte strings are equal, in time that depends on their length only. */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b);

const view = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export const toBase64url = (b: Uint8Array): string => view(b).toString('base64url');
/** Bytes of base64url text (lenient like Buffer's decoder: callers check what they decode). */
export const fromBase64url = (text: string): Uint8Array => Buffer.from(text, 'base64url');
export const fromHex = (text: string): Uint8Array => Buffer.from(text, 'hex');

/**
 * zlib's CRC-32 where this Node has it (20.15 and later), else undefined and common/checksum.ts computes it in JS.
 * Read as a property of the namespace: a named import of it would stop an older Node loading this module at all.
 */
export const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
