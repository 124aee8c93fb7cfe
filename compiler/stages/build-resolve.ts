// Stage 3: the resolve index. Stage 1 wrote one resolve record per bridge, grouped by key hash
// (compiler/records/resolve-records.ts); here each group is read whole, so a provider ID that names two entities
// (the 409 case) is seen whole. It needs only stage 1's output, so it runs in a worker thread alongside stage 2.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import { chooseBuckets } from '../write/family-buckets.ts';
import { GroupedHashedFamilyWriter } from '../write/grouped-family-writer.ts';
import { POINT_LOOKUP_BUCKET_BYTES } from '../context.ts';
import type { RedirectInfo, TablesRead } from '../records/tables-read.ts';
import { writeStrHeader } from '../write/msgpack-out.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import type { ContentFile } from '../write/content-file.ts';
import { frameResolveGroup, recordIdLength, recordItem, recordType, RESOLVE_GROUPS } from '../records/resolve-records.ts';
import type { ThreadedStage } from '../run-stages.ts';

/** Plain data in, for a worker thread. */
export interface ResolveJob {
  /** Resolve records grouped by RESOLVE_GROUPS. */
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

/** Stage: the resolve family; /meta counts the keys that name more than one entity. */
export const resolveStage: ThreadedStage<TablesRead, ResolveJob, ResolveResult, BucketFamily> = {
  worker: new URL('./build-resolve.ts#buildResolve', import.meta.url),
  jobs: (ctx, read) => [{
    resolve: read.resolve.handle(),
    entryBytes: read.resolveBytes,
    redirects: [...read.redirects],
    publicDir: ctx.publicDir,
    scratchDir: join(ctx.scratchDir, 'resolve-writer'),
  }],
  run: (job) => buildResolve(job),
  merge: (ctx, [r]) => {
    for (const f of r.files) ctx.written.set(f.path, f);
    ctx.counts.ambiguous_provider_ids = r.ambiguous;
    return r.family;
  },
};

export async function buildResolve(job: ResolveJob): Promise<ResolveResult> {
  const ledger = new Map<string, ContentFile>();
  const spill = GroupSpill.open(job.resolve);
  // The spill's groups are the writer's hash groups, so each group is written as soon as it is gathered.
  if (spill.groups !== RESOLVE_GROUPS) throw new Error(`resolve spill has ${spill.groups} groups, the writer takes ${RESOLVE_GROUPS}`);
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
      // row repeated) and asks for each distinct key's value once.
      const { keyAt, keyLength, hashes } = frameResolveGroup(data, n, g);
      writer.writeGroup(g, data, keyAt, keyLength, hashes, n, (out, order, lo, hi) => {
        if (hi - lo === 1) {
          // [[id, type]], copied from the record: two array headers, the ID's string header and bytes, the type.
          const e = order[lo];
          const ilen = recordIdLength(data, keyAt[e]);
          const from = keyAt[e] + keyLength[e];
          out.ensure(8 + ilen);
          const buf = out.buf;
          let pos = out.pos;
          buf[pos++] = 0x91;
          buf[pos++] = 0x92;
          pos = writeStrHeader(buf, pos, ilen);
          for (let q = 0; q < ilen; q++) buf[pos + q] = data[from + q];
          pos += ilen;
          buf[pos++] = recordType(data, keyAt[e]); // a type index is a positive fixint
          out.pos = pos;
          return;
        }
        const items: [string, number][] = [];
        for (let k = lo; k < hi; k++) items.push(recordItem(data, keyAt[order[k]], keyLength[order[k]]));
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
