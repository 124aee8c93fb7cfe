// One progress line on a terminal for a long stage: counts, rate and ETA, drawn by cli-progress; nothing at all when
// stderr is not a TTY, so logs, pipes and CI stay clean.
import type cliProgress from 'cli-progress';
import { createRequire } from 'node:module';

// Loaded on first draw: every command imports this module (to clear lines before an error), and most never draw,
// so `serve` and piped runs should not pay cli-progress's load time at start-up.
let barLibrary: typeof cliProgress | null = null;
const bars = (): typeof cliProgress => (barLibrary ??= createRequire(import.meta.url)('cli-progress') as typeof cliProgress);

/** Options of a Progress line. */
export interface ProgressOptions {
  /** Draw at all (default: when `stream` is a TTY). */
  enabled?: boolean;
  /** Tag before the stage, as the command's other lines start: `[compile]` (default `progress`). */
  tag?: string;
  /** Where to draw (default process.stderr). */
  stream?: NodeJS.WriteStream;
}

/**
 * A count that other threads advance: a SharedArrayBuffer crosses to a worker thread as the same memory, so a stage
 * running in workers reports how far it got without a message protocol. Plain data, so it fits in a job.
 */
export interface SharedCount {
  buffer: SharedArrayBuffer;
}

export const sharedCount = (): SharedCount => ({ buffer: new SharedArrayBuffer(8) });

/** Adds `n` to a shared count (from any thread); a missing count (progress off) costs nothing. */
export function addShared(count: SharedCount | undefined, n = 1): void {
  if (count) Atomics.add(new Int32Array(count.buffer), 0, n);
}

const readShared = (count: SharedCount): number => Atomics.load(new Int32Array(count.buffer), 0);

// How often the count is handed to the bar: the ETA's sample buffer is rebuilt on each hand-over, so a stage that
// ticks per row must not hand over per row.
const SAMPLE_MS = 200;

// Lines on screen, so that a command failing mid-stage can clear them before it prints why.
const shown = new Set<Progress>();

/** Ends every progress line still shown (before an error message goes to the same terminal). */
export function endProgressLines(): void {
  for (const p of [...shown]) p.end();
}

export class Progress {
  readonly enabled: boolean;
  private readonly tag: string;
  private readonly stream: NodeJS.WriteStream;
  private bar: cliProgress.SingleBar | null = null;
  private value = 0;
  private sampler: NodeJS.Timeout | null = null;

  /** `new Progress(enabled, tag)`, or options; enabled defaults to stderr being a TTY. */
  constructor(enabled?: boolean | ProgressOptions, tag?: string) {
    const o: ProgressOptions = typeof enabled === 'object' ? enabled : { enabled, tag };
    this.stream = o.stream ?? process.stderr;
    this.enabled = o.enabled ?? Boolean(this.stream.isTTY);
    this.tag = o.tag ?? 'progress';
  }

  /**
   * Starts a stage's line. With a `total`, the line shows a bar, done/total, the rate and an ETA; without one, the
   * count and the rate. A stage already shown is ended first.
   */
  begin(stage: string, total: number | null = null, unit = 'rows'): void {
    this.end();
    if (!this.enabled) return;
    this.value = 0;
    const known = total !== null && total > 0;
    const bar = new (bars().SingleBar)({
      stream: this.stream,
      format: (_options, params) => this.format(stage, unit, known, params),
      fps: 5,
      etaBuffer: 25,
      clearOnComplete: true,
      hideCursor: false,
      linewrap: false,
      barsize: 24,
    });
    bar.start(known ? total : 0, 0);
    this.bar = bar;
    shown.add(this);
    // unref: a line left open by a failing stage must not keep the process alive.
    this.sampler = setInterval(() => this.bar?.update(this.value), SAMPLE_MS);
    this.sampler.unref();
  }

  /** The stage's count so far (absolute, e.g. the row number); cheap enough to call per row. */
  tick(done: number): void {
    this.value = done;
  }

  /** Shows `count` (advanced by other threads, or read through a function) as the stage's count until end(). */
  follow(stage: string, total: number | null, count: SharedCount | (() => number), unit: string): void {
    this.begin(stage, total, unit);
    if (!this.bar) return;
    const read = typeof count === 'function' ? count : () => readShared(count);
    clearInterval(this.sampler!);
    this.sampler = setInterval(() => this.bar?.update(read()), SAMPLE_MS);
    this.sampler.unref();
  }

  /** Removes the line (the command's own summary follows it). */
  end(): void {
    if (this.sampler) clearInterval(this.sampler);
    this.sampler = null;
    if (this.bar) {
      this.bar.stop();
      this.bar = null;
      shown.delete(this);
    }
  }

  private format(stage: string, unit: string, known: boolean, p: { value: number; total: number; startTime: number; eta: number | string }): string {
    const elapsed = Math.max(0.001, (Date.now() - p.startTime) / 1000);
    const rate = `${Math.round(p.value / elapsed).toLocaleString('en-US')} ${unit}/s`;
    const head = `[${this.tag}] ${stage}`;
    // A stage that counts nothing still says what runs and for how long.
    if (!known && p.value === 0) return `${head}… ${Math.floor(elapsed)}s`;
    if (!known) return `${head}: ${p.value.toLocaleString('en-US')} ${unit} (${rate})`;
    const share = Math.min(1, p.value / p.total);
    const filled = Math.round(share * 24);
    return (
      `${head} [${'='.repeat(filled)}${'-'.repeat(24 - filled)}] ${p.value.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} ${unit}` +
      ` ${Math.floor(share * 100)}% (${rate}) ETA ${eta(p.eta, p.value)}`
    );
  }
}

/** cli-progress's ETA in seconds (or 'INF'/'NULL' before it can tell) as `1m 05s`; `…` until there is a rate. */
function eta(seconds: number | string, done: number): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || done === 0) return '…';
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
