// Stage: the match index of GET /matches (common/match-index.ts). Stage 2 wrote each live match to its year's group
// and each team, competition, season and stage to the refs group (compiler/records/match-records.ts), and noted
// where the rows first name each provider. The rows are numbered by (played_on, reep_id), so a year group's first
// ordinal is the count of the groups before it, and the providers' numbers are known before any row is built: the
// year groups are cut into MATCH_JOBS contiguous runs, each built in its own thread (parse, sort, build and encode its
// rows, spill each row's list entries by anchor hash), and the last step stitches the encoded rows in order into the
// rows family and writes each anchor's date-ordered runs and the refs. Memory holds the refs, one year group per job
// and one anchor group at a time; the bytes are the same for any number of jobs.
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { fnv1a32 } from '../../common/hash.ts';
import {
  entryMeta, LIST_ENTRIES_PER_BUCKET, matchRef, matchRow, metaDay, ROWS_PER_BUCKET, stateCode, type MatchesDoc, type MatchRowValue,
} from '../../common/match-index.ts';
import { HashedFamilyWriter } from '../write/hashed-family-writer.ts';
import { OrdinalFamilyWriter } from '../write/ordinal-family-writer.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { MsgpackOut } from '../write/msgpack-out.ts';
import type { ContentFile } from '../write/content-file.ts';
import { POINT_LOOKUP_BUCKET_BYTES } from '../context.ts';
import {
  MATCH_RECORD_GROUPS, providerOrder, REFS_GROUP, rowDayOf, type MatchRecord, type MatchRecordsHandle, type RefRecord,
} from '../records/match-records.ts';
import type { ThreadedStage } from '../run-stages.ts';
import type { RedirectInfo } from '../records/tables-read.ts';

/**
 * Threads the rows are built in by default (CompileOptions.matchJobs). Two: the stage starts when stage 2's two
 * ranges end, and on a 2-core machine one thread alone left a core idle for most of the compile's tail.
 */
export const MATCH_JOBS = 2;

/** Plain data in, for a worker thread: the rows of year groups [from, to), the first with ordinal `base`. */
export interface MatchesJob {
  /** Stage 2's match records, one spill per range. */
  records: GroupSpillHandle[];
  redirects: [string, RedirectInfo][];
  /** Every provider the rows name, in the order of their numbers. */
  providers: string[];
  from: number;
  to: number;
  base: number;
  /** This job's own scratch directory. */
  scratchDir: string;
}

/** One job's rows, encoded back to back in a file, each row's byte length, and its rows' list entries. */
export interface MatchRowsPart {
  rows: string;
  lengths: Uint32Array;
  entries: GroupSpillHandle;
}

interface MatchesInput {
  records: MatchRecordsHandle[];
  redirects: Map<string, RedirectInfo>;
}

const TEAM = ENTITY_TYPES.indexOf('team');
const COMPETITION = ENTITY_TYPES.indexOf('competition');
const SEASON = ENTITY_TYPES.indexOf('season');
const STAGE = ENTITY_TYPES.indexOf('stage');
/** List entries are spilled in this many groups by anchor hash: one group's entries are held at a time. */
const ANCHOR_GROUPS = 256;
/** Encoded rows are written out of a job's buffer in writes of about this size, and read back in reads of it. */
const ROW_IO_BYTES = 4 * 1024 * 1024;
const INTEGER_OR_NULL = (v: string | number | null): number | null => (typeof v === 'number' && v >= 0 ? v : null);
const TEXT_OR_NULL = (v: string | number | null): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Stage: the match index; needs stage 2's records and the redirects only, so it runs beside the later stages. */
export const matchesStage: ThreadedStage<MatchesInput, MatchesJob, MatchRowsPart, MatchesDoc> = {
  worker: new URL('./build-matches.ts#buildMatchRows', import.meta.url),
  jobs: (ctx, input) => matchJobs(input, join(ctx.scratchDir, 'matches'), ctx.options.matchJobs),
  run: (job) => buildMatchRows(job),
  merge: async (ctx, parts, input) => {
    const r = await writeMatchIndex(parts, input, ctx.publicDir, join(ctx.scratchDir, 'matches', 'writers'));
    for (const f of r.files) ctx.written.set(f.path, f);
    return r.doc;
  },
};

