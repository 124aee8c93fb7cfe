// Stage 1: stream every table once and hash-partition its rows by register ID onto disk, checking IDs as they pass.
// Redirects and the set of live IDs stay in memory (a few bytes per ID); every other row goes to its partition.
// The bridges table (half of all rows) and the predecessor's tables are read by worker threads meanwhile.
import { join } from 'node:path';
import { columnIndex, readCsvRecords, type CsvRecord } from '../read/csv-reader.ts';
import { RegisterError } from '../../common/errors.ts';
import { REGISTER_ID, isEntityType, ENTITY_TYPES, type EntityType } from '../../common/ids.ts';
import { bucketOf, bucketOfBytes } from '../../common/hash.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { mergeSlack, noteSlack, type CompileContext } from '../context.ts';
import { addShared, sharedCount, type SharedCount } from '../../common/progress.ts';
import { TABLES, type ReleaseInput, type TableName } from '../read/release-input.ts';
import { runAllInWorkers } from '../worker/run-in-worker.ts';
import { addResolveRecord, addResolveRecordIn, RESOLVE_GROUPS } from '../records/resolve-records.ts';
import { addRetiredLine, addRowLine, DROPPED_LAYOUT, layoutOf, TAG, type LineLayout } from '../records/partition-lines.ts';
import { admitsBytes, SCORELINE_FIELDS, scorelineProblem } from '../../common/scoreline.ts';
import { RegisterIdTable } from '../read/register-id-table.ts';
import { FieldInterner } from '../read/field-interner.ts';
import { capsOf } from '../read/cell-caps.ts';
import { forEachNoticeBatch } from '../read/notice-batches.ts';

/** What the redirects table says about one retired ID. */
export interface RedirectInfo {
  /** Final survivor (chains followed), or null for a tombstone. */
  to: string | null;
  reason: string;
}

export interface TablesRead {
  /**
   * Per-entity rows by partition, as partition lines (compiler/records/partition-lines.ts); one spill per reading
   * thread, always in the same order. Lines of one ID may sit in any of them.
   */
  spills: GroupSpill[];
  /** Resolve records (compiler/records/resolve-records.ts) grouped by key hash, written straight from the bridges pass. */
  resolve: GroupSpill;
  /** How to read each tag's lines: its table's columns. */
  layouts: Map<string, LineLayout>;
  /** Estimated bytes of the resolve family's entries, which its bucket count is chosen from. */
  resolveBytes: number;
  redirects: Map<string, RedirectInfo>;
  priorRedirects: Map<string, RedirectInfo>;
  /** provider → role from csv/providers.csv.gz. */
  providerRoles: Map<string, string>;
  /** Every provider seen in bridges or overlay IDs. */
  providers: Set<string>;
  coverage: [string, string, string][];
}

/** The per-type tables, read in this order: a row's tag is TAG.typed(its table's index here). */
export const TYPE_TABLES: [TableName, EntityType][] = [
  ['players', 'player'], ['coaches', 'coach'], ['referees', 'referee'], ['teams', 'team'],
  ['competitions', 'competition'], ['seasons', 'season'], ['stages', 'stage'], ['matches', 'match'],
];
export const partitionOf = (id: string, partitions: number): number => bucketOf(id, partitions);
/** partitionOf field `k` of a record, hashed from its bytes when they are its characters. */
const partitionIn = (r: CsvRecord, k: number, partitions: number): number =>
  r.quoted || !r.ascii ? bucketOf(r.text(k), partitions) : bucketOfBytes(r.buf, r.fieldStart(k), r.ends[k], partitions);
/** The bridges reader packs a live ID's type index into this many low bits beside its partition. */
const TYPE_BITS = 4;
if (ENTITY_TYPES.length > 1 << TYPE_BITS) throw new Error(`more entity types than ${TYPE_BITS} bits hold`);

/**
 * Young generation of a side thread, in MiB (larger than V8's default for a worker). The bridges thread is stage
 * 1's longer half and allocates a row's fields and keys for each of ten million rows at full size: with room to
 * die young they are not promoted and collected again in old space. The same size as stage 2's range workers; the
 * RSS it adds stays below stage 2's peak (bench/HISTORY.md has the measurements).
 */
const SIDE_YOUNG_GENERATION_MB = 192;

