// Resolve records: stage 1's bridges pass writes one per bridge, grouped by the resolve family's hash groups, and
// stage 3 (build-resolve) writes each group's keys as it reads it. Binary rather than the CSV row: stage 3 then
// neither parses rows nor rebuilds keys, and copies most values as bytes.
//
// A record: u32 fnv1a32 of the key, u32 key length, u8 type index, u8 ID length (little-endian), then the key and
// the register ID in UTF-8. The key is `provider NUL namespace NUL external_id` (common/dist-layout.ts resolveKey).
import { FNV_PRIME, fnv1a32, fnv1a32Bytes } from '../../common/hash.ts';
import { resolveKey } from '../../common/dist-layout.ts';
import type { CsvRecord } from '../read/csv-reader.ts';
import type { GroupSpill } from '../write/group-spill.ts';
import { hashGroupOf, HASH_GROUPS } from '../write/family-buckets.ts';
import { writeUtf8 } from '../write/msgpack-out.ts';

/** Bytes before a record's key. */
const RECORD_HEAD = 10;
/** Resolve records are grouped as the resolve family's writer groups keys (GroupedHashedFamilyWriter). */
export const RESOLVE_GROUPS = HASH_GROUPS;

/**
 * A resolve entry's bytes in its bucket, for a key and an ID of these lengths in characters, as one bridge row would
 * make it: the key (a string header and the key) and the value `[[id, type]]` (two array headers, the ID's string
 * header and bytes, a fixint type). Characters stand in for UTF-8 bytes (a row read as bytes is passed its byte
 * counts only when it is ASCII, where the two agree), and a key named by several rows counts once per row: an
 * estimate, but one that depends on the input alone, which is all stage 3's bucket count needs to be deterministic.
 */
const entryBytes = (keyLength: number, idLength: number): number => (keyLength < 32 ? 1 : 2) + keyLength + 4 + idLength;

/**
 * Appends the record of one bridge given as strings; returns the estimated bytes of its resolve entry (see
 * entryBytes), which stage 1 sums.
 */
export function addResolveRecord(spill: GroupSpill, provider: string, namespace: string, externalId: string, id: string, type: number): number {
  const key = resolveKey(provider, namespace, externalId);
  const hash = fnv1a32(key);
  // UTF-8 takes at most 3 bytes per UTF-16 unit. Keys come from decoded UTF-8 text, so they hold no lone surrogate
  // (which UTF-8 could not carry back), and IDs are live or redirected register IDs, checked as such.
  const buf = spill.reserve(hashGroupOf(hash), RECORD_HEAD + (key.length + id.length) * 3);
  const at = spill.cursor;
  const klen = writeUtf8(buf, key, at + RECORD_HEAD);
  const ilen = writeUtf8(buf, id, at + RECORD_HEAD + klen);
  writeHead(buf, at, hash, klen, type, ilen);
  spill.commit(at + RECORD_HEAD + klen + ilen);
  return entryBytes(key.length, id.length);
}

/**
 * addResolveRecord for a plain bridge row whose bytes are its characters (CsvRecord.ascii): the key is made of the
 * row's `provider`, `namespace` and `externalId` fields and the ID is its field `id`, all copied from its bytes.
 */
export function addResolveRecordIn(spill: GroupSpill, row: CsvRecord, provider: number, namespace: number, externalId: number, id: number, type: number): number {
  const src = row.buf;
  const p0 = row.fieldStart(provider);
  const n0 = row.fieldStart(namespace);
  const e0 = row.fieldStart(externalId);
  const i0 = row.fieldStart(id);
  const p1 = row.ends[provider];
  const n1 = row.ends[namespace];
  const e1 = row.ends[externalId];
  const i1 = row.ends[id];
  // The key's separators are NUL bytes: hashing one is a multiply.
  const hash = fnv1a32Bytes(src, e0, e1, Math.imul(fnv1a32Bytes(src, n0, n1, Math.imul(fnv1a32Bytes(src, p0, p1), FNV_PRIME)), FNV_PRIME));
  const klen = p1 - p0 + n1 - n0 + e1 - e0 + 2;
  const ilen = i1 - i0;
  const buf = spill.reserve(hashGroupOf(hash), RECORD_HEAD + klen + ilen);
  writeHead(buf, spill.cursor, hash, klen, type, ilen);
  let at = spill.cursor + RECORD_HEAD;
  for (let i = p0; i < p1; i++) buf[at++] = src[i];
  buf[at++] = 0;
  for (let i = n0; i < n1; i++) buf[at++] = src[i];
  buf[at++] = 0;
  for (let i = e0; i < e1; i++) buf[at++] = src[i];
  for (let i = i0; i < i1; i++) buf[at++] = src[i];
  spill.commit(at);
  return entryBytes(klen, ilen);
}

function writeHead(buf: Buffer, at: number, hash: number, klen: number, type: number, ilen: number): void {
  if (ilen > 0xff) throw new Error(`register ID of ${ilen} bytes in a resolve record`);
  buf.writeUInt32LE(hash, at);
  buf.writeUInt32LE(klen, at + 4);
  buf[at + 8] = type;
  buf[at + 9] = ilen;
}

/** Where each of a group's `n` records keeps its key (records back to back in `data`), and the keys' hashes. */
export interface ResolveGroup {
  keyAt: Int32Array;
  keyLength: Int32Array;
  hashes: Uint32Array;
}

/** Frames the `n` records of group `g`; throws when the bytes end inside one. */
export function frameResolveGroup(data: Buffer, n: number, g: number): ResolveGroup {
  const keyAt = new Int32Array(n);
  const keyLength = new Int32Array(n);
  const hashes = new Uint32Array(n);
  for (let at = 0, r = 0; r < n; r++) {
    if (at + RECORD_HEAD > data.length) throw new Error(`resolve spill group ${g} ends inside record ${r}`);
    hashes[r] = data.readUInt32LE(at);
    keyAt[r] = at + RECORD_HEAD;
    keyLength[r] = data.readUInt32LE(at + 4);
    at += RECORD_HEAD + keyLength[r] + data[at + 9];
    if (at > data.length) throw new Error(`resolve spill group ${g} ends inside record ${r}`);
  }
  return { keyAt, keyLength, hashes };
}

/** The type index of the record whose key starts at `keyAt`. */
export const recordType = (data: Buffer, keyAt: number): number => data[keyAt - 2];
/** The UTF-8 length of the register ID of the record whose key starts at `keyAt`; its bytes follow the key. */
export const recordIdLength = (data: Buffer, keyAt: number): number => data[keyAt - 1];

/** The [register ID, type index] of the record whose key starts at `keyAt` and is `keyLength` bytes long. */
export function recordItem(data: Buffer, keyAt: number, keyLength: number): [string, number] {
  const from = keyAt + keyLength;
  return [data.toString('utf8', from, from + recordIdLength(data, keyAt)), recordType(data, keyAt)];
}
