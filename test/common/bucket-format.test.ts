// The in-place bucket walker (common/bucket-format.ts): lookups on a bucket's msgpack bytes must give exactly what
// decoding the whole bucket and searching it gave, for every key and value shape the compiler writes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BucketFormatError,
  compareUtf8ToString,
  decodeMsgpack,
  decodeValue,
  encodeMsgpack,
  findInBucket,
  indexBucket,
  locateInBucket,
  skipMsgpack,
  valueInBucket,
} from '../../common/bucket-format.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);
const jsOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** A hashed bucket exactly as the compiler lays it out: keys in ascending JS order, `[k0, v0, k1, v1, ...]`. */
const hashedBucket = (entries: [string, unknown][]): Uint8Array =>
  encodeMsgpack([...entries].sort((x, y) => jsOrder(x[0], y[0])).flat());
/** What a whole-bucket decode gave for a value (maps come back as Maps: mapsAsObjects is off). */
const roundTrip = (v: unknown): unknown => decodeMsgpack(encodeMsgpack(v));

const KEYS = [
  '',
  '__proto__',
  'constructor',
  'toString',
  'a',
  'ab',
  'é',
  'Zürich',
  '日本代表',
  '😀', // astral: a surrogate pair in JS, 4 bytes in UTF-8
  '😀x',
  '𝔘nicode',
  '\uE000', // after every surrogate in JS order, before any 4-byte sequence in UTF-8 byte order
  '\uFFFD',
  '\uFFFF',
  '\u007F',
  '\u0080',
  '\u07FF',
  '\u0800',
  'transfermarkt\u0000player\u000012345',
  'transfermarkt\u0000player',
  'transfermarkt',
  'x'.repeat(31), // fixstr, longest
  'y'.repeat(32), // str8
  'z'.repeat(255),
  'q'.repeat(256), // str16
  'ü'.repeat(40_000), // str16, 80,000 bytes → str32
  'w'.repeat(70_000), // str32
];

// Every value shape the compiler writes (entity index live / redirect / tombstone, resolve, search, search docs,
// change events), plus every other msgpack type msgpackr can write, so the walker skips whatever it meets.
const VALUES: unknown[] = [
  [0, 3, 4_294_000_000, 1234, 120, 340, 560, 780, 900, 1100, 7, 2, 0xfffffffe], // live entry, u32 checksum
  [1, 'rpabc12345'], // redirect
  [2, 9, 100, 57, 0x80000000], // tombstone
  [['rp00000001', 0], ['rp00000002', 3]], // resolve
  [Array.from({ length: 500 }, (_, i) => (i * 37) % 300), Array.from({ length: 20 }, (_, i) => i)], // search, array16
  [Array.from({ length: 70_000 }, (_, i) => i & 127), []], // array32
  ['rp0000abcd', 1, 'Arsenal Women F.C. — ü 😀', 42], // search doc
  JSON.stringify({ type: 'label_updated', reep_id: 'rp1', before: 'x'.repeat(300), after: 'é' }), // change event, str16
  null,
  true,
  false,
  0,
  127,
  128,
  255,
  256,
  65_535,
  65_536,
  -1,
  -32,
  -33,
  -128,
  -129,
  -32_768,
  -32_769,
  -(2 ** 31),
  2 ** 40,
  -(2 ** 40),
  2 ** 53 + 2,
  1.5,
  -0.25,
  Number.MAX_VALUE,
  10n,
  -(2n ** 62n),
  '',
  'x'.repeat(255),
  { a: 1, b: [1, { c: 'd' }] }, // fixmap
  Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])), // map16
  new Map<unknown, unknown>([[1, 'one'], ['two', [2]]]),
  new Uint8Array([1, 2, 3]), // bin8
  new Uint8Array(300), // bin16
  new Date(0), // ext
  undefined, // fixext
  [[[[[[[[[[1]]]]]]]]]],
];

describe('skipMsgpack', () => {
  it('steps over exactly one value of every shape', () => {
    for (const v of VALUES) {
      const bytes = encodeMsgpack(v);
      expect(skipMsgpack(bytes, 0), String(v)).toBe(bytes.length);
      // Embedded between other bytes: it starts where told and ends where the value ends.
      const framed = new Uint8Array([0xc0, ...bytes, 0xc3]);
      expect(skipMsgpack(framed, 1)).toBe(1 + bytes.length);
      expect(skipMsgpack(framed, skipMsgpack(framed, 1))).toBe(framed.length);
    }
  });

  it('refuses truncated values and the reserved byte', () => {
    for (const v of VALUES) {
      const bytes = encodeMsgpack(v);
      // Every strict prefix is a truncated value (cut at a few points for the long ones).
      const cuts = bytes.length < 64 ? Array.from({ length: bytes.length }, (_, i) => i) : [0, 1, 2, 3, 5, 9, bytes.length >> 1, bytes.length - 1];
      for (const n of cuts) expect(() => skipMsgpack(bytes.subarray(0, n), 0), `${String(v).slice(0, 20)} cut at ${n}`).toThrow(BucketFormatError);
    }
    expect(() => skipMsgpack(new Uint8Array([0x92, 0x01, 0xc1]), 0)).toThrow(/reserved msgpack byte 0xc1/);
    // A header claiming more elements than bytes cannot loop for long: it runs out of bytes.
    expect(() => skipMsgpack(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff, 0x01]), 0)).toThrow(BucketFormatError);
  });
});

