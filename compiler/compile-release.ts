// Compiles one verified release into dist/<stamp>/: the declared stages run over one context, into a temp dir that
// is fsynced and renamed into place only when everything succeeded.
import { mkdir, rm, rename, writeFile, readFile, readdir, stat } from 'node:fs/promises';
import { fsyncPath } from '../common/durable-file.ts';
import { join } from 'node:path';
import type { BucketFamily } from '../common/bucket-format.ts';
import { DIST_FORMAT, MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR, RELEASE_DOC, type ChangesDoc, type ReleaseDoc } from '../common/dist-layout.ts';
import { Progress, refuseSlackUnderStrict, timed, type CompileContext, type CompileOptions, type StageTiming } from './context.ts';
import type { ReleaseInput } from './read/release-input.ts';
import { declare, runStages, type Step } from './run-stages.ts';
import { joinTables, readOwnTables, readRedirectTables, sideTablesStage, type RedirectsRead } from './stages/tables/read-tables.ts';
import type { SideReadResult } from './stages/tables/side-tables.ts';
import type { TablesRead } from './records/tables-read.ts';
import { ENTITY_RANGES, entitiesStage, type EntitiesBuilt } from './stages/entities/build-entities.ts';
import { writeEntityIndex } from './stages/entities/entity-index.ts';
import { HIGH_CARDINALITY } from './stages/entities/entity-shard.ts';
import { resolveStage } from './stages/build-resolve.ts';
import { buildSearchDocs, orderSearchDocs, searchTokensStage, type SearchOrder } from './stages/build-search.ts';
import { buildChanges } from './stages/build-changes.ts';
import { MATCH_JOBS, matchesStage } from './stages/build-matches.ts';
import { nameKeysStage, type NameKeysBuilt } from './stages/build-name-keys.ts';
import type { MatchesDoc } from '../common/match-index.ts';
import { buildDocuments, releaseSummary, type DocumentsBuilt } from './stages/build-documents.ts';
import { readCompiledPublicFiles, writeManifests, type StampManifest } from './dist-manifest.ts';
import { findDiffBase } from './write/diff-base.ts';
import { inheritedShards, linkInheritedShards } from './write/shared-shards.ts';
import { writeReleasePatches } from './write/release-patches.ts';

/** What the stages hand on, by name: each one stage's output, read by the steps after it. */
interface Outputs {
  redirects: RedirectsRead;
  sideTables: SideReadResult[];
  ownTables: TablesRead;
  tables: TablesRead;
  resolve: BucketFamily;
  entities: EntitiesBuilt;
  searchOrder: SearchOrder;
  searchTokens: BucketFamily;
  entityIndex: BucketFamily;
  searchDocs: BucketFamily;
  changes: ChangesDoc;
  documents: DocumentsBuilt;
  matches: MatchesDoc;
  nameKeys: NameKeysBuilt;
}

const { here, inRanges, alongside, check } = declare<Outputs>();

/**
 * The compile, step by step (compiler/run-stages.ts runs it). With threads on, `alongside` steps run in a worker
 * thread of their own while the steps after them run here, until a step that needs them (or the end); `inRanges`
 * splits a stage over a fixed number of worker threads. With threads off the same steps run here, to the same bytes.
 */
