// What a compile stage is, and how a declared list of them runs (compile-release.ts declares the compile's). Every
// stage is `(ctx, input) => output`; the list says where each runs: on this thread in turn, in worker threads over
// a fixed number of ranges, or in a worker thread alongside the steps after it.
import { timed, type CompileContext } from './context.ts';
import { runAllInWorkers } from './worker/run-in-worker.ts';

/** A stage run on the compile's own thread. */
export type Stage<I, O> = (ctx: CompileContext, input: I) => O | Promise<O>;

/**
 * A stage whose work can cross to worker threads, where `ctx` cannot go. `jobs` cuts the input into plain-data jobs
 * on this thread; `run(job)` is what a worker thread calls; `merge` makes the results, in job order, into the
 * stage's output, back on this thread. Without threads (CompileOptions.threads) the jobs run here, one after
 * another: the jobs are the same either way, and so are the bytes.
 */
export interface ThreadedStage<I, J, R, O> {
  /** This module's URL, with `#<the export name of run>` for the worker thread to call. */
  worker: URL;
  /** Young generation of its worker threads, in MiB (V8's default when absent). */
  youngGenerationMb?: number;
  jobs(ctx: CompileContext, input: I, count: number): J[];
  run(job: J): Promise<R>;
  merge(ctx: CompileContext, results: R[], input: I): O | Promise<O>;
}

/**
 * Where a step runs. `here`: on this thread, awaited before the next step. `ranges`: a ThreadedStage cut into that
 * many jobs, each in its own worker thread, awaited together (a fixed count, never the machine's cores, since the
 * ranges decide output bytes). `alongside`: a ThreadedStage whose jobs (however many it cuts) are started each in a
 * worker thread, and awaited (merged) only where a later step lists it in `after`, or at the end; without threads
 * they run at that point instead.
 */
type Placement = 'here' | 'alongside' | { ranges: number };

/** One step of a declared list, whose outputs are the fields of P (made with `declare`). */
export interface Step<P> {
  /** Its name in the compile's timings (and in errors about the list). */
  name: string;
  /** False for a step not worth a timing (a check). */
  timed: boolean;
  /** The field of P its output fills, for the steps after it; null for a step that only checks. */
  output: keyof P | null;
  placement: Placement;
  /** For `alongside`: how the name of the step it runs beside mentions it. */
  beside?: string;
  /** Alongside steps whose output must be merged before this step starts. */
  after?: (keyof P)[];
  /** Its input, from the outputs of the steps before it. */
  input(done: P): unknown;
  stage: Stage<unknown, unknown> | ThreadedStage<unknown, unknown, unknown, unknown>;
}

/** An alongside step started and not merged yet. */
interface Started<P> {
  step: Step<P>;
  stage: ThreadedStage<unknown, unknown, unknown, unknown>;
  input: unknown;
  jobs: unknown[];
  /** Its worker thread, when threads are on. */
  thread: Promise<unknown[]> | null;
  stop: AbortController;
}

/**
 * Runs `steps` in order over `ctx` and returns every output. When a step fails, alongside threads are stopped and
 * awaited before the error is rethrown, so nothing is still writing when the caller removes the output.
 */
