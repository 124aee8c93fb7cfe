// Stage 3: the resolve index. Records from every partition meet here by key hash, one group at a time, so a
// provider ID that names two entities (the 409 case) is seen whole. It needs only stage 1's output, so it runs in
// a worker thread alongside stage 2.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import { chooseBuckets, GroupedHashedFamilyWriter, HASH_GROUPS, hashGroupOf } from '../write/bucket-family-writer.ts';
import { POINT_LOOKUP_BUCKET_BYTES, type CompileContext } from '../context.ts';
import type { RedirectInfo, TablesRead } from './read-tables.ts';
import { writeStrHeader, writeUtf8 } from '../write/msgpack-out.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import type { ContentFile } from '../write/content-file.ts';
import { runStageJob } from '../worker/run-in-worker.ts';
import { FNV_PRIME, fnv1a32Bytes } from '../../common/hash.ts';
import type { CsvRecord } from '../read/csv-reader.ts';

/** Plain data in, for a worker thread. */
export interface ResolveJob {
  /** Resolve records (see addResolveRecord) grouped by HASH_GROUPS. */
  resolve: GroupSpillHandle;
  /** Estimated bytes of the entries (TablesRead.resolveBytes): the bucket count is chosen from it up front. */
  entryBytes: number;
  redirects: [string, RedirectInfo][];
  publicDir: string;
  scratchDir: string;
}

export interface ResolveResult {
  family: BucketFamily;
  ambiguous: number;
  files: ContentFile[];
}

/**
 * Starts stage 3 (in a worker thread unless threads are off); settles with the family once written. Aborting
 * `signal` stops the thread (then it rejects).
 */
export function startResolve(ctx: CompileContext, read: TablesRead, signal?: AbortSignal): Promise<ResolveResult> {
  const job: ResolveJob = {
    resolve: read.resolve.handle(),
    entryBytes: read.resolveBytes,
    redirects: [...read.redirects],
    publicDir: ctx.publicDir,
    scratchDir: join(ctx.scratchDir, 'resolve-writer'),
  };
  return runStageJob(ctx.options.threads, ctx.written, new URL('./build-resolve.ts#buildResolve', import.meta.url), buildResolve, job, signal);
}

export async function buildResolve(job: ResolveJob): Promise<ResolveResult> {
  const ledger = new Map<string, ContentFile>();
  const spill = GroupSpill.open(job.resolve);
  // The spill's groups are the writer's hash groups, so each group is written as soon as it is gathered.
  if (spill.groups !== HASH_GROUPS) throw new Error(`resolve spill has ${spill.groups} groups, the writer takes ${HASH_GROUPS}`);
  const writer = new GroupedHashedFamilyWriter({
    root: job.publicDir,
    name: 'resolve/keys',
    tmpDir: job.scratchDir,
    buckets: chooseBuckets(job.entryBytes, POINT_LOOKUP_BUCKET_BYTES),
    ledger,
  });
  const redirects = new Map(job.redirects);
  let ambiguous = 0;
  try {
    for (let g = 0; g < spill.groups; g++) {
      const data = spill.readBytes(g);
      spill.release(g);
      const n = spill.count(g);
      // Keys stay bytes in the records; the writer merges records naming the same key (rare: the 409 case, or a
      // row repeated) and asks for each distinct key's value once. Record r starts at keyAt[r] - RECORD_HEAD.
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
      writer.writeGroup(g, data, keyAt, keyLength, hashes, n, (out, order, lo, hi) => {
        if (hi - lo === 1) {
          // [[id, type]], copied from the record: two array headers, the ID's string header and bytes, the type.
          const e = order[lo];
          const at = keyAt[e] - RECORD_HEAD;
          const ilen = data[at + 9];
          const from = keyAt[e] + keyLength[e];
          out.ensure(8 + ilen);
          const buf = out.buf;
          let pos = out.pos;
          buf[pos++] = 0x91;
          buf[pos++] = 0x92;
          pos = writeStrHeader(buf, pos, ilen);
          for (let q = 0; q < ilen; q++) buf[pos + q] = data[from + q];
          pos += ilen;
          buf[pos++] = data[at + 8]; // a type index is a positive fixint
          out.pos = pos;
          return;
        }
        const items: [string, number][] = [];
        for (let k = lo; k < hi; k++) items.push(recordItem(data, keyAt[order[k]] - RECORD_HEAD));
        const value = candidates(items, redirects);
        if (value.length > 1) ambiguous++;
        out.value(value);
      });
    }
  } catch (err) {
    await writer.abort();
    throw err;
  }
  spill.dispose();
  const family = await writer.finish();
  return { family, ambiguous, files: [...ledger.values()] };
}

