// The bucket reader over an in-memory source: what it keeps (verified bytes, weighed by their length), and that
// bytes failing their checksum or their shape answer 503 artefact_corrupt rather than a wrong value.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DIRECTORY_ENTRY_BYTES, encodeMsgpack, type BucketFamily } from '../../../common/bucket-format.ts';
import { bucketOf } from '../../../common/hash.ts';
import { checksum32 } from '../../../common/checksum.ts';
import { ArtefactError } from '../../../runtime/read-errors.ts';
import { isPromise, type MaybePromise, type ShardSource } from '../../../runtime/interfaces.ts';
import { bucketCacheKey, createBucketCache, openBucketFamily } from '../../../runtime/release/bucket-family-reader.ts';

/** A family laid out as the compiler lays it out, from raw bucket bytes (so tests can plant bad ones). */
function memoryFamily(name: string, buckets: Uint8Array[], addressing: BucketFamily['addressing'], extra: Partial<BucketFamily> = {}) {
  const dir = new Uint8Array(buckets.length * DIRECTORY_ENTRY_BYTES);
  const view = new DataView(dir.buffer);
  let offset = 0;
  buckets.forEach((b, i) => {
    view.setUint32(i * DIRECTORY_ENTRY_BYTES, b.length ? offset : 0, true);
    view.setUint32(i * DIRECTORY_ENTRY_BYTES + 4, b.length, true);
    view.setUint32(i * DIRECTORY_ENTRY_BYTES + 8, b.length ? checksum32(b) : 0, true);
    offset += b.length;
  });
  const pack = new Uint8Array(offset);
  let at = 0;
  for (const b of buckets) pack.set(b, (at += b.length) - b.length);
  const family: BucketFamily = { buckets: buckets.length, addressing, directory: `${name}-dir.bin`, pack: `${name}.pack`, entries: 1, ...extra };
  return { family, files: { [family.directory]: dir, [family.pack]: pack } };
}

/** A source over in-memory files that counts range reads; `views` makes it answer views into the whole file. */
function memorySource(files: Record<string, Uint8Array>, views = false) {
  const reads: string[] = [];
  const source: ShardSource = {
    label: 'memory',
    readFile: async (p) => files[p] ?? null,
    readRange: async (p, o, l) => {
      reads.push(`${p}@${o}`);
      const f = files[p];
      if (!f || o + l > f.length) throw new Error(`${p}: short`);
      return views ? f.subarray(o, o + l) : f.slice(o, o + l);
    },
    close: async () => {},
  };
  return { source, reads };
}

/** A hashed family of `buckets` buckets holding `keys` (each value [key, i]). */
function hashedFamily(name: string, keys: string[], buckets: number) {
  const per: [string, unknown][][] = Array.from({ length: buckets }, () => []);
  keys.forEach((k, i) => per[bucketOf(k, buckets)].push([k, [k, i]]));
  const bytes = per.map((list) => (list.length ? encodeMsgpack(list.sort((a, b) => (a[0] < b[0] ? -1 : 1)).flat()) : new Uint8Array(0)));
  return memoryFamily(name, bytes, 'fnv1a32-top-bits', { entries: keys.length });
}

/** The file and check a refused read names (what the core logs before it answers 503 artefact_corrupt). */
const refusal = async (p: MaybePromise<unknown>): Promise<string> => {
  expect(isPromise(p), 'a refused read rejects').toBe(true);
  const err = await (p as Promise<unknown>).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ArtefactError);
  return (err as ArtefactError).message;
};

