// Stage 2: one partition at a time, gather each ID's rows (gather-rows.ts), write its shard and index entry
// (entity-shard.ts) and its change events against the predecessor (entity-changes.ts), and hand its names to the
// search stage's collector and its bridges to the documents stage's rollup, in one pass over the partition. Memory
// is bounded by the largest partition. The partitions are cut into ENTITY_RANGES ranges, each built on its own.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ENTITY_TYPES } from '../../../common/ids.ts';
import { shardBridges } from '../../../common/shard-format.ts';
import { mergeSlack } from '../../context.ts';
import { addShared, sharedCount, type SharedCount } from '../../../common/progress.ts';
import { ShardPackWriter } from '../../write/shard-pack-writer.ts';
import type { ContentFile } from '../../write/content-file.ts';
import { GroupSpill, type GroupSpillHandle } from '../../write/group-spill.ts';
import { diffBaseMeta, writeDiffBaseMeta, type DiffBaseSource } from '../../write/diff-base.ts';
import { IndexEntryLog } from '../../records/index-entry-log.ts';
import { ChangeEvents, ChangeEventWriter } from '../../records/change-events.ts';
import { MatchRecordWriter, type MatchRecordsHandle } from '../../records/match-records.ts';
import type { LineLayout } from '../../records/partition-lines.ts';
import type { ThreadedStage } from '../../run-stages.ts';
import type { RedirectInfo, TablesRead } from '../../records/tables-read.ts';
import { joinSearchParts, SearchCollector, type SearchInput, type SearchPart } from '../../records/search-collector.ts';
import { ProviderRollup, type RollupPart } from '../../records/provider-rollup.ts';
import { NameKeyCollector, type NamePart } from '../../records/name-key-records.ts';
import { RowReader } from './gather-rows.ts';
import type { Bridge, EntityRows } from '../../records/entity-rows.ts';
import { EntityShardWriter } from './entity-shard.ts';
import { EntityChanges, type PriorChunk } from './entity-changes.ts';
import { dedupeBridges } from './short-lists.ts';
import { matchFactsOf, type MatchFacts } from '../../../common/scoreline.ts';

const MATCH_TYPE = ENTITY_TYPES.indexOf('match');

/**
 * Partition ranges built side by side. Fixed, not taken from the machine's core count: the ranges decide the pack
 * boundaries, and a release must compile to the same bytes on any machine.
 */
export const ENTITY_RANGES = 2;

/** The first partition of range `r` of `ranges` over `partitions`. */
const rangeStart = (partitions: number, r: number, ranges: number): number => Math.floor((partitions * r) / ranges);

/**
 * Young generation of each range's worker, in MiB. A partition's rows and accumulators live until its last entity
 * is written: in V8's default young generation for a worker they survive two scavenges, are promoted, and die in
 * old space, where collecting them is costly. With this much most of a partition dies young, for some hundreds of
 * MB more peak RSS (bench/HISTORY.md has the measurements).
 */
const RANGE_YOUNG_GENERATION_MB = 192;

/** IDs built, written and dropped together; their rows then live for a chunk, not for a whole partition. */
const CHUNK_IDS = 256;

/** What stage 2 hands to the later stages. */
export interface EntitiesBuilt {
  /** Shard packs, paths relative to public/, in pack-number order. */
  shardPacks: string[];
  /** Each range's index entries, and the number of its first pack in shardPacks. */
  index: { log: string; packBase: number }[];
  /** For the search stage. */
  search: SearchInput;
  /** For the changelog stage. */
  changes: ChangeEvents;
  /** For the documents stage. */
  rollup: ProviderRollup;
  /** For the match-index stage: each range's match and ref records (compiler/records/match-records.ts). */
  matches: MatchRecordsHandle[];
  /** For the name keys stage: each range's name key lines (compiler/records/name-key-records.ts). */
  names: NamePart[];
}

