// Compiles one verified release into dist/<stamp>/: the stages run in order over one context, into a temp dir that
// is fsynced and renamed into place only when everything succeeded.
import { mkdir, rm, rename, writeFile, open, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import { DIST_FORMAT, MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR, RELEASE_DOC, type ReleaseDoc } from '../common/dist-layout.ts';
import { POINT_LOOKUP_BUCKET_BYTES, Progress, timed, type CompileContext, type CompileOptions, type StageTiming } from './context.ts';
import type { ReleaseInput } from './read/release-input.ts';
import { readTables } from './stages/read-tables.ts';
import { buildEntities, HIGH_CARDINALITY } from './stages/build-entities.ts';
import { startResolve } from './stages/build-resolve.ts';
import { buildSearchDocs, searchOrdinals, startSearchTokens } from './stages/build-search.ts';
import { buildChanges } from './stages/build-changes.ts';
import { buildDocuments, releaseSummary } from './stages/build-documents.ts';
import { HashedFamilyWriter } from './write/bucket-family-writer.ts';
import { writeManifests, type StampManifest } from './dist-manifest.ts';
import { diffBaseMeta, findDiffBase, writeDiffBaseMeta } from './write/diff-base.ts';

export interface CompileReport {
  stamp: string;
  manifest: StampManifest;
  slack: { what: string; count: number; example: string }[];
  counts: Record<string, number>;
  timings: StageTiming[];
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
  };
  try {
    await mkdir(ctx.publicDir, { recursive: true });
    await mkdir(ctx.privateDir, { recursive: true });
    ctx.priorDiffBase = prior ? findDiffBase(distDir, prior, ctx.options.partitions) : null;
    const read = await timed(ctx, 'read tables', () => readTables(ctx));
    // Small buckets for point lookups: at full size the cache holds a fraction of the index, so a lookup usually
    // decodes one bucket, and a 4 KiB bucket decodes ~16x faster than a 64 KiB one for a directory of ~1 MiB.
    const index = new HashedFamilyWriter({ root: ctx.publicDir, name: 'entities/index', tmpDir: join(ctx.scratchDir, 'index-writer'), targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger: ctx.written });
    // Stage 3 needs only stage 1's output: it runs in its own thread while stage 2's ranges run in theirs.
    const stopResolve = new AbortController();
    const resolving = startResolve(ctx, read, stopResolve.signal);
    resolving.catch(() => {}); // awaited below; a failure of stage 2 first must not leave it unhandled
    let built: Awaited<ReturnType<typeof buildEntities>>;
    try {
      built = await timed(ctx, 'build entities (resolve alongside)', () => buildEntities(ctx, read, index));
      // Refused here, while stage 3 may still be writing: it is stopped below, as for any failure of stage 2, so the
      // temp dir is not removed under it.
      if (ctx.options.strict && ctx.slack.size) {
        const [what, s] = [...ctx.slack][0];
        throw new RegisterError('compile', `${what} (${s.count} rows, e.g. ${s.example}); refused under --strict`);
      }
    } catch (e) {
      stopResolve.abort();
      await resolving.catch(() => {}); // let it stop writing before the temp dir goes
      throw e;
    }
    writeDiffBaseMeta(ctx.privateDir, diffBaseMeta(release, ctx.options.partitions, built.packRanges));
    // The search tokens need only stage 2's postings and the ordinals: they are built in their own thread while
    // this one writes the entity index, the search docs, the changelog and the documents.
    const { order, ordinalOfDoc } = await timed(ctx, 'order search docs', () => searchOrdinals(built));
    // Inline (threads off), they are built at the end, so each stage's timing holds its own work.
    const stopTokens = new AbortController();
    const tokening = ctx.options.threads ? startSearchTokens(ctx, built, ordinalOfDoc, stopTokens.signal) : null;
    tokening?.catch(() => {}); // awaited below; a failure on this thread first must not leave it unhandled
    const onThisThread = async () => {
      const entities = await timed(ctx, tokening ? 'write entity index (search tokens alongside)' : 'write entity index', () => index.finish());
      const { family: resolve, ambiguous } = await timed(ctx, 'build resolve (rest)', () => resolving);
      ctx.counts.ambiguous_provider_ids = ambiguous;
      const docs = await timed(ctx, 'build search docs', () => buildSearchDocs(ctx, built, order));
      const changes = await timed(ctx, 'build changelog', () => buildChanges(ctx, built, prior?.stamp ?? null));
      const { documents, providers } = await timed(ctx, 'build documents', () => buildDocuments(ctx, read, built));
      return { entities, resolve, docs, changes, documents, providers };
    };
    let main: Awaited<ReturnType<typeof onThisThread>>;
    try {
      main = await onThisThread();
    } catch (e) {
      stopTokens.abort();
      stopResolve.abort();
      // Let both threads stop writing before the temp dir goes.
      await Promise.all([tokening?.catch(() => {}), resolving.catch(() => {})]);
      throw e;
    }
    const { entities, resolve, docs, changes, documents, providers } = main;
    const { search } = tokening
      ? await timed(ctx, 'build search tokens (rest)', () => tokening)
      : await timed(ctx, 'build search tokens', () => startSearchTokens(ctx, built, ordinalOfDoc));
    ctx.counts.providers = providers.length;
    const doc: ReleaseDoc = {
      format: DIST_FORMAT,
      stamp: release.stamp,
      prior: prior?.stamp ?? null,
      summary: releaseSummary(ctx),
      counts: sortKeys(ctx.counts),
      providers,
      shard_packs: built.shardPacks,
      families: { entities, resolve, search, search_docs: docs },
      documents,
      changes,
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
export const THREADS_FROM_BYTES = 4 * 1024 * 1024;

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

/**
 * fsync of one file or directory (a directory's, so a rename or new entry in it is durable), its handle closed even
 * when the sync fails.
 */
export async function fsyncPath(path: string): Promise<void> {
  const h = await open(path, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}
