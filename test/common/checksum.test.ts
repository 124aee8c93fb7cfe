// The integrity checksum of shards and buckets: CRC-32, native where node:zlib has it, a JS table otherwise. Both
// must give the standard value, agree on every input, and continue across pieces.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checksum32, crc32Js } from '../../common/checksum.ts';

const ascii = (s: string) => new TextEncoder().encode(s);

describe('checksum32', () => {
  it('is the standard CRC-32 (check value of "123456789")', () => {
    expect(checksum32(ascii('123456789'))).toBe(0xcbf43926);
    expect(crc32Js(ascii('123456789'))).toBe(0xcbf43926);
    expect(checksum32(new Uint8Array())).toBe(0);
  });

  it('native and JS agree on any bytes and range, and a seed continues a checksum over pieces', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = bytes.length ? a % bytes.length : 0;
        const end = start + (bytes.length - start ? b % (bytes.length - start + 1) : 0);
        const whole = checksum32(bytes, start, end);
        expect(crc32Js(bytes, start, end)).toBe(whole);
        expect(checksum32(bytes, start, end)).toBe(checksum32(bytes.slice(start, end)));
        const mid = start + ((end - start) >> 1);
        expect(checksum32(bytes, mid, end, checksum32(bytes, start, mid))).toBe(whole);
        expect(crc32Js(bytes, mid, end, crc32Js(bytes, start, mid))).toBe(whole);
      }),
      { numRuns: 500 },
    );
  });
});