const STAGES: Step<Outputs>[] = [
  // Stage 1: the redirects, which every reader checks against; the bridges (and the predecessor's tables) in side
  // threads while this one reads the rest; then the join.
  here('read redirects', 'redirects', readRedirectTables, () => undefined),
  alongside('read bridges', 'bridges', 'sideTables', sideTablesStage, (o) => o.redirects),
  here('read tables', 'ownTables', readOwnTables, (o) => o.redirects),
  here('join tables', 'tables', joinTables, (o) => ({ own: o.ownTables, side: o.sideTables }), ['sideTables']),
  // The resolve index needs nothing but stage 1's output.
  alongside('build resolve', 'resolve', 'resolve', resolveStage, (o) => o.tables),
  inRanges('build entities', 'entities', entitiesStage, ENTITY_RANGES, (o) => o.tables),
  // Stages 1 and 2 are the ones that note slack.
  check('refuse slack under --strict', refuseSlackUnderStrict),
  // The match index needs stage 2's match records and the redirects only.
  alongside('build match index', 'match index', 'matches', matchesStage, (o) => ({ records: o.entities.matches, redirects: o.tables.redirects })),
  // The name keys need nothing but stage 2's name key lines.
  alongside('build name keys', 'name keys', 'nameKeys', nameKeysStage, (o) => o.entities.names),
  here('order search docs', 'searchOrder', orderSearchDocs, (o) => o.entities.search.docs),
  // The token family needs nothing but the postings and the ordinals.
  alongside('build search tokens', 'search tokens', 'searchTokens', searchTokensStage, (o) => ({ search: o.entities.search, order: o.searchOrder })),
  here('write entity index', 'entityIndex', writeEntityIndex, (o) => o.entities.index),
  here('build search docs', 'searchDocs', buildSearchDocs, (o) => ({ docs: o.entities.search.docs, order: o.searchOrder })),
  here('build changelog', 'changes', buildChanges, (o) => o.entities.changes),
  // /meta counts the provider IDs that name more than one entity, which the resolve stage finds.
  here('build documents', 'documents', buildDocuments, (o) => ({ tables: o.tables, rollup: o.entities.rollup }), ['resolve']),
];

export interface CompileReport {
  stamp: string;
  manifest: StampManifest;
  slack: { what: string; count: number; example: string }[];
  counts: Record<string, number>;
  timings: StageTiming[];
  /** Lines warning of something done, but less well than it could be (no patches: see write/release-patches.ts). */
  warnings: string[];
  /** The changelog against the predecessor: events per type, provider updates per provider (the compile report's). */
  changes: { prior: string | null; counts: Record<string, number>; provider_counts: Record<string, number> };
}

