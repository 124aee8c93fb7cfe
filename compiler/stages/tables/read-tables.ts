// Stage 1: stream every table once and hash-partition its rows by register ID onto disk, checking IDs as they pass.
// Redirects and the set of live IDs stay in memory (a few bytes per ID); every other row goes to its partition.
// The bridges table (half of all rows) and the predecessor's tables are read by worker threads meanwhile.
import { join } from 'node:path';
import { mergeSlack, type CompileContext } from '../../context.ts';
import { sharedCount } from '../../../common/progress.ts';
import { GroupSpill } from '../../write/group-spill.ts';
import { TABLES, type ReleaseInput, type TableName } from '../../read/release-input.ts';
import { runAllInWorkers } from '../../worker/run-in-worker.ts';
import { forEachNoticeBatch } from '../../read/notice-batches.ts';
import { RegisterIdTable } from '../../read/register-id-table.ts';
import type { RedirectInfo, TablesRead } from '../../records/tables-read.ts';
import type { Reader } from './table-reader.ts';
import { readRedirects } from './redirects.ts';
import { readMainTables } from './main-tables.ts';
import { readSide, SIDE_YOUNG_GENERATION_MB, type SideReadJob, type SideReadResult } from './side-tables.ts';

export async function readTables(ctx: CompileContext): Promise<TablesRead> {
  const rel = ctx.release;
  // A bad notice file is refused before the tables cost anything; stage 6 reads and checks them again to write them.
  await forEachNoticeBatch(rel.notices, () => {});
  const redirects = await readRedirects(rel, ctx);
  const priorRedirects = ctx.prior ? await readRedirects(ctx.prior, null) : new Map<string, RedirectInfo>();
  // One count for every reader, this thread's and the side threads', shown as one line.
  const rows = ctx.progress.enabled ? sharedCount() : undefined;
  const side: SideReadJob[] = [{ kind: 'bridges', release: rel, partitions: ctx.options.partitions, redirects: [...redirects], scratchDir: join(ctx.scratchDir, 'read-bridges'), rows }];
  // The predecessor's tables only when its compiled diff base is not there to read instead.
  const readPrior = ctx.prior !== null && !ctx.priorDiffBase;
  if (ctx.prior && readPrior) {
    side.push({ kind: 'prior', release: ctx.prior, partitions: ctx.options.partitions, redirects: [...priorRedirects], scratchDir: join(ctx.scratchDir, 'read-prior'), rows });
  }
  if (rows) ctx.progress.follow(readPrior ? 'read tables (and the prior release\'s)' : 'read tables', rowsToRead(rel, readPrior ? ctx.prior : null), rows, 'rows');
  const abort = new AbortController();
  const sideDone = ctx.options.threads
    ? runAllInWorkers<SideReadJob, SideReadResult>(new URL('./side-tables.ts#readSide', import.meta.url), side, abort.signal, { youngGenerationMb: SIDE_YOUNG_GENERATION_MB })
    : null;
  sideDone?.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled

  const r: Reader = {
    rows,
    slack: ctx.slack,
    partitions: ctx.options.partitions,
    spill: new GroupSpill({ dir: join(ctx.scratchDir, 'partitions'), groups: ctx.options.partitions }),
    layouts: new Map(),
  };
  const out: TablesRead = {
    spills: [r.spill],
    resolve: r.spill, // replaced by the bridges reader's spill below
    layouts: r.layouts,
    resolveBytes: 0,
    redirects,
    priorRedirects,
    providerRoles: new Map(),
    providers: new Set(),
    coverage: [],
  };
  let results: SideReadResult[];
  try {
    // Live IDs → their partition, hashed once rather than for each row that names them. Needed only while the
    // tables are read, so not part of what the later stages hold.
    await readMainTables(r, rel, out, new RegisterIdTable());
    r.spill.seal();
    results = sideDone ? await sideDone : [];
  } catch (e) {
    // The main thread's tables come first, as if read in sequence: its error wins, once the side threads stopped.
    abort.abort();
    await sideDone?.catch(() => {});
    throw e;
  }
  if (!sideDone) for (const job of side) results.push(await readSide(job));
  // Merged in job order, so slack and providers come out the same with or without threads.
  for (const res of results) {
    out.spills.push(GroupSpill.open(res.spill));
    if (res.resolve) out.resolve = GroupSpill.open(res.resolve);
    out.resolveBytes += res.resolveBytes;
    for (const [tag, l] of res.layouts) out.layouts.set(tag, l);
    for (const p of res.providers) out.providers.add(p);
    mergeSlack(ctx, res.slack);
  }
  ctx.progress.end();
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
