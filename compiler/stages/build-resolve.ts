// Stage 3: the resolve index. Records from every partition meet here by key hash, one group at a time, so a
// provider ID that names two entities (the 409 case) is seen whole. It needs only stage 1's output, so it runs in
// a worker thread alongside stage 2.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import { chooseBuckets, GroupedHashedFamilyWriter, HASH_GROUPS } from '../write/bucket-family-writer.ts';
import { POINT_LOOKUP_BUCKET_BYTES, type CompileContext } from '../context.ts';
import type { RedirectInfo, SpillLayout, TablesRead } from './read-tables.ts';
import { parseRecords } from '../read/csv-reader.ts';
import { resolveKey } from '../../common/dist-layout.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import type { ContentFile } from '../write/content-file.ts';
import { runInWorker } from '../worker/run-in-worker.ts';

/** Plain data in, for a worker thread. */
export interface ResolveJob {
  resolve: GroupSpillHandle;
  layout: SpillLayout;
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
    layout: read.resolveLayout,
    entryBytes: read.resolveBytes,
    redirects: [...read.redirects],
    publicDir: ctx.publicDir,
    scratchDir: join(ctx.scratchDir, 'resolve-writer'),
  };
  const done = ctx.options.threads ? runInWorker<ResolveJob, ResolveResult>(new URL('./build-resolve.ts#buildResolve', import.meta.url), job, signal) : buildResolve(job);
  return done.then((r) => {
    for (const f of r.files) ctx.written.set(f.path, f);
    return r;
  });
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
  const { c } = job.layout;
  let ambiguous = 0;
  try {
    for (let g = 0; g < spill.groups; g++) {
      const byKey = new Map<string, [string, number][]>();
      // Lines are `<type index>,<bridges record as read>`; the key is rebuilt rather than stored twice.
      parseRecords(spill.readText(g), true, (f) => {
        const key = resolveKey(f[c.provider], f[c.namespace], f[c.external_id]);
        const item: [string, number] = [f[c.reep_id], +f[0]];
        const list = byKey.get(key);
        if (list) list.push(item);
        else byKey.set(key, [item]);
      });
      spill.release(g);
      const keys: string[] = [];
      const values: [string, number][][] = [];
      for (const [key, list] of byKey) {
        keys.push(key);
        if (list.length === 1) {
          values.push(list);
          continue;
        }
        // One candidate per final entity: a merged ID and its survivor under one key are the same entity.
        const byFinal = new Map<string, [string, number]>();
        for (const item of list) {
          const final = redirects.get(item[0])?.to ?? item[0];
          const prev = byFinal.get(final);
          if (!prev || item[0] === final || (prev[0] !== final && item[0] < prev[0])) byFinal.set(final, item);
        }
        const value = [...byFinal.values()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
        if (value.length > 1) ambiguous++;
        values.push(value);
      }
      writer.writeGroup(g, keys, values);
    }
  } catch (err) {
    await writer.abort();
    throw err;
  }
  spill.dispose();
  const family = await writer.finish();
  return { family, ambiguous, files: [...ledger.values()] };
}