export async function compileRelease(release: ReleaseInput, prior: ReleaseInput | null, distDir: string, options: CompileOptions = {}): Promise<CompileReport> {
  const outDir = join(distDir, `.tmp-${release.stamp}-${process.pid}`);
  await rm(outDir, { recursive: true, force: true });
  const ctx: CompileContext = {
    release,
    prior,
    options: {
      strict: options.strict ?? false,
      partitions: options.partitions ?? 256,
      progress: options.progress ?? Boolean(process.stderr.isTTY),
      packBytes: options.packBytes ?? 256 * 1024 * 1024,
      threads: options.threads ?? inputBytes(release) >= THREADS_FROM_BYTES,
      matchJobs: options.matchJobs ?? MATCH_JOBS,
      shareShards: options.shareShards ?? true,
      patches: options.patches ?? true,
    },
    outDir,
    publicDir: join(outDir, PUBLIC_DIR),
    privateDir: join(outDir, PRIVATE_DIR),
    scratchDir: join(outDir, '.scratch'),
    slack: new Map(),
    counts: { entities: 0, redirects: 0, tombstones: 0, bridges: 0, aliases: 0, relationships: 0, overlay_links: 0 },
    progress: new Progress(options.progress ?? Boolean(process.stderr.isTTY)),
    timings: [],
    written: new Map(),
    writtenPrivate: new Map(),
    priorDiffBase: null,
    priorPublicFiles: null,
    inheritedShards: [],
    warnings: [],
  };
  try {
    await mkdir(ctx.publicDir, { recursive: true });
    await mkdir(ctx.privateDir, { recursive: true });
    ctx.priorDiffBase = prior ? findDiffBase(distDir, prior, ctx.options.partitions) : null;
    // Read once: the packs inherited and the patches made are both the predecessor's files as its manifest lists them.
    ctx.priorPublicFiles = prior ? await readCompiledPublicFiles(join(distDir, prior.stamp)) : null;
    ctx.inheritedShards = await inheritedShards(ctx.priorDiffBase, ctx.priorPublicFiles, ctx.options.shareShards);
    // Checked and linked while the stages run: reading ~1 GiB of packs at full size overlaps stage 1.
    const linked = ctx.inheritedShards.length ? linkInheritedShards(ctx.priorDiffBase!, ctx.inheritedShards, ctx.publicDir) : Promise.resolve();
    linked.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled
    // A failed stage still waits for the links, so nothing is written into the folder after it is removed.
    const o = await runStages(ctx, STAGES).finally(() => linked.catch(() => undefined));
    await linked;
    ctx.counts.providers = o.documents.providers.length;
    // Every public content file is written; release.json is not patched (it is small and read first).
    const patchWarning = await timed(ctx, 'write patches', () => writeReleasePatches(ctx, distDir));
    if (patchWarning) ctx.warnings.push(patchWarning);
    const doc: ReleaseDoc = {
      format: DIST_FORMAT,
      stamp: release.stamp,
      prior: prior?.stamp ?? null,
      summary: releaseSummary(ctx),
      counts: sortKeys(ctx.counts),
      providers: o.documents.providers,
      shard_packs: o.entities.shardPacks,
      families: { entities: o.entityIndex, resolve: o.resolve, search: o.searchTokens, search_docs: o.searchDocs, names: o.nameKeys.family },
      name_countries: o.nameKeys.countries,
      documents: o.documents.documents,
      changes: o.changes,
      matches: o.matches,
      high_cardinality_threshold: HIGH_CARDINALITY,
    };
    await writeFile(join(ctx.publicDir, RELEASE_DOC), JSON.stringify(doc));
    await rm(ctx.scratchDir, { recursive: true, force: true });
    const manifest = await timed(ctx, 'manifest and fsync', async () => {
      const m = await writeManifests(outDir, release.stamp, DIST_FORMAT, ctx.written, ctx.writtenPrivate);
      await fsyncTree(outDir);
      return m;
    });
    const final = join(distDir, release.stamp);
    const existing = await readStampDigest(final);
    if (existing === manifest.digest) {
      // Same release, same bytes: the published folder already is this output; leave it untouched.
      await rm(outDir, { recursive: true, force: true });
    } else if (existing !== null || (await exists(final))) {
      // Replacing a stamp a runtime may be serving: move it aside, move the new one in, then drop the old.
      // A kill between the two renames leaves `.tmp-old-<stamp>`, which the next compile moves back first.
      const aside = join(distDir, `${ASIDE_PREFIX}${release.stamp}`);
      await rm(aside, { recursive: true, force: true });
      await rename(final, aside);
      await rename(outDir, final);
      await fsyncPath(distDir);
      await rm(aside, { recursive: true, force: true });
    } else {
      await rename(outDir, final);
      await fsyncPath(distDir);
    }
    return {
      stamp: release.stamp,
      manifest,
      counts: doc.counts,
      timings: ctx.timings,
      warnings: ctx.warnings,
      changes: { prior: doc.changes.prior, counts: doc.changes.counts, provider_counts: doc.changes.provider_counts },
      slack: [...ctx.slack].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([what, s]) => ({ what, count: s.count, example: s.example })),
    };
  } catch (e) {
    await rm(outDir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Below this much listed input, stages run inline: starting a worker thread (and its TypeScript loader) costs more
 * than a small release's whole compile. Threads or not, the output is the same bytes (tested).
 */
const THREADS_FROM_BYTES = 4 * 1024 * 1024;

const inputBytes = (release: ReleaseInput): number => Object.values(release.manifest.files).reduce((n, f) => n + f.bytes, 0);

/** Prefix of a published stamp folder moved aside while it is replaced (see compileAll's sweep). */
export const ASIDE_PREFIX = '.tmp-old-';

/** The published stamp's digest, or null when there is none in this format (so it is replaced). */
async function readStampDigest(dir: string): Promise<string | null> {
  try {
    const m = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as { digest: string; format?: string };
    return m.format === DIST_FORMAT ? m.digest : null;
  } catch {
    return null;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

async function fsyncTree(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await fsyncTree(p);
    else await fsyncPath(p);
  }
  await fsyncPath(dir);
}

