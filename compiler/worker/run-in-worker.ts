// Runs one job of a TypeScript module in a worker thread and resolves with its result. The module URL's fragment
// names the exported function (`#run` when absent); job and result cross as structured clones, so both must be
// plain data.
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { RegisterError } from '../../common/errors.ts';

const ENTRY = new URL('./ts-worker.mjs', import.meta.url);

/**
 * Old-space cap of each worker's heap. A busy isolate lets its heap grow far past its live data when nothing
 * stops it (uncapped workers with a few hundred MB of live data each took a full-size compile past 5 GB of RSS);
 * a cap makes V8 collect instead of grow. A job that truly needs more fails with
 * ERR_WORKER_OUT_OF_MEMORY rather than taking the machine's memory.
 */
const WORKER_HEAP_MB = 1536;

/** Heap sizes of one worker beyond the old-space cap every worker gets. */
export interface WorkerLimits {
  /** Young generation (both semi-spaces and the new large-object space), in MiB; V8's default when absent. */
  youngGenerationMb?: number;
}

interface Reply<R> {
  ok: boolean;
  result?: R;
  error?: { message: string; stage?: string; file?: string; row?: number; registerMessage?: boolean };
}

/** Thrown for a job stopped through its signal (because a sibling job failed). */
class WorkerAborted extends Error {}

/**
 * Runs `module`'s `run(job)` in a new worker thread. Aborting `signal` terminates the thread and rejects with
 * WorkerAborted once it has stopped, so a caller can wait for siblings to stop writing before it cleans up.
 */
export function runInWorker<J, R>(module: URL, job: J, signal?: AbortSignal, limits: WorkerLimits = {}): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB, ...(limits.youngGenerationMb ? { maxYoungGenerationSizeMb: limits.youngGenerationMb } : {}) };
    const worker = new Worker(fileURLToPath(ENTRY), { workerData: { module: module.href, job }, resourceLimits });
    let settled = false;
    const stop = () => {
      if (settled) return;
      settled = true;
      void worker.terminate().then(() => reject(new WorkerAborted('stopped because a sibling job failed')));
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    worker.once('message', (reply: Reply<R>) => {
      if (settled) return;
      settled = true;
      if (reply.ok) resolve(reply.result as R);
      else reject(rebuild(reply.error!));
      void worker.terminate();
    });
    // `on`, not `once`: a worker that failed can emit a second error as it exits (out of memory, say).
    worker.on('error', (e) => {
      if (settled) return;
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`compiler worker ${module.pathname} exited with code ${code} before answering`));
    });
  });
}

function rebuild(e: NonNullable<Reply<unknown>['error']>): Error {
  if (!e.registerMessage || !e.stage) return new Error(e.message);
  // RegisterError builds its message from the parts; pass the bare message back in, without the prefix.
  const prefix = `[${e.stage}] ${e.file ? e.file + (e.row !== undefined ? ` row ${e.row}` : '') + ': ' : ''}`;
  return new RegisterError(e.stage, e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message, e.file, e.row);
}

/**
 * Runs every job in its own worker thread; when one fails, stops the others and waits for them to stop before
 * rejecting with the first real failure (never a sibling's WorkerAborted).
 */
export async function runAllInWorkers<J, R>(module: URL, jobs: J[], signal?: AbortSignal, limits: WorkerLimits = {}): Promise<R[]> {
  const ac = new AbortController();
  if (signal?.aborted) ac.abort();
  else signal?.addEventListener('abort', () => ac.abort(), { once: true });
  const settled = await Promise.allSettled(
    jobs.map((j) =>
      runInWorker<J, R>(module, j, ac.signal, limits).catch((e) => {
        ac.abort();
        throw e;
      }),
    ),
  );
  const failures = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason);
  if (failures.length) throw failures.find((e) => !(e instanceof WorkerAborted)) ?? failures[0];
  return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
}