/** One table read on a side thread: plain data in and out. */
export interface SideReadJob {
  /** `bridges`: the release's bridges (and, to check them, its live IDs); `prior`: the predecessor's tables. */
  kind: 'bridges' | 'prior';
  release: ReleaseInput;
  partitions: number;
  /** The release's redirects (read and checked on the main thread for `bridges`). */
  redirects: [string, RedirectInfo][];
  scratchDir: string;
  /** Advanced by the rows read, for the progress line. */
  rows?: SharedCount;
}

export interface SideReadResult {
  spill: GroupSpillHandle;
  resolve: GroupSpillHandle | null;
  resolveBytes: number;
  layouts: [string, LineLayout][];
  providers: string[];
  slack: [string, { count: number; example: string }][];
}

/** What reading needs from the compile: where rows go and what is noted. Also built inside worker threads. */
interface Reader {
  /** Rows read so far by every reader of this compile (the progress line's count), when a line shows it. */
  rows: SharedCount | undefined;
  slack: CompileContext['slack'];
  partitions: number;
  spill: GroupSpill;
  layouts: Map<string, LineLayout>;
}

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
    ? runAllInWorkers<SideReadJob, SideReadResult>(new URL('./read-tables.ts#readSide', import.meta.url), side, abort.signal, { youngGenerationMb: SIDE_YOUNG_GENERATION_MB })
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

/** Every table of the release but bridges, on the main thread: entities first, then what is checked against them. */
async function readMainTables(r: Reader, rel: ReleaseInput, out: TablesRead, live: RegisterIdTable): Promise<void> {
  // A row's own bytes go to its partition: copied as read, never decoded and encoded again.
  const put = (p: number, tag: string, f: CsvRecord) => addRowLine(r.spill, p, tag, f);
  const retired = new RegisterIdTable();
  for (const id of out.redirects.keys()) retired.set(id, 0);
  const types = new FieldInterner();
  await spilled(r, rel, false, 'entities', TAG.entity, ['reep_id', 'entity_type', 'status', 'label'], 'reep_id', false, (f, c, row, label) => {
    const k = c.reep_id;
    if (!live.fitsIn(f, k)) checkId(f.text(k), label, row);
    const type = types.values[types.indexIn(f, c.entity_type)];
    if (!isEntityType(type)) throw new RegisterError('compile', `unknown entity_type ${JSON.stringify(type)}`, label, row);
    if (retired.getIn(f, k) >= 0) throw new RegisterError('compile', `register ID ${f.text(k)} is live and also in redirects`, label, row);
    const p = partitionIn(f, k, r.partitions);
    if (!live.addIn(f, k, p)) throw new RegisterError('compile', `duplicate register ID ${f.text(k)}`, label, row);
    put(p, TAG.entity, f);
  });
  for (const [id, red] of out.redirects) {
    if (red.to && !live.has(red.to)) {
      throw new RegisterError('compile', `redirect from ${id} leads to ${red.to}, which is not a live entity`, rel.tables.redirects!.label);
    }
    // Every retired ID gets its stub even when no other row names it.
    addRetiredLine(r.spill, partitionOf(id, r.partitions), TAG.retired, id);
  }
  for (const id of out.priorRedirects.keys()) addRetiredLine(r.spill, partitionOf(id, r.partitions), TAG.priorRetired, id);

  /** The partition of a live ID; -1 (the row noted and dropped) for any other. */
  const known = (f: CsvRecord, k: number, label: string, row: number): number => {
    const p = live.getIn(f, k);
    // A live ID was checked when the entities table was read; only another one needs the pattern test.
    if (p >= 0) return p;
    const id = f.text(k);
    checkId(id, label, row);
    noteSlack(r, label, 'unknown register ID', `row ${row}: ${id}`);
    return -1;
  };

  for (let i = 0; i < TYPE_TABLES.length; i++) {
    const tag = TAG.typed(i);
    const matches = TYPE_TABLES[i][0] === 'matches';
    await spilled(r, rel, false, TYPE_TABLES[i][0], tag, ['reep_id'], 'reep_id', true, (f, c, row, label) => {
      const p = known(f, c.reep_id, label, row);
      if (p < 0) return;
      put(p, tag, f);
      if (matches) checkScoreline(r, live, f, c, row, label, p);
    });
  }
  r.layouts.set(TAG.dropped, DROPPED_LAYOUT);
  await spilled(r, rel, false, 'aliases', TAG.alias, ['reep_id', 'alias', 'kind', 'rank', 'language'], 'reep_id', false, (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.alias, f);
  });
  await table(r, rel, false, 'providers', ['provider', 'role'], (f, c, row, label) => {
    const role = f.text(c.role);
    if (role !== 'canonical_bridge' && role !== 'bridge_only' && role !== 'overlay_only') {
      throw new RegisterError('compile', `unknown provider role ${JSON.stringify(role)}`, label, row);
    }
    out.providerRoles.set(f.text(c.provider), role);
  });
  await table(
    r, rel, false, 'relationships', ['from_id', 'to_id', 'kind'],
    (f, c, row, label) => {
      const fromAt = live.getIn(f, c.from_id);
      const toAt = live.getIn(f, c.to_id);
      if (fromAt < 0) checkId(f.text(c.from_id), label, row);
      if (toAt < 0) checkId(f.text(c.to_id), label, row);
      if (fromAt < 0 || toAt < 0) {
        noteSlack(r, label, 'unknown register ID', `row ${row}: ${f.text(fromAt >= 0 ? c.to_id : c.from_id)}`);
        return;
      }
      put(fromAt, TAG.relFrom, f);
      put(toAt, TAG.relTo, f);
    },
    (header, c) => {
      r.layouts.set(TAG.relFrom, layoutOf(header, c, 'from_id', false));
      r.layouts.set(TAG.relTo, layoutOf(header, c, 'to_id', false));
    },
  );
  await spilled(r, rel, false, 'overlay_links', TAG.link, ['reep_id', 'qid', 'confidence', 'dob_check'], 'reep_id', false, (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.link, f);
  });
  await spilled(r, rel, false, 'overlay_aliases', TAG.overlayAlias, ['reep_id', 'name'], 'reep_id', false, (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.overlayAlias, f);
  });
  await spilled(r, rel, false, 'overlay_xids', TAG.xid, ['reep_id', 'provider', 'property', 'external_id'], 'reep_id', false, (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p < 0) return;
    const provider = f.text(c.provider);
    if (!out.providers.has(provider)) out.providers.add(provider);
    put(p, TAG.xid, f);
  });
  await spilled(r, rel, false, 'observed_clubs', TAG.observed, ['reep_id'], 'reep_id', true, (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.observed, f);
  });
  await table(r, rel, false, 'coverage', ['section', 'key', 'value'], (f, c) => {
    out.coverage.push([f.text(c.section), f.text(c.key), f.text(c.value)]);
  });
}

