// The declared stage list runs the same steps with threads on and off: alongside steps are merged where a later step
// needs them, ranged steps are cut into a fixed number of jobs merged in order, a step may not read an output
// before it exists, and a failure stops a thread running alongside before it surfaces.
import { describe, expect, it } from 'vitest';
import { Progress, type CompileContext } from '../../compiler/context.ts';
import { declare, runStages, type Step } from '../../compiler/run-stages.ts';
import { doubling, type StageJob } from '../fixtures/stage-jobs.ts';

interface Out {
  base: number[];
  twice: number[];
  ranged: number[];
  sum: number;
}

const ctxOf = (threads: boolean) => ({ options: { threads }, progress: new Progress(false), timings: [] }) as unknown as CompileContext;
const { here, inRanges, alongside, check } = declare<Out>();
const job = (kind: StageJob['kind'], values: number[]): StageJob => ({ kind, values });

const steps = (kind: StageJob['kind']): Step<Out>[] => [
  here('make base', 'base', () => [1, 2, 3, 4, 5], () => undefined),
  alongside('double base', 'doubling', 'twice', doubling, (o) => job(kind, o.base)),
  inRanges('double in ranges', 'ranged', doubling, 3, (o) => job('double', o.base)),
  check('a check', () => {}),
  here('sum', 'sum', (_ctx, [a, b]: number[][]) => a.reduce((s, x) => s + x, 0) + b.reduce((s, x) => s + x, 0), (o) => [o.twice, o.ranged], ['twice']),
];

describe('runStages', () => {
  it('gives the same outputs with threads on and off, each step timed under its declared name', async () => {
    const on = ctxOf(true);
    const off = ctxOf(false);
    const expected = { base: [1, 2, 3, 4, 5], twice: [2, 4, 6, 8, 10], ranged: [2, 4, 6, 8, 10], sum: 60 };
    expect(await runStages(on, steps('double'))).toEqual(expected);
    expect(await runStages(off, steps('double'))).toEqual(expected);
    // With threads on, the alongside step runs in a thread beside the next step and its merge is timed apart;
    // without, it runs where it is merged. The check is not timed.
    expect(on.timings.map((t) => t.stage)).toEqual(['make base', 'double in ranges (doubling alongside)', 'double base (rest)', 'sum']);
    expect(off.timings.map((t) => t.stage)).toEqual(['make base', 'double in ranges', 'double base', 'sum']);
  });

  it('refuses a step that reads an output before it is merged, naming the step', async () => {
    const sum = steps('double').find((s) => s.name === 'sum')!;
    const early = [...steps('double').slice(0, 2), { ...sum, after: undefined }];
    for (const threads of [true, false]) {
      await expect(runStages(ctxOf(threads), early)).rejects.toThrow('compile step "sum" reads twice before it is made');
    }
  });

  it('stops a thread running alongside when a later step fails, and only then rethrows', async () => {
    const failing: Step<Out>[] = [
      ...steps('hang').slice(0, 2),
      here('fail', 'sum', () => {
        throw new Error('step failed');
      }, () => undefined),
    ];
    // Were the hanging thread awaited without being stopped, this would never settle and the test would time out.
    await expect(runStages(ctxOf(true), failing)).rejects.toThrow('step failed');
  });

  it('surfaces a failure of a thread running alongside where it is merged', async () => {
    await expect(runStages(ctxOf(true), steps('fail'))).rejects.toThrow('job failed');
    await expect(runStages(ctxOf(false), steps('fail'))).rejects.toThrow('job failed');
  });
});
