// CPU per answer in process, without HTTP: a runtime from each of two checkouts answers the entity (with includes),
// resolve and 100-item batch requests through `app.answer`, one after another, and the process's CPU time per answer
// is taken from process.cpuUsage. Each side runs in a child process of its own, alternating A B, B A, … so both see
// the machine alike; CPU time moves less than req/s when other jobs share the cores. Each side's runtime is bundled
// by esbuild as production runs it (scripts/build.mjs: no keepNames), not run through tsx, whose keepNames adds a
// naming call for every arrow property made per request.
// node bin/run-ts.mjs bench/answer-cpu.ts --a /work/wt-int --b . --dist DIST --releases RELEASE_DIR [--pairs 3] [--n 20000]
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { runToEnd } from './lib/processes.ts';
import { prng, sampleKeys } from './lib/sample-keys.ts';
import { ENTITY_INCLUDE } from './lib/serve-measure.ts';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    root: { type: 'string' },
    dist: { type: 'string' },
    releases: { type: 'string' },
    pairs: { type: 'string', default: '3' },
    n: { type: 'string', default: '20000' },
  },
});
if (!values.dist || !values.releases) throw new Error('usage: bench/answer-cpu.ts --a ROOT --b ROOT --dist DIST --releases RELEASE_DIR [--pairs 3] [--n 20000]');
const dist = resolve(values.dist);
const n = Number(values.n);
const ROWS = ['entity', 'resolve', 'batch'] as const;
type Figures = Record<(typeof ROWS)[number], { cpuUs: number; answers: number }>;

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

/** One side: the three rows through `app.answer` of the runtime in `root`, CPU µs per answer after a warm pass. */
async function measure(root: string): Promise<Figures> {
  const work = await mkdtemp(join(tmpdir(), 'answer-cpu-'));
  const keys = join(work, 'keys.json');
  const added = await runToEnd(process.execPath, ['bin/register.mjs', 'keys', 'add', '--name', 'cpu', '--quota', '1000000000000', '--rate', '1000000000', '--keys', keys], { cwd: root });
  if (added.code !== 0) throw new Error(`keys add failed: ${added.stderr.trim()}`);
  const headers = { authorization: `Bearer ${added.stdout.trim().split('\n').pop()}` };
  const { startRuntime } = (await import(pathToFileURL(await bundle(root)).href)) as typeof import('../runtime/server.ts');
  const rt = await startRuntime({ dist, keys, state: 'memory:', port: 0, pages: null, log: () => {} });
  try {
    const samples = await sampleKeys(resolve(values.releases!), 4000, 1);
    const random = prng(1);
    const base = 'http://127.0.0.1/api/v1';
    const make: Record<(typeof ROWS)[number], (i: number) => Request> = {
      entity: (i) => new Request(`${base}/entities/${samples.entities[i % samples.entities.length].id}?include=${ENTITY_INCLUDE}`, { headers }),
      resolve: (i) => {
        const b = samples.bridges[i % samples.bridges.length];
        return new Request(`${base}/resolve/${encodeURIComponent(b.provider)}/${encodeURIComponent(b.externalId)}?namespace=${encodeURIComponent(b.namespace)}`, { headers });
      },
      batch: (() => {
        const bodies = Array.from({ length: 200 }, () => JSON.stringify({ include: ENTITY_INCLUDE, requests: Array.from({ length: 100 }, () => ({ type: 'entity', id: samples.entities[Math.floor(random() * samples.entities.length)].id })) }));
        return (i: number) => new Request(`${base}/batch`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: bodies[i % bodies.length] });
      })(),
    };
    const out = {} as Figures;
    for (const row of ROWS) {
      // Batches are 100 lookups each: a tenth as many keeps each row's time alike.
      const count = row === 'batch' ? Math.ceil(n / 10) : n;
      const run = async (k: number) => {
        for (let i = 0; i < k; i++) {
          const a = await rt.app.answer(make[row](i));
          // A provider ID held by two entities answers 409 with both, as the HTTP benchmark's resolve row does.
          if (a.status !== 200 && a.status !== 409) throw new Error(`${row} answered ${a.status}`);
        }
      };
      await run(Math.min(count, 5000)); // warm: caches, page cache, JIT
      const before = process.cpuUsage();
      await run(count);
      const used = process.cpuUsage(before);
      out[row] = { cpuUs: Math.round(((used.user + used.system) / count) * 10) / 10, answers: count };
    }
    return out;
  } finally {
    await rt.close();
    await rm(work, { recursive: true, force: true });
  }
}

if (values.root) {
  process.stdout.write(JSON.stringify(await measure(resolve(values.root))) + '\n');
} else {
  if (!values.a || !values.b) throw new Error('--a and --b (or --root for one side)');
  const roots = { A: resolve(values.a), B: resolve(values.b) };
  const pairs = Number(values.pairs);
  const self = fileURLToPath(import.meta.url);
  const run = promisify(execFile);
  const results: { pair: number; side: 'A' | 'B'; f: Figures; load: number }[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    for (const side of pair % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
      const { stdout } = await run(process.execPath, ['bin/run-ts.mjs', self, '--root', roots[side], '--dist', dist, '--releases', values.releases, '--n', String(n)], { cwd: roots.B, maxBuffer: 1 << 20 });
      const f = JSON.parse(stdout.trim().split('\n').pop()!) as Figures;
      const load = loadavg()[0];
      results.push({ pair, side, f, load });
      process.stderr.write(`[answer-cpu] pair ${pair + 1} ${side}: ${ROWS.map((r) => `${r} ${f[r].cpuUs} µs`).join(', ')}; load ${load.toFixed(2)}\n`);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  console.log(`A = ${roots.A}, B = ${roots.B}; CPU µs per answer through app.answer, ${pairs} alternating pairs\n`);
  console.log('| row | pair | A µs | B µs | B/A | load (A, B) |');
  console.log('|---|---|---|---|---|---|');
  for (const row of ROWS) {
    const ratios: number[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      const a = results.find((x) => x.pair === pair && x.side === 'A')!;
      const b = results.find((x) => x.pair === pair && x.side === 'B')!;
      ratios.push(b.f[row].cpuUs / a.f[row].cpuUs);
      console.log(`| ${row} | ${pair + 1} | ${a.f[row].cpuUs} | ${b.f[row].cpuUs} | ${(b.f[row].cpuUs / a.f[row].cpuUs).toFixed(3)} | ${a.load.toFixed(2)}, ${b.load.toFixed(2)} |`);
    }
    console.log(`| ${row} | median | | | ${median(ratios).toFixed(3)} | |`);
  }
}