/**
 * Checks a matches row's scoreline cells (common/scoreline.ts): a value the published enums, counts or dates do not
 * admit, or a side that is not a live entity, is referential slack, noted with its row. Stage 2 drops a bad value to
 * null by the same checks; a side's liveness it cannot see, so a TAG.dropped line tells it.
 */
function checkScoreline(r: Reader, live: RegisterIdTable, f: CsvRecord, c: Record<string, number>, row: number, label: string, p: number): void {
  for (const [name, kind] of SCORELINE_FIELDS) {
    const k = c[name];
    if (k === undefined || f.empty(k)) continue;
    // A live side or a good value is found from its bytes; only another value is made a string.
    if (kind === 'id' ? live.getIn(f, k) >= 0 : !f.quoted && f.ascii && admitsBytes(kind, f.buf, f.fieldStart(k), f.ends[k])) continue;
    const v = f.text(k);
    const problem = scorelineProblem(kind, v) ?? (kind === 'id' ? 'not a live register ID' : null);
    if (problem === null) continue;
    noteSlack(r, label, `${name} ${problem}`, `row ${row}: ${JSON.stringify(v.slice(0, 40))}`);
    if (kind === 'id' && REGISTER_ID.test(v)) r.spill.addTaggedLine(p, TAG.dropped, `${f.text(c.reep_id)},${name}`);
  }
}

