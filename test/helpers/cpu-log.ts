// Where the suite's time goes, file by file: with IR_TEST_CPU_LOG=FILE, each test file appends one JSON line to FILE
// with its wall time and the CPU its worker spent on it, the child processes it started and waited for included
// (/proc/self/stat's utime, stime, cutime and cstime: Linux only). Vitest's own timings are wall times, which on a
// shared machine say more about the other load than about the file. A setup file of every project; off by default.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

const out = process.env.IR_TEST_CPU_LOG;

/** CPU seconds of this process, its threads and its reaped children. */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after `pid (comm) `; comm may hold spaces, so count from its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14–17 of stat(5), here 11–14 after pid and comm; in clock ticks (100 a second).
  return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100;
}

if (out) {
  // From here, before the file's own imports: what loading them costs is the file's too (vitest runs setup files
  // again for each file, also where files share a worker).
  const cpu0 = cpuSeconds();
  const wall0 = performance.now();
  afterAll(() => {
    const path = expect.getState().testPath ?? '?';
    const line = { file: relative(process.cwd(), path), cpu: +(cpuSeconds() - cpu0).toFixed(2), wall: +((performance.now() - wall0) / 1000).toFixed(2) };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
