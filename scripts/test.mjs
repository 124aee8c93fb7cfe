#!/usr/bin/env node
// `npm test`: the type-check and the test suite side by side, failing if either fails. In turn, the type-check's
// ~20 s on one core came before every test; beside the suite it fills a core the suite's waiting tests leave idle.
// Arguments go to vitest (a file, -t NAME); the type-check's output follows the suite's.
import { fileURLToPath } from 'node:url';
import { $ } from 'zx';

const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const vitestArgs = process.argv.slice(2);
const typecheck = $({ nothrow: true, quiet: true })`${bin('tsc')} --noEmit -p .`;
const suite = $({ nothrow: true, stdio: 'inherit' })`${bin('vitest')} run ${vitestArgs}`;
const [checked, tested] = await Promise.all([typecheck, suite]);

if (checked.exitCode !== 0) console.error((checked.stdout + checked.stderr).trim());
console.error(`[test] type-check ${checked.exitCode === 0 ? 'passed' : `FAILED (exit ${checked.exitCode})`}; tests ${tested.exitCode === 0 ? 'passed' : `FAILED (exit ${tested.exitCode})`}`);
process.exit(checked.exitCode === 0 && tested.exitCode === 0 ? 0 : 1);
