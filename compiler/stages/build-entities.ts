// Stage 2: one partition at a time, gather each ID's rows and write its entity shard, index entry, resolve and
// search records, provider rollup and changelog events. Memory is bounded by the largest partition.
import { ENTITY_TYPES, PROVIDER_ROLES, type EntityType } from '../../common/ids.ts';
import { MAX_SHARD_BYTES } from '../../common/limits.ts';
import { tokenize } from '../../common/normalise.ts';
import { bucketOf } from '../../common/hash.ts';
import { ENTRY_LIVE, ENTRY_REDIRECT, ENTRY_TOMBSTONE, type EntityIndexValue } from '../../common/dist-layout.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { mergeSlack, noteSlack, type CompileContext } from '../context.ts';
import { ShardPackWriter } from '../write/shard-pack-writer.ts';
import type { ContentFile } from '../write/content-file.ts';
import { runAllInWorkers } from '../worker/run-in-worker.ts';
import { DiffBaseWriter, fingerprint, matchDiffBase, priorPlace, readDiffBasePartition, sameFingerprint, type DiffBasePartition, type DiffBaseSource, type ShardPlace } from '../write/diff-base.ts';
import { PriorShards } from '../read/prior-shards.ts';
import { IndexEntryLog, readIndexEntryLog } from '../write/index-entry-log.ts';
import { mkdirSync } from 'node:fs';
import { NO_STORED_BRIDGES, parseStoredBridges, storedBridges } from '../../common/shard-format.ts';
import { TAG, type RedirectInfo, type SpillLayout, type TablesRead } from './read-tables.ts';
import { scanRecords, splitPlain } from '../read/csv-reader.ts';
import { ownCopy } from '../../common/own-copy.ts';
import { jsonString } from '../../common/json-string.ts';
import { RegisterError } from '../../common/errors.ts';
import { addShared, sharedCount, type SharedCount } from '../../common/progress.ts';
import { join } from 'node:path';

/** Relationship families with more relationships than this are summarised as high-cardinality. */
export const HIGH_CARDINALITY = 1000;
/** Entity types whose relationship summary is empty by design (only structural relationships are summarised). */
const NO_RELATIONSHIPS = new Set<EntityType>(['player', 'coach', 'referee']);
/** Search sources: how strongly a name backs its entity. */
export const SRC_LABEL = 3;
export const SRC_ALIAS = 2;
export const SRC_OVERLAY = 1;

/** What stage 2 hands to the later stages. */
export interface EntitiesBuilt {
  /** Shard packs, paths relative to public/, in pack-number order. */
  shardPacks: string[];
  /** `[first partition, first pack]` of each range, in range order (see DiffBaseMeta.packRanges). */
  packRanges: [number, number][];
  /**
   * `token\tdoc\tsource` lines grouped by the token's first three characters, one spill per range; `doc` is the
   * entity's position among its range's docs (so `docStarts[range] + doc` in `docs`).
   */
  postings: GroupSpill[];
  /** Where each range's entities start in `docs`. */
  docStarts: number[];
  /** Change events (canonical JSON text, a line each) grouped by stream (see streamGroups), one spill per range, in range order. */
  events: GroupSpill[];
  streamGroups: Map<string, number>;
  /** Live entities: for ordinals and search docs. */
  docs: { ids: string[]; types: number[]; labels: string[]; bridges: number[] };
  rollup: Map<string, { bridges: number; overlay: number; types: Map<string, number> }>;
}

export const SEARCH_GROUPS = 256;
/** Search records are grouped by a token's first three characters, so a prefix and its tokens meet. */
export const searchGroupOf = (token: string): number => bucketOf(token.slice(0, 3), SEARCH_GROUPS);

interface Acc {
  id: string;
  type: number;
  status: string;
  label: string;
  /** Lists and maps below start as the shared NONE / null and are made on a first row: most IDs have none. */
  attrs: Map<string, string[]> | null;
  aliases: [string, string, string, string][];
  bridges: [string, string, string][];
  rels: Map<string, { out: number; in: number }> | null;
  link: [string, string, string, string] | null;
  oaliases: [string, string, string, string][];
  xids: [string, string, string, string, string][];
  prior: [string, string] | null;
  /** Redirected or tombstoned in the prior release. */
  priorRetired: boolean;
  priorBridges: [string, string, string][];
  /** The prior bridges section as the predecessor's diff base or shard holds it, when those are read instead of its tables. */
  priorBridgesSection: string | null;
  /** Live in the predecessor: where its diff-base fingerprint starts (its values are read only if it differs); else -1. */
  priorFingerprintAt: number;
  /** Its ordinal among its partition's live IDs in the predecessor's diff base (see priorPlace). */
  priorOrdinal: number;
  live: boolean;
}

/** What gathering keeps of one ID until it is built (see the partition loop in buildEntityRange). */
interface Gathered {
  rows: number[];
  priorRetired: boolean;
  priorFingerprintAt: number;
  priorOrdinal: number;
  priorBridgesSection: string | null;
}

/** A gathered row's spill index sits this many bits up; below it, the line's offset in that spill's text. */
const ROW_SPILL_SHIFT = 28;
const ROW_OFFSETS = 1 << ROW_SPILL_SHIFT;
/** IDs built, written and dropped together; their rows then live for a chunk, not for a whole partition. */
const CHUNK_IDS = 256;
/** A record's tag as a number, its characters `text[start, end)` in base 128: a line is routed without cutting its tag out. */
const tagCode = (text: string, start = 0, end = text.length): number => {
  let code = 0;
  for (let i = start; i < end; i++) code = code * 128 + text.charCodeAt(i);
  return code;
};
const RETIRED_CODE = tagCode(TAG.retired);
const PRIOR_RETIRED_CODE = tagCode(TAG.priorRetired);
/** A plain bridge line starts with these two characters (see bridgeOf). */
const BRIDGE_CHAR = TAG.bridge.charCodeAt(0);
const COMMA = 44;
if (TAG.bridge.length !== 1) throw new Error('the bridge tag must be one character (see bridgeOf)');
/** Relationship lines start with `R`, then `o` (from this ID) or `i` (to it), then the comma. */
const REL_CHAR = TAG.relFrom.charCodeAt(0);
const REL_FROM_CHAR = TAG.relFrom.charCodeAt(1);
const REL_TO_CHAR = TAG.relTo.charCodeAt(1);
if (TAG.relFrom.length !== 2 || TAG.relTo.length !== 2 || TAG.relTo.charCodeAt(0) !== REL_CHAR || REL_FROM_CHAR === REL_TO_CHAR) {
  throw new Error('relationship tags must be two characters sharing the first (see materialize)');
}
/**
 * Field `k` (the tag being field 0) of the plain line `text[.., end)` whose tag ends at `comma`. Stage 1 spilled only
 * rows as wide as their header, so the field is on this line.
 */