/** Reads one side job's tables (in a worker thread, or inline without threads). */
export async function readSide(job: SideReadJob): Promise<SideReadResult> {
  const r: Reader = {
    rows: job.rows,
    slack: new Map(),
    partitions: job.partitions,
    spill: new GroupSpill({ dir: join(job.scratchDir, 'partitions'), groups: job.partitions }),
    layouts: new Map(),
  };
  const put = (f: CsvRecord, k: number, tag: string) => addRowLine(r.spill, partitionIn(f, k, r.partitions), tag, f);
  const providers = new FieldInterner();
  let resolve: GroupSpill | null = null;
  let resolveBytes = 0;
  const rel = job.release;

  if (job.kind === 'prior') {
    // The predecessor, for the changelog: only what the diff compares (state, label, bridges), and only the
    // bridges its own compile kept (of live or merged IDs), as its diff base would hold them.
    const live = new RegisterIdTable();
    const redirects = new Map(job.redirects);
    await spilled(r, rel, true, 'entities', TAG.priorEntity, ['reep_id', 'entity_type', 'status', 'label'], 'reep_id', false, (f, c) => {
      // An ID of another shape cannot name anything in this release; its row is still the predecessor's.
      if (live.fitsIn(f, c.reep_id)) live.setIn(f, c.reep_id, 0);
      put(f, c.reep_id, TAG.priorEntity);
    });
    await spilled(r, rel, true, 'bridges', TAG.priorBridge, ['provider', 'namespace', 'external_id', 'reep_id'], 'reep_id', false, (f, c) => {
      if (live.getIn(f, c.reep_id) >= 0 || redirects.get(f.text(c.reep_id))?.to) put(f, c.reep_id, TAG.priorBridge);
    });
    // Matches' scorelines and fixtures, for score_updated and fixture_updated.
    await spilled(r, rel, true, 'matches', TAG.priorMatch, ['reep_id'], 'reep_id', true, (f, c) => {
      if (live.getIn(f, c.reep_id) >= 0) put(f, c.reep_id, TAG.priorMatch);
    });
  } else {
    // Live IDs with their partition and type (packed: partition << TYPE_BITS | type index), read again here rather than
    // shipped across threads; the main thread checks the entities table, so a bad row there is reported from there.
    const live = new RegisterIdTable();
    const types = new FieldInterner();
    await table(r, rel, false, 'entities', ['reep_id', 'entity_type'], (f, c) => {
      const type = ENTITY_TYPES.indexOf(types.values[types.indexIn(f, c.entity_type)] as EntityType);
      if (type >= 0 && live.fitsIn(f, c.reep_id)) live.setIn(f, c.reep_id, (partitionIn(f, c.reep_id, r.partitions) << TYPE_BITS) | type);
    });
    const redirects = new Map(job.redirects);
    resolve = new GroupSpill({ dir: join(job.scratchDir, 'resolve'), groups: RESOLVE_GROUPS });
    await spilled(r, rel, false, 'bridges', TAG.bridge, ['provider', 'namespace', 'external_id', 'reep_id', 'rung'], 'reep_id', false, (f, c, row, label) => {
      // This thread's live IDs are unchecked copies, but the main thread refuses a release with a bad one.
      const packed = live.getIn(f, c.reep_id);
      const id = packed >= 0 ? '' : f.text(c.reep_id);
      if (packed < 0) checkId(id, label, row);
      if (f.empty(c.provider)) throw new RegisterError('compile', 'empty provider', label, row);
      if (f.empty(c.external_id)) throw new RegisterError('compile', 'empty external_id', label, row);
      const final = packed >= 0 ? null : redirects.get(id)?.to;
      if (packed >= 0 || final) {
        const provider = providers.indexIn(f, c.provider);
        addRowLine(r.spill, packed >= 0 ? packed >> TYPE_BITS : partitionOf(id, r.partitions), TAG.bridge, f);
        // The resolve index needs no per-entity grouping, only the final entity's type: group it by key now.
        const type = (packed >= 0 ? packed : live.get(final!)) & ((1 << TYPE_BITS) - 1);
        resolveBytes +=
          !f.quoted && f.ascii
            ? addResolveRecordIn(resolve!, f, c.provider, c.namespace, c.external_id, c.reep_id, type)
            : addResolveRecord(resolve!, providers.values[provider], f.text(c.namespace), f.text(c.external_id), f.text(c.reep_id), type);
      } else if (redirects.has(id)) {
        noteSlack(r, label, 'bridge to a tombstoned register ID', `row ${row}: ${id}`);
      } else {
        noteSlack(r, label, 'unknown register ID', `row ${row}: ${id}`);
      }
    });
    resolve.seal();
  }
  r.spill.seal();
  return { spill: r.spill.handle(), resolve: resolve?.handle() ?? null, resolveBytes, layouts: [...r.layouts], providers: providers.values, slack: [...r.slack] };
}

function checkId(id: string, label: string, row: number): void {
  if (!REGISTER_ID.test(id)) throw new RegisterError('compile', `bad register ID ${JSON.stringify(id)}`, label, row);
}

/**
 * A redirect row must be one of the two kinds the format has: a merge (`merged`, to the survivor's ID) or a
 * tombstone (`de_corroborated`, with no target). Anything else would publish an ID whose fate is a guess.
 */
