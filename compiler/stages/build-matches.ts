// Stage: the match index of GET /matches (common/match-index.ts). Stage 2 wrote each live match to its year's group
// and each team, competition, season and stage to the refs group (compiler/records/match-records.ts), and noted
// where the rows first name each provider. The rows are numbered by (played_on, reep_id), so a year group's first
// ordinal is the count of the groups before it, and the providers' numbers are known before any row is built: the
// year groups are cut into MATCH_JOBS contiguous runs, each built in its own thread (parse, sort, build and encode its
// rows, spill each row's list entries, with a copy of the row, by anchor hash), and the last step hashes the encoded
// rows in order into the generation and writes each anchor's date-ordered runs, its row copies and the refs: teams
// and competitions first, then seasons, so a season that is one block of its competition's copies points into them.
// Memory holds the refs, one year group per job and one anchor group at a time; the bytes are the same for any
// number of jobs.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { fnv1a32 } from '../../common/hash.ts';
import {
  entryDigests, entryMeta, GENERATION_ROWS_PER_GROUP, LIST_ENTRIES_PER_BUCKET, LIST_ENTRY_BYTES, matchRef, matchRow, metaDay, ROWS_PER_BUCKET, stateCode,
  type MatchesDoc, type MatchRowValue,
} from '../../common/match-index.ts';
import { HashedFamilyWriter } from '../write/hashed-family-writer.ts';
import { OrdinalFamilyWriter } from '../write/ordinal-family-writer.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { MsgpackOut, writeArrayHeader } from '../write/msgpack-out.ts';
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

/**
 * One job's rows, encoded back to back in a file (for the generation), each row's byte length, and its rows' list
 * entries with their row copies: a team's or competition's in `entries`, a season's in `seasons`.
 */
export interface MatchRowsPart {
  rows: string;
  lengths: Uint32Array;
  entries: GroupSpillHandle;
  seasons: GroupSpillHandle;
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
  const seasons = new GroupSpill({ dir: join(job.scratchDir, 'season-entries'), groups: ANCHOR_GROUPS });
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
          const [home, away, competition, season] = [value[3], value[4], value[5], value[6]];
          const e: ListEntry = { ordinal, meta: 0, digests: entryDigests(home, away, competition, season), season, row: out.buf, rowStart: at, rowEnd: out.pos };
          // The home team, the away team (once, should a team meet itself), the competition and the season.
          e.meta = entryMeta(day, value[2], true);
          addEntry(entries, home, e);
          e.meta = entryMeta(day, value[2], false);
          if (away !== home) addEntry(entries, away, e);
          addEntry(entries, competition, e);
          addEntry(seasons, season, e);
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
    seasons.seal();
  } catch (err) {
    entries.dispose();
    seasons.dispose();
    throw err;
  } finally {
    closeSync(fd);
  }
  return { rows: rowsPath, lengths, entries: entries.handle(), seasons: seasons.handle() };
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** A season's matches as one block of a competition's row copies: where the block starts, and its length. */
interface Block {
  rows: number;
  count: number;
}

/**
 * The match index's families from the jobs' parts, in job (so ordinal) order: the generation from the rows, each
 * anchor's two runs and row copies, and the refs.
 */