function lineField(text: string, comma: number, end: number, k: number): string {
  let from = comma + 1;
  for (let i = 1; i < k; i++) from = text.indexOf(',', from) + 1;
  const to = text.indexOf(',', from);
  return text.slice(from, to === -1 || to > end ? end : to);
}

/**
 * Partition ranges built side by side. Fixed, not taken from the machine's core count: the ranges decide the pack
 * boundaries, and a release must compile to the same bytes on any machine.
 */
export const ENTITY_RANGES = 2;

/**
 * Young generation of each range's worker, in MiB (V8 gives a worker with our old-space cap about 36). A
 * partition's rows and accumulators live until its last entity is written, ~15-30 MB at full size: in a small young
 * generation they survive two scavenges, are promoted, and die in old space, where collecting them cost about a
 * sixth of the stage. With 64 MiB semi-spaces most of a partition dies young. Measured at full size in alternating
 * runs, as stage 2's time over stage 1's in the same run: 0.90x (three runs against five); 96 MiB did not help.
 * It costs ~250 MB of peak RSS.
 */
const RANGE_YOUNG_GENERATION_MB = 192;

/**
 * Stage 2 over ENTITY_RANGES contiguous partition ranges, each in a worker thread (or inline with
 * `threads: false`), merged in range order so the output equals a sequential build's with those ranges.
 */
export async function buildEntities(ctx: CompileContext, read: TablesRead, index: { add(key: string, value: EntityIndexValue): void }): Promise<EntitiesBuilt> {
  const P = ctx.options.partitions;
  const providers = [...read.providers].sort();
  // Shared with the range threads, which advance it; only while a progress line shows it.
  const partitionsDone = ctx.progress.enabled ? sharedCount() : undefined;
  const job = (r: number): EntityRangeJob => ({
    from: Math.floor((P * r) / ENTITY_RANGES),
    to: Math.floor((P * (r + 1)) / ENTITY_RANGES),
    partitions: P,
    spills: read.spills.map((sp) => sp.handle()),
    layouts: [...read.layouts],
    redirects: [...read.redirects],
    priorRedirects: [...read.priorRedirects],
    providerRoles: [...read.providerRoles],
    providers,
    hasPrior: ctx.prior !== null,
    priorDiffBase: ctx.priorDiffBase,
    privateDir: ctx.privateDir,
    scratchDir: join(ctx.scratchDir, `range-${r}`),
    publicDir: ctx.publicDir,
    packBytes: ctx.options.packBytes,
    entitiesLabel: ctx.release.tables.entities!.label,
    partitionsDone,
  });
  if (partitionsDone) ctx.progress.follow(`build entity shards (${ENTITY_RANGES} ranges${ctx.options.threads ? ', in worker threads' : ''})`, P, partitionsDone, 'partitions');
  const jobs = Array.from({ length: ENTITY_RANGES }, (_, r) => job(r));
  const results = ctx.options.threads
    ? await runAllInWorkers<EntityRangeJob, EntityRangeResult>(new URL('./build-entities.ts#buildEntityRange', import.meta.url), jobs, undefined, { youngGenerationMb: RANGE_YOUNG_GENERATION_MB })
    : await sequential(jobs.map((j) => () => buildEntityRange(j)));
  ctx.progress.end();
  for (const sp of read.spills) sp.dispose();

  const built: EntitiesBuilt = {
    shardPacks: [],
    packRanges: [],
    postings: [],
    docStarts: [],
    events: [],
    streamGroups: streamGroupsOf(providers),
    docs: { ids: [], types: [], labels: [], bridges: [] },
    rollup: new Map(),
  };
  for (const [r, res] of results.entries()) {
    // This range's pack numbers follow the earlier ranges' packs.
    const packBase = built.shardPacks.length;
    built.packRanges.push([jobs[r].from, packBase]);
    for (const f of res.packs) {
      ctx.written.set(f.path, f);
      built.shardPacks.push(f.path);
    }
    for (const f of res.privateFiles) ctx.writtenPrivate.set(f.path, f);
    readIndexEntryLog(res.index, packBase, (id, value) => index.add(id, value));
    built.postings.push(GroupSpill.open(res.postings));
    built.docStarts.push(built.docs.ids.length);
    built.events.push(GroupSpill.open(res.events));
    for (const k of res.goneProviders) if (!built.streamGroups.has(k)) built.streamGroups.set(k, -1);
    // concat, not push(...): a spread of a million arguments overflows the stack.
    const d = built.docs;
    built.docs = { ids: d.ids.concat(res.docs.ids), types: d.types.concat(res.docs.types), labels: d.labels.concat(res.docs.labels), bridges: d.bridges.concat(res.docs.bridges) };
    for (const [name, r] of res.rollup) {
      let into = built.rollup.get(name);
      if (!into) built.rollup.set(name, (into = { bridges: 0, overlay: 0, types: new Map() }));
      into.bridges += r.bridges;
      into.overlay += r.overlay;
      for (const [t, n] of r.types) into.types.set(t, (into.types.get(t) ?? 0) + n);
    }
    for (const [k, n] of Object.entries(res.counts)) ctx.counts[k] = (ctx.counts[k] ?? 0) + n;
    mergeSlack(ctx, res.slack);
  }
  return built;
}

async function sequential<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  for (const t of tasks) out.push(await t());
  return out;
}

/** Everything one range of partitions is built from; plain data, so it can cross to a worker thread. */
export interface EntityRangeJob {
  /** Partitions [from, to) of `partitions`. */
  from: number;
  to: number;
  partitions: number;
  /** Row spills of stage 1 (see TablesRead.spills). */
  spills: GroupSpillHandle[];
  layouts: [string, SpillLayout][];
  redirects: [string, RedirectInfo][];
  priorRedirects: [string, RedirectInfo][];
  providerRoles: [string, string][];
  providers: string[];
  hasPrior: boolean;
  /** The predecessor's diff base, read instead of its tables when there is one (see compiler/write/diff-base.ts). */
  priorDiffBase: DiffBaseSource | null;
  /** Where this release's own diff base goes (under private/). */
  privateDir: string;
  /** This range's own scratch directory. */
  scratchDir: string;
  publicDir: string;
  packBytes: number;
  /** How errors name the entities table (its path in the release). */
  entitiesLabel: string;
  /** Advanced once per partition built, for the progress line. */
  partitionsDone?: SharedCount;
}

