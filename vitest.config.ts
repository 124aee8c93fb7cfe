// Test runner settings, in five projects (tiers) of one run. `npm test` runs all of them, and CI runs `npm test`;
// `npm run test:quick` runs the in-process tier alone, for the edit loop; `npx vitest run --project NAME` any one.
//
// Which tier a file is in follows from what it does, not from its folder alone:
//   in-process   calls code, and the app through its fetch (test/helpers/in-process.ts), in this process. It starts no
//                socket server and no child process: test/helpers/in-process-guard.ts refuses both while it runs, so
//                a file that needs one fails naming the project to move it to. Every file no other tier claims.
//   sockets      real servers on sockets and child processes: where the wire is the subject (the Node adapter, coding
//                on the wire, HTTP origins and mirrors), the CLI and `register serve`, redis-server, the docs' commands.
//   reliability  test/reliability/**: kill loops, damage, fuzzing, several instances, slow clients.
//   edge         test/edge/** and any file that runs workerd (miniflare).
//   browser      files that drive chromium (test/helpers/browser.ts).
// A file in two tiers would run twice and one in none never: the lists below are globs, and `in-process` is what
// they leave, so every file is in exactly one.
//
// Three workers on the 2-core machine: many tests wait on the processes they start (crash loops, compiles, the
// browser, the edge), and a third worker fills that wait (bench/HISTORY.md, 2026-11-27).
// Files share their worker's module graph (isolate: false): loading the runtime and compiler afresh for each file was
// ~30 s of the suite's CPU, and no test relies on a fresh module state (the whole suite passes either way).
import fg from 'fast-glob';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const TIERS = {
  sockets: [
    'test/cli/**/*.test.ts',
    'test/docs/**/*.test.ts',
    'test/mirror/**/*.test.ts',
    'test/client/register-client.test.ts',
    'test/compiler/bucket-family.test.ts',
    'test/compiler/compile-determinism.test.ts',
    'test/compiler/compile-report.test.ts',
    'test/compiler/notice-files.test.ts',
    'test/compiler/release-patches.test.ts',
    'test/compiler/real-data.test.ts',
    'test/runtime/answer-identity.test.ts',
    'test/runtime/cached-answers.test.ts',
    'test/runtime/cluster.test.ts',
    'test/runtime/head.test.ts',
    'test/runtime/in-process.test.ts',
    'test/runtime/mirror.test.ts',
    'test/runtime/no-charge-for-failure.test.ts',
    'test/runtime/one-app.test.ts',
    'test/runtime/pages.test.ts',
    'test/runtime/partner-http.test.ts',
    'test/runtime/release-semantics.test.ts',
    'test/runtime/keys/state-keys.test.ts',
    'test/runtime/ops/logger.test.ts',
    'test/runtime/ops/operations.test.ts',
    'test/runtime/source/http-source.test.ts',
    'test/runtime/state/redis-store.test.ts',
    'test/runtime/admin-routes.test.ts',
    'test/runtime/release/trust-restart.test.ts',
  ],
  reliability: ['test/reliability/**/*.test.ts'],
  edge: ['test/edge/**/*.test.ts', 'test/runtime/source/r2-source.test.ts'],
  browser: ['test/explorer/explorer-browser.test.ts'],
};
const ALL = 'test/**/*.test.ts';

// The named tiers' globs must not overlap, or a file would run twice: checked whenever the config loads.
const claimed = new Map<string, string>();
for (const [name, globs] of Object.entries(TIERS)) {
  for (const file of fg.sync(globs)) {
    const other = claimed.get(file);
    if (other) throw new Error(`vitest.config.ts: ${file} is in two tiers, '${other}' and '${name}'`);
    claimed.set(file, name);
  }
}

// The order files start in. A worker runs the files of one project only (a file of another project gets a fresh
// worker, which loads its modules again), so each project's files run together: the projects with the longest files
// first, those files first within them, and the in-process tier's many short files last, where they fill the cores
// while the long files end. A fresh clone has no timings cached, and vitest would then order files by size; a long
// file started late is the suite's tail, with one core idle meanwhile.
const PROJECT_ORDER = ['reliability', 'browser', 'edge', 'sockets', 'in-process'];
const LONG_POLES = [
  'test/reliability/crash-safety.test.ts',
  'test/reliability/compile-kill.test.ts',
  'test/reliability/damage.test.ts',
  'test/explorer/explorer-browser.test.ts',
  'test/edge/edge-cli.test.ts',
  'test/edge/edge-parity-releases.test.ts',
  'test/docs/readme-blocks.test.ts',
  'test/docs/container.test.ts',
  'test/compiler/compile-determinism.test.ts',
];

class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // The base order: by project, then longest first by cached timings.
    const sorted = await super.sort(files);
    const project = (f: TestSpecification): number => PROJECT_ORDER.indexOf(f.project.name);
    const rank = (f: TestSpecification): number => {
      const i = LONG_POLES.findIndex((p) => f.moduleId.endsWith(p));
      return i < 0 ? LONG_POLES.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => project(a.f) - project(b.f) || rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

const tier = (name: string, include: string[], more: TestProjectInlineConfiguration['test'] = {}): TestProjectInlineConfiguration => ({
  extends: true,
  test: { name, include, ...more },
});

export default defineConfig({
  test: {
    projects: [
      tier('in-process', [ALL], {
        exclude: Object.values(TIERS).flat(),
        setupFiles: ['test/helpers/in-process-guard.ts'],
      }),
      tier('sockets', TIERS.sockets),
      tier('reliability', TIERS.reliability),
      tier('edge', TIERS.edge, {
        // The edge tier's one Worker bundle for all its files (test/edge/edge-global-setup.ts). A project's
        // globalSetup is added to the run's (test/global-setup.ts, below, which comes first and builds the pages the
        // bundle carries); set at the top level instead, it would run once for each project.
        globalSetup: ['test/edge/edge-global-setup.ts'],
      }),
      tier('browser', TIERS.browser),
    ],
    globalSetup: ['test/global-setup.ts'],
    // IR_TEST_CPU_LOG=FILE: each file's CPU and wall time as JSON lines (test/helpers/cpu-log.ts).
    setupFiles: ['test/helpers/cpu-log.ts'],
    // Bounds that stop a hung test, not measures of speed: the slowest test takes ~35 s on a quiet machine, and the
    // suite must still pass with every core busy (npm run test:loaded) and other work beside it, when tests take
    // several times as long: at a load of ~20 on the 2 cores, damage's in-process test ran past the 180 s it had.
    testTimeout: 600_000,
    hookTimeout: 600_000,
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
