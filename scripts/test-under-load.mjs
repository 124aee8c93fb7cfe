#!/usr/bin/env node
// `npm run test:loaded`: the whole test command while every core is kept busy by another process, to show that no
// test depends on the machine's speed. Busy loops at normal priority (or stress-ng's CPU workers, when installed and
// asked for with --stress-ng) compete with the suite for the whole run; the script prints how long it took and
// exits with the suite's status. Extra arguments go to vitest (e.g. a file to run).
import { availableParallelism } from 'node:os';
import { $, which } from 'zx';

const args = process.argv.slice(2);
const useStressNg = args.includes('--stress-ng');
const vitestArgs = args.filter((a) => a !== '--stress-ng');
const cores = availableParallelism();

$.verbose = true;
const hogs = [];
if (useStressNg) {
  if (!(await which('stress-ng', { nothrow: true }))) {
    console.error('[test-under-load] stress-ng is not installed (apt-get install stress-ng); run without --stress-ng for busy loops');
    process.exit(2);
  }
  hogs.push($({ quiet: true, nothrow: true })`stress-ng --cpu ${cores} --timeout 0`);
} else {
  for (let i = 0; i < cores; i++) hogs.push($({ quiet: true, nothrow: true })`${process.execPath} -e ${'for (;;) {}'}`);
}
console.error(`[test-under-load] ${useStressNg ? 'stress-ng' : 'busy loops'} on all ${cores} cores, then the test command`);

const t0 = performance.now();
let status = 1;
try {
  const run = await $({ nothrow: true, stdio: 'inherit' })`${process.execPath} scripts/test.mjs ${vitestArgs}`;
  status = run.exitCode ?? 1;
} finally {
  await Promise.all(hogs.map((h) => h.kill('SIGKILL').catch(() => {})));
}
const seconds = (performance.now() - t0) / 1000;
console.error(`[test-under-load] ${status === 0 ? 'passed' : `FAILED (exit ${status})`} in ${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s with every core busy`);
process.exit(status);