/** What one range produced; plain data again. Index entries name packs by their number within this range. */
export interface EntityRangeResult {
  packs: ContentFile[];
  /** Diff base files, paths relative to private/. */
  privateFiles: ContentFile[];
  /** Path of the range's index entries (an IndexEntryLog), pack numbers counted within the range. */
  index: string;
  postings: GroupSpillHandle;
  events: GroupSpillHandle;
  /** Streams of providers that only the prior release had (their events count in `all` and per type only). */
  goneProviders: string[];
  docs: EntitiesBuilt['docs'];
  rollup: [string, { bridges: number; overlay: number; types: [string, number][] }][];
  counts: Record<string, number>;
  slack: [string, { count: number; example: string }][];
}

/** The change streams of a release with these providers, in group order. */
export function streamGroupsOf(providers: string[]): Map<string, number> {
  const streamGroups = new Map<string, number>();
  streamGroups.set('all', 0);
  for (const t of ['entity_added', 'entity_status_changed', 'label_updated', 'entity_removed', 'redirect_added', 'provider_updated']) {
    streamGroups.set(`type:${t}`, streamGroups.size);
  }
  for (const p of providers) streamGroups.set(`provider:${p}`, streamGroups.size);
  return streamGroups;
}

/**
 * Builds partitions [from, to): shards into this range's own packs, index entries into a lines file, postings and
 * events into this range's spills. Runs in a worker thread or inline; the result is the same either way.
 */
