// Compiles every release under releases/ that dist/ does not hold yet, oldest first, then rewrites the one small
// pointer (dist/index.json) atomically, last.
import { readdir, readFile, writeFile, rename, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import { STAMP } from '../common/ids.ts';
import { createHash } from 'node:crypto';
import { DIST_FORMAT, INDEX_FILE, MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR, RELEASE_DOC, type DistIndex, type ReleaseDoc } from '../common/dist-layout.ts';
import { sealIndex } from '../common/index-file.ts';
import { openRelease, type ReleaseInput } from './read/release-input.ts';
import { ASIDE_PREFIX, compileRelease, type CompileReport } from './compile-release.ts';
import { fsyncPath } from '../common/durable-file.ts';
import type { CompileOptions } from './context.ts';

/** Options of `register compile`. */
export interface CompileAllOptions extends CompileOptions {
  /** Folder of stamped releases (default `releases`). */
  releases?: string;
  /** Output folder (default `dist`). */
  dist?: string;
  /** Compile just this stamp (recompiling it if present). */
  stamp?: string;
  /** Called after each compiled release. */
  onCompiled?: (report: CompileReport) => void;
  /** Called with a line that warns of something done as asked but probably not as meant. */
  onWarning?: (line: string) => void;
}

export async function listStamps(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => STAMP.test(n)).sort();
  } catch {
    return [];
  }
}

/** Compiled, and in this compiler's format (a stamp of an older format is compiled again). */
async function isCompiled(dist: string, stamp: string): Promise<boolean> {
  try {
    return (JSON.parse(await readFile(join(dist, stamp, MANIFEST_FILE), 'utf8')) as { format?: string }).format === DIST_FORMAT;
  } catch {
    return false;
  }
}

export async function compileAll(opts: CompileAllOptions = {}): Promise<CompileReport[]> {
  const releasesDir = opts.releases ?? 'releases';
  const dist = opts.dist ?? 'dist';
  await mkdir(dist, { recursive: true });
  await sweepTemp(dist);
  const stamps = await listStamps(releasesDir);
  if (opts.stamp && !stamps.includes(opts.stamp)) throw new RegisterError('compile', `no release ${opts.stamp} under ${releasesDir}/`);
  const todo = opts.stamp ? await uncompiledPriors(releasesDir, dist, opts.stamp, stamps) : [];
  if (!opts.stamp) for (const s of stamps) if (!(await isCompiled(dist, s))) todo.push(s);
  // index.json serves the newest stamps, so a stamp compiled behind one already there is not what gets served.
  let newest: string | null = null;
  for (const s of await listStamps(dist)) if (!todo.includes(s) && (await isCompiled(dist, s))) newest = s;
  const reports: CompileReport[] = [];
  for (const stamp of todo) {
    const release = await openRelease(join(releasesDir, stamp));
    const priorStamp = release.manifest.prior ?? stamps.filter((s) => s < stamp).pop() ?? null;
    let prior: ReleaseInput | null = null;
    if (priorStamp) {
      if (!stamps.includes(priorStamp)) {
        throw new RegisterError('compile', `prior release ${priorStamp} named in release.json is not under ${releasesDir}/`, `${stamp}/release.json`);
      }
      prior = await openRelease(join(releasesDir, priorStamp));
    }
    const report = await compileRelease(release, prior, dist, opts);
    reports.push(report);
    opts.onCompiled?.(report);
    for (const line of report.warnings) opts.onWarning?.(`${stamp}: ${line}`);
    if (newest !== null && stamp < newest) {
      opts.onWarning?.(
        `${stamp} is older than ${newest}, already compiled in ${dist}/: ${newest} stays served (the newest stamp is), ` +
          `so ${stamp} is not; name a stamp later than ${newest} to publish, or preview it with serve --stamp ${stamp}`,
      );
    }
  }
  await writeIndex(dist);
  return reports;
}

/**
 * `stamp` preceded by its predecessors that are not compiled yet, oldest first. A release inherits its compiled
 * predecessor's shard packs (compiler/write/shared-shards.ts), so its bytes depend on the chain compiled before it:
 * compiling that chain first gives one stamp the same bytes as compiling the whole folder.
 */
async function uncompiledPriors(releasesDir: string, dist: string, stamp: string, stamps: string[]): Promise<string[]> {
  const chain = [stamp];
  for (let s = stamp; ; ) {
    const prior = (await openRelease(join(releasesDir, s))).manifest.prior ?? stamps.filter((x) => x < s).pop() ?? null;
    if (!prior || !stamps.includes(prior) || (await isCompiled(dist, prior))) break;
    chain.unshift((s = prior));
  }
  return chain;
}

/**
 * A killed compile leaves only `.tmp-*` folders, which nothing reads; the next compile clears them. A published
 * stamp moved aside for replacement (`.tmp-old-<stamp>`) whose replacement never arrived is moved back first.
 */
async function sweepTemp(dist: string): Promise<void> {
  for (const n of await readdir(dist)) {
    if (n.startsWith(ASIDE_PREFIX)) {
      const stamp = n.slice(ASIDE_PREFIX.length);
      if (STAMP.test(stamp) && !(await isCompiled(dist, stamp))) {
        await rm(join(dist, stamp), { recursive: true, force: true });
        await rename(join(dist, n), join(dist, stamp));
        continue;
      }
    }
    if (n.startsWith('.tmp-')) await rm(join(dist, n), { recursive: true, force: true });
  }
}

/**
 * Rebuilds dist/index.json from the compiled stamps: v1 = newest publishable, next = newest. Each stamp is listed
 * with the sha256 of its manifests, and the file is sealed with a checksum of its own text (common/index-file.ts):
 * the root of the chain of trust the runtime and `register verify` check every other file against.
 */
export async function writeIndex(dist: string): Promise<DistIndex> {
  const releases: DistIndex['releases'] = [];
  const sha256Of = async (...path: string[]) => createHash('sha256').update(await readFile(join(dist, ...path))).digest('hex');
  for (const stamp of await listStamps(dist)) {
    if (!(await isCompiled(dist, stamp))) continue;
    const doc = JSON.parse(await readFile(join(dist, stamp, PUBLIC_DIR, RELEASE_DOC), 'utf8')) as ReleaseDoc;
    const sha256 = {
      manifest: await sha256Of(stamp, MANIFEST_FILE),
      public: await sha256Of(stamp, PUBLIC_DIR, MANIFEST_FILE),
      private: await sha256Of(stamp, PRIVATE_DIR, MANIFEST_FILE),
    };
    releases.push({ stamp, prior: doc.prior, publishable: doc.summary.publishable, generated_at: doc.summary.generated_at, sha256 });
  }
  const index: DistIndex = {
    format: DIST_FORMAT,
    v1: releases.filter((r) => r.publishable).pop()?.stamp ?? null,
    next: releases[releases.length - 1]?.stamp ?? null,
    releases,
  };
  const tmp = join(dist, `.${INDEX_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, sealIndex(index));
  await fsyncPath(tmp);
  await rename(tmp, join(dist, INDEX_FILE));
  await fsyncPath(dist);
  return index;
}
