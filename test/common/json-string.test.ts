// jsonString must write exactly what JSON.stringify writes for any string: shards are compared byte for byte.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { jsonString } from '../../common/json-string.ts';

describe('jsonString', () => {
  it('gives JSON.stringify\'s text for any string, lone surrogates and control characters included', () => {
    // Code units rather than characters, so lone surrogates come up, mixed with the characters JSON escapes.
    const unit = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0x22, 0x5c, 0x0a, 0x00, 0x1f, 0x7f, 0xd800, 0xdfff, 0x2028));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
        const s = String.fromCharCode(...units);
        expect(jsonString(s)).toBe(JSON.stringify(s));
      }),
      { numRuns: 2000 },
    );
    for (const s of ['', 'Arsenal v Chelsea', 'José', '😀', '"', '\\', '\u2028', 'a\u0000b', '\ud83d']) expect(jsonString(s)).toBe(JSON.stringify(s));
  });
});
