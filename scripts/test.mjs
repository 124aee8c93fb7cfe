#!/usr/bin/env node
// `npm test`: the type-check, the dead-export check (knip, knip.jsonc) and the test suite side by side, failing if
// any fails. In turn, the type-check's ~20 s on one core came before every test; beside the suite, it and the ~5 s
// dead-export check fill a core the suite's waiting tests leave idle. Arguments go to vitest (a file, -t NAME); the
// checks' output follows the suite's.
import { fileURLToPath } from 'node:url';
import { $ } from 'zx';

const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const vitestArgs = process.argv.slice(2);
// Incremental: tsc keeps what it learnt of the unchanged files in node_modules/.cache, so after the first run a
// type-check costs about a third of its ~20 s of CPU, which the suite beside it is short of on two cores.
const tsBuildInfo = fileURLToPath(new URL('../node_modules/.cache/identity-register-tsc/tsbuildinfo.json', import.meta.url));
const typecheck = $({ nothrow: true, quiet: true })`${bin('tsc')} --noEmit -p . --incremental --tsBuildInfoFile ${tsBuildInfo}`;
const deadExports = $({ nothrow: true, quiet: true })`${bin('knip')} --no-progress`;
const suite = $({ nothrow: true, stdio: 'inherit' })`${bin('vitest')} run ${vitestArgs}`;
const [checked, unused, tested] = await Promise.all([typecheck, deadExports, suite]);

const verdict = (run) => (run.exitCode === 0 ? 'passed' : `FAILED (exit ${run.exitCode})`);
if (checked.exitCode !== 0) console.error((checked.stdout + checked.stderr).trim());
if (unused.exitCode !== 0) console.error((unused.stdout + unused.stderr).trim());
console.error(`[test] type-check ${verdict(checked)}; dead-export check ${verdict(unused)}; tests ${verdict(tested)}`);
process.exit(checked.exitCode === 0 && unused.exitCode === 0 && tested.exitCode === 0 ? 0 : 1);