/** The year groups cut into at most `count` contiguous runs of about as many rows each (none empty). */
export function matchJobs(input: MatchesInput, scratchDir: string, count: number): MatchesJob[] {
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`the match index is built in a positive whole number of jobs, not ${count}`);
  const spills = input.records.map((h) => h.spill);
  for (const s of spills) if (s.counts.length !== MATCH_RECORD_GROUPS) throw new Error(`match records have ${s.counts.length} groups, this stage reads ${MATCH_RECORD_GROUPS}`);
  const rowsIn = (g: number) => spills.reduce((n, s) => n + s.counts[g], 0);
  let total = 0;
  for (let g = 0; g < REFS_GROUP; g++) total += rowsIn(g);
  const providers = providerOrder(input.records);
  const redirects = [...input.redirects];
  const jobs: MatchesJob[] = [];
  let to = 0;
  let base = 0;
  for (let j = 0; j < count && to < REFS_GROUP; j++) {
    const from = to;
    let rows = 0;
    const share = j === count - 1 ? Infinity : Math.ceil((total - base) / (count - j));
    while (to < REFS_GROUP && rows < share) rows += rowsIn(to++);
    // Only empty groups are left: they have no rows to build.
    if (rows === 0) break;
    jobs.push({ records: spills, redirects, providers, from, to, base, scratchDir: join(scratchDir, `job-${j}`) });
    base += rows;
  }
  return jobs;
}

interface Ref {
  type: number;
  label: string;
  targets: string[];
  /** A stage's or season's place in the structure above it, found once the refs are loaded. */
  season: string | null;
  competition: string | null;
}

/** Every range's refs, in range order and each range's in the order written. */
function readRefs(spills: GroupSpill[]): Map<string, Ref> {
  const refs = new Map<string, Ref>();
  for (const s of spills) {
    for (const [id, type, label, targets] of JSON.parse(s.readJsonArray(REFS_GROUP)) as RefRecord[]) {
      refs.set(id, { type, label, targets, season: null, competition: null });
    }
  }
  return refs;
}

/** Builds, encodes and writes out the rows of one run of year groups (a worker thread's job, or run inline). */
export async function buildMatchRows(job: MatchesJob): Promise<MatchRowsPart> {
  const spills = job.records.map((h) => GroupSpill.open(h));
  const redirects = new Map(job.redirects);
  // A merged ID stands for its survivor; a tombstoned one for nothing.
  const final = (id: string | null): string | null => {
    if (!id) return null;
    const r = redirects.get(id);
    return r ? r.to : id;
  };
  const refs = readRefs(spills);
  /** The smallest live target of `type` among `targets` (after merges): a match or stage names one in practice. */
  const linked = (targets: readonly string[], type: number): string | null => {
    let best: string | null = null;
    for (const t of targets) {
      const id = final(t);
      if (id !== null && refs.get(id)?.type === type && (best === null || id < best)) best = id;
    }
    return best;
  };
  // Seasons first: a stage's competition may come through its season.
  for (const r of refs.values()) if (r.type === SEASON) r.competition = linked(r.targets, COMPETITION);
  for (const r of refs.values()) {
    if (r.type !== STAGE) continue;
    r.season = linked(r.targets, SEASON);
    r.competition = linked(r.targets, COMPETITION) ?? (r.season ? refs.get(r.season)!.competition : null);
  }
  const providerIndex = new Map(job.providers.map((p, i) => [p, i]));

  mkdirSync(job.scratchDir, { recursive: true });
  const rowsPath = join(job.scratchDir, 'rows.msgpack');
  let count = 0;
  for (let g = job.from; g < job.to; g++) for (const s of spills) count += s.count(g);
  const lengths = new Uint32Array(count);
  const entries = new GroupSpill({ dir: join(job.scratchDir, 'list-entries'), groups: ANCHOR_GROUPS });
  const out = new MsgpackOut(ROW_IO_BYTES + 64 * 1024);
  const fd = openSync(rowsPath, 'w');
  try {
    let n = 0;
    // A few hundred dates a year recur over ~1.5M matches: each is worked out once.
    const days = new Map<string | number | null, number>();
    const dayOfCell = (cell: string | number | null): number => {
      let d = days.get(cell);
      if (d === undefined) days.set(cell, (d = rowDayOf(cell)));
      return d;
    };
    for (let g = job.from; g < job.to; g++) {
      // A group holds one year's dates (or the undated and malformed ones): the map stays that small.
      days.clear();
      // The group's records by day, days in first-seen order: sorting a few hundred days and then each day's few
      // records by reep_id costs far fewer comparisons than one sort of the year by (day, reep_id).
      const byDay = new Map<number, MatchRecord[]>();
      for (const s of spills) {
        if (s.count(g) > 0) {
          for (const rec of JSON.parse(s.readJsonArray(g)) as MatchRecord[]) {
            const day = dayOfCell(rec[1][8]);
            const list = byDay.get(day);
            if (list) list.push(rec);
            else byDay.set(day, [rec]);
          }
        }
        s.release(g);
      }
      // Ordinals follow (date, reep_id); undated matches (day 0) are the last group, by reep_id. Both sorts are
      // stable, so records equal in both keep their place, as in one sort by (day, reep_id).
      for (const day of [...byDay.keys()].sort((x, y) => x - y)) {
        for (const rec of byDay.get(day)!.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))) {
          const value = rowOf(rec, day, refs, final, linked, providerIndex);
          const at = out.pos;
          out.value(value);
          lengths[n] = out.pos - at;
          const ordinal = job.base + n++;
          // The home team, the away team (once, should a team meet itself), the competition and the season.
          addEntry(entries, value[3], ordinal, entryMeta(day, value[2], true));
          if (value[4] !== value[3]) addEntry(entries, value[4], ordinal, entryMeta(day, value[2], false));
          addEntry(entries, value[5], ordinal, entryMeta(day, value[2], false));
          addEntry(entries, value[6], ordinal, entryMeta(day, value[2], false));
          if (out.pos >= ROW_IO_BYTES) {
            writeAll(fd, out.bytes());
            out.pos = 0;
          }
        }
      }
    }
    if (n !== count) throw new Error(`match rows of year groups ${job.from}-${job.to}: ${n} built, ${count} recorded`);
    writeAll(fd, out.bytes());
    entries.seal();
  } catch (err) {
    entries.dispose();
    throw err;
  } finally {
    closeSync(fd);
  }
  return { rows: rowsPath, lengths, entries: entries.handle() };
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

