// The full-scale benchmark (issue "Full scale: compile and serve the register's real size on one 2-core machine"):
// generate a release and its successor, measure the input floor, compile both, serve, load, write bench/results.*.
import { cpus, freemem, loadavg, totalmem, availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rm, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { measureCompile, duKb, linkTree, type CompileFigures } from './lib/compile-measure.ts';
import { measureFloor, measureZcat, type ReleaseFloor, type ZcatFloor } from './lib/input-floor.ts';
import { measureOutputFloor, type OutputFloor } from './lib/output-floor.ts';
import { BASE_STAMP, NEXT_STAMP, ensureReleases } from './lib/releases.ts';
import { FULL_SIZE, judge, writeResults, type BenchResult } from './lib/report.ts';
import { waitForQuiet } from './lib/processes.ts';
import { $ } from 'zx';
import { sampleKeys } from './lib/sample-keys.ts';
import { measureServe } from './lib/serve-measure.ts';

/** Input-floor figures as saved next to the compile figures, so a --serve-only run can report them unchanged. */
type Floor = { base: ReleaseFloor; next: ReleaseFloor; text: ReleaseFloor | null; zcat: ZcatFloor | null; measuredAt: string };

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `usage: node bin/run-ts.mjs bench/run.ts [--entities ${FULL_SIZE}] [--seed 1] [--out bench/out] [--skip-serve] [--duration 10]
                                        [--concurrency 50] [--samples 4000] [--wide-samples 200000] [--transport net|http] [--workers N]
                                        [--reuse-compile]   keep the dist and compile figures of an earlier run
                                        [--serve-only]      measure only the serving half on the dist of an earlier run
                                                            (reuses its releases, compile and input-floor figures; never regenerates)
                                        [--wait-quiet 60]   before each measurement, wait up to S s for other jobs to finish`;

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(raw)}\n${USAGE}`);
  return n;
}

export async function main(argv: string[]): Promise<BenchResult> {
  const { values } = parseArgs({
    args: argv,
    options: {
      entities: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      'skip-serve': { type: 'boolean' },
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      samples: { type: 'string' },
      'wide-samples': { type: 'string' },
      transport: { type: 'string' },
      workers: { type: 'string' },
      'reuse-compile': { type: 'boolean' },
      'serve-only': { type: 'boolean' },
      'wait-quiet': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  const entities = positive('entities', values.entities, FULL_SIZE);
  const seed = values.seed ?? '1';
  const durationS = positive('duration', values.duration, 10);
  const concurrency = positive('concurrency', values.concurrency, 50);
  const samples = positive('samples', values.samples, 4000);
  // 0 skips the wide entity row (a tenth of the register at full size, so its working set outgrows any small cache).
  const wideSamples = values['wide-samples'] === '0' ? 0 : positive('wide-samples', values['wide-samples'], Math.min(200_000, Math.ceil(entities / 10)));
  const skipServe = values['skip-serve'] === true;
  const serveOnly = values['serve-only'] === true;
  if (serveOnly && skipServe) throw new Error(`--serve-only and --skip-serve exclude each other\n${USAGE}`);
  const reuseCompile = serveOnly || values['reuse-compile'] === true;
  const quietWaitMs = (values['wait-quiet'] === '0' ? 0 : positive('wait-quiet', values['wait-quiet'], 60)) * 1000;
  const quiet = async (what: string) => {
    if (quietWaitMs === 0) return;
    const q = await waitForQuiet(quietWaitMs);
    if (q.waitedMs > 2500 || !q.quiet) log(`${what}: waited ${(q.waitedMs / 1000).toFixed(0)} s for a quiet machine (${q.quiet ? 'quiet' : `still ${q.busyPct}% busy, going ahead`})`);
  };
  const transport = values.transport ?? 'net';
  // The targets are measured on `serve` (one process); the loads are repeated on `serve --workers N` (default: one
  // per core) to show what worker processes buy and cost. --workers 1 skips that.
  const workers = positive('workers', values.workers, availableParallelism());
  if (transport !== 'net' && transport !== 'http') throw new Error(`--transport must be net or http, got ${JSON.stringify(transport)}\n${USAGE}`);
  const out = resolve(ROOT, values.out ?? 'bench/out');
  // One folder per size and seed, so a quick run does not throw away a full-size release that took minutes to make.
  const work = join(out, `${entities}-s${seed}`);
  await mkdir(work, { recursive: true });
  const logFile = join(work, 'children.log');
  const t0 = performance.now();
  const loadavgStart = loadavg()[0];
  const codeStart = await codeVersion();
  log(`${entities} entities, seed ${seed}, work in ${work} (child output: ${logFile}); load average ${loadavgStart.toFixed(2)}, ${(freemem() / 2 ** 30).toFixed(1)} GiB free`);

  // --serve-only must never regenerate: new releases would no longer be the ones the reused dist was compiled from.
  const releases = await ensureReleases({ root: ROOT, dir: join(work, 'releases'), entities, seed, log, logFile, reuseOnly: serveOnly });

  // The compile and floor figures are tied to the exact inputs: a fingerprint of both release.json files.
  const fingerprint = createHash('sha256').update(readFileSync(join(releases.base, 'release.json'))).update(readFileSync(join(releases.next, 'release.json'))).digest('hex');
  const floorFile = join(work, 'floor-figures.json');
  let floor = serveOnly ? readSaved<Floor>(floorFile, fingerprint) : null;
  if (floor) {
    log(`input floor: --serve-only: keeping the figures measured at ${floor.measuredAt}`);
  } else {
    await quiet('input floor');
    log('input floor: reading every table of both releases with an empty visitor');
    const measuredAt = new Date().toISOString();
    const floorBase = await measureFloor(releases.base);
    const floorNext = await measureFloor(releases.next);
    log(`input floor: first ${(floorBase.wallMs / 1000).toFixed(1)} s wall, ${(floorBase.cpuMs / 1000).toFixed(1)} s CPU; successor ${(floorNext.wallMs / 1000).toFixed(1)} s`);
    const text = await measureFloor(releases.base, 'text');
    log(`input floor: the text reader over the first ${(text.wallMs / 1000).toFixed(1)} s`);
    const zcat = await measureZcat(releases.base);
    if (zcat) log(`input floor: zcat | wc -l ${(zcat.wallMs / 1000).toFixed(1)} s (${zcat.lines} lines)`);
    floor = { base: floorBase, next: floorNext, text, zcat, measuredAt };
    await writeSaved(floorFile, fingerprint, floor);
  }
  const { base: floorBase, next: floorNext, zcat } = floor;
  const textFloor = floor.text ?? null;

  const dist = join(work, 'dist');
  const figuresFile = (stamp: string) => join(work, `compile-figures-${stamp}.json`);
  /** Figures saved by an earlier compile of these very releases under `name`, or null. */
  const savedFigures = (name: string): CompileFigures | null => readSaved<CompileFigures>(figuresFile(name), fingerprint);
  const reusable = (stamp: string): CompileFigures | null => (existsSync(join(dist, stamp, 'manifest.json')) ? savedFigures(stamp) : null);
  const compileOne = async (stamp: string, into = dist, name = stamp) => {
    await quiet('compile');
    log(`compile: ${name} in a child process`);
    const f = await measureCompile({ root: ROOT, releases: releases.dir, dist: into, stamp, reportFile: join(work, `compile-${name}.json`), logFile });
    await writeSaved(figuresFile(name), fingerprint, f);
    log(`compile: ${name} ${(f.processWallMs / 1000).toFixed(1)} s wall, ${(f.cpuMs / 1000).toFixed(1)} s CPU, peak RSS ${(f.maxRssBytes / 2 ** 20).toFixed(0)} MiB, ${(f.distKb / 1024).toFixed(0)} MiB on disk, other jobs ${f.otherCpuPct}% CPU`);
    for (const t of f.timings) log(`compile:   ${t.stage.padEnd(20)} ${(t.wallMs / 1000).toFixed(1).padStart(7)} s wall ${(t.cpuMs / 1000).toFixed(1).padStart(7)} s CPU  peak ${(t.peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
    return f;
  };
  const AGAIN = `${BASE_STAMP}-again`;
  const NEXT_AGAIN = `${NEXT_STAMP}-again`;
  let base: CompileFigures;
  let next: CompileFigures;
  let again: CompileFigures | null = null;
  let nextAgain: CompileFigures | null = null;
  const savedBase = reuseCompile ? reusable(BASE_STAMP) : null;
  const savedNext = reuseCompile ? reusable(NEXT_STAMP) : null;
  if (savedBase && savedNext) {
    // For iterating on the serving half: the compile takes minutes at full size and its figures would not change.
    log(`compile: ${serveOnly ? '--serve-only' : '--reuse-compile'}: keeping ${dist} and the figures measured at ${savedBase.measuredAt}`);
    [base, next] = [savedBase, savedNext];
    // Without a repeat from that same run, the successor is compared with the first compile alone.
    const savedAgain = savedFigures(AGAIN);
    if (savedAgain && savedAgain.measuredAt > savedNext.measuredAt) again = savedAgain;
    const savedNextAgain = savedFigures(NEXT_AGAIN);
    if (again && savedNextAgain && savedNextAgain.measuredAt > savedNext.measuredAt && savedNextAgain.measuredAt < again.measuredAt) nextAgain = savedNextAgain;
  } else {
    // Compiling here would replace the dist the serving figures are meant to be measured on.
    if (serveOnly) throw new Error(`--serve-only: no compile of these exact releases under ${dist}; run once without it first`);
    if (values['reuse-compile']) log('compile: --reuse-compile: no compile of these exact releases to reuse, compiling');
    // A clean dist: the successor compile must find exactly its predecessor, and du must count only these two.
    await rm(dist, { recursive: true, force: true });
    base = await compileOne(BASE_STAMP);
    next = await compileOne(NEXT_STAMP);
    // Then the successor once more and the first release once more (A, B, B, A), each into a dist of its own: this
    // VM's speed drifts by tens of percent within minutes (the first release's two compiles of one run have differed
    // by 6-10%, more than the 5% allowed), so the successor's two compiles are judged against the first release's
    // two around them, an order that cancels a drift steady over the four. The successor's repeat compiles beside a
    // hard-linked copy of the first release's compiled folder, its predecessor, which it only reads. The first
    // release's repeat is also the full-size check that a release compiles to the same bytes.
    const againDist = join(work, 'dist-again');
    await rm(againDist, { recursive: true, force: true });
    await linkTree(join(dist, BASE_STAMP), join(againDist, BASE_STAMP));
    nextAgain = await compileOne(NEXT_STAMP, againDist, NEXT_AGAIN);
    await rm(againDist, { recursive: true, force: true });
    log(`compile: the repeat of ${NEXT_STAMP} ${nextAgain.digest === next.digest ? 'has the same digest' : `DIFFERS: ${nextAgain.digest} vs ${next.digest}`}`);
    again = await compileOne(BASE_STAMP, againDist, AGAIN);
    await rm(againDist, { recursive: true, force: true });
    log(`compile: the repeat of ${BASE_STAMP} ${again.digest === base.digest ? 'has the same digest' : `DIFFERS: ${again.digest} vs ${base.digest}`}`);
  }
  // The output floor is tied to the compiled files it copies the sizes of: saved with the releases' fingerprint and
  // the first release's digest, and measured again whenever either changed (a --serve-only run never writes gigabytes).
  const outputFloorFile = join(work, 'output-floor-figures.json');
  const outputFloorKey = `${fingerprint} ${base.digest}`;
  let outputFloor = serveOnly || reuseCompile ? readSaved<OutputFloor & { measuredAt: string }>(outputFloorFile, outputFloorKey) : null;
  if (outputFloor) log(`output floor: keeping the figures measured at ${outputFloor.measuredAt}`);
  else if (!serveOnly) {
    await quiet('output floor');
    log(`output floor: writing as many bytes as dist/${BASE_STAMP} holds, in the same files, with nothing else`);
    outputFloor = { ...measureOutputFloor(join(dist, BASE_STAMP), join(work, 'output-floor')), measuredAt: new Date().toISOString() };
    await writeSaved(outputFloorFile, outputFloorKey, outputFloor);
    log(`output floor: ${outputFloor.files} files, ${(outputFloor.bytes / 2 ** 30).toFixed(2)} GiB, ${(outputFloor.wallMs / 1000).toFixed(1)} s wall, ${(outputFloor.cpuMs / 1000).toFixed(1)} s CPU`);
  }

  const firstMeanMs = again ? (base.processWallMs + again.processWallMs) / 2 : base.processWallMs;
  const nextMeanMs = nextAgain ? (next.processWallMs + nextAgain.processWallMs) / 2 : next.processWallMs;
  const totalKb = await duKb(dist);

  let serve: BenchResult['serve'] = null;
  if (!skipServe) {
    log(`serve: sampling ${samples} entity IDs and ${samples} bridge keys from ${NEXT_STAMP} (the served release)`);
    const sampleSeed = Number.parseInt(seed, 10) || 1;
    const keys = await sampleKeys(releases.next, samples, sampleSeed);
    const wide = wideSamples ? (await sampleKeys(releases.next, wideSamples, sampleSeed + 1, { bridges: false })).entities : [];
    const s = await measureServe({ root: ROOT, dist, work: join(work, 'serve'), samples: keys, wideEntities: wide, seed: sampleSeed, durationS, concurrency, transport, workers, quietWaitMs, log });
    // Ratios are kept exact: a target is judged on them, and a ratio rounded first could round onto its side of the line.
    serve = { ...s, entityVsServe: s.runtime.entity.rps / s.serve.rps, entityVsBare: s.runtime.entity.rps / s.bare.rps };
  }

  const partial: Omit<BenchResult, 'targets'> = {
    date: new Date().toISOString(),
    machine: {
      nproc: availableParallelism(),
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      memoryBytes: totalmem(),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadavgStart,
      loadavgEnd: loadavg()[0],
    },
    options: { entities, seed, durationS, concurrency, skipServe, samples, wideSamples, waitQuietS: quietWaitMs / 1000, ...(serveOnly ? { serveOnly } : {}) },
    releases: { dir: releases.dir, reused: releases.reused, generateMs: releases.generateMs, inputBytes: floorBase.bytes },
    floor: { base: floorBase, next: floorNext, text: textFloor, zcat, measuredAt: floor.measuredAt },
    outputFloor,
    compile: {
      base,
      next,
      baseVsFloor: base.processWallMs / floorBase.wallMs,
      nextVsFloor: next.processWallMs / floorNext.wallMs,
      again,
      nextAgain,
      nextVsBase: nextMeanMs / firstMeanMs,
      nextVsFirstRun: next.processWallMs / base.processWallMs,
      sameBytes: again ? again.digest === base.digest && (!nextAgain || nextAgain.digest === next.digest) : null,
    },
    dist: { totalKb, servedStampKb: next.distKb },
    serve,
    totalWallMs: Math.round(performance.now() - t0),
    code: { start: codeStart, end: await codeVersion() },
  };
  const result: BenchResult = { ...partial, targets: judge(partial) };
  await writeResults(join(ROOT, 'bench', 'results.json'), join(ROOT, 'bench', 'results.md'), result);
  for (const t of result.targets) log(`${t.met === null ? 'n/a   ' : t.met ? 'met   ' : 'MISSED'} ${t.name}: ${t.measured} (target ${t.target})`);
  log(`done in ${(result.totalWallMs / 1000).toFixed(0)} s; wrote bench/results.md and bench/results.json`);
  return result;
}