async function writeMatchIndex(parts: MatchRowsPart[], input: MatchesInput, publicDir: string, tmpDir: string): Promise<{ doc: MatchesDoc; files: ContentFile[] }> {
  const spills = input.records.map((h) => GroupSpill.open(h.spill));
  const entrySpills = parts.map((p) => GroupSpill.open(p.entries));
  const seasonSpills = parts.map((p) => GroupSpill.open(p.seasons));
  const ledger = new Map<string, ContentFile>();
  const rows = new OrdinalFamilyWriter({ root: publicDir, name: 'matches/rows', tmpDir, perBucket: ROWS_PER_BUCKET, ledger });
  const lists = new ListEntryWriter(new OrdinalFamilyWriter({ root: publicDir, name: 'matches/lists', tmpDir, perBucket: 1, ledger }));
  const refFamily = new HashedFamilyWriter({ root: publicDir, name: 'matches/refs', tmpDir, targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger });
  try {
    const generation = createHash('sha256');
    const rowCount = parts.reduce((n, p) => n + p.lengths.length, 0);
    let hashed = 0;
    for (const part of parts) {
      hashed = hashRows(generation, part, hashed, rowCount);
      rmSync(part.rows, { force: true });
    }
    const refs = readRefs(spills);
    // Where each anchor's runs and copies sit: [first list entry, entries, first row copy].
    const placed = new Map<string, [number, number, number]>();
    // Seasons that are one block of their competition's copies, found as the competitions are written.
    const blocks = new Map<string, Block>();
    const writeGroups = (from: GroupSpill[], seasons: boolean): void => {
      for (let g = 0; g < ANCHOR_GROUPS; g++) {
        // The jobs' entries, in job order, are in ordinal order.
        const data = Buffer.concat(from.map((es) => es.readBytes(g)));
        for (const es of from) es.release(g);
        const byAnchor = new Map<string, number[]>();
        for (let at = 0; at < data.length; at = recordEnd(data, at)) {
          const anchor = data.toString('latin1', at, at + ID_BYTES);
          let list = byAnchor.get(anchor);
          if (!list) byAnchor.set(anchor, (list = []));
          list.push(at);
        }
        for (const anchor of [...byAnchor.keys()].sort()) {
          const records = byAnchor.get(anchor)!;
          const n = records.length;
          const block = seasons ? blocks.get(anchor) : undefined;
          const shared = block !== undefined && block.count === n;
          placed.set(anchor, [lists.entries, n, shared ? block.rows : rows.entries]);
          if (!seasons && refs.get(anchor)?.type === COMPETITION) noteSeasonBlocks(data, records, rows.entries, blocks);
          if (!shared) for (const at of records) rows.pushEncoded(data, at + ROW_AT, recordEnd(data, at));
          writeRuns(lists, data, records);
        }
      }
    };
    writeGroups(entrySpills, false);
    writeGroups(seasonSpills, true);
    for (const [id, r] of refs) {
      const [start, n, at] = placed.get(id) ?? [0, 0, 0];
      refFamily.add(id, matchRef({ typeIndex: r.type, label: r.label, start, count: n, rows: at }));
    }
    const rowFamily = await rows.finish();
    const listFamily = await lists.finish();
    const refsFamily = await refFamily.finish();
    for (const s of spills) s.dispose();
    for (const es of [...entrySpills, ...seasonSpills]) es.dispose();
    return {
      doc: { rows: rowFamily, lists: listFamily, refs: refsFamily, count: rowCount, providers: providerOrder(input.records), generation: generation.digest('hex') },
      files: [...ledger.values()],
    };
  } catch (err) {
    await Promise.all([rows.abort(), lists.abort(), refFamily.abort()]);
    for (const es of [...entrySpills, ...seasonSpills]) es.dispose();
    throw err;
  }
}

/**
 * List entries, LIST_ENTRIES_PER_BUCKET to a value of the lists family: a msgpack bin of their u32s, little-endian,
 * four an entry (common/match-index.ts), which a reader copies out instead of decoding 1,024 integers.
 */
class ListEntryWriter {
  private readonly bucket = Buffer.alloc(LIST_ENTRIES_PER_BUCKET * LIST_ENTRY_BYTES);
  private inBucket = 0;
  /** Entries pushed so far (the next one's position). */
  entries = 0;

  constructor(private readonly family: OrdinalFamilyWriter) {}

  /** The entry at `src[at]`: its four u32s as spilled (ordinal, meta and the digests, little-endian). */
  push(src: Buffer, at: number): void {
    src.copy(this.bucket, this.inBucket * LIST_ENTRY_BYTES, at, at + LIST_ENTRY_BYTES);
    this.entries++;
    if (++this.inBucket === LIST_ENTRIES_PER_BUCKET) this.flush();
  }

  private flush(): void {
    if (this.inBucket > 0) this.family.push(this.bucket.subarray(0, this.inBucket * LIST_ENTRY_BYTES));
    this.inBucket = 0;
  }

  finish(): ReturnType<OrdinalFamilyWriter['finish']> {
    this.flush();
    return this.family.finish();
  }

  abort(): Promise<void> {
    return this.family.abort();
  }
}

/**
 * An anchor's two runs of list entries: the ascending run as the records are (ordinal order), then the descending
 * one from it without a sort: its days from the last, each day's entries in their own (reep_id) order, then the
 * undated ones, which close both runs.
 */
function writeRuns(lists: ListEntryWriter, data: Buffer, records: readonly number[]): void {
  // A record's ordinal, meta and digests lie together, as an entry holds them.
  const push = (at: number) => lists.push(data, at + ORDINAL_AT);
  const day = (k: number) => metaDay(data.readUInt32LE(records[k] + META_AT));
  const n = records.length;
  for (const at of records) push(at);
  let dated = n;
  while (dated > 0 && day(dated - 1) === 0) dated--;
  for (let end = dated; end > 0; ) {
    let start = end - 1;
    while (start > 0 && day(start - 1) === day(end - 1)) start--;
    for (let k = start; k < end; k++) push(records[k]);
    end = start;
  }
  for (let k = dated; k < n; k++) push(records[k]);
}