/**
 * The match index's families from the jobs' parts, in job (so ordinal) order: the rows as encoded, each anchor's
 * two runs, and the refs.
 */
async function writeMatchIndex(parts: MatchRowsPart[], input: MatchesInput, publicDir: string, tmpDir: string): Promise<{ doc: MatchesDoc; files: ContentFile[] }> {
  const spills = input.records.map((h) => GroupSpill.open(h.spill));
  const entrySpills = parts.map((p) => GroupSpill.open(p.entries));
  const ledger = new Map<string, ContentFile>();
  const rows = new OrdinalFamilyWriter({ root: publicDir, name: 'matches/rows', tmpDir, perBucket: ROWS_PER_BUCKET, ledger });
  const lists = new OrdinalFamilyWriter({ root: publicDir, name: 'matches/lists', tmpDir, perBucket: LIST_ENTRIES_PER_BUCKET, ledger });
  const refFamily = new HashedFamilyWriter({ root: publicDir, name: 'matches/refs', tmpDir, targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger });
  try {
    for (const part of parts) {
      stitchRows(rows, part);
      rmSync(part.rows, { force: true });
    }

    // Each anchor's two runs, anchors in hash-group order and by ID within a group.
    const placed = new Map<string, [number, number]>();
    for (let g = 0; g < ANCHOR_GROUPS; g++) {
      const byAnchor = new Map<string, number[]>();
      // The jobs' entries, in job order, are in ordinal order.
      for (const es of entrySpills) {
        const data = es.readBytes(g);
        es.release(g);
        for (let at = 0; at < data.length; at += ENTRY_RECORD) {
          const anchor = data.toString('latin1', at, at + ID_BYTES);
          let list = byAnchor.get(anchor);
          if (!list) byAnchor.set(anchor, (list = []));
          list.push(data.readUInt32LE(at + ID_BYTES), data.readUInt32LE(at + ID_BYTES + 4));
        }
      }
      for (const anchor of [...byAnchor.keys()].sort()) {
        const flat = byAnchor.get(anchor)!;
        const n = flat.length / 2;
        placed.set(anchor, [lists.entries, n]);
        // Entries are in ordinal order: the ascending run as it is.
        for (let i = 0; i < flat.length; i += 2) lists.pushPair(flat[i], flat[i + 1]);
        // The descending run from the ascending one without a sort: its days from the last, each day's entries in
        // their own (reep_id) order, then the undated ones, which close both runs.
        let dated = n;
        while (dated > 0 && metaDay(flat[2 * dated - 1]) === 0) dated--;
        for (let end = dated; end > 0; ) {
          let start = end - 1;
          while (start > 0 && metaDay(flat[2 * start - 1]) === metaDay(flat[2 * end - 1])) start--;
          for (let k = start; k < end; k++) lists.pushPair(flat[2 * k], flat[2 * k + 1]);
          end = start;
        }
        for (let k = dated; k < n; k++) lists.pushPair(flat[2 * k], flat[2 * k + 1]);
      }
    }
    for (const [id, r] of readRefs(spills)) {
      const [start, n] = placed.get(id) ?? [0, 0];
      refFamily.add(id, matchRef({ typeIndex: r.type, label: r.label, start, count: n }));
    }
    const count = rows.entries;
    const rowFamily = await rows.finish();
    const listFamily = await lists.finish();
    const refsFamily = await refFamily.finish();
    const generation = ledger.get(rowFamily.pack)?.sha256;
    if (!generation) throw new Error(`the match rows pack ${rowFamily.pack} was not hashed as it was written`);
    for (const s of spills) s.dispose();
    for (const es of entrySpills) es.dispose();
    return {
      doc: { rows: rowFamily, lists: listFamily, refs: refsFamily, count, providers: providerOrder(input.records), generation },
      files: [...ledger.values()],
    };
  } catch (err) {
    await Promise.all([rows.abort(), lists.abort(), refFamily.abort()]);
    for (const es of entrySpills) es.dispose();
    throw err;
  }
}

