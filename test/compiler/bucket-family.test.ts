// Bucketed families end to end: HashedFamilyWriter / GroupedHashedFamilyWriter / OrdinalFamilyWriter → files → openBucketFamily over the fs
// and http sources; byte-identical output whatever the insertion order; spill path; content-addressed names.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMsgpack, DIRECTORY_ENTRY_BYTES, encodeMsgpack, packr, readDirectoryEntry, type BucketFamily } from '../../common/bucket-format.ts';
import { checksum32 } from '../../common/checksum.ts';
import { bucketOf, fnv1a32 } from '../../common/hash.ts';
import { chooseBuckets, HASH_GROUPS } from '../../compiler/write/family-buckets.ts';
import { GroupedHashedFamilyWriter } from '../../compiler/write/grouped-family-writer.ts';
import { HashedFamilyWriter } from '../../compiler/write/hashed-family-writer.ts';
import { OrdinalFamilyWriter } from '../../compiler/write/ordinal-family-writer.ts';
import { ContentFileWriter, writeContentFile } from '../../compiler/write/content-file.ts';
import type { ShardSource } from '../../runtime/interfaces.ts';
import { createBucketCache, openBucketFamily } from '../../runtime/release/bucket-family-reader.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createHttpSource } from '../../runtime/source/http-source.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';

const SPECIAL_KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '',
  'ä',
  'Zürich',
  '日本代表',
  '😀',
  '😀x',
  '\uE000', // sorts after surrogates in JS order, before them in UTF-8 byte order
  '\uFFFD',
  'transfermarkt\u0000player\u000012345',
  'transfermarkt\u0000player',
  'transfermarkt',
  'a/b/c',
  '../x',
  'x'.repeat(31),
  'y'.repeat(32),
  'z'.repeat(300), // str16 header
  'w'.repeat(70_000), // str32 header
  ...sharingABucket('\uE000', '😀'), // JS order and UTF-8 byte order disagree, in one bucket even at 256
];

/** Two keys, `a` and `b` with a number after each, that fall in the same bucket of 256. */
function sharingABucket(a: string, b: string): [string, string] {
  for (let i = 0; ; i++) for (let j = 0; j < 256; j++) if (bucketOf(`${a}${i}`, 256) === bucketOf(`${b}${j}`, 256)) return [`${a}${i}`, `${b}${j}`];
}

function fixtureEntries(n: number): [string, unknown][] {
  const out: [string, unknown][] = SPECIAL_KEYS.map((k, i) => [k, [i, k.length, `v:${k.slice(0, 10)}`]]);
  for (let i = 0; i < n; i++) {
    const key = `rp${(Math.imul(i, 2654435761) >>> 0).toString(16).padStart(8, '0')}`;
    const value = i % 5 === 0 ? [0, 1, i, 42, 1, 2, 3, 4, 5, 6, 7, 8] : i % 5 === 1 ? [1, `rp${i}`] : i % 5 === 2 ? null : i % 5 === 3 ? { a: i, s: 'é' } : 'x'.repeat(i % 300);
    out.push([key, value]);
  }
  return out;
}

