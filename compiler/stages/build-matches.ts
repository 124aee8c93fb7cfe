// Stage: the match index of GET /matches (common/match-index.ts). Stage 2 wrote each live match to its year's group
// and each team, competition, season and stage to the refs group (compiler/records/match-records.ts). Here the refs
// are loaded (small), matches are numbered by (played_on, reep_id) one year group at a time and written as rows, and
// each row's anchors (its teams, competition and season) get a list entry, spilled by anchor hash and then written
// as each anchor's date-ordered runs. Memory holds the refs, one year group and one anchor group at a time.
import { join } from 'node:path';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { fnv1a32 } from '../../common/hash.ts';
import {
  dayOf, entryMeta, LIST_ENTRIES_PER_BUCKET, matchRef, matchRow, metaDay, ROWS_PER_BUCKET, stateCode, type MatchesDoc, type MatchRowValue,
} from '../../common/match-index.ts';
import { HashedFamilyWriter } from '../write/hashed-family-writer.ts';
import { OrdinalFamilyWriter } from '../write/ordinal-family-writer.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import type { ContentFile } from '../write/content-file.ts';
import { POINT_LOOKUP_BUCKET_BYTES } from '../context.ts';
import { MATCH_RECORD_GROUPS, REFS_GROUP, type MatchRecord, type RefRecord } from '../records/match-records.ts';
import type { ThreadedStage } from '../run-stages.ts';
import type { RedirectInfo } from '../records/tables-read.ts';

/** Plain data in, for a worker thread. */
export interface MatchesJob {
  /** Stage 2's match records, one spill per range. */
  records: GroupSpillHandle[];
  redirects: [string, RedirectInfo][];
  publicDir: string;
  scratchDir: string;
}

export interface MatchesResult {
  doc: MatchesDoc;
  files: ContentFile[];
}

const TEAM = ENTITY_TYPES.indexOf('team');
const COMPETITION = ENTITY_TYPES.indexOf('competition');
const SEASON = ENTITY_TYPES.indexOf('season');
const STAGE = ENTITY_TYPES.indexOf('stage');
/** List entries are spilled in this many groups by anchor hash: one group's entries are held at a time. */
const ANCHOR_GROUPS = 256;
const INTEGER_OR_NULL = (v: string | number | null): number | null => (typeof v === 'number' && v >= 0 ? v : null);
const TEXT_OR_NULL = (v: string | number | null): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Stage: the match index; needs stage 2's records and the redirects only, so it runs beside the later stages. */
export const matchesStage: ThreadedStage<{ records: GroupSpillHandle[]; redirects: Map<string, RedirectInfo> }, MatchesJob, MatchesResult, MatchesDoc> = {
  worker: new URL('./build-matches.ts#buildMatches', import.meta.url),
  jobs: (ctx, input) => [{
    records: input.records,
    redirects: [...input.redirects],
    publicDir: ctx.publicDir,
    scratchDir: join(ctx.scratchDir, 'matches'),
  }],
  run: (job) => buildMatches(job),
  merge: (ctx, [r]) => {
    for (const f of r.files) ctx.written.set(f.path, f);
    return r.doc;
  },
};

interface Ref {
  type: number;
  label: string;
  targets: string[];
  /** A stage's or season's place in the structure above it, found once the refs are loaded. */
  season: string | null;
  competition: string | null;
}