/** Pushes one job's encoded rows, read back in ROW_IO_BYTES reads, into the rows family. */
function stitchRows(rows: OrdinalFamilyWriter, part: MatchRowsPart): void {
  const fd = openSync(part.rows, 'r');
  try {
    let buf = Buffer.allocUnsafe(ROW_IO_BYTES);
    let lo = 0;
    let hi = 0;
    for (const len of part.lengths) {
      if (hi - lo < len) {
        // Keep the unread tail, then fill the rest (a row longer than the buffer gets a bigger one).
        const keep = hi - lo;
        const next = len > buf.length ? Buffer.allocUnsafe(len) : buf;
        buf.copy(next, 0, lo, hi);
        buf = next;
        lo = 0;
        hi = keep;
        while (hi < len) {
          const got = readSync(fd, buf, hi, buf.length - hi, null);
          if (got === 0) throw new Error(`match rows file ${part.rows} ends before its last row`);
          hi += got;
        }
      }
      rows.pushEncoded(buf, lo, lo + len);
      lo += len;
    }
  } finally {
    closeSync(fd);
  }
}

/** A list entry as spilled: the anchor's register ID (16 ASCII bytes, checked in stage 1), ordinal, meta (u32 LE). */
const ID_BYTES = 16;
const ENTRY_RECORD = ID_BYTES + 8;

/** Spills one list entry to its anchor's hash group, as a binary record (12M of them at full size). */
function addEntry(entries: GroupSpill, anchor: string | null, ordinal: number, meta: number): void {
  if (anchor === null) return;
  if (anchor.length !== ID_BYTES) throw new Error(`list anchor ${JSON.stringify(anchor)} is not a register ID`);
  const buf = entries.reserve(fnv1a32(anchor) >>> 24, ENTRY_RECORD);
  const at = entries.cursor;
  for (let i = 0; i < ID_BYTES; i++) buf[at + i] = anchor.charCodeAt(i);
  buf.writeUInt32LE(ordinal, at + ID_BYTES);
  buf.writeUInt32LE(meta, at + ID_BYTES + 4);
  entries.commit(at + ENTRY_RECORD);
}

/** A match's row: its scoreline as its shard states it, its sides and structure resolved through the refs. */
function rowOf(
  rec: MatchRecord, day: number, refs: Map<string, Ref>, final: (id: string | null) => string | null,
  linked: (targets: readonly string[], type: number) => string | null, providerIndex: Map<string, number>,
): MatchRowValue {
  const [id, s, state, leg, aggregateOf, targets, bridges] = rec;
  const home = final(TEXT_OR_NULL(s[6]));
  const away = final(TEXT_OR_NULL(s[7]));
  const stage = linked(targets, STAGE);
  const stageRef = stage ? refs.get(stage)! : null;
  const season = linked(targets, SEASON) ?? stageRef?.season ?? null;
  const competition = linked(targets, COMPETITION) ?? (season ? refs.get(season)!.competition : null) ?? stageRef?.competition ?? null;
  const flat: (string | number)[] = [];
  for (let i = 0; i < bridges.length; i += 3) {
    const p = providerIndex.get(bridges[i]);
    if (p === undefined) throw new Error(`match ${id} names provider ${JSON.stringify(bridges[i])}, which stage 2 did not note`);
    flat.push(p, bridges[i + 1], bridges[i + 2]);
  }
  return matchRow({
    id, playedOn: day === 0 ? null : TEXT_OR_NULL(s[8]), state: stateCode(state),
    home: home !== null && refs.get(home)?.type === TEAM ? home : null, away: away !== null && refs.get(away)?.type === TEAM ? away : null,
    competition, season, stage,
    homeScore: INTEGER_OR_NULL(s[0]), awayScore: INTEGER_OR_NULL(s[1]), resultForm: TEXT_OR_NULL(s[2]),
    shootoutHome: INTEGER_OR_NULL(s[3]), shootoutAway: INTEGER_OR_NULL(s[4]), scoreBasis: TEXT_OR_NULL(s[5]),
    leg: leg === '1' || leg === '2' ? leg : null, aggregateOf: TEXT_OR_NULL(aggregateOf), bridges: flat,
  });
}