/** Everything one range of partitions is built from; plain data, so it can cross to a worker thread. */
export interface EntityRangeJob {
  /** Partitions [from, to) of `partitions`. */
  from: number;
  to: number;
  partitions: number;
  /** Partition lines of stage 1 (see TablesRead.spills). */
  spills: GroupSpillHandle[];
  layouts: [string, LineLayout][];
  redirects: [string, RedirectInfo][];
  priorRedirects: [string, RedirectInfo][];
  providerRoles: [string, string][];
  /** This release's providers, sorted: the change streams. */
  providers: string[];
  hasPrior: boolean;
  /** The predecessor's diff base, read instead of its tables when there is one (see compiler/write/diff-base.ts). */
  priorDiffBase: DiffBaseSource | null;
  /** Whether this release inherits the predecessor's shard packs, leaving each unchanged shard where it is (see shareShards). */
  shareShards: boolean;
  /** Where this release's own diff base goes (under private/). */
  privateDir: string;
  /** This range's own scratch directory. */
  scratchDir: string;
  publicDir: string;
  packBytes: number;
  /** How errors name the entities table (its path in the release), and the redirects table. */
  entitiesLabel: string;
  redirectsLabel: string;
  /** Advanced once per partition built, for the progress line. */
  partitionsDone?: SharedCount;
}

/** What one range produced; plain data again. Index entries name packs by their number within this range. */
export interface EntityRangeResult {
  packs: ContentFile[];
  /** Bytes of the documents the range's index entries point at, in its packs or inherited ones. */
  referenced: number;
  /** Diff base files, paths relative to private/. */
  privateFiles: ContentFile[];
  /** Path of the range's index entries (an IndexEntryLog), pack numbers counted within the range. */
  index: string;
  search: SearchPart;
  events: GroupSpillHandle;
  matches: MatchRecordsHandle;
  names: NamePart;
  rollup: RollupPart;
  counts: Record<string, number>;
  slack: [string, { count: number; example: string }][];
}

/** Stage 2 over contiguous partition ranges, merged in range order: the output equals a sequential build's. */
export const entitiesStage: ThreadedStage<TablesRead, EntityRangeJob, EntityRangeResult, EntitiesBuilt> = {
  worker: new URL('./build-entities.ts#buildEntityRange', import.meta.url),
  youngGenerationMb: RANGE_YOUNG_GENERATION_MB,
  jobs: (ctx, read, ranges) => {
    const P = ctx.options.partitions;
    // Shared with the range threads, which advance it; only while a progress line shows it.
    const partitionsDone = ctx.progress.enabled ? sharedCount() : undefined;
    if (partitionsDone) ctx.progress.follow(`build entity shards (${ranges} ranges${ctx.options.threads ? ', in worker threads' : ''})`, P, partitionsDone, 'partitions');
    return Array.from({ length: ranges }, (_, r) => ({
      from: rangeStart(P, r, ranges),
      to: rangeStart(P, r + 1, ranges),
      partitions: P,
      spills: read.spills.map((sp) => sp.handle()),
      layouts: [...read.layouts],
      redirects: [...read.redirects],
      priorRedirects: [...read.priorRedirects],
      providerRoles: [...read.providerRoles],
      providers: [...read.providers].sort(),
      hasPrior: ctx.prior !== null,
      priorDiffBase: ctx.priorDiffBase,
      shareShards: ctx.inheritedShards.length > 0,
      privateDir: ctx.privateDir,
      scratchDir: join(ctx.scratchDir, `range-${r}`),
      publicDir: ctx.publicDir,
      packBytes: ctx.options.packBytes,
      entitiesLabel: ctx.release.tables.entities!.label,
      redirectsLabel: ctx.release.tables.redirects?.label ?? 'csv/redirects.csv.gz',
      partitionsDone,
    }));
  },
  run: (job) => buildEntityRange(job),
  merge: (ctx, results, read) => {
    for (const sp of read.spills) sp.dispose();
    const built: EntitiesBuilt = {
      // Inherited packs keep their numbers: this release's list starts with the predecessor's.
      shardPacks: ctx.inheritedShards.map((f) => f.path),
      index: [],
      search: joinSearchParts(results.map((r) => r.search)),
      changes: new ChangeEvents([...read.providers].sort(), results.map((r) => r.events)),
      rollup: new ProviderRollup(),
      matches: results.map((r) => r.matches),
      names: results.map((r) => r.names),
    };
    // `[first partition, first pack]` of each range, which this release's diff base records.
    const packRanges: [number, number][] = [];
    const P = ctx.options.partitions;
    const shardBytes = { referenced: 0, packs: 0 };
    for (const f of ctx.inheritedShards) {
      ctx.written.set(f.path, f);
      shardBytes.packs += f.bytes;
    }
    for (const [r, res] of results.entries()) {
      // This range's pack numbers follow the earlier ranges' packs.
      const packBase = built.shardPacks.length;
      packRanges.push([rangeStart(P, r, results.length), packBase]);
      for (const f of res.packs) {
        ctx.written.set(f.path, f);
        built.shardPacks.push(f.path);
        shardBytes.packs += f.bytes;
      }
      shardBytes.referenced += res.referenced;
      for (const f of res.privateFiles) ctx.writtenPrivate.set(f.path, f);
      built.index.push({ log: res.index, packBase });
      built.rollup.add(res.rollup);
      for (const [k, n] of Object.entries(res.counts)) ctx.counts[k] = (ctx.counts[k] ?? 0) + n;
      mergeSlack(ctx, res.slack);
    }
    writeDiffBaseMeta(ctx.privateDir, diffBaseMeta(ctx.release, P, packRanges, shardBytes));
    return built;
  },
};

