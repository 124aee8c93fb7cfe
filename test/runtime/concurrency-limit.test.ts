import { describe, expect, it } from 'vitest';
import { createConcurrencyLimit } from '../../runtime/concurrency-limit.ts';

/** A promise settled from outside, to hold work open for as long as a test needs. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}
const settle = () => new Promise((r) => setImmediate(r));

describe('concurrency limit', () => {
  it('runs at most `limit` works at once and starts waiters in arrival order', async () => {
    const gate = createConcurrencyLimit(2);
    const started: number[] = [];
    const holds = Array.from({ length: 5 }, () => deferred<number>());
    const results = holds.map((h, i) =>
      gate.run(async () => {
        started.push(i);
        return h.promise;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    expect([gate.running, gate.waiting]).toEqual([2, 3]);

    holds[1].resolve(1);
    await settle();
    expect(started).toEqual([0, 1, 2]);
    // A newcomer arriving while others wait queues behind them, even right after a slot was handed on.
    const late = gate.run(async () => (started.push(99), 99));
    holds[0].resolve(0);
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const i of [2, 3, 4]) holds[i].resolve(i);
    expect(await Promise.all([...results, late])).toEqual([0, 1, 2, 3, 4, 99]);
    expect(started).toEqual([0, 1, 2, 3, 4, 99]);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  it('frees the slot of a work that fails, and passes the failure to its caller only', async () => {
    const gate = createConcurrencyLimit(1);
    const failing = gate.run(async () => {
      throw new Error('boom');
    });
    const next = gate.run(async () => 'after');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('after');
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  it('refuses a limit below one', () => {
    expect(() => createConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => createConcurrencyLimit(1.5)).toThrow(RangeError);
  });
});