/**
 * A key's candidates, from every row that named it: one per final entity (a merged ID and its survivor under one
 * key are the same entity, and the survivor's own ID wins), sorted by ID. More than one is the 409 case.
 */
function candidates(items: [string, number][], redirects: Map<string, RedirectInfo>): [string, number][] {
  const byFinal = new Map<string, [string, number]>();
  for (const item of items) {
    const final = redirects.get(item[0])?.to ?? item[0];
    const prev = byFinal.get(final);
    if (!prev || item[0] === final || (prev[0] !== final && item[0] < prev[0])) byFinal.set(final, item);
  }
  return [...byFinal.values()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
}

/**
 * Resolve spill records, written by stage 1's bridges pass and grouped by HASH_GROUPS: u32 fnv1a32 of the key, u32
 * key length, u8 type index, u8 ID length (all little-endian), then the key and the register ID in UTF-8. Binary
 * rather than the CSV row: this stage then neither parses rows nor rebuilds keys, and copies most values as bytes.
 */
const RECORD_HEAD = 10;

/** Appends one bridge's resolve record to `spill`; `hash` is fnv1a32(key), which picks the group (hashGroupOf). */
export function addResolveRecord(spill: GroupSpill, key: string, hash: number, id: string, type: number): void {
  // UTF-8 takes at most 3 bytes per UTF-16 unit. Keys come from decoded UTF-8 text, so they hold no lone surrogate
  // (which UTF-8 could not carry back), and IDs are live or redirected register IDs, checked as such.
  const buf = spill.reserve(hashGroupOf(hash), RECORD_HEAD + (key.length + id.length) * 3);
  const at = spill.cursor;
  const klen = writeUtf8(buf, key, at + RECORD_HEAD);
  const ilen = writeUtf8(buf, id, at + RECORD_HEAD + klen);
  writeRecordHead(buf, at, hash, klen, type, ilen);
  spill.commit(at + RECORD_HEAD + klen + ilen);
}

/** A resolve record's head at `at` (see RECORD_HEAD). */
function writeRecordHead(buf: Buffer, at: number, hash: number, klen: number, type: number, ilen: number): void {
  if (ilen > 0xff) throw new Error(`register ID of ${ilen} bytes in a resolve record`);
  buf.writeUInt32LE(hash, at);
  buf.writeUInt32LE(klen, at + 4);
  buf[at + 8] = type;
  buf[at + 9] = ilen;
}

/**
 * addResolveRecord for a plain bridge row whose bytes are its characters (CsvRecord.ascii): the key is made of the
 * row's `provider`, `namespace` and `externalId` fields and the ID is its field `id`, all copied from its bytes.
 * Returns the key's length.
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
  // The key's separators are NUL bytes (see resolveKey): hashing one is a multiply.
  const hash = fnv1a32Bytes(src, e0, e1, Math.imul(fnv1a32Bytes(src, n0, n1, Math.imul(fnv1a32Bytes(src, p0, p1), FNV_PRIME)), FNV_PRIME));
  const klen = p1 - p0 + n1 - n0 + e1 - e0 + 2;
  const ilen = i1 - i0;
  const buf = spill.reserve(hashGroupOf(hash), RECORD_HEAD + klen + ilen);
  writeRecordHead(buf, spill.cursor, hash, klen, type, ilen);
  let at = spill.cursor + RECORD_HEAD;
  for (let i = p0; i < p1; i++) buf[at++] = src[i];
  buf[at++] = 0;
  for (let i = n0; i < n1; i++) buf[at++] = src[i];
  buf[at++] = 0;
  for (let i = e0; i < e1; i++) buf[at++] = src[i];
  for (let i = i0; i < i1; i++) buf[at++] = src[i];
  spill.commit(at);
  return klen;
}

function recordItem(data: Buffer, at: number): [string, number] {
  const from = at + RECORD_HEAD + data.readUInt32LE(at + 4);
  return [data.toString('utf8', from, from + data[at + 9]), data[at + 8]];
}