/** A chunk of a partition's IDs, read and ready to write. */
interface Chunk {
  first: number;
  entities: EntityRows[];
  /** Each ID's bridges, sorted and deduplicated. */
  bridges: Bridge[][];
  /** Each ID's bridges section as its shard stores it (shardBridges). */
  sections: string[];
  /** A live match's scoreline and fixture (null for any other ID). */
  facts: (MatchFacts | null)[];
  prior: PriorChunk;
}

/**
 * Builds partitions [from, to): shards into this range's own packs, index entries into a log, search postings and
 * change events into this range's spills. Runs in a worker thread or inline; the result is the same either way.
 */
export async function buildEntityRange(job: EntityRangeJob): Promise<EntityRangeResult> {
  const spills = job.spills.map((h) => GroupSpill.open(h));
  const redirects = new Map(job.redirects);
  const redirected = (id: string) => redirects.has(id);
  const providerRoles = new Map(job.providerRoles);
  const roleOf = (b: readonly [string, string, string]) => providerRoles.get(b[0]) ?? 'canonical_bridge';
  const ledger = new Map<string, ContentFile>();
  const packs = new ShardPackWriter({ root: job.publicDir, packBytes: job.packBytes, ledger });
  mkdirSync(job.scratchDir, { recursive: true });
  const index = new IndexEntryLog(join(job.scratchDir, 'index-entries.bin'));
  const ctx = { slack: new Map<string, { count: number; example: string }>() };
  const counts: Record<string, number> = { entities: 0, redirects: 0, tombstones: 0, bridges: 0, aliases: 0, relationships: 0, overlay_links: 0 };
  const reader = new RowReader(new Map(job.layouts));
  const shards = new EntityShardWriter(packs, index, roleOf, counts, ctx, job.entitiesLabel);
  const events = new ChangeEventWriter(join(job.scratchDir, 'events'), job.providers);
  const changes = new EntityChanges(
    {
      hasPrior: job.hasPrior, priorDiffBase: job.priorDiffBase, priorRedirects: new Map(job.priorRedirects), privateDir: job.privateDir,
      entitiesLabel: job.entitiesLabel, redirectsLabel: job.redirectsLabel,
    },
    events,
    ctx,
  );
  const search = new SearchCollector(join(job.scratchDir, 'postings'));
  const matches = new MatchRecordWriter(join(job.scratchDir, 'matches'));
  const names = new NameKeyCollector(join(job.scratchDir, 'names'));
  // The overlay's provider IDs never count as a match's public bridges.
  const publicBridge = (b: Bridge) => roleOf(b) !== 'overlay_only';
  const rollup = new ProviderRollup();
  const privateFiles: ContentFile[] = [];

  // The predecessor's packs stay open until every partition is built, or one failed.
  try {
    for (let p = job.from; p < job.to; p++) {
      const rows = reader.gather(spills, p);
      changes.startPartition(p, rows);
      // In chunks of IDs, each built, written and dropped before the next, so an entity's rows die young. Preparing
      // a chunk reads its IDs' rows and starts reading the old values of those that changed since the predecessor;
      // the next chunk is prepared before this one is written, so those reads overlap the writing.
      const prepare = (first: number): Chunk => {
        const n = Math.min(CHUNK_IDS, rows.ids.length - first);
        const entities: EntityRows[] = new Array(n);
        const bridges: Bridge[][] = new Array(n);
        const sections: string[] = new Array(n);
        const facts: (MatchFacts | null)[] = new Array(n);
        for (let i = 0; i < n; i++) {
          const a = (entities[i] = rows.read(first + i));
          bridges[i] = dedupeBridges(a.bridges);
          sections[i] = shardBridges(bridges[i], roleOf);
          facts[i] = a.live && a.type === MATCH_TYPE ? matchFactsOf(a.attrs, a.dropped) : null;
        }
        return { first, entities, bridges, sections, facts, prior: changes.prepare(first, entities, bridges, sections, facts, redirected) };
      };
      for (let next = rows.ids.length ? prepare(0) : null; next; ) {
        const chunk = next;
        const end = chunk.first + chunk.entities.length;
        next = end < rows.ids.length ? prepare(end) : null;
        await changes.settle(chunk.prior, chunk.entities);
        for (let i = 0; i < chunk.entities.length; i++) {
          const a = chunk.entities[i];
          const redirect = redirects.get(a.id);
          const bridges = chunk.bridges[i];
          const section = chunk.sections[i];
          if (a.live) {
            const type = ENTITY_TYPES[a.type];
            const shard = shards.live(a, type, bridges, section, chunk.facts[i], job.shareShards ? changes.priorShard(chunk.prior, i) : null);
            changes.placed(shard.loc, shards.cuts);
            search.add(a.id, a.type, a.label, bridges.length, shard.aliases, shard.overlay?.aliases ?? null);
            if (a.type !== MATCH_TYPE) names.add(a.id, a.type, bridges.length, a.attrs?.get('country')?.[0] ?? '', a.label, shard.aliases, shard.overlay?.aliases ?? null);
            rollup.bridges(type, bridges);
            matches.add(a, type, bridges, publicBridge, chunk.facts[i]);
            if (shard.overlay) rollup.overlay(shard.overlay.ids);
          } else if (redirect) {
            if (redirect.to) shards.redirect(a.id, redirect.to);
            else shards.tombstone(a.id);
          } else if (changes.vanishes(chunk.prior, i, a)) {
            // Published by the predecessor, absent here: an ID is never reused, so it answers 410 like any tombstone.
            shards.tombstone(a.id);
          }
          changes.compare(chunk.prior, i, a, redirect, bridges, section, chunk.facts[i]);
        }
      }
      privateFiles.push(...changes.finishPartition(p));
      addShared(job.partitionsDone);
    }
  } finally {
    await changes.close();
  }
  index.close();
  const packPaths = await packs.finish();
  return {
    packs: packPaths.map((path) => ledger.get(path)!),
    referenced: packs.referenced,
    privateFiles,
    index: index.path,
    search: search.finish(),
    events: events.finish(),
    matches: matches.finish(),
    names: names.finish(),
    rollup: rollup.part(),
    counts,
    slack: [...ctx.slack],
  };
}