export async function buildEntityRange(job: EntityRangeJob): Promise<EntityRangeResult> {
  const spills = job.spills.map((h) => GroupSpill.open(h));
  const layouts = new Map(job.layouts);
  const redirects = new Map(job.redirects);
  const priorRedirects = new Map(job.priorRedirects);
  const providerRoles = new Map(job.providerRoles);
  const streamGroups = streamGroupsOf(job.providers);
  const ledger = new Map<string, ContentFile>();
  const shards = new ShardPackWriter({ root: job.publicDir, packBytes: job.packBytes, ledger });
  mkdirSync(job.scratchDir, { recursive: true });
  const index = new IndexEntryLog(join(job.scratchDir, 'index-entries.bin'));
  const ctx = { slack: new Map<string, { count: number; example: string }>() };
  const counts: Record<string, number> = { entities: 0, redirects: 0, tombstones: 0, bridges: 0, aliases: 0, relationships: 0, overlay_links: 0 };
  const built = {
    postings: new GroupSpill({ dir: join(job.scratchDir, 'postings'), groups: SEARCH_GROUPS }),
    events: new GroupSpill({ dir: join(job.scratchDir, 'events'), groups: streamGroups.size }),
    docs: { ids: [] as string[], types: [] as number[], labels: [] as string[], bridges: [] as number[] },
    rollup: new Map<string, { bridges: number; overlay: number; types: Map<string, number> }>(),
  };
  const sink = { index, shards };
  const roleOfBridge = (b: readonly [string, string, string]) => providerRoles.get(b[0]) ?? 'canonical_bridge';
  /** Writes one event to the `all` stream, its type's and (when it names one still in this release) its provider's. */
  const emit = (type: string, event: Record<string, unknown>, provider?: string) => {
    const text = JSON.stringify(event);
    built.events.addLine(0, text);
    built.events.addLine(streamGroups.get(`type:${type}`)!, text);
    if (provider === undefined) return;
    // A provider only the prior release had: its events count in `all` and per type only.
    let g = streamGroups.get(`provider:${provider}`);
    if (g === undefined) streamGroups.set(ownCopy(`provider:${provider}`), (g = -1));
    if (g >= 0) built.events.addLine(g, text);
  };
  const hasPrior = job.hasPrior;
  const privateFiles: ContentFile[] = [];
  const diffBase = new DiffBaseWriter(job.privateDir);
  const priorShards = job.priorDiffBase ? new PriorShards(job.priorDiffBase.publicDir) : null;
  const read = { layouts, redirects, priorRedirects };
  const cuts: number[] = [];
  // Layouts by tag, looked up once rather than per row.
  const L = read.layouts;
  const lay = (tag: string): SpillLayout => {
    const l = L.get(tag);
    if (!l) throw new Error(`unknown spill record tag ${JSON.stringify(tag)}`);
    return l;
  };
  const E = L.get(TAG.entity);
  const A = L.get(TAG.alias);
  const B = L.get(TAG.bridge);
  const Ro = L.get(TAG.relFrom);
  const Lk = L.get(TAG.link);
  const OA = L.get(TAG.overlayAlias);
  const X = L.get(TAG.xid);
  const e = L.get(TAG.priorEntity);
  const b = L.get(TAG.priorBridge);
  // Where each tag's records hold their ID; a retired-ID record is the ID alone.
  const idAtByCode = new Map<number, number>([[RETIRED_CODE, 1], [PRIOR_RETIRED_CODE, 1]]);
  for (const [tag, l] of L) idAtByCode.set(tagCode(tag), l.idAt);
  if (spills.length > 1 << (31 - ROW_SPILL_SHIFT)) throw new Error(`${spills.length} spills, more than rows can address`);
  // A plain bridge line (over half of all rows) is read without splitting it: only its provider, namespace and
  // external ID are sliced out, not its tag, ID and other columns (see bridgeOf).
  const pAt = B ? B.c.provider : 0;
  const nAt = B ? B.c.namespace : 0;
  const xAt = B ? B.c.external_id : 0;
  const bridgeLast = Math.max(pAt, nAt, xAt);
  const relKindAt = Ro ? Ro.c.kind : 0;
  /** The [provider, namespace, external_id] of the plain bridge line `text[start, end)`, its tag's comma at `start + 1`. */
  const bridgeOf = (text: string, start: number, end: number): [string, string, string] => {
    let provider = '';
    let namespace = '';
    let externalId = '';
    let from = start + 2;
    for (let k = 1; k <= bridgeLast; k++) {
      let to = text.indexOf(',', from);
      if (to === -1 || to > end) to = end;
      if (k === pAt) provider = text.slice(from, to);
      else if (k === nAt) namespace = text.slice(from, to);
      else if (k === xAt) externalId = text.slice(from, to);
      from = to + 1;
    }
    return [provider, namespace, externalId];
  };
  const opt = (f: string[], at: number | undefined) => (at === undefined ? '' : f[at]);
  /** Adds one record (split fields, tag first) of `a`'s ID to `a`. */
  const applyRecord = (a: Acc, f: string[]): void => {
    const tag = f[0];
    switch (tag) {
      case TAG.entity: {
        const c = E!.c;
        a.live = true;
        a.type = ENTITY_TYPES.indexOf(f[c.entity_type] as EntityType);
        a.status = f[c.status];
        a.label = f[c.label];
        if (c.gender !== undefined && f[c.gender]) addAttr(a, 'gender', f[c.gender]);
        if (c.country !== undefined && f[c.country]) addAttr(a, 'country', f[c.country]);
        break;
      }
      case TAG.alias: {
        const c = A!.c;
        own(a, 'aliases').push([f[c.alias], f[c.kind], f[c.rank], f[c.language]]);
        break;
      }
      case TAG.bridge: {
        const c = B!.c;
        a.bridges.push([f[c.provider], f[c.namespace], f[c.external_id]]);
        break;
      }
      case TAG.relFrom:
      case TAG.relTo:
        addRelation(a, f[Ro!.c.kind], tag === TAG.relFrom);
        break;
      case TAG.link: {
        const c = Lk!.c;
        a.link = [f[c.qid], f[c.confidence], f[c.dob_check], opt(f, c.inherited)];
        break;
      }
      case TAG.overlayAlias: {
        const c = OA!.c;
        own(a, 'oaliases').push([f[c.name], opt(f, c.language), opt(f, c.confidence), opt(f, c.qid)]);
        break;
      }
      case TAG.xid: {
        const c = X!.c;
        own(a, 'xids').push([f[c.provider], f[c.property], f[c.external_id], opt(f, c.confidence), opt(f, c.qid)]);
        break;
      }
      case TAG.priorEntity:
        a.prior = [f[e!.c.status], f[e!.c.label]];
        break;
      case TAG.priorBridge: {
        const c = b!.c;
        own(a, 'priorBridges').push([f[c.provider], f[c.namespace], f[c.external_id]]);
        break;
      }
      default:
        // Type tables and observed clubs: every non-empty sourced column is an attribute.
        for (const [name, at] of lay(tag).attrs) if (f[at] !== '') addAttr(a, name, f[at]);
    }
  };

  // The prior release's packs stay open until every partition is built, or one failed.
  try {
    for (let p = job.from; p < job.to; p++) {
      // Gathering: each ID's rows, as numbers. A plain line is its spill (ROW_SPILL_SHIFT bits up) and its offset in
      // that spill's text, split only when its entity is built; a record with a quote (rare) is parsed here and kept
      // aside in `parsed` as -1 - its index. A partition's rows as split fields and per-row arrays outlived the
      // young generation and were promoted wholesale (~a sixth of this stage in collections at full size); as
      // numbers they are one small array per ID, and the fields live only while their entity is built.
      const texts: string[] = [];
      const parsed: string[][] = [];
      const gathered = new Map<string, Gathered>();
      const gather = (id: string): Gathered => {
        let g = gathered.get(id);
        if (!g) gathered.set(id, (g = { rows: [], priorRetired: false, priorFingerprintAt: -1, priorOrdinal: -1, priorBridgesSection: null }));
        return g;
      };
      /** Marks the ID of a retired-ID record (whose one field is the ID); false for a record of any other tag. */
      const retired = (code: number, id: string): boolean => {
        if (code !== RETIRED_CODE && code !== PRIOR_RETIRED_CODE) return false;
        const g = gather(id);
        if (code === PRIOR_RETIRED_CODE) g.priorRetired = true;
        return true;
      };
      for (let si = 0; si < spills.length; si++) {
        const text = spills[si].readText(p);
        spills[si].release(p);
        if (text.length >= ROW_OFFSETS) throw new Error(`spill partition ${p} holds ${text.length} characters, more than rows can address`);
        texts.push(text);
        const spillBits = si << ROW_SPILL_SHIFT;
        scanRecords(
          text,
          (start, end) => {
            const comma = text.indexOf(',', start);
            const code = tagCode(text, start, comma);
            const idAt = idAtByCode.get(code);
            if (idAt === undefined) throw new Error(`unknown spill record ${JSON.stringify(text.slice(start, Math.min(end, start + 40)))}`);
            const id = lineField(text, comma, end, idAt);
            if (!retired(code, id)) gather(id).rows.push(spillBits | start);
          },
          (f) => {
            const code = tagCode(f[0]);
            const idAt = idAtByCode.get(code);
            if (idAt === undefined) throw new Error(`unknown spill record ${JSON.stringify(f.slice(0, 3))}`);
            if (!retired(code, f[idAt])) gather(f[idAt]).rows.push(-1 - (parsed.push(f) - 1));
          },
        );
      }
      const priorBase: DiffBasePartition | null = job.priorDiffBase ? readDiffBasePartition(job.priorDiffBase, p) : null;

      /** An ID's accumulated rows: its gathered rows read and applied in the order they were read. */
      const materialize = (id: string, g: Gathered): Acc => {
        const a: Acc = {
          id, type: -1, status: '', label: '', attrs: null, aliases: NONE, bridges: [], rels: null, link: null, oaliases: NONE, xids: NONE,
          prior: null, priorRetired: g.priorRetired, priorBridges: NONE, priorBridgesSection: g.priorBridgesSection, priorFingerprintAt: g.priorFingerprintAt,
          priorOrdinal: g.priorOrdinal, live: false,
        };
        const rows = g.rows;
        for (let r = 0; r < rows.length; r++) {
          const row = rows[r];
          let f: string[];
          if (row < 0) f = parsed[-1 - row];
          else {
            const text = texts[row >>> ROW_SPILL_SHIFT];
            const start = row & (ROW_OFFSETS - 1);
            let end = text.indexOf('\n', start);
            if (end === -1) end = text.length;
            const c0 = text.charCodeAt(start);
            if (c0 === BRIDGE_CHAR && text.charCodeAt(start + 1) === COMMA) {
              a.bridges.push(bridgeOf(text, start, end));
              continue;
            }
            // A relationship line (4M at full size, one per end) counts toward its kind alone: only that field is cut.
            if (c0 === REL_CHAR && text.charCodeAt(start + 2) === COMMA) {
              const c1 = text.charCodeAt(start + 1);
              if (c1 === REL_FROM_CHAR || c1 === REL_TO_CHAR) {
                addRelation(a, lineField(text, start + 2, end, relKindAt), c1 === REL_FROM_CHAR);
                continue;
              }
            }
            f = splitPlain(text, start, end);
          }
          applyRecord(a, f);
        }
        return a;
      };

      // The default sort, on the keys alone, then one lookup per ID for what was gathered under it: sorting
      // [id, rows] entries with a comparator cost more than the lookup (a key keeps its hash, so it is cheap).
      let ids = [...gathered.keys()].sort();
      let gs = ids.map((id) => gathered.get(id)!);
      if (priorBase) {
        // The predecessor's values of each ID, found by walking its diff base beside `ids`. An ID only the
        // predecessor had (no row now, not even a redirect: noted below as missing) is added and the walk redone.
        const live = (i: number, at: number, ordinal: number) => {
          gs[i].priorFingerprintAt = at;
          gs[i].priorOrdinal = ordinal;
        };
        const merged = (i: number, section: string) => (gs[i].priorBridgesSection = section);
        const absent = matchDiffBase(priorBase, ids, live, merged);
        if (absent.length) {
          for (const id of absent) gather(id);
          ids = [...gathered.keys()].sort();
          gs = ids.map((id) => gathered.get(id)!);
          const still = matchDiffBase(priorBase, ids, live, merged);
          if (still.length) throw new RegisterError('compile', `lists ${still[0]} out of order; recompile the prior release (or remove its folder) and retry`, priorBase.textFile);
        }
      }
      // In chunks of IDs, each built, written and dropped before the next, so an entity's rows and accumulators die
      // young. Preparing a chunk works out each ID's bridges and fingerprint, to learn which IDs changed since the
      // predecessor, and starts reading their old values from its shards (see PriorShards); the next chunk is
      // prepared before this one is written, so those reads overlap the writing rather than stall it.
      const prepare = (first: number) => {
        const n = Math.min(CHUNK_IDS, ids.length - first);
        const accs: Acc[] = new Array(n);
        const bridgeLists: [string, string, string][][] = new Array(n);
        const sections: string[] = new Array(n);
        const changed: number[] = [];
        for (let i = 0; i < n; i++) {
          const id = ids[first + i];
          const a = (accs[i] = materialize(id, gs[first + i]));
          const bridges = (bridgeLists[i] = dedupeBridges(a.bridges));
          // The section the shard is written with: the fingerprint hashes it, and the diff base keeps it for a merged ID.
          const section = (sections[i] = storedBridges(bridges, roleOfBridge));
          // Bridges are only ever kept for live or merged IDs; a merged ID's rows are diffed under that ID next time.
          const fp = a.live ? fingerprint(a.status, a.label, section) : '';
          if (a.live) diffBase.addLive(id, fp);
          else if (bridges.length) diffBase.addMerged(id, section);
          if (a.priorFingerprintAt < 0) continue;
          // Unchanged (nearly all): the prior values are the current ones.
          if (a.live && sameFingerprint(priorBase!, a.priorFingerprintAt, fp)) {
            a.prior = [a.status, a.label];
            a.priorBridgesSection = section;
          } else changed.push(i);
        }
        const was = changed.length
          ? priorShards!.entities(changed.map((i): [string, ShardPlace] => [ids[first + i], priorPlace(job.priorDiffBase!, priorBase!, p, accs[i].priorOrdinal)]))
          : null;
        was?.catch(() => {}); // awaited when the chunk is written; this only keeps an early failure from counting as unhandled
        return { first, n, accs, bridgeLists, sections, changed, was };
      };
      for (let next = ids.length ? prepare(0) : null; next; ) {
        const { first, n, accs, bridgeLists, sections, changed, was } = next;
        next = first + n < ids.length ? prepare(first + n) : null;
        if (was) {
          const old = await was;
          for (const i of changed) {
            const w = old.get(ids[first + i]);
            if (w === undefined) continue;
            accs[i].prior = [w.status, w.label];
            accs[i].priorBridgesSection = w.bridgesSection;
          }
        }
        for (let i = 0; i < n; i++) {
          const id = ids[first + i];
          const a = accs[i];
          const redirect = read.redirects.get(id);
          const bridges = bridgeLists[i];
          const section = sections[i];
          if (a.live) {
            const type = ENTITY_TYPES[a.type];
            writeLive(a, type, bridges, section);
            if (hasPrior) {
              if (!a.prior) {
                emit('entity_added', { type: 'entity_added', reep_id: id, entity_type: type, label: a.label });
              } else {
                if (a.prior[0] !== a.status) emit('entity_status_changed', { type: 'entity_status_changed', reep_id: id, from: a.prior[0], to: a.status });
                if (a.prior[1] !== a.label) emit('label_updated', { type: 'label_updated', reep_id: id, from: a.prior[1], to: a.label });
              }
            }
          } else if (redirect) {
            if (redirect.to) {
              sink.index.add(id, [ENTRY_REDIRECT, redirect.to]);
              counts.redirects++;
            } else {
              const loc = sink.shards.add(tombstoneBody(id));
              sink.index.add(id, [ENTRY_TOMBSTONE, loc.pack, loc.offset, loc.length, loc.checksum]);
              counts.tombstones++;
            }
            if (hasPrior) {
              const before = read.priorRedirects.get(id);
              if (redirect.to && !before?.to) emit('redirect_added', { type: 'redirect_added', reep_id: id, redirected_to: redirect.to });
              if (!redirect.to && (!before || before.to)) emit('entity_removed', { type: 'entity_removed', reep_id: id });
            }
          } else if (a.prior || a.priorRetired) {
            // Published last time, absent now, and neither redirected nor tombstoned: the ID would silently vanish.
            noteSlack(ctx, 'csv/entities.csv.gz', 'ID of the prior release missing without redirect or tombstone', id);
          }
          if (hasPrior) {
            const after = a.live || redirect?.to ? bridges : [];
            if (a.priorBridgesSection !== null) {
              // Unchanged lists (nearly all) are equal sections: nothing to parse or compare.
              if (a.priorBridgesSection !== (after === bridges ? section : NO_STORED_BRIDGES)) diffBridges(id, parseStoredBridges(a.priorBridgesSection), after);
            } else if (a.priorBridges.length || bridges.length) {
              diffBridges(id, dedupeBridges(a.priorBridges), after);
            }
          }
        }
      }
      privateFiles.push(...diffBase.finishPartition(p));
      addShared(job.partitionsDone);
    }
  } finally {
    await priorShards?.close();
  }
  built.postings.seal();
  built.events.seal();
  index.close();
  const packPaths = await shards.finish();
  return {
    packs: packPaths.map((path) => ledger.get(path)!),
    privateFiles,
    index: index.path,
    postings: built.postings.handle(),
    events: built.events.handle(),
    goneProviders: [...streamGroups].filter(([, g]) => g < 0).map(([k]) => k),
    docs: built.docs,
    rollup: [...built.rollup].map(([k, r]) => [k, { bridges: r.bridges, overlay: r.overlay, types: [...r.types] }]),
    counts,
    slack: [...ctx.slack],
  };

  /** Writes a live ID's shard, index entry and search postings; `bridgeSection` is storedBridges of `bridges`. */
  function writeLive(a: Acc, type: EntityType, bridges: [string, string, string][], bridgeSection: string): void {
    const typeIndex = a.type;
    // The ID as a string of its own: the docs list outlives this partition, and a slice would keep the
    // partition's whole text alive with it.
    const id = ownCopy(a.id);
    counts.entities++;
    const typeKey = TYPE_COUNT_KEYS[typeIndex];
    counts[typeKey] = (counts[typeKey] ?? 0) + 1;

    // Core and sections, each written once here so the runtime only slices and concatenates.
    // A live ID passed REGISTER_ID in stage 1 and a type is one of ENTITY_TYPES: neither needs escaping.
    const core = `{"reep_id":"${a.id}","entity_type":"${type}","name_en":${q(a.label)},"lifecycle_state":${q(a.status)},"canonical_reep_id":"${a.id}"`;

    const uniqueAliases = a.aliases.length ? aliasesOf(a.aliases) : [];
    let aliasSection = ',"aliases":[],"names":[]';
    if (uniqueAliases.length) {
      const names: string[] = [];
      for (const x of uniqueAliases) if (!names.includes(x.name)) names.push(x.name);
      counts.aliases += uniqueAliases.length;
      aliasSection = `,"aliases":${JSON.stringify(uniqueAliases)},"names":${JSON.stringify(names)}`;
    }

    const attrs = a.attrs;
    let attrSection = attrs ? attributesSection(attrs) : ',"attributes":{}';
    if (type === 'match') attrSection += scorelineSection(attrs);

    // The bridges section is stored without the entity_type and role every bridge repeats (~47 bytes each, 18% of the
    // shards at full size); the runtime splices them back at each marker byte (common/shard-format.ts).
    counts.bridges += bridges.length;
    for (const [prov] of bridges) {
      let r = built.rollup.get(prov);
      if (!r) built.rollup.set(ownCopy(prov), (r = { bridges: 0, overlay: 0, types: new Map() }));
      r.bridges++;
      r.types.set(type, (r.types.get(type) ?? 0) + 1);
    }

    const relMap = a.rels ?? NO_RELS;
    for (const f of relMap.values()) counts.relationships += f.out;
    const relSection = NO_RELATIONSHIPS.has(type) ? ',"relationships":[]' : relationshipsSection(relMap);

    const overlay = buildOverlay(a);
    if (overlay) {
      counts.overlay_links++;
      for (const x of overlay.ids) {
        let r = built.rollup.get(x.provider);
        if (!r) built.rollup.set(ownCopy(x.provider), (r = { bridges: 0, overlay: 0, types: new Map() }));
        r.overlay++;
      }
    }
    const overlaySection = overlay ? `,"overlay":${JSON.stringify({ kb: overlay })}` : '';

    // Written in its sections, whose byte ends are the cuts the runtime slices at.
    const parts = [core, aliasSection, attrSection, bridgeSection, relSection, overlaySection, '}'];
    const loc = sink.shards.addParts(parts, cuts);
    // The runtime answers a shard with its bridges expanded, so that is the size the cap holds; worked out exactly
    // only when the longest expansion could pass it.
    if (loc.length + bridges.length * LONGEST_SPLICE > MAX_SHARD_BYTES) checkShardSize(a, type, loc.length, bridges);
    diffBase.place(loc.pack, loc.offset, loc.length, loc.checksum, cuts);
    sink.index.add(id, [ENTRY_LIVE, loc.pack, loc.offset, loc.length, cuts[0], cuts[1], cuts[2], cuts[3], cuts[4], cuts[5], bridges.length, typeIndex, loc.checksum]);

    const doc = built.docs.ids.push(id) - 1;
    built.docs.types.push(typeIndex);
    built.docs.labels.push(ownCopy(a.label));
    built.docs.bridges.push(bridges.length);

    // Search postings: each token once per entity, from its strongest source.
    const best = new Map<string, number>();
    takeTokens(best, a.label, SRC_LABEL);
    for (const x of uniqueAliases) takeTokens(best, x.name, SRC_ALIAS);
    if (overlay) for (const x of overlay.aliases) takeTokens(best, x.name, SRC_OVERLAY);
    // Tokens are runs of letters and digits: a tab-separated line needs no escaping. The entity is named by its
    // doc position, so the search stage maps it to an ordinal through an array, not 10M string lookups.
    for (const [t, src] of best) built.postings.addLine(searchGroupOf(t), `${t}\t${doc}\t${src}`);
  }

  /** Refuses the entity whose shard, expanded, is past MAX_SHARD_BYTES, naming its largest section. */
  function checkShardSize(a: Acc, type: EntityType, stored: number, bridges: [string, string, string][]): void {
    let expanded = stored;
    for (const b of bridges) expanded += spliceBytes(type, roleOfBridge(b)) - 1;
    if (expanded <= MAX_SHARD_BYTES) return;
    const ends = [...cuts.slice(0, SECTION_NAMES.length)];
    const sizes = ends.map((end, i) => end - (i === 0 ? 0 : ends[i - 1]));
    sizes[SECTION_NAMES.indexOf('bridges')] += expanded - stored;
    const largest = sizes.indexOf(Math.max(...sizes));
    const rows = [a.aliases.length, a.attrs?.size ?? 0, bridges.length, a.rels?.size ?? 0, a.xids.length + a.oaliases.length];
    const what = largest === 0 ? '' : ` (${rows[largest - 1]} ${SECTION_ROWS[largest]})`;
    throw new RegisterError(
      'compile',
      `entity ${a.id}: its shard is ${expanded} bytes, over the ${MAX_SHARD_BYTES}-byte cap MAX_SHARD_BYTES (docs/limits.md); ` +
        `its largest section is ${SECTION_NAMES[largest]}${what}, ${sizes[largest]} bytes`,
      job.entitiesLabel,
    );
  }

  function diffBridges(id: string, before: [string, string, string][], after: [string, string, string][]): void {
    // Both lists are sorted and deduplicated: equal lists (nearly every entity) need no sets.
    if (before.length === after.length && before.every((b, i) => b[0] === after[i][0] && b[1] === after[i][1] && b[2] === after[i][2])) return;
    const key = (b: [string, string, string]) => `${b[0]}\u0000${b[1]}\u0000${b[2]}`;
    const was = new Set(before.map(key));
    const now = new Set(after.map(key));
    const byProvider = new Map<string, { added: { namespace: string; external_id: string }[]; removed: { namespace: string; external_id: string }[] }>();
    const slot = (p: string) => {
      let s = byProvider.get(p);
      if (!s) byProvider.set(p, (s = { added: [], removed: [] }));
      return s;
    };
    for (const b of after) if (!was.has(key(b))) slot(b[0]).added.push({ namespace: b[1], external_id: b[2] });
    for (const b of before) if (!now.has(key(b))) slot(b[0]).removed.push({ namespace: b[1], external_id: b[2] });
    for (const p of [...byProvider.keys()].sort()) {
      const s = byProvider.get(p)!;
      emit('provider_updated', { type: 'provider_updated', reep_id: id, provider: p, added: s.added, removed: s.removed }, p);
    }
  }

  function buildOverlay(a: Acc) {
    const qid = a.link?.[0] || a.xids.find((x) => x[4])?.[4] || a.oaliases.find((x) => x[3])?.[3] || '';
    if (!/^Q[1-9][0-9]*$/.test(qid)) {
      if (a.link || a.xids.length || a.oaliases.length) noteSlack(ctx, 'csv/overlay_links.csv.gz', 'overlay without a valid QID', a.id);
      return null;
    }
    const ids: OverlayIds = new Map();
    for (const [prov, prop, ext, conf] of a.xids) addOverlayId(ids, prov, prop, ext, conf);
    if (a.link?.[3]) {
      try {
        const inherited = JSON.parse(a.link[3]);
        if (Array.isArray(inherited)) for (const x of inherited) if (x && typeof x === 'object') addOverlayId(ids, String(x.provider ?? ''), String(x.property ?? ''), String(x.external_id ?? ''), x.confidence);
      } catch {
        noteSlack(ctx, 'csv/overlay_links.csv.gz', 'inherited is not valid JSON', a.id);
      }
    }
    const aliasMap = new Map<string, { name: string; language: string | null; source: 'kb'; confidence: number | null }>();
    for (const [name, language, conf] of a.oaliases) {
      if (!name) continue;
      const k = `${name}\u0000${language}`;
      const c = conf === '' ? null : parseFloat(conf);
      const prev = aliasMap.get(k);
      if (!prev || (c !== null && (prev.confidence === null || prev.confidence < c))) {
        aliasMap.set(k, { name, language: language || null, source: 'kb', confidence: c !== null && Number.isFinite(c) ? c : null });
      }
    }
    return {
      source: 'kb' as const,
      source_tier: 'kb-originated' as const,
      qid,
      link_confidence: finiteOrNull(a.link?.[1]),
      dob_check: a.link?.[2] ? a.link[2] : null,
      ids: sortShort([...ids.keys()], cmp).map((k) => ids.get(k)!),
      aliases: sortShort([...aliasMap.keys()], cmp).map((k) => aliasMap.get(k)!),
    };
  }
}

