// What the three bucket-family writers share (common/bucket-format.ts is the format): the bucket count, the hash
// groups, a bucket's directory entry, the counting sort by bucket, and publishing a family's two files.
import { DIRECTORY_ENTRY_BYTES, type BucketFamily } from '../../common/bucket-format.ts';
import { checksum32 } from '../../common/checksum.ts';
import { ContentFileWriter, writeContentFile, type ContentFile } from './content-file.ts';

/** Entries are spilled in 256 groups by the top 8 bits of the key hash; with >= 256 buckets, a group is a bucket range. */
const GROUP_BITS = 8;
/** The hash groups (group = bucketOf(key, HASH_GROUPS)); every bucket count is a multiple, so also the fewest buckets. */
export const HASH_GROUPS = 1 << GROUP_BITS;
/** The hash group of a key whose fnv1a32 is `hash`: its top GROUP_BITS bits, as bucketOf(key, HASH_GROUPS). */
export const hashGroupOf = (hash: number): number => hash >>> (32 - GROUP_BITS);
/** Caps the directory at 128 MiB; far beyond any pack that fits u32 offsets at sane bucket sizes. */
export const MAX_BUCKETS = 1 << 24;
export const MAX_PACK_BYTES = 0xffffffff;
/** A key as an error message shows it: JSON-escaped (NUL separators stay visible), cut if long. */
export const showKey = (key: string): string => JSON.stringify(key.length > 120 ? key.slice(0, 120) + '…' : key);

/**
 * Entries 0..n-1 counting-sorted by their bucket `local[i]` (buckets are a small dense range, `count` of them), in
 * input order within one: bucket b's entries are `order[starts[b]]` to `order[starts[b + 1] - 1]`. Both orderings
 * then sort each bucket by key.
 */
export function byBucket(local: Int32Array, count: number): { starts: Int32Array; order: Int32Array } {
  const n = local.length;
  const starts = new Int32Array(count + 1);
  for (let i = 0; i < n; i++) starts[local[i] + 1]++;
  for (let b = 0; b < count; b++) starts[b + 1] += starts[b];
  const order = new Int32Array(n);
  const fill = starts.slice(0, count);
  for (let i = 0; i < n; i++) order[fill[local[i]]++] = i;
  return { starts, order };
}


/** Bucket `bucket`'s directory entry: where its bytes `bytes[start, end)` sit in the pack, their length and checksum. */
export function setDirectoryEntry(dir: Buffer, bucket: number, offset: number, bytes: Uint8Array, start: number, end: number): void {
  writeDirectoryEntry(dir, bucket, offset, end - start, checksum32(bytes, start, end));
}

/** Bucket `bucket`'s directory entry from its pack offset, length and checksum (for a bucket written in pieces). */
export function writeDirectoryEntry(dir: Buffer, bucket: number, offset: number, length: number, checksum: number): void {
  const e = bucket * DIRECTORY_ENTRY_BYTES;
  dir.writeUInt32LE(offset, e);
  dir.writeUInt32LE(length, e + 4);
  dir.writeUInt32LE(checksum, e + 8);
}

type Where = { root: string; tmpDir: string; ledger?: Map<string, ContentFile> };

/** Writes a family's directory, then finishes its pack: the paths of both. */
export async function publishFiles(where: Where, name: string, dir: Buffer, pack: ContentFileWriter): Promise<{ directory: string; pack: string }> {
  const directory = await writeContentFile(where, `${name}-dir`, 'bin', dir);
  const packFile = await pack.finish(name, 'pack');
  return { directory: directory.path, pack: packFile.path };
}

/** Writes a hashed family's directory, finishes its pack and names both. */
export async function publishHashed(where: Where, name: string, buckets: number, dir: Buffer, pack: ContentFileWriter, entries: number): Promise<BucketFamily> {
  const files = await publishFiles(where, name, dir, pack);
  return { buckets, addressing: 'fnv1a32-top-bits', directory: files.directory, pack: files.pack, entries };
}


/** Power of two >= 256 nearest (in log scale) to payload / target, so buckets average about the target size. */
export function chooseBuckets(payloadBytes: number, targetBucketBytes: number): number {
  const ideal = payloadBytes / targetBucketBytes;
  if (ideal <= HASH_GROUPS) return HASH_GROUPS;
  const b = 2 ** Math.round(Math.log2(ideal));
  return Math.min(MAX_BUCKETS, Math.max(HASH_GROUPS, b));
}
