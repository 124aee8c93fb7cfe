// Compiler worker threads: results cross as plain data, a RegisterError keeps its file and row, and one failed job
// stops its siblings instead of leaving them writing into a folder about to be removed.
import { describe, expect, it } from 'vitest';
import { RegisterError } from '../../common/errors.ts';
import { runAllInWorkers, runInWorker } from '../../compiler/worker/run-in-worker.ts';
import type { Job } from '../fixtures/worker-job.ts';

const MODULE = new URL('../fixtures/worker-job.ts', import.meta.url);

describe('runInWorker', () => {
  it('runs a TypeScript module in a thread and returns its result', async () => {
    expect(await runInWorker<Job, unknown>(MODULE, { kind: 'echo', value: 21 })).toEqual({ doubled: 42, list: [1, 'two', null] });
  });

  it('rebuilds a RegisterError with its stage, file and row', async () => {
    const err = (await runInWorker<Job, unknown>(MODULE, { kind: 'register-error' }).catch((e) => e)) as RegisterError;
    expect(err).toBeInstanceOf(RegisterError);
    expect(err.message).toBe('[compile] csv/bridges.csv.gz row 42: bad register ID "x"');
    expect([err.file, err.row]).toEqual(['csv/bridges.csv.gz', 42]);
  });

  it('gives a worker the young generation it asks for, and V8\'s smaller default otherwise', async () => {
    const asked = await runAllInWorkers<Job, number>(MODULE, [{ kind: 'young-generation' }, { kind: 'young-generation' }], undefined, { youngGenerationMb: 192 });
    const plain = await runInWorker<Job, number>(MODULE, { kind: 'young-generation' });
    expect(asked).toEqual([192, 192]);
    expect(plain).toBeLessThan(192);
  });

  it('stops the siblings of a failed job and reports the real failure', async () => {
    // Were the hanging jobs waited for instead of terminated, this would never settle and the test would time out.
    const err = (await runAllInWorkers<Job, unknown>(MODULE, [{ kind: 'hang' }, { kind: 'crash' }, { kind: 'hang' }]).catch((e) => e)) as Error;
    expect(err.message).toBe('boom');
  });
});
