// MsgpackOut writes values straight into a bucket's buffer; the runtime reads them with the project's Packr, and
// a bucket's checksum and the pack's content address both depend on the exact bytes, so every value must come out
// byte for byte as packr.pack writes it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeMsgpack } from '../../common/bucket-format.ts';
import { MsgpackOut } from '../../compiler/write/msgpack-out.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function written(values: unknown[], initialBytes?: number): Buffer {
  const out = new MsgpackOut(initialBytes);
  for (const v of values) out.value(v);
  return Buffer.from(out.bytes());
}

const expected = (values: unknown[]) => Buffer.concat(values.map((v) => encodeMsgpack(v)));

describe('MsgpackOut', () => {
  it('writes the boundary cases of every header as packr does', () => {
    const ints = [0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1];
    const others = [-0, 0.5, -1.25, NaN, Infinity, 2 ** 53, null, true, false, undefined, { a: 1 }, new Map([['k', 1]]), Buffer.from([1, 2])];
    const strings = [0, 1, 31, 32, 255, 256, 65535, 65536].flatMap((n) => ['a'.repeat(n), 'é'.repeat(n), 'a'.repeat(Math.max(0, n - 1)) + '😀']);
    const arrays = [0, 1, 15, 16, 65535, 65536].map((n) => Array.from({ length: n }, (_, i) => i % 3));
    for (const v of [...ints, ...others, ...strings, ...arrays, [ints, strings.slice(0, 5), [[[]]]]]) {
      expect(hex(written([v], 16)), typeof v === 'string' ? `string of ${v.length}` : String(v).slice(0, 40)).toBe(hex(expected([v])));
    }
  });

  it('writes any sequence of JSON-like values as packr does, growing its buffer as needed', () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.integer(),
        fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
        fc.double(),
        fc.constantFrom(null, true, false, -0),
      ),
      node: fc.oneof({ depthSize: 'small' }, tie('leaf'), fc.array(tie('node'), { maxLength: 20 }), fc.dictionary(fc.string({ maxLength: 5 }), tie('leaf'), { maxKeys: 3 })),
    })).node;
    fc.assert(
      fc.property(fc.array(value, { maxLength: 20 }), fc.integer({ min: 1, max: 256 }), (values, initial) => {
        expect(hex(written(values, initial))).toBe(hex(expected(values)));
      }),
      { numRuns: 500 },
    );
  });

  it('reports the UTF-8 length of a string and keeps earlier bytes when the buffer grows', () => {
    const out = new MsgpackOut(16);
    expect(out.string('abc')).toBe(3);
    expect(out.string('日本')).toBe(6);
    expect(out.string('x'.repeat(1000))).toBe(1000);
    out.arrayHeader(2);
    expect(hex(out.bytes())).toBe(hex(Buffer.concat([encodeMsgpack('abc'), encodeMsgpack('日本'), encodeMsgpack('x'.repeat(1000)), Buffer.from([0x92])])));
  });
});