/** A shard's sections in order (see EntityIndexValue's cuts), and what each section's rows are. */
const SECTION_NAMES = ['core', 'aliases', 'attributes', 'bridges', 'relationships', 'overlay'];
const SECTION_ROWS = ['', 'aliases', 'attributes', 'bridges', 'relationship families', 'overlay rows'];
/** The bytes the runtime puts in place of one bridge's role marker (see common/shard-format.ts). */
const spliceBytes = (type: string, role: string): number => Buffer.byteLength(`,"entity_type":${JSON.stringify(type)},"role":${JSON.stringify(role)}`);
const LONGEST_SPLICE = Math.max(...ENTITY_TYPES.flatMap((t) => PROVIDER_ROLES.map((r) => spliceBytes(t, r))));

/** No rows (yet): shared and frozen, so a push to it, instead of to the list `own` makes, throws. */
const NONE: never[] = Object.freeze([]) as unknown as never[];
const NO_RELS: ReadonlyMap<string, { out: number; in: number }> = new Map();
const TYPE_COUNT_KEYS = ENTITY_TYPES.map((t) => `entities_${t}`);

/** The Acc's own list under `key`, made on its first row. */
function own<K extends 'aliases' | 'oaliases' | 'xids' | 'priorBridges'>(a: Acc, key: K): Acc[K] {
  let list = a[key];
  if (list === NONE) a[key] = list = [] as unknown as Acc[K];
  return list;
}