describe('decodeValue', () => {
  it('gives exactly what msgpackr gives, read directly or handed over', () => {
    for (const v of [...VALUES, ['a', 'é'.repeat(20), 'x'.repeat(33), -5, 200, 40_000, -40_000, 4_000_000_000, null, [true, false]], 'ü'.repeat(16)]) {
      // A plain Uint8Array, as sources give buckets (msgpackr answers bin as the source's own type).
      const bytes = new Uint8Array(encodeMsgpack(v));
      expect(decodeValue(bytes, 0, bytes.length), String(v).slice(0, 30)).toStrictEqual(decodeMsgpack(bytes));
      // Inside a larger buffer, between other values, as a bucket holds it.
      const framed = new Uint8Array([0x01, ...bytes, 0x02]);
      expect(decodeValue(framed, 1, 1 + bytes.length)).toStrictEqual(decodeMsgpack(bytes));
    }
  });

  it('hands malformed bytes to msgpackr rather than inventing a value', () => {
    // A string or array running past the value's end, and a value followed by stray bytes.
    for (const bad of [[0xa5, 0x61], [0x93, 0x01], [0xdc, 0x00, 0x05, 0x01]]) {
      expect(() => decodeValue(new Uint8Array(bad), 0, bad.length)).toThrow();
    }
    const twoValues = new Uint8Array([0x01, 0x02]);
    expect(decodeValue(twoValues, 0, 1)).toBe(1);
    expect(() => decodeValue(twoValues, 0, 2)).toThrow(/end of buffer not reached/); // msgpackr's verdict, not a guess
  });
});

describe('compareUtf8ToString', () => {
  const sign = (n: number) => Math.sign(n);
  const cmp = (a: string, b: string) => {
    const bytes = utf8(a);
    return compareUtf8ToString(bytes, 0, bytes.length, b);
  };

  it('orders as JS compares strings, including where UTF-8 byte order differs', () => {
    for (const a of KEYS) for (const b of KEYS) expect(sign(cmp(a, b)), `${JSON.stringify(a.slice(0, 8))} vs ${JSON.stringify(b.slice(0, 8))}`).toBe(jsOrder(a, b));
    // The one place byte order and JS order disagree: U+E000..U+FFFF against a supplementary character.
    expect(Buffer.compare(Buffer.from('\uE000'), Buffer.from('😀'))).toBe(-1);
    expect(sign(cmp('\uE000', '😀'))).toBe(1);
    expect(sign(cmp('😀', '\uFFFF'))).toBe(-1);
  });

  it('agrees with JS order on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => sign(cmp(a, b)) === jsOrder(a, b)),
      { numRuns: 3000 },
    );
    // Shared prefixes are where a walker's early exit can go wrong.
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (p, a, b) => sign(cmp(p + a, p + b)) === jsOrder(p + a, p + b)),
      { numRuns: 2000 },
    );
  });

  it('matches no stored key for a lone surrogate (UTF-8 would carry it as U+FFFD)', () => {
    expect(cmp('a\uFFFD', 'a\uD800')).not.toBe(0);
    expect(cmp('\uFFFD', '\uDC00')).not.toBe(0);
    expect(cmp('😀', '\uD83D')).toBeGreaterThan(0); // the stored pair is longer than its lone first half
  });
});