function checkRedirect(from: string, to: string, reason: string, label: string, row: number): void {
  const fail = (why: string): never => {
    throw new RegisterError('compile', why, label, row);
  };
  if (reason === 'merged') {
    if (to === '') fail(`merged redirect of ${from} has no to_id`);
    if (to === from) fail(`redirect cycle: ${from} redirects to itself`);
  } else if (reason === 'de_corroborated') {
    if (to !== '') fail(`de_corroborated redirect of ${from} names to_id ${to}; a tombstone has none`);
  } else {
    fail(`redirect of ${from} has reason ${JSON.stringify(reason)}; it must be merged (with a to_id) or de_corroborated (without)`);
  }
}

/** Rows counted between two adds to the shared count, less one. */
const ROWS_STEP_MASK = 0x3fff;

type RowFn = (f: CsvRecord, c: Record<string, number>, row: number, label: string) => void;

/** Reads one table whose rows are spilled under `tag`, keyed by `idColumn`, and records its layout. */
function spilled(r: Reader, rel: ReleaseInput, prior: boolean, name: TableName, tag: string, required: string[], idColumn: string, withAttrs: boolean, fn: RowFn): Promise<void> {
  return table(r, rel, prior, name, required, fn, (header, c) => r.layouts.set(tag, layoutOf(header, c, idColumn, withAttrs)));
}

async function table(
  r: Reader, rel: ReleaseInput, prior: boolean, name: TableName, required: string[], fn: RowFn,
  onHeader?: (header: string[], c: Record<string, number>) => void,
): Promise<void> {
  const t = rel.tables[name];
  if (!t) return;
  let c: Record<string, number> = Object.create(null);
  const stage = prior ? `${rel.stamp}/${t.label}` : t.label;
  let rowsRead = 0;
  await readCsvRecords(t.path, stage, {
    caps: (h) => capsOf(name, h.map((x) => x.trim())),
    header: (h) => {
      const header = h.map((x) => x.trim());
      c = columnIndex(header, required, stage);
      onHeader?.(header, c);
    },
    record: (f, row) => {
      fn(f, c, row, stage);
      // In steps: one atomic add per row would cost more than the count is worth.
      if ((++rowsRead & ROWS_STEP_MASK) === 0) addShared(r.rows, ROWS_STEP_MASK + 1);
    },
  });
  addShared(r.rows, rowsRead & ROWS_STEP_MASK);
}

/** Reads redirects: merges (chains followed to the final survivor) and tombstones. A cycle is an error. */
async function readRedirects(rel: ReleaseInput, ctx: CompileContext | null): Promise<Map<string, RedirectInfo>> {
  const raw = new Map<string, { to: string; reason: string; row: number }>();
  const t = rel.tables.redirects;
  if (!t) return new Map();
  const label = ctx ? t.label : `${rel.stamp}/${t.label}`;
  let c: Record<string, number> = Object.create(null);
  await readCsvRecords(t.path, label, {
    caps: (h) => capsOf('redirects', h),
    header: (h) => {
      c = columnIndex(h, ['from_id', 'to_id', 'reason'], label);
    },
    record: (f, row) => {
      const from = f.text(c.from_id);
      const to = f.text(c.to_id);
      const reason = f.text(c.reason);
      // The predecessor's rows were checked when it was compiled; only this release's are held to the rules.
      if (ctx) {
        checkId(from, label, row);
        if (to !== '') checkId(to, label, row);
        checkRedirect(from, to, reason, label, row);
        if (raw.has(from)) throw new RegisterError('compile', `register ID ${from} is redirected twice`, label, row);
      }
      raw.set(from, { to, reason, row });
    },
  });
  const out = new Map<string, RedirectInfo>();
  for (const [from, r] of raw) {
    if (r.to === '') {
      out.set(from, { to: null, reason: r.reason });
      continue;
    }
    // Follow the chain; a repeat means a cycle, which would leave an ID resolving nowhere.
    const seen = new Set([from]);
    let to = r.to;
    let tomb = false;
    for (let next = raw.get(to); next; next = raw.get(to)) {
      if (seen.has(to)) throw new RegisterError('compile', `redirect cycle through ${[...seen].join(' → ')} → ${to}`, label, r.row);
      seen.add(to);
      if (next.to === '') {
        tomb = true;
        break;
      }
      to = next.to;
    }
    out.set(from, tomb ? { to: null, reason: r.reason } : { to, reason: r.reason });
  }
  return out;
}