function shuffled<T>(xs: T[], seed: number): T[] {
  const a = xs.slice();
  let x = seed;
  for (let i = a.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const j = x % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** What msgpackr returns for a value (objects come back as Maps: mapsAsObjects is off). */
const roundTrip = (v: unknown): unknown => decodeMsgpack(encodeMsgpack(v));

describe('bucketed families', () => {
  let base: string;
  let served: ServedDir;
  const sources: [string, () => ShardSource][] = [];
  const entries = fixtureEntries(3000);
  const tmp = () => join(base, 'tmp');

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'bucket-family-'));
    served = await serveDir(join(base, 'public'));
    sources.push(['fs', () => createFsSource({ root: join(base, 'public') })]);
    sources.push(['http', () => createHttpSource({ baseUrl: served.baseUrl })]);
  });
  afterAll(async () => {
    await served.close();
    rmSync(base, { recursive: true, force: true });
  });

  async function writeHashed(name: string, list: [string, unknown][], opts: { spillBytes?: number; targetBucketBytes?: number } = {}) {
    const w = new HashedFamilyWriter({ root: join(base, 'public'), name, tmpDir: tmp(), ...opts });
    for (const [k, v] of list) w.add(k, v);
    return { family: await w.finish(), spilled: w.spilledBytes };
  }
  const fileOf = (path: string) => readFileSync(join(base, 'public', path));

  it('writes a hashed family whose buckets are sorted msgpack arrays in the right place', async () => {
    const { family } = await writeHashed('entities/index', entries, { targetBucketBytes: 256 });
    expect(family).toMatchObject({ addressing: 'fnv1a32-top-bits', entries: entries.length });
    expect(Object.keys(family)).toEqual(['buckets', 'addressing', 'directory', 'pack', 'entries']);
    expect(family.buckets).toBeGreaterThan(256);
    expect(family.pack).toMatch(/^entities\/index-[0-9a-f]{16}\.pack$/);
    expect(family.directory).toMatch(/^entities\/index-dir-[0-9a-f]{16}\.bin$/);
    const pack = fileOf(family.pack);
    const dir = fileOf(family.directory);
    expect(createHash('sha256').update(pack).digest('hex').slice(0, 16)).toBe(family.pack.slice(-21, -5));
    expect(dir.length).toBe(family.buckets * DIRECTORY_ENTRY_BYTES);
    let seen = 0;
    let end = 0;
    for (let b = 0; b < family.buckets; b++) {
      const { offset, length, checksum } = readDirectoryEntry(dir, b);
      if (length === 0) continue;
      expect(offset).toBe(end); // back to back, in bucket order
      end = offset + length;
      const bytes = pack.subarray(offset, offset + length);
      expect(checksum).toBe(checksum32(bytes)); // the reader refuses a bucket whose bytes do not match
      const flat = decodeMsgpack<unknown[]>(bytes);
      // Exactly what encodeMsgpack makes of the same array.
      expect(Buffer.from(encodeMsgpack(flat)).equals(bytes)).toBe(true);
      for (let i = 0; i < flat.length; i += 2) {
        const k = flat[i] as string;
        expect(bucketOf(k, family.buckets)).toBe(b);
        if (i > 0) expect((flat[i - 2] as string) < k).toBe(true);
        seen++;
      }
    }
    expect(end).toBe(pack.length);
    expect(seen).toBe(entries.length);
  });

  for (const [label, i] of [['fs', 0], ['http', 1]] as const) {
    it(`reads a hashed family back over the ${label} source`, async () => {
      const { family } = await writeHashed('resolve/keys', shuffled(entries, 5), { targetBucketBytes: 8192 });
      const source = sources[i][1]();
      const reader = openBucketFamily(source, family, { cache: createBucketCache(64 * 1024) });
      const got = await Promise.all(entries.map(([k]) => reader.get(k)));
      got.forEach((v, j) => expect(v, JSON.stringify(entries[j][0].slice(0, 40))).toEqual(roundTrip(entries[j][1])));
      for (const k of ['rp-missing', '__proto__x', 'Object', 'transfermarkt\u0000', 'valueOf']) expect(await reader.get(k)).toBeUndefined();
      await expect(reader.at(0)).rejects.toThrow(/at\(\) on a fnv1a32-top-bits family/);
      await source.close();
    });

    it(`reads an ordinal family back over the ${label} source`, async () => {
      const w = new OrdinalFamilyWriter({ root: join(base, 'public'), name: 'search/docs', tmpDir: tmp(), perBucket: 7 });
      const values = Array.from({ length: 1000 }, (_, n) => [`rp${n}`, n % 9, `Label ${n} ü`, n * 3]);
      for (const v of values) w.push(v);
      const family = await w.finish();
      expect(family).toEqual({ buckets: 143, addressing: 'ordinal', per_bucket: 7, directory: expect.any(String), pack: expect.any(String), entries: 1000 });
      const source = sources[i][1]();
      const reader = openBucketFamily(source, family);
      const got = await Promise.all(values.map((_, n) => reader.at(n)));
      expect(got).toEqual(values);
      for (const n of [-1, 1000, 1.5, NaN]) expect(await reader.at(n)).toBeUndefined();
      await expect(reader.get('rp1')).rejects.toThrow(/get\(\) on an ordinal family/);
      await source.close();
    });
  }

  it('writes byte-identical files whatever the insertion order, spilled or not', async () => {
    const a = await writeHashed('search/tokens', entries);
    const b = await writeHashed('search/tokens', shuffled(entries, 99));
    const c = await writeHashed('search/tokens', shuffled(entries, 7), { spillBytes: 4096 });
    expect(a.spilled).toBe(0);
    expect(c.spilled).toBeGreaterThan(0);
    expect(b.family).toEqual(a.family);
    expect(c.family).toEqual(a.family);
    expect(chooseBuckets(0, 65536)).toBe(256);
    // Temp files are gone.
    expect(readdirSync(tmp())).toEqual([]);
  });

  it('reports a duplicate key by name and cleans up', async () => {
    const w = new HashedFamilyWriter({ root: join(base, 'public'), name: 'dup/family', tmpDir: tmp(), spillBytes: 4096 });
    for (const [k, v] of entries) w.add(k, v);
    w.add('transfermarkt\u0000player', 'again');
    await expect(w.finish()).rejects.toThrow('[compile] dup/family: duplicate key "transfermarkt\\u0000player"');
    expect(readdirSync(tmp())).toEqual([]);
    expect(existsSync(join(base, 'public', 'dup'))).toBe(false);
  });

  it('refuses keys that UTF-8 cannot carry', () => {
    const w = new HashedFamilyWriter({ root: join(base, 'public'), name: 'bad/family', tmpDir: tmp() });
    expect(() => w.add('a\uD800b', 1)).toThrow(/lone surrogate/);
    expect(() => w.add('\uDC00', 1)).toThrow(/lone surrogate/);
    w.add('😀', 1); // a whole pair is fine
  });

  it('handles empty families', async () => {
    const { family } = await writeHashed('empty/hashed', []);
    expect(family).toMatchObject({ buckets: 256, entries: 0 });
    expect(fileOf(family.directory).length).toBe(256 * DIRECTORY_ENTRY_BYTES);
    const o = new OrdinalFamilyWriter({ root: join(base, 'public'), name: 'empty/ordinal', tmpDir: tmp() });
    const ordinal = await o.finish();
    expect(ordinal).toMatchObject({ buckets: 0, per_bucket: 256, entries: 0 });
    const source = sources[0][1]();
    expect(await openBucketFamily(source, family).get('x')).toBeUndefined();
    expect(await openBucketFamily(source, ordinal).at(0)).toBeUndefined();
    await source.close();
  });

  it('reads each bucket once for concurrent lookups and loads the directory once', async () => {
    const { family } = await writeHashed('entities/shared', entries, { targetBucketBytes: 256 });
    const inner = sources[0][1]();
    const calls = { readFile: 0, readRange: 0 };
    const counting: ShardSource = {
      label: inner.label,
      readFile: (p) => (calls.readFile++, inner.readFile(p)),
      readRange: (p, o, l) => (calls.readRange++, inner.readRange(p, o, l)),
      close: () => inner.close(),
    };
    const reader = openBucketFamily(counting, family, { cache: createBucketCache(1 << 20) });
    const keys = entries.slice(0, 200).map(([k]) => k);
    await Promise.all([...keys, ...keys].map((k) => reader.get(k)));
    const distinct = new Set(keys.map((k) => bucketOf(k, family.buckets))).size;
    expect(calls).toEqual({ readFile: 1, readRange: distinct });
    await Promise.all(keys.map((k) => reader.get(k)));
    expect(calls.readRange).toBe(distinct);
    await inner.close();
  });

  /** `list` split into its hash groups, each as [keys, values], in group order. */
  function byGroup(list: [string, unknown][]): [string[], unknown[]][] {
    const groups = Array.from({ length: HASH_GROUPS }, (): [string[], unknown[]] => [[], []]);
    for (const [k, v] of list) {
      const [keys, values] = groups[bucketOf(k, HASH_GROUPS)];
      keys.push(k);
      values.push(v);
    }
    return groups;
  }
  const grouped = (name: string, buckets: number) =>
    new GroupedHashedFamilyWriter({ root: join(base, 'public'), name, tmpDir: tmp(), buckets });

  /**
   * Hands group `g` to `w` as a caller's binary records: key bytes, then the value's msgpack. Every `repeat`th key is
   * named by two more records whose values differ; the first record's value is the one written. Checks that each
   * call of `value` gets all the records of one key, in the order given.
   */
  function writeRecords(w: GroupedHashedFamilyWriter, g: number, keys: string[], values: unknown[], repeat = 0): void {
    const records: [string, Buffer][] = [];
    keys.forEach((k, i) => {
      records.push([k, packr.pack(values[i])]);
      if (repeat && i % repeat === 0) records.push([k, packr.pack('second')], [k, packr.pack('third')]);
    });
    const data = Buffer.concat(records.flatMap(([k, v]) => [Buffer.from(k, 'utf8'), v]));
    const n = records.length;
    const keyAt = new Int32Array(n);
    const keyLength = new Int32Array(n);
    const valueEnd = new Int32Array(n);
    records.reduce((at, [k, v], r) => {
      keyAt[r] = at;
      keyLength[r] = Buffer.byteLength(k);
      return (valueEnd[r] = at + keyLength[r] + v.length);
    }, 0);
    w.writeGroup(g, data, keyAt, keyLength, Uint32Array.from(records, ([k]) => fnv1a32(k)), n, (out, order, lo, hi) => {
      const same = Array.from(order.subarray(lo, hi));
      expect(same.map((r) => records[r][0])).toEqual(same.map(() => records[same[0]][0]));
      expect(same).toEqual([...same].sort((x, y) => x - y));
      expect(same.length).toBe(records.filter(([k]) => k === records[same[0]][0]).length);
      const from = keyAt[same[0]] + keyLength[same[0]];
      out.ensure(valueEnd[same[0]] - from);
      out.buf.set(data.subarray(from, valueEnd[same[0]]), out.pos);
      out.pos += valueEnd[same[0]] - from;
    });
  }

  it('writes group by group the same bytes HashedFamilyWriter writes for the same bucket count', async () => {
    for (const target of [256, 8192, 1 << 20]) {
      const { family: want } = await writeHashed('resolve/grouped', entries, { targetBucketBytes: target });
      const w = grouped('resolve/grouped', want.buckets);
      // Within a group the order is free; groups skipped when empty.
      byGroup(shuffled(entries, target)).forEach(([keys, values], g) => keys.length && writeRecords(w, g, keys, values));
      expect(w.entries).toBe(entries.length);
      const got = await w.finish();
      expect(got, `${want.buckets} buckets`).toEqual(want);
    }
    expect(readdirSync(tmp())).toEqual([]);
  });

  it('writes a key named by several records once, with the value its caller makes of them', async () => {
    const { family: want } = await writeHashed('resolve/merged', entries, { targetBucketBytes: 8192 });
    const w = grouped('resolve/merged', want.buckets);
    byGroup(shuffled(entries, 3)).forEach(([keys, values], g) => writeRecords(w, g, keys, values, 3));
    expect(w.entries).toBe(entries.length);
    expect(await w.finish()).toEqual(want);
  });

  it('reads a group-written family back', async () => {
    const w = grouped('resolve/back', 1024);
    byGroup(entries).forEach(([keys, values], g) => writeRecords(w, g, keys, values));
    const family = await w.finish();
    expect(family).toMatchObject({ buckets: 1024, entries: entries.length });
    const source = sources[0][1]();
    const reader = openBucketFamily(source, family);
    for (const [k, v] of entries) expect(await reader.get(k), JSON.stringify(k.slice(0, 40))).toEqual(roundTrip(v));
    expect(await reader.get('rp-missing')).toBeUndefined();
    await source.close();
  });

  it('refuses a bad bucket count, groups out of order, keys of another group and short arrays, and cleans up', async () => {
    for (const b of [0, 128, 300, 1 << 25, 1.5]) expect(() => grouped('bad/count', b)).toThrow(/power of two from 256/);
    const groups = byGroup(entries);
    const g = groups.findIndex(([keys]) => keys.length > 1);
    const [keys, values] = groups[g];

    let w = grouped('bad/order', 256);
    writeRecords(w, g, keys, values);
    expect(() => writeRecords(w, g, keys, values)).toThrow(`[compile] bad/order: group ${g} out of order`);
    expect(() => writeRecords(w, HASH_GROUPS, [], [])).toThrow(/out of order/);
    await w.abort();

    w = grouped('bad/group', 256);
    const stranger = entries.find(([k]) => bucketOf(k, HASH_GROUPS) !== g)![0];
    expect(() => writeRecords(w, g, [...keys, stranger], [...values, 1])).toThrow(`key ${JSON.stringify(stranger)} does not belong to group ${g}`);
    await w.abort();

    w = grouped('bad/short', 256);
    const bytes = Buffer.from(keys[0], 'utf8');
    expect(() => w.writeGroup(g, bytes, Int32Array.of(0), Int32Array.of(bytes.length), new Uint32Array(0), 1, () => {})).toThrow('[compile] bad/short: 1 keys but fewer offsets, lengths or hashes');
    await w.abort();
    await expect(w.finish()).rejects.toThrow(/finish called twice/);

    expect(readdirSync(tmp())).toEqual([]);
    for (const dir of ['order', 'group', 'short']) expect(existsSync(join(base, 'public', 'bad', dir))).toBe(false);
    expect(existsSync(join(base, 'public', 'bad'))).toBe(false);
  });

  it('reports a directory of the wrong size', async () => {
    const { family } = await writeHashed('entities/wrong', entries.slice(0, 50));
    const source = sources[0][1]();
    const reader = openBucketFamily(source, { ...family, buckets: family.buckets * 2 } as BucketFamily);
    await expect(reader.get('rp')).rejects.toThrow(/expected 512 entries/);
    await source.close();
  });
});