describe('findInBucket / valueInBucket', () => {
  const entries: [string, unknown][] = KEYS.map((k, i) => [k, VALUES[i % VALUES.length]]);
  const bucket = hashedBucket(entries);

  const index = indexBucket(bucket, true);
  // Every lookup is checked both ways: walking the bytes, and binary-searching an index of them.
  const both = (b: Uint8Array, k: string) => {
    const walked = findInBucket(b, k);
    expect(findInBucket(b, k, indexBucket(b, true)), `indexed ${JSON.stringify(k.slice(0, 12))}`).toEqual(walked);
    return walked;
  };

  it('indexes where each entry starts', () => {
    expect(index).toBeInstanceOf(Uint32Array); // the 80,000-byte key makes this bucket larger than 64 KiB
    expect(index).toHaveLength(KEYS.length + 1);
    expect(index[KEYS.length]).toBe(bucket.length);
    expect(indexBucket(encodeMsgpack(['a', 1, 'b', [2, 3]]), true)).toEqual(new Uint16Array([1, 4, 9]));
    expect(indexBucket(encodeMsgpack([1, 'ab', [2]]), false)).toEqual(new Uint16Array([1, 2, 5, 7]));
    expect(() => indexBucket(new Uint8Array([...encodeMsgpack(['a', 1]), 0xc0]), true)).toThrow(/bytes after the bucket/);
    expect(() => indexBucket(encodeMsgpack(['a', 1, 2]), true)).toThrow(/odd element count/);
    expect(() => indexBucket(encodeMsgpack([1, 2]), true)).toThrow(/key is not a string/);
  });

  it('finds every key and decodes exactly its value', () => {
    expect(bucket[0]).toBe(0xdc); // 56 elements: an array16 header
    for (const [k, v] of entries) expect(findInBucket(bucket, k), JSON.stringify(k.slice(0, 12))).toEqual(roundTrip(v));
    for (const [k, v] of entries) expect(findInBucket(bucket, k, index), `indexed ${JSON.stringify(k.slice(0, 12))}`).toEqual(roundTrip(v));
    // undefined is stored as a value too: found, and still undefined; its presence shows in locateInBucket.
    const withUndefined = hashedBucket([['u', undefined]]);
    expect(locateInBucket(withUndefined, 'u')).not.toBeNull();
    expect(locateInBucket(withUndefined, 'v')).toBeNull();
  });

  it('returns undefined for absent keys, wherever they would sort', () => {
    const absent = ['_', '__proto', '__proto__x', 'a\u0000', 'aa', 'é\u0000', '😀\u0000', '😁', '\uE001', '\uD83D', 'a\uD800', '\uFFFE', 'transfermarkt\u0000', 'x'.repeat(30), 'y'.repeat(33), 'z'.repeat(254), 'zz', '\u{10FFFF}'];
    for (const k of absent) expect(findInBucket(bucket, k), JSON.stringify(k.slice(0, 12))).toBeUndefined();
    for (const k of absent) expect(findInBucket(bucket, k, index), `indexed ${JSON.stringify(k.slice(0, 12))}`).toBeUndefined();
    // Keys that exist as objects' own properties come from the bytes, never from a prototype.
    expect(findInBucket(hashedBucket([['a', 1]]), 'hasOwnProperty')).toBeUndefined();
  });

  it('reads buckets of every header size, stopping early when the key is absent', () => {
    for (const n of [0, 1, 7, 8, 40_000]) {
      const list: [string, unknown][] = Array.from({ length: n }, (_, i) => [`k${String(i).padStart(6, '0')}`, [i, `v${i}`]]);
      const b = hashedBucket(list);
      for (const i of [0, 1, n >> 1, n - 1].filter((i) => i >= 0 && i < n)) expect(both(b, list[i][0])).toEqual([i, `v${i}`]);
      expect(both(b, 'k')).toBeUndefined();
      expect(both(b, 'l')).toBeUndefined();
    }
    // Early exit: a key sorting before every stored one is answered without reading past the first key, so
    // garbage after it goes unnoticed; a key sorting after them all must walk (and here trip over) the garbage.
    const first = encodeMsgpack(['b', 1]);
    const broken = new Uint8Array([0x94, ...first.subarray(1), 0xc1, 0xc1]);
    expect(findInBucket(broken, 'a')).toBeUndefined();
    expect(findInBucket(broken, 'b')).toBe(1);
    expect(() => findInBucket(broken, 'c')).toThrow(BucketFormatError);
  });

  it('refuses bytes that are not a hashed bucket', () => {
    expect(() => findInBucket(encodeMsgpack({ a: 1 }), 'a')).toThrow(/not an array/);
    expect(() => findInBucket(encodeMsgpack(['a', 1, 'b']), 'a')).toThrow(/odd element count/);
    expect(() => findInBucket(encodeMsgpack([1, 2]), 'a')).toThrow(/key is not a string/);
    expect(() => findInBucket(new Uint8Array([0x92, 0xa5, 0x61]), 'abcde')).toThrow(/key runs past/);
    expect(() => findInBucket(new Uint8Array(0), 'a')).toThrow(BucketFormatError);
  });

  it('reads the n-th value of an ordinal bucket', () => {
    const values = [...VALUES, ...VALUES];
    const b = encodeMsgpack(values);
    const index = indexBucket(b, false);
    values.forEach((v, i) => expect(valueInBucket(b, i)).toEqual(roundTrip(v)));
    values.forEach((v, i) => expect(valueInBucket(b, i, index)).toEqual(roundTrip(v)));
    for (const i of [-1, values.length, 1.5, NaN]) expect(valueInBucket(b, i)).toBeUndefined();
    for (const i of [-1, values.length, 1.5, NaN]) expect(valueInBucket(b, i, index)).toBeUndefined();
    expect(valueInBucket(encodeMsgpack([]), 0)).toBeUndefined();
    expect(valueInBucket(encodeMsgpack([]), 0, indexBucket(encodeMsgpack([]), false))).toBeUndefined();
  });

  it('decodes values from a bucket that is a view into a larger buffer', () => {
    const bytes = hashedBucket(entries);
    const big = new Uint8Array(bytes.length + 10).fill(0xc1);
    big.set(bytes, 7);
    const view = big.subarray(7, 7 + bytes.length);
    const viewIndex = indexBucket(view, true);
    for (const [k, v] of entries) expect(findInBucket(view, k)).toEqual(roundTrip(v));
    for (const [k, v] of entries) expect(findInBucket(view, k, viewIndex)).toEqual(roundTrip(v));
  });
});
