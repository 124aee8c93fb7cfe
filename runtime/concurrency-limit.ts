// A first-come, first-served limit on how many of one kind of work run at once, for work that would otherwise
// interleave on the event loop (see routes/batch.ts for why batches want it).

export interface ConcurrencyLimit {
  /** Runs `work` once fewer than `limit` others are running; waiters start in arrival order. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Running now and waiting, for tests and metrics. */
  readonly running: number;
  readonly waiting: number;
}

export function createConcurrencyLimit(limit: number): ConcurrencyLimit {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a concurrency limit needs a limit of at least 1, got ${limit}`);
  let running = 0;
  const queue: (() => void)[] = [];
  const leave = (): void => {
    // The slot passes straight to the next waiter, so a newcomer never overtakes the queue.
    const next = queue.shift();
    if (next) next();
    else running--;
  };
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (running < limit) running++;
      else await new Promise<void>((go) => queue.push(go));
      try {
        return await work();
      } finally {
        leave();
      }
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