// Per-entity helpers live out here: tsx (esbuild keepNames) wraps every named closure in a naming call each time
// one is made, which cost ~1% of stage 2 when they were made per entity.

/**
 * `,"attributes":{...}` with the names sorted, written out rather than built as an object for JSON.stringify: most
 * entities are matches with about ten attributes, and the object's keys (and `__proto__` or a numeric column name,
 * which an object would drop or reorder) cost more than the text. The quoted names are kept, one per column.
 */
function attributesSection(attrs: Map<string, string[]>): string {
  const names = sortShort([...attrs.keys()], cmp);
  let out = ',"attributes":{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    let key = QUOTED_NAMES.get(name);
    if (key === undefined) QUOTED_NAMES.set(ownCopy(name), (key = `${q(name)}:`));
    const values = attrs.get(name)!;
    out += (i === 0 ? key : `,${key}`) + (values.length === 1 ? `[${q(values[0])}]` : JSON.stringify(values));
  }
  return out + '}';
}
const QUOTED_NAMES = new Map<string, string>();

/**
 * `,"relationships":[...]`: a summary per family, by family name, written out as attributesSection is (an object
 * per family for JSON.stringify cost more than its text). Keys in this order: family, count, roles (incoming before
 * outgoing, each only when non-zero), source_providers, expansion.
 */
