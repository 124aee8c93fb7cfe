// One compile's shared state: options, the verified inputs, where output goes, and what the stages report.
import { Progress as CommonProgress } from '../common/progress.ts';
import { RegisterError } from '../common/errors.ts';
import type { ReleaseInput } from './read/release-input.ts';
import type { ContentFile } from './write/content-file.ts';
import type { DiffBaseSource } from './write/diff-base.ts';

/** Options of one release compile. */
export interface CompileOptions {
  /** Refuse the release when it carries referential slack (default false: drop, count and report). */
  strict?: boolean;
  /** Partitions of the per-entity stage (default 256); more keeps memory per partition lower. */
  partitions?: number;
  /** Progress lines on stderr (default: only when stderr is a TTY). */
  progress?: boolean;
  /** Shard pack size before a new pack is started (default 256 MiB). */
  packBytes?: number;
  /**
   * Run the CPU-bound stages in worker threads (default: when the release lists at least THREADS_FROM_BYTES of
   * input). The output is the same bytes either way: the work is split into a fixed number of ranges, never by the
   * machine's core count.
   */
  threads?: boolean;
  /**
   * Jobs the match index's rows are built in (default MATCH_JOBS), each in its own worker thread when threads are
   * on. Year groups are cut between them by row count; the output is the same bytes for any count.
   */
  matchJobs?: number;
  /**
   * Inherit the predecessor's shard packs and leave each unchanged shard in them (default true; see
   * compiler/write/shared-shards.ts). False writes every shard anew, as a release without a predecessor is written.
   */
  shareShards?: boolean;
  /**
   * Write zstd patches from the predecessor's files (compiler/write/release-patches.ts; default true). Off, the stamp
   * is the same but for patches.json and patches/: for callers that may start no child process (the in-process test
   * tier) and, so that one cache holds one kind of dist, for the compiled fixtures every tier shares.
   */
  patches?: boolean;
}

/** Target bucket size of families read by point lookups (entity index, resolve keys). */
export const POINT_LOOKUP_BUCKET_BYTES = 4 * 1024;

export interface CompileContext {
  release: ReleaseInput;
  prior: ReleaseInput | null;
  options: Required<CompileOptions>;
  /** Temp output dir that becomes dist/<stamp> on success. */
  outDir: string;
  publicDir: string;
  privateDir: string;
  /** Scratch space for spills, removed at the end. */
  scratchDir: string;
  /** Dropped rows per table and reason, e.g. `csv/bridges.csv.gz: unknown register ID` → 12. */
  slack: Map<string, { count: number; example: string }>;
  /** Served population counts for /meta. */
  counts: Record<string, number>;
  progress: Progress;
  /** Wall time, CPU time and peak RSS per stage, in run order. */
  timings: StageTiming[];
  /** Every content-addressed file written under public/ with its size and sha256, hashed once while written. */
  written: Map<string, ContentFile>;
  /** Files under private/ hashed while written (the diff base); others there are read back for the manifest. */
  writtenPrivate: Map<string, ContentFile>;
  /** The predecessor's diff base when its compiled folder has one for it (read instead of its tables). */
  priorDiffBase: DiffBaseSource | null;
  /** The predecessor's public files when it is compiled beside this release in this format (else null). */
  priorPublicFiles: Record<string, { bytes: number; sha256: string }> | null;
  /** The predecessor's shard packs this release inherits, in its shard_packs order (empty: none; see shared-shards.ts). */
  inheritedShards: ContentFile[];
  /** Warnings for the compile report (and `register compile`'s stderr): done as asked, but less well than it could. */
  warnings: string[];
}

export interface StageTiming {
  stage: string;
  wallMs: number;
  cpuMs: number;
  /** Peak resident set size of the process so far, in bytes (process-wide, so monotone). */
  peakRssBytes: number;
}

/**
 * Runs one stage and records its wall and CPU time and the peak RSS after it. The progress line names the stage
 * while it runs; a stage that counts its work replaces that line with its own.
 */
export async function timed<T>(ctx: CompileContext, stage: string, fn: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  ctx.progress.begin(stage);
  let out: T;
  try {
    out = await fn();
  } finally {
    ctx.progress.end();
  }
  const c = process.cpuUsage(c0);
  ctx.timings.push({ stage, wallMs: Math.round(performance.now() - t0), cpuMs: Math.round((c.user + c.system) / 1000), peakRssBytes: process.resourceUsage().maxRSS * 1024 });
  return out;
}

/** Adds slack noted elsewhere (a worker thread) after what this compile noted so far; first examples stay. */
export function mergeSlack(ctx: Pick<CompileContext, 'slack'>, entries: [string, { count: number; example: string }][]): void {
  for (const [k, v] of entries) {
    const s = ctx.slack.get(k);
    if (s) s.count += v.count;
    else ctx.slack.set(k, { ...v });
  }
}

/** Under --strict, referential slack refuses the release (naming the first kind noted) instead of being reported. */
export function refuseSlackUnderStrict(ctx: CompileContext): void {
  if (!ctx.options.strict || ctx.slack.size === 0) return;
  const [what, s] = [...ctx.slack][0];
  throw new RegisterError('compile', `${what} (${s.count} rows, e.g. ${s.example}); refused under --strict`);
}

export function noteSlack(ctx: Pick<CompileContext, 'slack'>, label: string, reason: string, example: string): void {
  const key = `${label}: ${reason}`;
  const s = ctx.slack.get(key);
  if (s) s.count++;
  else ctx.slack.set(key, { count: 1, example });
}

/** The compile's progress line (common/progress.ts), tagged `[compile]`; silent unless stderr is a TTY. */
export class Progress extends CommonProgress {
  constructor(enabled: boolean) {
    super(enabled, 'compile');
  }
}