describe('ContentFileWriter', () => {
  it('names the file by its content, across buffer boundaries', async () => {
    const root = mkdtempSync(join(tmpdir(), 'content-file-'));
    try {
      const w = new ContentFileWriter({ root, tmpDir: join(root, '.tmp'), bufferBytes: 4096 });
      const chunks = [Buffer.alloc(10, 1), Buffer.alloc(5000, 2), Buffer.alloc(4000, 3), Buffer.alloc(100, 4)];
      for (const c of chunks) w.write(c);
      expect(w.bytes).toBe(9110);
      const whole = Buffer.concat(chunks);
      const sha = createHash('sha256').update(whole).digest('hex');
      const file = await w.finish('a/b/pack', 'bin');
      expect(file).toEqual({ path: `a/b/pack-${sha.slice(0, 16)}.bin`, bytes: 9110, sha256: sha });
      expect(readFileSync(join(root, file.path)).equals(whole)).toBe(true);
      expect(readdirSync(join(root, '.tmp'))).toEqual([]);
      const small = await writeContentFile({ root }, 'doc', 'json', Buffer.from('{}'));
      expect(small.path).toBe(`doc-${createHash('sha256').update('{}').digest('hex').slice(0, 16)}.json`);
      await expect(writeContentFile({ root }, '../escape', 'json', Buffer.from('{}'))).rejects.toThrow(/bad content file name/);
      expect(readdirSync(root).filter((f) => f.startsWith('.content-'))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
