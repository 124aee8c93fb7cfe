// Stage 1: stream every table once and hash-partition its rows by register ID onto disk, checking IDs as they pass.
// Redirects and the set of live IDs stay in memory (a few bytes per ID); every other row goes to its partition.
// Its steps (compiler/compile-release.ts runs them in its step list): the redirects first; then the bridges table
// (half of all rows) and the predecessor's tables in side threads, while this thread reads the rest; then the join.
// When a step fails, the side threads are stopped before its error is thrown, so the main thread's error wins as if
// the tables were read in sequence.
import { join } from 'node:path';
import { mergeSlack, type CompileContext } from '../../context.ts';
import { sharedCount, type SharedCount } from '../../../common/progress.ts';
import { GroupSpill } from '../../write/group-spill.ts';
import { TABLES, type ReleaseInput, type TableName } from '../../read/release-input.ts';
import type { ThreadedStage } from '../../run-stages.ts';
import { forEachNoticeBatch } from '../../read/notice-batches.ts';
import { RegisterIdTable } from '../../read/register-id-table.ts';
import type { RedirectInfo, TablesRead } from '../../records/tables-read.ts';
import type { Reader } from './table-reader.ts';
import { readRedirects } from './redirects.ts';
import { readMainTables } from './main-tables.ts';
import { readSide, SIDE_YOUNG_GENERATION_MB, type SideReadJob, type SideReadResult } from './side-tables.ts';

/** Stage 1's first step: what every reader of the tables needs before it starts. */
export interface RedirectsRead {
  redirects: Map<string, RedirectInfo>;
  priorRedirects: Map<string, RedirectInfo>;
  /** Whether the predecessor's tables are read (when its compiled diff base is not there to read instead). */
  readPrior: boolean;
  /** One count for every reader, this thread's and the side threads', shown as one line (when a line shows it). */
  rows: SharedCount | undefined;
}

/** Refuses a bad notice file, then reads this release's redirects (checked) and the predecessor's. */
export async function readRedirectTables(ctx: CompileContext): Promise<RedirectsRead> {
  // A bad notice file is refused before the tables cost anything; stage 6 reads and checks them again to write them.
  await forEachNoticeBatch(ctx.release.notices, () => {});
  const redirects = await readRedirects(ctx.release, ctx);
  const priorRedirects = ctx.prior ? await readRedirects(ctx.prior, null) : new Map<string, RedirectInfo>();
  const readPrior = ctx.prior !== null && !ctx.priorDiffBase;
  return { redirects, priorRedirects, readPrior, rows: ctx.progress.enabled ? sharedCount() : undefined };
}

/**
 * The side threads' share of stage 1, run alongside the main thread's: the bridges (half of all rows) and, when
 * read, the predecessor's tables, one job each, plain data in and out.
 */
export const sideTablesStage: ThreadedStage<RedirectsRead, SideReadJob, SideReadResult, SideReadResult[]> = {
  worker: new URL('./side-tables.ts#readSide', import.meta.url),
  youngGenerationMb: SIDE_YOUNG_GENERATION_MB,
  jobs(ctx, input) {
    const { partitions } = ctx.options;
    const jobs: SideReadJob[] = [
      { kind: 'bridges', release: ctx.release, partitions, redirects: [...input.redirects], scratchDir: join(ctx.scratchDir, 'read-bridges'), rows: input.rows },
    ];
    if (ctx.prior && input.readPrior) {
      jobs.push({ kind: 'prior', release: ctx.prior, partitions, redirects: [...input.priorRedirects], scratchDir: join(ctx.scratchDir, 'read-prior'), rows: input.rows });
    }
    return jobs;
  },
  run: readSide,
  merge: (_ctx, results) => results,
};

/** Every table but bridges, on the compile's own thread (main-tables.ts), while the side threads read theirs. */
export async function readOwnTables(ctx: CompileContext, input: RedirectsRead): Promise<TablesRead> {
  const rel = ctx.release;
  const { rows } = input;
  if (rows) ctx.progress.follow(input.readPrior ? 'read tables (and the prior release\'s)' : 'read tables', rowsToRead(rel, input.readPrior ? ctx.prior : null), rows, 'rows');
  const r: Reader = {
    rows,
    slack: ctx.slack,
    partitions: ctx.options.partitions,
    spill: new GroupSpill({ dir: join(ctx.scratchDir, 'partitions'), groups: ctx.options.partitions }),
    layouts: new Map(),
  };
  const out: TablesRead = {
    spills: [r.spill],
    resolve: r.spill, // replaced by the bridges reader's spill in joinTables
    layouts: r.layouts,
    resolveBytes: 0,
    redirects: input.redirects,
    priorRedirects: input.priorRedirects,
    providerRoles: new Map(),
    providers: new Set(),
    coverage: [],
  };
  // Live IDs → their partition, hashed once rather than for each row that names them. Needed only while the
  // tables are read, so not part of what the later stages hold.
  await readMainTables(r, rel, out, new RegisterIdTable());
  r.spill.seal();
  return out;
}

/** Stage 1's output: the main thread's tables, then the side threads' results merged in job order. */
export function joinTables(ctx: CompileContext, input: { own: TablesRead; side: SideReadResult[] }): TablesRead {
  const out = input.own;
  // In job order, so slack and providers come out the same with or without threads.
  for (const res of input.side) {
    out.spills.push(GroupSpill.open(res.spill));
    if (res.resolve) out.resolve = GroupSpill.open(res.resolve);
    out.resolveBytes += res.resolveBytes;
    for (const [tag, l] of res.layouts) out.layouts.set(tag, l);
    for (const p of res.providers) out.providers.add(p);
    mergeSlack(ctx, res.slack);
  }
  return out;
}

/**
 * Rows the readers pass through table(), as the manifests count them (null when one does not): every table but
 * redirects (read apart, before), the entities twice (the bridges reader reads them again), and the predecessor's
 * entities and bridges when its tables are read.
 */
function rowsToRead(rel: ReleaseInput, prior: ReleaseInput | null): number | null {
  const names: [ReleaseInput, TableName][] = TABLES.filter((t) => t !== 'redirects').map((t) => [rel, t]);
  names.push([rel, 'entities']);
  if (prior) names.push([prior, 'entities'], [prior, 'bridges']);
  let total = 0;
  for (const [r, t] of names) {
    const table = r.tables[t];
    if (!table) continue;
    if (table.rows === undefined) return null;
    total += table.rows;
  }
  return total;
}
