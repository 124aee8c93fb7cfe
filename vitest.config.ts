// Test runner settings: real servers and real files make some tests slow-ish. Three workers on the 2-core machine:
// with two, the suite kept the cores 172% busy, since many tests wait on the processes they start (crash loops,
// compiles, the browser, the edge); a third worker fills that wait (bench/HISTORY.md, 2026-11-27).
// Files share their worker's module graph (isolate: false): loading the runtime and compiler afresh for each of 78
// files was ~30 s of the suite's CPU, and no test relies on a fresh module state (the whole suite passes either way).
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The files that take longest, longest first. A fresh clone has no timings cached, and vitest would then order files
// by size; a long file started late is the suite's tail, with one core idle meanwhile.
const LONG_POLES = [
  'test/reliability/crash-safety.test.ts',
  'test/reliability/compile-kill.test.ts',
  'test/explorer/explorer-browser.test.ts',
  'test/reliability/damage.test.ts',
  'test/edge/edge-cli.test.ts',
  'test/docs/readme-blocks.test.ts',
  'test/compiler/compile-determinism.test.ts',
  'test/edge/edge-parity-releases.test.ts',
  'test/docs/container.test.ts',
];

class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = LONG_POLES.findIndex((p) => f.moduleId.endsWith(p));
      return i < 0 ? LONG_POLES.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The edge tier's one Worker bundle, after the build it bundles the pages of.
    globalSetup: ['test/global-setup.ts', 'test/edge/edge-global-setup.ts'],
    // Bounds that stop a hung test, not measures of speed: the slowest test takes ~35 s on a quiet machine, and the
    // suite must still pass with every core busy (npm run test:loaded), when tests take several times as long.
    testTimeout: 180_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 3,
    isolate: false,
    reporters: ['default'],
    sequence: { sequencer: LongPolesFirst },
    // `npx vitest run --coverage`: line coverage of the sources (V8's own counters, no instrumented build), to show
    // that a change to the tests loses none. Child processes run build/ and are not counted.
    coverage: {
      provider: 'v8',
      include: ['{runtime,compiler,common,client,cli,mirror,generator,explorer}/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'test-output/coverage',
    },
  },
});