/**
 * Figures an earlier run saved to `file` for `fingerprint` (what they were measured on: the input releases, say),
 * or null when none are saved there or they were measured on something else.
 */
function readSaved<T>(file: string, fingerprint: string): T | null {
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { fingerprint: string; figures: T };
    return saved.fingerprint === fingerprint ? saved.figures : null;
  } catch {
    return null;
  }
}

/** Saves `figures` to `file` for readSaved, under `fingerprint`. */
async function writeSaved(file: string, fingerprint: string, figures: unknown): Promise<void> {
  await writeFile(file, JSON.stringify({ fingerprint, figures }));
}

/**
 * Which code was measured: HEAD and the files changed outside bench/ and test/, which no measured process loads
 * (read-only git; --no-optional-locks so even the index's stat cache is left alone). Children load the sources when
 * they start, so a tree that changes mid-run means different rows measured different code.
 */
async function codeVersion(): Promise<{ commit: string; dirty: string[] } | null> {
  const git = $({ cwd: ROOT, quiet: true, nothrow: true });
  const head = await git`git --no-optional-locks rev-parse --short HEAD`;
  if (head.exitCode !== 0) return null;
  const st = await git`git --no-optional-locks status --porcelain --untracked-files=no -- . ${':!bench'} ${':!test'}`;
  return { commit: head.stdout.trim(), dirty: st.stdout.split('\n').map((l) => l.slice(3).trim()).filter(Boolean) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (e: Error) => {
      process.stderr.write(`[bench] ${e.message}\n`);
      process.exit(1);
    },
  );
}