export async function buildMatches(job: MatchesJob): Promise<MatchesResult> {
  const spills = job.records.map((h) => GroupSpill.open(h));
  for (const s of spills) if (s.groups !== MATCH_RECORD_GROUPS) throw new Error(`match records have ${s.groups} groups, this stage reads ${MATCH_RECORD_GROUPS}`);
  const redirects = new Map(job.redirects);
  const ledger = new Map<string, ContentFile>();
  const tmpDir = join(job.scratchDir, 'writers');

  // A merged ID stands for its survivor; a tombstoned one for nothing.
  const final = (id: string | null): string | null => {
    if (!id) return null;
    const r = redirects.get(id);
    return r ? r.to : id;
  };
  const refs = new Map<string, Ref>();
  for (const s of spills) {
    for (const line of s.readLines(REFS_GROUP)) {
      const [id, type, label, targets] = JSON.parse(line) as RefRecord;
      refs.set(id, { type, label, targets, season: null, competition: null });
    }
    s.release(REFS_GROUP);
  }
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

  const rows = new OrdinalFamilyWriter({ root: job.publicDir, name: 'matches/rows', tmpDir, perBucket: ROWS_PER_BUCKET, ledger });
  const lists = new OrdinalFamilyWriter({ root: job.publicDir, name: 'matches/lists', tmpDir, perBucket: LIST_ENTRIES_PER_BUCKET, ledger });
  const refFamily = new HashedFamilyWriter({ root: job.publicDir, name: 'matches/refs', tmpDir, targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger });
  const entries = new GroupSpill({ dir: join(job.scratchDir, 'list-entries'), groups: ANCHOR_GROUPS });
  // Providers are numbered as rows first name them: the order rows are written in is fixed, so the numbers are too.
  const providerIndex = new Map<string, number>();
  try {
    let ordinal = 0;
    // A few hundred dates a year recur over ~1.5M matches: each is worked out once.
    const days = new Map<string, number>();
    const dayOfCell = (cell: string | null): number => {
      if (cell === null) return 0;
      let d = days.get(cell);
      if (d === undefined) days.set(cell, (d = dayOf(cell)));
      return d;
    };
    for (let g = 0; g < REFS_GROUP; g++) {
      // A group holds one year's dates (or the undated and malformed ones): the map stays that small.
      days.clear();
      const recs: { day: number; rec: MatchRecord }[] = [];
      for (const s of spills) {
        // A group's lines parsed as one JSON array: one call and no string per line (the lines hold no newline).
        const text = s.readText(g);
        if (text.length > 0) {
          for (const rec of JSON.parse(`[${text.slice(0, -1).replaceAll('\n', ',')}]`) as MatchRecord[]) {
            recs.push({ day: dayOfCell(TEXT_OR_NULL(rec[1][8])), rec });
          }
        }
        s.release(g);
      }
      // Ordinals follow (date, reep_id); undated matches (day 0) are the last group, by reep_id.
      recs.sort((x, y) => x.day - y.day || (x.rec[0] < y.rec[0] ? -1 : x.rec[0] > y.rec[0] ? 1 : 0));
      for (const { day, rec } of recs) {
        const value = rowOf(rec, day, refs, final, linked, providerIndex);
        rows.push(value);
        // The home team, the away team (once, should a team meet itself), the competition and the season.
        addEntry(entries, value[3], ordinal, entryMeta(day, value[2], true));
        if (value[4] !== value[3]) addEntry(entries, value[4], ordinal, entryMeta(day, value[2], false));
        addEntry(entries, value[5], ordinal, entryMeta(day, value[2], false));
        addEntry(entries, value[6], ordinal, entryMeta(day, value[2], false));
        ordinal++;
      }
    }
    entries.seal();

    // Each anchor's two runs, anchors in hash-group order and by ID within a group.
    const placed = new Map<string, [number, number]>();
    for (let g = 0; g < ANCHOR_GROUPS; g++) {
      const byAnchor = new Map<string, number[]>();
      const data = entries.readBytes(g);
      entries.release(g);
      for (let at = 0; at < data.length; at += ENTRY_RECORD) {
        const anchor = data.toString('latin1', at, at + ID_BYTES);
        let list = byAnchor.get(anchor);
        if (!list) byAnchor.set(anchor, (list = []));
        list.push(data.readUInt32LE(at + ID_BYTES), data.readUInt32LE(at + ID_BYTES + 4));
      }
      for (const anchor of [...byAnchor.keys()].sort()) {
        const flat = byAnchor.get(anchor)!;
        const n = flat.length / 2;
        placed.set(anchor, [lists.entries, n]);
        // Lines were written in ordinal order: the ascending run as it is.
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
    for (const [id, r] of refs) {
      const [start, n] = placed.get(id) ?? [0, 0];
      refFamily.add(id, matchRef({ typeIndex: r.type, label: r.label, start, count: n }));
    }
    const rowFamily = await rows.finish();
    const listFamily = await lists.finish();
    const refsFamily = await refFamily.finish();
    const generation = ledger.get(rowFamily.pack)?.sha256;
    if (!generation) throw new Error(`the match rows pack ${rowFamily.pack} was not hashed as it was written`);
    for (const s of spills) s.dispose();
    entries.dispose();
    return {
      doc: { rows: rowFamily, lists: listFamily, refs: refsFamily, count: ordinal, providers: [...providerIndex.keys()], generation },
      files: [...ledger.values()],
    };
  } catch (err) {
    await Promise.all([rows.abort(), lists.abort(), refFamily.abort()]);
    entries.dispose();
    throw err;
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
    let p = providerIndex.get(bridges[i]);
    if (p === undefined) providerIndex.set(bridges[i], (p = providerIndex.size));
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
