// Compiles one stamp in a child process (bench/lib/compile-child.ts) and gathers its figures: wall as the caller
// sees it (process start to exit), CPU, peak RSS, per-stage timings, and the size on disk of what it wrote.
import { readFileSync } from 'node:fs';
import { link, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fg from 'fast-glob';
import { $ } from 'zx';
import type { StageTiming } from '../../compiler/context.ts';
import { machineBusyMs } from './load-generator.ts';
import { runToEnd } from './processes.ts';

export interface CompileFigures {
  stamp: string;
  /** Spawn to exit, so Node and tsx start-up count (a second or less; the user pays it too). */
  processWallMs: number;
  /** compileAll alone, inside the child. */
  compileWallMs: number;
  cpuMs: number;
  maxRssBytes: number;
  /** Wall not covered by a named stage: input verification (sha256 of every file), pack finishing, start-up. */
  untimedWallMs: number;
  timings: StageTiming[];
  counts: Record<string, number>;
  slack: { what: string; count: number; example: string }[];
  digest: string;
  distKb: number;
  /** Per stage directory under public/ (shards, resolve, search, …), in KiB. */
  distBreakdownKb: Record<string, number>;
  /** The successor's changelog against its predecessor: events per type. */
  changes: Record<string, number> | null;
  /** CPU the rest of the machine used during the compile, in % of one core (other jobs skew the wall time). */
  otherCpuPct: number | null;
  /** When these figures were measured (they may be reused by a later run with --reuse-compile). */
  measuredAt: string;
}

export async function measureCompile(opts: { root: string; releases: string; dist: string; stamp: string; reportFile: string; logFile: string }): Promise<CompileFigures> {
  const busy0 = machineBusyMs();
  const r = await runToEnd(
    process.execPath,
    ['bin/run-ts.mjs', 'bench/lib/compile-child.ts', '--releases', opts.releases, '--out', opts.dist, '--stamp', opts.stamp, '--report', opts.reportFile],
    { cwd: opts.root, logFile: opts.logFile },
  );
  const busy1 = machineBusyMs();
  if (r.code !== 0) throw new Error(`compile of ${opts.stamp} failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  const rep = JSON.parse(readFileSync(opts.reportFile, 'utf8')) as {
    stamp: string; wallMs: number; cpuMs: number; maxRssBytes: number; counts: Record<string, number>;
    slack: CompileFigures['slack']; timings: StageTiming[]; digest: string;
  };
  const stampDir = join(opts.dist, opts.stamp);
  const breakdown: Record<string, number> = {};
  const du = await $({ quiet: true, nothrow: true })`du -sk ${['shards', 'entities', 'resolve', 'search', 'matches', 'changes', 'documents'].map((d) => join(stampDir, 'public', d))} ${join(stampDir, 'private')}`;
  for (const line of du.stdout.trim().split('\n')) {
    const [kb, path] = line.split('\t');
    if (path) breakdown[path.slice(stampDir.length + 1)] = Number(kb);
  }
  const releaseDoc = JSON.parse(readFileSync(join(stampDir, 'public', 'release.json'), 'utf8')) as { prior: string | null; changes?: { counts?: Record<string, number> } };
  const staged = rep.timings.reduce((s, t) => s + t.wallMs, 0);
  return {
    stamp: rep.stamp,
    processWallMs: Math.round(r.wallMs),
    compileWallMs: rep.wallMs,
    cpuMs: rep.cpuMs,
    maxRssBytes: rep.maxRssBytes,
    untimedWallMs: Math.max(0, Math.round(r.wallMs) - staged),
    timings: rep.timings,
    counts: rep.counts,
    slack: rep.slack,
    digest: rep.digest,
    distKb: await duKb(stampDir),
    distBreakdownKb: breakdown,
    changes: releaseDoc.prior ? (releaseDoc.changes?.counts ?? null) : null,
    otherCpuPct: busy0 !== null && busy1 !== null ? Math.max(0, Math.round((100 * (busy1 - busy0 - rep.cpuMs)) / r.wallMs)) : null,
    measuredAt: new Date().toISOString(),
  };
}

/** Disk usage of a path in KiB (`du -sk`), what a deployment has to hold. */
export async function duKb(path: string): Promise<number> {
  const r = await $({ quiet: true, nothrow: true })`du -sk ${path}`;
  if (r.exitCode !== 0) throw new Error(`du -sk ${path} failed: ${r.stderr.trim()}`);
  return Number(r.stdout.split('\t')[0]);
}

/**
 * A copy of the tree `from` at `to` whose files are hard links to the originals: a compiled release for another
 * compile to read as its predecessor, in no time and no disk space. Only for trees nothing writes to while linked.
 */
export async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  // Every file at any depth, dot files too; folders are made as their files need them.
  for (const file of await fg('**', { cwd: from, onlyFiles: true, dot: true })) {
    await mkdir(dirname(join(to, file)), { recursive: true });
    await link(join(from, file), join(to, file));
  }
}