function relationshipsSection(rels: ReadonlyMap<string, { out: number; in: number }>): string {
  if (rels.size === 0) return ',"relationships":[]';
  const families = sortShort([...rels.keys()], cmp);
  let out = ',"relationships":[';
  for (let i = 0; i < families.length; i++) {
    const family = families[i];
    const f = rels.get(family)!;
    const count = f.out + f.in;
    const roles = f.in && f.out ? `"incoming":${f.in},"outgoing":${f.out}` : f.in ? `"incoming":${f.in}` : f.out ? `"outgoing":${f.out}` : '';
    const expansion = count > HIGH_CARDINALITY ? 'summary_only_high_cardinality' : 'summary_only';
    out += `${i === 0 ? '' : ','}{"family":${q(family)},"count":${count},"roles":{${roles}},"source_providers":[],"expansion":"${expansion}"}`;
  }
  return out + ']';
}

/** A match's `,"scoreline":{...}`: its first value of each field, the scores as integers (null when not one). */
function scorelineSection(attrs: Map<string, string[]> | null): string {
  let out = ',"scoreline":{';
  for (let i = 0; i < SCORELINE.length; i++) {
    const [name, key, integer] = SCORELINE[i];
    const v = attrs?.get(name)?.[0];
    const n = v === undefined || !integer ? null : toInt(v);
    out += key + (v === undefined || (integer && n === null) ? 'null' : integer ? String(n) : q(v));
  }
  return out + '}';
}
/** Scoreline fields in shard order: name, its quoted key with the separator before it, whether an integer. */
const SCORELINE: [string, string, boolean][] = (
  [
    ['home_score', true], ['away_score', true], ['result_form', false], ['shootout_home', true], ['shootout_away', true],
    ['score_basis', false], ['home_id', false], ['away_id', false], ['played_on', false],
  ] as const
).map(([name, integer], i) => [name, `${i === 0 ? '' : ','}${JSON.stringify(name)}:`, integer]);

