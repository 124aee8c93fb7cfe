// The platform seam's two sides give the same values: what the Worker bundle computes with @noble/hashes and plain
// JavaScript (crypto.web.ts) is what Node computes with node:crypto and Buffer (crypto.ts), so an ETag, a cursor or a
// seal is the same on both runtimes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as node from '../../common/platform/crypto.ts';
import * as web from '../../common/platform/crypto.web.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('platform crypto seam', () => {
  it('hashes, signs, compares and spells bytes alike', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 200 }), fc.string({ minLength: 1, maxLength: 80 }), (bytes, text, key) => {
        expect(hex(web.sha256(bytes))).toBe(hex(node.sha256(bytes)));
        expect(web.sha256Hex(text)).toBe(node.sha256Hex(text));
        expect(hex(web.hmacSha256(key, text))).toBe(hex(node.hmacSha256(key, text)));
        const b64 = node.toBase64url(bytes);
        expect(web.toBase64url(bytes)).toBe(b64);
        expect(hex(web.fromBase64url(b64))).toBe(hex(bytes));
        expect(hex(web.fromHex(hex(bytes)))).toBe(hex(bytes));
        expect(web.sameBytes(bytes, bytes.slice())).toBe(true);
        if (bytes.length) {
          const other = bytes.slice();
          other[bytes.length - 1] ^= 1;
          expect(web.sameBytes(bytes, other)).toBe(node.sameBytes(bytes, other));
        }
      }),
      { numRuns: 300 },
    );
    expect(web.sameBytes(new Uint8Array(2), new Uint8Array(3))).toBe(false);
    // Buffer's decoder reads standard base64 and stops at padding; so does the Worker's.
    for (const text of ['ab+/', 'YWJj=', 'Y W', '']) expect(hex(web.fromBase64url(text))).toBe(hex(node.fromBase64url(text)));
    expect(web.nativeCrc32).toBeUndefined();
  });
});
