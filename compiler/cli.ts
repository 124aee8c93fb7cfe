// `register compile` and `register verify`: argument parsing and reporting around compileAll and verifyStamp.
import { parseArgs } from 'node:util';
import { RegisterError } from '../common/errors.ts';
import { compileAll, listStamps } from './compile.ts';
import { verifyDist } from './dist-manifest.ts';

export async function compileCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { releases: { type: 'string' }, out: { type: 'string' }, stamp: { type: 'string' }, strict: { type: 'boolean' } },
    strict: true,
  });
  const t0 = Date.now();
  const reports = await compileAll({
    releases: values.releases ?? 'releases',
    dist: values.out ?? 'dist',
    stamp: values.stamp,
    strict: values.strict ?? false,
    onCompiled: (r) => {
      process.stderr.write(`[compile] ${r.stamp}: ${r.counts.entities} entities, ${r.counts.bridges} bridges, digest ${r.manifest.digest.slice(0, 16)}\n`);
      if (process.env.REGISTER_TIMINGS) for (const t of r.timings) process.stderr.write(`[compile] ${r.stamp}:   ${t.stage.padEnd(20)} ${String(t.wallMs).padStart(7)} ms wall ${String(t.cpuMs).padStart(7)} ms cpu  peak ${(t.peakRssBytes / 2 ** 20).toFixed(0)} MiB\n`);
      for (const s of r.slack) process.stderr.write(`[compile] ${r.stamp}: dropped ${s.count} × ${s.what} (e.g. ${s.example})\n`);
    },
  });
  if (reports.length === 0) process.stderr.write('[compile] nothing to do: every release is compiled\n');
  else process.stderr.write(`[compile] ${reports.length} release(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

export async function verifyCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { dist: { type: 'string' } }, strict: true });
  const dist = values.dist ?? 'dist';
  const stamps = await listStamps(dist);
  if (stamps.length === 0) throw new RegisterError('verify', `no compiled release under ${dist}/`);
  const verdict = await verifyDist(dist, stamps);
  for (const p of verdict.index) process.stderr.write(`[verify] ${p}\n`);
  let bad = 0;
  for (const { stamp, published, problems } of verdict.stamps) {
    for (const p of problems) process.stderr.write(`[verify] ${stamp}/${p}\n`);
    if (problems.length) bad++;
    else process.stderr.write(`[verify] ${stamp}: ok${published ? '' : ' (compiled, not listed in index.json)'}\n`);
  }
  if (verdict.index.length) throw new RegisterError('verify', `index.json is damaged or does not match the dist${bad ? `, and ${bad} release(s) differ from their manifest` : ''}`);
  if (bad) throw new RegisterError('verify', `${bad} release(s) differ from their manifest`);
}