/** Keeps each token of `text` with its strongest source so far. */
function takeTokens(best: Map<string, number>, text: string, src: number): void {
  for (const t of tokenize(text)) if ((best.get(t) ?? 0) < src) best.set(t, src);
}

type OverlayIds = Map<string, { provider: string; property: string; external_id: string; confidence: number }>;

/** Adds one overlay ID, keeping the highest confidence per (provider, property, external ID). */
function addOverlayId(ids: OverlayIds, provider: string, property: string, external_id: string, confidence: unknown): void {
  const c = typeof confidence === 'number' ? confidence : parseFloat(String(confidence));
  if (!provider || !external_id || !Number.isFinite(c)) return;
  const k = `${provider}\u0000${property}\u0000${external_id}`;
  const prev = ids.get(k);
  if (!prev || prev.confidence < c) ids.set(k, { provider, property, external_id, confidence: clamp01(c) });
}

const finiteOrNull = (s: string | undefined): number | null => (s === undefined || s === '' || !Number.isFinite(parseFloat(s)) ? null : parseFloat(s));

interface Alias {
  name: string;
  language: string | null;
  type: string | null;
  rank: number | null;
}

/** An entity's aliases as its shard lists them: by rank (unranked last), name, type and language, repeats dropped. */
function aliasesOf(rows: [string, string, string, string][]): Alias[] {
  const aliases: Alias[] = sortShort(
    rows.map(([name, kind, rank, language]) => ({ name, language: language || null, type: kind || null, rank: parseRank(rank) })),
    compareAliases,
  );
  return aliases.filter((x, i) => i === 0 || !sameAlias(x, aliases[i - 1]));
}

const compareAliases = (x: Alias, y: Alias) =>
  rankKey(x.rank) - rankKey(y.rank) || cmp(x.name, y.name) || cmp(x.type ?? '', y.type ?? '') || cmp(x.language ?? '', y.language ?? '');

const sameAlias = (x: Alias, y: Alias) => x.name === y.name && x.language === y.language && x.type === y.type && x.rank === y.rank;

/** Counts one relationship of family `kind` on `a`: outgoing when `a` is its from_id, else incoming. */
function addRelation(a: Acc, kind: string, outgoing: boolean): void {
  const rels = (a.rels ??= new Map());
  let fam = rels.get(kind);
  if (!fam) rels.set(kind, (fam = { out: 0, in: 0 }));
  if (outgoing) fam.out++;
  else fam.in++;
}

function addAttr(a: Acc, name: string, value: string): void {
  const attrs = (a.attrs ??= new Map());
  const list = attrs.get(name);
  if (!list) attrs.set(name, [value]);
  else if (!list.includes(value)) list.push(value);
}

/** Sorts and deduplicates an ID's own bridge list in place (the Acc made it; nothing else holds it) and returns it. */
function dedupeBridges(list: [string, string, string][]): [string, string, string][] {
  sortShort(list, compareBridges);
  let k = 0;
  for (let i = 0; i < list.length; i++) {
    const b = list[i];
    if (k > 0 && b[0] === list[k - 1][0] && b[1] === list[k - 1][1] && b[2] === list[k - 1][2]) continue;
    list[k++] = b;
  }
  // Only when shorter: the shared empty list (NONE) is frozen, and even an unchanged length cannot be set on it.
  if (k < list.length) list.length = k;
  return list;
}
const compareBridges = (x: [string, string, string], y: [string, string, string]) => cmp(x[0], y[0]) || cmp(x[1], y[1]) || cmp(x[2], y[2]);

/**
 * Sorts `list` in place as `list.sort(compare)` would (both are stable). An entity's lists are short (its bridges,
 * attribute names, relationship families), and Array.prototype.sort copies a list into a work array before sorting
 * it: ~6% of a compile's allocation went there. An insertion sort allocates nothing; a longer list goes to sort.
 */
function sortShort<T>(list: T[], compare: (a: T, b: T) => number): T[] {
  if (list.length > 16) return list.sort(compare);
  for (let i = 1; i < list.length; i++) {
    const x = list[i];
    let j = i - 1;
    for (; j >= 0 && compare(list[j], x) > 0; j--) list[j + 1] = list[j];
    list[j + 1] = x;
  }
  return list;
}

export function tombstoneBody(id: string): string {
  return JSON.stringify({ error: 'gone', message: `Register ID ${id} was retired and is never reused.`, detail: id });
}

const q = jsonString;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const parseRank = (s: string): number | null => (s === '' || !Number.isFinite(Number(s)) ? null : Number(s));
const rankKey = (r: number | null) => (r === null ? Number.MAX_SAFE_INTEGER : r);
const toInt = (s: string): number | null => (/^-?\d+$/.test(s.trim()) ? parseInt(s, 10) : null);
const clamp01 = (n: number) => Math.min(1, Math.max(0, n));
