// Child-process entry of the compile measurement: compiles one stamp with compileAll, then writes its report, wall,
// CPU and peak RSS as JSON, so the figures are the compile's own and not the benchmark's.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { compileAll } from '../../compiler/compile.ts';

const { values } = parseArgs({
  options: { releases: { type: 'string' }, out: { type: 'string' }, stamp: { type: 'string' }, report: { type: 'string' } },
  strict: true,
});
if (!values.releases || !values.out || !values.stamp || !values.report) {
  process.stderr.write('usage: compile-child.ts --releases R --out D --stamp S --report FILE\n');
  process.exit(2);
}

const t0 = performance.now();
const reports = await compileAll({ releases: values.releases, dist: values.out, stamp: values.stamp, progress: false });
const wallMs = performance.now() - t0;
const usage = process.resourceUsage();
const r = reports[0];
writeFileSync(
  values.report,
  JSON.stringify({
    stamp: r.stamp,
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000),
    maxRssBytes: usage.maxRSS * 1024,
    counts: r.counts,
    slack: r.slack,
    timings: r.timings,
    digest: r.manifest.digest,
  }),
);
