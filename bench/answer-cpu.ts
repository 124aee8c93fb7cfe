// CPU per answer in process, without HTTP: runtimes from two checkouts answer the entity (with includes), resolve
// and 100-item batch requests through `app.answer`, one after another, and the process's CPU time per answer is
// taken from process.cpuUsage. Both runtimes live in one process and take turns in short rounds (A B, B A, …), so
// other jobs on the machine weigh on both alike; the median of the rounds' ratios is reported. Each side's runtime
// is bundled by esbuild as production runs it (scripts/build.mjs: no keepNames), not run through tsx, whose
// keepNames adds a naming call for every arrow property made per request.
// node --expose-gc bin/run-ts.mjs bench/answer-cpu.ts --a /work/wt-int --b . --dist DIST --releases RELEASE_DIR [--rounds 20] [--n 2000]
//   [--dist-a DIST --dist-b DIST]   each side's own dist, where the two checkouts' dist formats differ
//   [--body-cache BYTES]   0: no cached answers, so the entity and batch rows measure lookups and composition
//   [--side-a JSON] [--side-b JSON]   startRuntime options of one side (default state `memory:`), for a feature's
//     cost on one checkout: {"state":"sqlite:/tmp/x.db"}; {"accessLog":"/dev/null"} writes the access log there
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AB_ROWS as ROWS, abCommandLine, abRequests, median, type AbRow as Row } from './lib/ab-sides.ts';
import { addBenchKey } from './lib/processes.ts';

const { roots, dists, sides, described, releases, own } = abCommandLine('bench/answer-cpu.ts', { rounds: '20', n: '2000', 'body-cache': '-1' });
const { rounds, n } = own;
/** Bytes of cached answers (-1: the default): 0 makes every entity answer a lookup and a composition, the read path itself. */
const bodyCacheBytes = own['body-cache'] < 0 ? undefined : own['body-cache'];
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
  // The side's own logger with its runtime: the access log's interface may differ between the two checkouts.
  const contents = `export * from './runtime/server.ts';${existsSync(join(root, 'runtime/ops/logger.ts')) ? " export { createLogger } from './runtime/ops/logger.ts';" : ''}`;
  await build({ stdin: { contents, resolveDir: root, loader: 'ts' }, outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' });
  return outfile;
}

const work = await mkdtemp(join(tmpdir(), 'answer-cpu-'));
const keys = join(work, 'keys.json');
// Keys are added by this checkout's CLI, so neither side's checkout gets a build started in it.
const headers = await addBenchKey(join(dirname(fileURLToPath(import.meta.url)), '..'), keys, 'cpu');

const lists = await abRequests(releases, 4000);
const make = (row: Row, i: number): Request => {
  const r = lists[row][i % lists[row].length];
  return new Request(`http://127.0.0.1${r.path}`, { method: r.method, headers: r.body ? { ...headers, 'content-type': 'application/json' } : headers, body: r.body as Uint8Array<ArrayBuffer> | undefined });
};
/** Answers per round: batches are 100 lookups each, so a tenth as many keeps the rows' rounds alike in length. */
const per = (row: Row) => (row === 'batch' ? Math.ceil(n / 10) : n);

/** `count` answers of `row` from `rt`, from request `from` on; the process's CPU µs per answer. */
async function answer(rt: Runtime, row: Row, from: number, count: number): Promise<number> {
  // The other side's garbage is collected first, not on this side's time (run with node --expose-gc).
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.cpuUsage();
  for (let i = from; i < from + count; i++) {
    const a = await rt.app.answer(make(row, i));
    // A provider ID held by two entities answers 409 with both, as the HTTP benchmark's resolve row does.
    if (a.status !== 200 && a.status !== 409) throw new Error(`${row} answered ${a.status}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const runtimes: Record<'A' | 'B', Runtime> = {} as Record<'A' | 'B', Runtime>;
try {
  for (const side of ['A', 'B'] as const) {
    const { startRuntime, createLogger } = (await import(pathToFileURL(await bundle(roots[side])).href)) as typeof import('../runtime/server.ts') & typeof import('../runtime/ops/logger.ts');
    const { accessLog, ...tweaks } = JSON.parse(sides[side] ?? '{}') as { accessLog?: string; [option: string]: unknown };
    // The access log as `register serve` writes it (buffered pino), to a file or /dev/null instead of stdout.
    const logger = accessLog ? createLogger({ destination: accessLog }) : null;
    runtimes[side] = await startRuntime({ dist: dists[side], keys, state: 'memory:', port: 0, pages: null, log: () => {}, bodyCacheBytes, logger, ...tweaks });
  }
  // Warm both: every distinct request once (caches, page cache, JIT), then a round's worth more.
  for (const row of ROWS) for (const side of ['A', 'B'] as const) await answer(runtimes[side], row, 0, Math.max(per(row), lists[row].length));
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
  const loads = Object.values(results).flat().map((x) => x.load);
  console.log(`A = ${described.A}, B = ${described.B}; CPU µs per answer through app.answer (esbuild bundles), ${rounds} alternating rounds per row of ${n} answers (${Math.ceil(n / 10)} batches)${bodyCacheBytes === undefined ? '' : `, body cache ${bodyCacheBytes} bytes`}; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${availableParallelism()} cores\n`);
  console.log('| row | A µs/answer (median) | B µs/answer (median) | B/A, median of rounds | B/A, quartiles of rounds | B/A, median of round pairs |');
  console.log('|---|---|---|---|---|---|');
  for (const row of ROWS) {
    const rs = results[row];
    const ratios = rs.map((x) => x.b / x.a).sort((x, y) => x - y);
    const q = (p: number) => ratios[Math.min(ratios.length - 1, Math.floor(p * ratios.length))].toFixed(3);
    // Whichever side runs second in a round tends to read higher; a pair of rounds has each order once, and the
    // geometric mean of its two ratios cancels that.
    const pairs = Array.from({ length: rs.length >> 1 }, (_, k) => Math.sqrt((rs[2 * k].b / rs[2 * k].a) * (rs[2 * k + 1].b / rs[2 * k + 1].a)));
    console.log(`| ${row} | ${median(rs.map((x) => x.a)).toFixed(1)} | ${median(rs.map((x) => x.b)).toFixed(1)} | ${median(ratios).toFixed(3)} | ${q(0.25)}–${q(0.75)} | ${pairs.length ? median(pairs).toFixed(3) : '-'} |`);
  }
} finally {
  for (const rt of Object.values(runtimes)) await rt.close();
  await rm(work, { recursive: true, force: true });
}
