// CPU per answer in process, without HTTP: runtimes from two checkouts answer the entity (with includes), resolve
// and 100-item batch requests through `app.answer`, one after another, and the process's CPU time per answer is
// taken from process.cpuUsage. Both runtimes live in one process and take turns in short rounds (A B, B A, …), so
// other jobs on the machine weigh on both alike; the median of the rounds' ratios is reported. Each side's runtime
// is bundled by esbuild as production runs it (scripts/build.mjs: no keepNames), not run through tsx, whose
// keepNames adds a naming call for every arrow property made per request.
// node --expose-gc bin/run-ts.mjs bench/answer-cpu.ts --a /work/wt-int --b . --dist DIST --releases RELEASE_DIR [--rounds 20] [--n 2000]
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { runToEnd } from './lib/processes.ts';
import { prng, sampleKeys } from './lib/sample-keys.ts';
import { ENTITY_INCLUDE } from './lib/serve-measure.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    dist: { type: 'string' },
    releases: { type: 'string' },
    rounds: { type: 'string', default: '20' },
    n: { type: 'string', default: '2000' },
  },
});
if (!values.a || !values.b || !values.dist || !values.releases) throw new Error('usage: bench/answer-cpu.ts --a ROOT --b ROOT --dist DIST --releases RELEASE_DIR [--rounds 20] [--n 2000]');
const dist = resolve(values.dist);
const rounds = Number(values.rounds);
const n = Number(values.n);
const ROWS = ['entity', 'resolve', 'batch'] as const;
type Row = (typeof ROWS)[number];
type Runtime = Awaited<ReturnType<typeof import('../runtime/server.ts').startRuntime>>;

/**
 * `root`'s runtime bundled into bench/out/ of this checkout, so its packages resolve from this node_modules (the
 * two sides share a lockfile). Returns the bundle's path.
 */
async function bundle(root: string): Promise<string> {
  const { build } = await import('esbuild');
  const here = dirname(fileURLToPath(import.meta.url));
  const outfile = join(here, 'out', 'answer-cpu', `${createHash('sha256').update(root).digest('hex').slice(0, 12)}.mjs`);
  await mkdir(dirname(outfile), { recursive: true });
  await build({ entryPoints: [join(root, 'runtime/server.ts')], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' });
  return outfile;
}

const roots = { A: resolve(values.a), B: resolve(values.b) };
const work = await mkdtemp(join(tmpdir(), 'answer-cpu-'));
const keys = join(work, 'keys.json');
const added = await runToEnd(process.execPath, ['bin/register.mjs', 'keys', 'add', '--name', 'cpu', '--quota', '1000000000000', '--rate', '1000000000', '--keys', keys], { cwd: roots.B });
if (added.code !== 0) throw new Error(`keys add failed: ${added.stderr.trim()}`);
const headers = { authorization: `Bearer ${added.stdout.trim().split('\n').pop()}` };

const samples = await sampleKeys(resolve(values.releases), 4000, 1);
const random = prng(1);
const base = 'http://127.0.0.1/api/v1';
const bodies = Array.from({ length: 200 }, () => JSON.stringify({ include: ENTITY_INCLUDE, requests: Array.from({ length: 100 }, () => ({ type: 'entity', id: samples.entities[Math.floor(random() * samples.entities.length)].id })) }));
const make: Record<Row, (i: number) => Request> = {
  entity: (i) => new Request(`${base}/entities/${samples.entities[i % samples.entities.length].id}?include=${ENTITY_INCLUDE}`, { headers }),
  resolve: (i) => {
    const b = samples.bridges[i % samples.bridges.length];
    return new Request(`${base}/resolve/${encodeURIComponent(b.provider)}/${encodeURIComponent(b.externalId)}?namespace=${encodeURIComponent(b.namespace)}`, { headers });
  },
  batch: (i) => new Request(`${base}/batch`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: bodies[i % bodies.length] }),
};
/** Answers per round: batches are 100 lookups each, so a tenth as many keeps the rows' rounds alike in length. */
const per = (row: Row) => (row === 'batch' ? Math.ceil(n / 10) : n);

/** `count` answers of `row` from `rt`, from request `from` on; the process's CPU µs per answer. */
async function answer(rt: Runtime, row: Row, from: number, count: number): Promise<number> {
  // The other side's garbage is collected first, not on this side's time (run with node --expose-gc).
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.cpuUsage();
  for (let i = from; i < from + count; i++) {
    const a = await rt.app.answer(make[row](i));
    // A provider ID held by two entities answers 409 with both, as the HTTP benchmark's resolve row does.
    if (a.status !== 200 && a.status !== 409) throw new Error(`${row} answered ${a.status}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const runtimes: Record<'A' | 'B', Runtime> = {} as Record<'A' | 'B', Runtime>;
try {
  for (const side of ['A', 'B'] as const) {
    const { startRuntime } = (await import(pathToFileURL(await bundle(roots[side])).href)) as typeof import('../runtime/server.ts');
    runtimes[side] = await startRuntime({ dist, keys, state: 'memory:', port: 0, pages: null, log: () => {} });
  }
  // Warm both: every distinct request once (caches, page cache, JIT), then a round's worth more.
  for (const row of ROWS) for (const side of ['A', 'B'] as const) await answer(runtimes[side], row, 0, Math.max(per(row), row === 'batch' ? bodies.length : samples.entities.length));
  const results: Record<Row, { a: number; b: number; load: number }[]> = { entity: [], resolve: [], batch: [] };
  for (const row of ROWS) {
    for (let r = 0; r < rounds; r++) {
      const us: Record<'A' | 'B', number> = { A: 0, B: 0 };
      for (const side of r % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) us[side] = await answer(runtimes[side], row, r * per(row), per(row));
      results[row].push({ a: us.A, b: us.B, load: loadavg()[0] });
    }
    const rs = results[row];
    process.stderr.write(`[answer-cpu] ${row}: ${rs.map((x) => (x.b / x.a).toFixed(2)).join(' ')}\n`);
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  const loads = Object.values(results).flat().map((x) => x.load);
  console.log(`A = ${roots.A}, B = ${roots.B}; CPU µs per answer through app.answer (esbuild bundles), ${rounds} alternating rounds per row of ${n} answers (${Math.ceil(n / 10)} batches); load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${(await import('node:os')).availableParallelism()} cores\n`);
  console.log('| row | A µs/answer (median) | B µs/answer (median) | B/A, median of rounds | B/A, quartiles of rounds |');
  console.log('|---|---|---|---|---|');
  for (const row of ROWS) {
    const rs = results[row];
    const ratios = rs.map((x) => x.b / x.a).sort((x, y) => x - y);
    const q = (p: number) => ratios[Math.min(ratios.length - 1, Math.floor(p * ratios.length))].toFixed(3);
    console.log(`| ${row} | ${median(rs.map((x) => x.a)).toFixed(1)} | ${median(rs.map((x) => x.b)).toFixed(1)} | ${median(ratios).toFixed(3)} | ${q(0.25)}–${q(0.75)} |`);
  }
} finally {
  for (const rt of Object.values(runtimes)) await rt.close();
  await rm(work, { recursive: true, force: true });
}