/**
 * Notes each season of a competition's run whose matches lie together in it, from `first` (its first copy) on: the
 * season may point there, if the block holds all its matches (its own list is as long: writeMatchIndex checks).
 */
function noteSeasonBlocks(data: Buffer, records: readonly number[], first: number, blocks: Map<string, Block>): void {
  const seen = new Map<string, { from: number; to: number; count: number }>();
  for (let i = 0; i < records.length; i++) {
    const at = records[i] + SEASON_AT;
    if (data[at] === 0) continue;
    const season = data.toString('latin1', at, at + ID_BYTES);
    const s = seen.get(season);
    if (s) {
      s.to = i;
      s.count++;
    } else seen.set(season, { from: i, to: i, count: 1 });
  }
  for (const [season, s] of seen) if (s.to - s.from + 1 === s.count) blocks.set(season, { rows: first + s.from, count: s.count });
}

/**
 * Hashes one job's encoded rows, read back in ROW_IO_BYTES reads, into the generation: in groups of
 * GENERATION_ROWS_PER_GROUP rows, each group a msgpack array, counting from row `done` of `total`. Returns the rows
 * hashed so far.
 */
function hashRows(hash: Hash, part: MatchRowsPart, done: number, total: number): number {
  const header = Buffer.allocUnsafe(5);
  const fd = openSync(part.rows, 'r');
  try {
    let buf = Buffer.allocUnsafe(ROW_IO_BYTES);
    let lo = 0;
    let hi = 0;
    for (const len of part.lengths) {
      if (done % GENERATION_ROWS_PER_GROUP === 0) hash.update(header.subarray(0, writeArrayHeader(header, 0, Math.min(GENERATION_ROWS_PER_GROUP, total - done))));
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
      hash.update(buf.subarray(lo, lo + len));
      lo += len;
      done++;
    }
  } finally {
    closeSync(fd);
  }
  return done;
}

/**
 * A list entry as spilled, a binary record: the anchor's register ID (16 ASCII bytes, checked in stage 1), the
 * ordinal, meta and two digests (u32 LE each), the row's season (16 bytes, zeros for none), the row's length (u32
 * LE) and its encoded bytes: each anchor's copy of the row travels with its entry.
 */
const ID_BYTES = 16;
const ORDINAL_AT = ID_BYTES;
const META_AT = ORDINAL_AT + 4;
const SIDES_AT = META_AT + 4;
const STRUCTURE_AT = SIDES_AT + 4;
const SEASON_AT = STRUCTURE_AT + 4;
const LENGTH_AT = SEASON_AT + ID_BYTES;
const ROW_AT = LENGTH_AT + 4;

/** Where the record at `at` ends. */
const recordEnd = (data: Buffer, at: number): number => at + ROW_AT + data.readUInt32LE(at + LENGTH_AT);

/** A row's list entry, before its anchor: the row's bytes are `row[rowStart, rowEnd)`. */
interface ListEntry {
  ordinal: number;
  meta: number;
  digests: [number, number];
  season: string | null;
  row: Uint8Array;
  rowStart: number;
  rowEnd: number;
}

/** Spills one list entry to its anchor's hash group (12M of them at full size). */
function addEntry(entries: GroupSpill, anchor: string | null, e: ListEntry): void {
  if (anchor === null) return;
  if (anchor.length !== ID_BYTES) throw new Error(`list anchor ${JSON.stringify(anchor)} is not a register ID`);
  const length = e.rowEnd - e.rowStart;
  const buf = entries.reserve(fnv1a32(anchor) >>> 24, ROW_AT + length);
  const at = entries.cursor;
  for (let i = 0; i < ID_BYTES; i++) buf[at + i] = anchor.charCodeAt(i);
  buf.writeUInt32LE(e.ordinal, at + ORDINAL_AT);
  buf.writeUInt32LE(e.meta, at + META_AT);
  buf.writeUInt32LE(e.digests[0], at + SIDES_AT);
  buf.writeUInt32LE(e.digests[1], at + STRUCTURE_AT);
  if (e.season === null) buf.fill(0, at + SEASON_AT, at + SEASON_AT + ID_BYTES);
  else for (let i = 0; i < ID_BYTES; i++) buf[at + SEASON_AT + i] = e.season.charCodeAt(i);
  buf.writeUInt32LE(length, at + LENGTH_AT);
  buf.set(e.row.subarray(e.rowStart, e.rowEnd), at + ROW_AT);
  entries.commit(at + ROW_AT + length);
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