export async function runStages<P extends object>(ctx: CompileContext, steps: readonly Step<P>[]): Promise<P> {
  const done: Partial<P> = {};
  const started = new Map<keyof P, Started<P>>();
  // Alongside threads started since the last step that ran here, for that step's timing name.
  let beside: string[] = [];
  const merge = async (key: keyof P): Promise<void> => {
    const s = started.get(key);
    if (!s) return;
    const { step, stage } = s;
    const out = s.thread
      ? await timed(ctx, `${step.name} (rest)`, async () => stage.merge(ctx, await s.thread!, s.input))
      : await timed(ctx, step.name, async () => stage.merge(ctx, await sequential(s.jobs, stage), s.input));
    started.delete(key);
    done[key] = out as P[keyof P];
  };
  try {
    for (const step of steps) {
      for (const key of step.after ?? []) await merge(key);
      const input = step.input(guarded(done, step));
      if (step.placement === 'alongside') {
        const stage = step.stage as ThreadedStage<unknown, unknown, unknown, unknown>;
        const jobs = stage.jobs(ctx, input, 1);
        const stop = new AbortController();
        const thread = ctx.options.threads ? runAllInWorkers<unknown, unknown>(stage.worker, jobs, stop.signal, { youngGenerationMb: stage.youngGenerationMb }) : null;
        thread?.catch(() => {}); // awaited by merge; this only keeps an early failure from counting as unhandled
        if (thread) beside.push(step.beside ?? step.name);
        started.set(step.output!, { step, stage, input, jobs, thread, stop });
        continue;
      }
      const run = async () => {
        ctx.progress.begin(step.name);
        try {
          return step.placement === 'here' ? await (step.stage as Stage<unknown, unknown>)(ctx, input) : await runRanges(ctx, step, input);
        } finally {
          ctx.progress.end();
        }
      };
      const out = step.timed ? await timed(ctx, beside.length ? `${step.name} (${beside.join(', ')} alongside)` : step.name, run) : await run();
      if (step.timed) beside = [];
      if (step.output !== null) done[step.output] = out as P[keyof P];
    }
    // Alongside steps nothing waited for, in the order they were declared.
    for (const key of [...started.keys()]) await merge(key);
  } catch (e) {
    for (const s of started.values()) s.stop.abort();
    await Promise.all([...started.values()].map((s) => s.thread?.catch(() => {})));
    throw e;
  }
  return done as P;
}

/** A `ranges` step: its jobs in worker threads side by side, or here one after another. */
async function runRanges<P>(ctx: CompileContext, step: Step<P>, input: unknown): Promise<unknown> {
  const stage = step.stage as ThreadedStage<unknown, unknown, unknown, unknown>;
  const jobs = stage.jobs(ctx, input, (step.placement as { ranges: number }).ranges);
  const results = ctx.options.threads
    ? await runAllInWorkers<unknown, unknown>(stage.worker, jobs, undefined, { youngGenerationMb: stage.youngGenerationMb })
    : await sequential(jobs, stage);
  return stage.merge(ctx, results, input);
}

async function sequential(jobs: unknown[], stage: ThreadedStage<unknown, unknown, unknown, unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const job of jobs) out.push(await stage.run(job));
  return out;
}

/** The outputs so far, as `step` may read them: reading one not made (or not merged) yet is a mistake in the list. */
function guarded<P extends object>(done: Partial<P>, step: Step<P>): P {
  return new Proxy(done, {
    get(target, key) {
      if (!(key in target)) throw new Error(`compile step "${step.name}" reads ${String(key)} before it is made (or merged: see Step.after)`);
      return target[key as keyof P];
    },
  }) as P;
}

/**
 * Typed constructors of the steps of a list whose outputs are the fields of P: each ties a stage's input to what
 * `input` picks from the outputs before it, and its output to the field it fills.
 */
export function declare<P>() {
  const erase = (stage: unknown) => stage as Step<P>['stage'];
  return {
    /** A stage run on this thread; `after` names alongside steps it must wait for. */
    here: <K extends keyof P, I>(name: string, output: K, stage: Stage<I, P[K]>, input: (done: P) => I, after?: (keyof P)[]): Step<P> => ({
      name, timed: true, output, placement: 'here', stage: erase(stage), input, after,
    }),
    /** A threaded stage cut into `ranges` jobs, run side by side. */
    inRanges: <K extends keyof P, I, J, R>(name: string, output: K, stage: ThreadedStage<I, J, R, P[K]>, ranges: number, input: (done: P) => I): Step<P> => ({
      name, timed: true, output, placement: { ranges }, stage: erase(stage), input,
    }),
    /** A threaded stage run alongside the steps after it; `beside` is how their timing names mention it. */
    alongside: <K extends keyof P, I, J, R>(name: string, beside: string, output: K, stage: ThreadedStage<I, J, R, P[K]>, input: (done: P) => I): Step<P> => ({
      name, timed: true, beside, output, placement: 'alongside', stage: erase(stage), input,
    }),
    /** A check that refuses the compile or lets it go on; untimed. */
    check: (name: string, stage: Stage<void, void>): Step<P> => ({ name, timed: false, output: null, placement: 'here', stage: erase(stage), input: () => undefined }),
  };
}