describe('openBucketFamily', () => {
  const keys = Array.from({ length: 400 }, (_, i) => `rp${i.toString(36)}`);

  it('answers get() at once from a cached bucket, and with a promise only while the bucket must be read', async () => {
    const { family, files } = hashedFamily('f', keys, 16);
    const { source, reads } = memorySource(files);
    const reader = openBucketFamily(source, family, { cache: createBucketCache(1 << 20) });
    const first = reader.get(keys[0]);
    expect(isPromise(first)).toBe(true);
    expect(await first).toEqual([keys[0], 0]);
    expect(reads.length).toBe(1);
    const sameBucket = keys.filter((k) => bucketOf(k, 16) === bucketOf(keys[0], 16));
    expect(sameBucket.length).toBeGreaterThan(1);
    for (const k of sameBucket) {
      const v = reader.get(k);
      expect(isPromise(v), k).toBe(false);
      expect(v).toEqual([k, keys.indexOf(k)]);
    }
    expect(reads.length).toBe(1); // answered from the cached bucket: nothing read again
    for (const k of keys) await reader.get(k);
    // Once every bucket is retained, an absent key is answered at once too (undefined, not a promise of it).
    expect(reader.get('rp-absent-from-all')).toBeUndefined();
    expect(reads.length).toBe(new Set(keys.map((k) => bucketOf(k, 16))).size);
  });

  it('rejects rather than throws, even when the bucket is retained and the failure found at once', async () => {
    const o = memoryFamily('x', [encodeMsgpack(['a', 'b', 'c'])], 'ordinal', { per_bucket: 3, entries: 3 });
    const reader = openBucketFamily(memorySource(o.files).source, o.family);
    const misuse = reader.get('a');
    expect(isPromise(misuse)).toBe(true);
    await expect(misuse).rejects.toThrow(/get\(\) on an ordinal family/);
  });

  it('keeps verified bucket bytes, weighed by their length, and reads each bucket once', async () => {
    const { family, files } = hashedFamily('f', keys, 16);
    const { source, reads } = memorySource(files);
    const cache = createBucketCache(1 << 20);
    const reader = openBucketFamily(source, family, { cache });
    for (const [i, k] of keys.entries()) expect(await reader.get(k)).toEqual([k, i]);
    for (const k of keys) await reader.get(k);
    const used = new Set(keys.map((k) => bucketOf(k, 16))).size;
    expect(used).toBeGreaterThan(4);
    expect(reads.length).toBe(used);
    expect(cache.size).toBe(used);
    // Weight is the bytes plus a fixed per-slot overhead: the bound is on memory, not on decoded objects.
    const perSlot = (cache.weight - files[family.pack].length) / used;
    expect(perSlot).toBeGreaterThan(0);
    expect(perSlot).toBeLessThanOrEqual(512);
    expect(await reader.get('absent')).toBeUndefined();
  });

  it('indexes a bucket on its second lookup and answers the same from the index', async () => {
    const { family, files } = hashedFamily('i', keys, 4);
    const { source } = memorySource(files);
    const cache = createBucketCache(1 << 20);
    const reader = openBucketFamily(source, family, { cache });
    const inBucket0 = keys.filter((k) => bucketOf(k, 4) === 0);
    const slot = bucketCacheKey(family.pack, 0);
    expect(await reader.get(inBucket0[0])).toEqual([inBucket0[0], keys.indexOf(inBucket0[0])]);
    expect(cache.get(slot)!.index).toBeNull(); // read once: walked, not indexed
    for (const k of inBucket0) expect(await reader.get(k)).toEqual([k, keys.indexOf(k)]);
    expect(cache.get(slot)!.index).toHaveLength(inBucket0.length + 1);
    for (const k of ['', 'rp', 'zz', `${inBucket0[0]}x`]) expect(await reader.get(k)).toBeUndefined();
  });

  it('holds its bound across families sharing one cache', async () => {
    const a = hashedFamily('a', keys, 16);
    const b = hashedFamily('b', keys.map((k) => `${k}-b`), 16);
    const { source } = memorySource({ ...a.files, ...b.files });
    const bound = Math.floor(a.files[a.family.pack].length / 2);
    const cache = createBucketCache(bound);
    const ra = openBucketFamily(source, a.family, { cache });
    const rb = openBucketFamily(source, b.family, { cache });
    for (const k of keys) {
      await ra.get(k);
      await rb.get(`${k}-b`);
      expect(cache.weight).toBeLessThanOrEqual(bound);
    }
    expect(cache.size).toBeGreaterThan(0);
  });

  it('keeps its own copy of a bucket the source answered as a view into a larger buffer', async () => {
    const { family, files } = hashedFamily('v', keys, 4);
    const { source } = memorySource(files, true);
    const cache = createBucketCache(1 << 20);
    const reader = openBucketFamily(source, family, { cache });
    await reader.get(keys[0]);
    const key = bucketCacheKey(family.pack, bucketOf(keys[0], 4));
    const kept = cache.get(key)!.bytes;
    expect(kept.buffer.byteLength).toBe(kept.byteLength);
    expect(kept.buffer).not.toBe(files[family.pack].buffer);
  });

  it('reads ordinal families by walking to the n-th value', async () => {
    const values = Array.from({ length: 50 }, (_, n) => [`rp${n}`, n % 9, `Label ${n} 😀`, n * 3]);
    const buckets = [0, 1, 2, 3, 4, 5, 6, 7].map((b) => encodeMsgpack(values.slice(b * 7, b * 7 + 7))).filter((b) => b.length > 1);
    const { family, files } = memoryFamily('o', buckets, 'ordinal', { per_bucket: 7, entries: values.length });
    const { source } = memorySource(files);
    const reader = openBucketFamily(source, family);
    for (const [n, v] of values.entries()) expect(await reader.at(n)).toEqual(v);
    expect(await reader.at(values.length)).toBeUndefined();
  });

  it('refuses bytes failing their checksum, and checksummed bytes that are not a bucket, naming the pack and the check', async () => {
    const { family, files } = hashedFamily('c', keys, 4);
    const flipped = files[family.pack].slice();
    flipped[10] ^= 0x20;
    const bad = openBucketFamily(memorySource({ ...files, [family.pack]: flipped }).source, family);
    const hit = keys.find((k) => bucketOf(k, 4) === 0)!;
    expect(await refusal(bad.get(hit))).toMatch(/^memory c\.pack: crc32 of bucket 0 \(bytes \d+\+\d+\) does not match its directory entry$/);

    // A compile bug rather than a flipped byte: the checksum matches, the shape does not.
    const notBuckets = [encodeMsgpack({ a: 1 }), encodeMsgpack(['k', 1, 'j']), new Uint8Array([0x92, 0xa1, 0x6b, 0xc1]), encodeMsgpack([1, 2])];
    for (const b of notBuckets) {
      const m = memoryFamily('m', [b], 'fnv1a32-top-bits', { entries: 1 });
      const reader = openBucketFamily(memorySource(m.files).source, m.family);
      expect(await refusal(reader.get('k'))).toMatch(/^memory m\.pack: bucket 0 is not a bucket/);
    }
    const o = memoryFamily('o', [new Uint8Array([0x93, 0x01, 0xc1, 0x02])], 'ordinal', { per_bucket: 3, entries: 3 });
    expect(await refusal(openBucketFamily(memorySource(o.files).source, o.family).at(2))).toMatch(/^memory o\.pack: bucket 0 is not a bucket/);
  });

  it('checks the directory whole against its sha256: a zeroed or altered entry is refused, never read as an empty bucket', async () => {
    const { family, files } = hashedFamily('d', keys, 4);
    const sha256 = createHash('sha256').update(files[family.directory]).digest('hex');
    const good = openBucketFamily(memorySource(files).source, family, { directorySha256: sha256 });
    expect(await good.get(keys[0])).toEqual([keys[0], 0]);
    const zeroed = files[family.directory].slice();
    zeroed.fill(0, 0, DIRECTORY_ENTRY_BYTES * 4); // every length 0: without the hash, every key would be "absent"
    const reader = openBucketFamily(memorySource({ ...files, [family.directory]: zeroed }).source, family, { directorySha256: sha256 });
    for (const k of keys.slice(0, 8)) expect(await refusal(reader.get(k))).toMatch(/^memory d-dir\.bin: sha256 [0-9a-f]{64} does not match the manifest/);
    const missing = { ...files };
    delete missing[family.directory];
    expect(await refusal(openBucketFamily(memorySource(missing).source, family, { directorySha256: sha256 }).get(keys[0]))).toBe('memory d-dir.bin: not found');
  });

  it('refuses an ordinal below the family size that its bucket does not hold (a gap is damage, not an end)', async () => {
    const o = memoryFamily('g', [encodeMsgpack(['a', 'b', 'c']), new Uint8Array(0)], 'ordinal', { per_bucket: 3, entries: 6 });
    const reader = openBucketFamily(memorySource(o.files).source, o.family);
    expect(await reader.at(2)).toBe('c');
    expect(await refusal(reader.at(4))).toBe('memory g.pack: ordinal 4 of 6 is not in bucket 1');
    expect(await reader.at(6)).toBeUndefined();
  });
});
