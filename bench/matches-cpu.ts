// CPU per answer of GET /matches against an entity lookup, in process and without HTTP: one runtime (bundled by
// esbuild as production runs it) answers each row's requests through `app.answer` in short alternating rounds, and
// the process's CPU time per answer is taken from process.cpuUsage. The ratio to the entity row of the same round is
// what issue 41 bounds (a page's CPU ≤ 2× an entity lookup's); the worst-filter rows show that no filter a client can
// send costs much more than a normal page. The `matches` row asks its teams' pages again and again, so it is served
// mostly from kept pages, as the entity row is from cached answers; `matches-cold` asks each page once (pages made),
// and so do the worst-filter rows: their measured requests are never among those the warm-up asked.
// node --expose-gc bin/run-ts.mjs bench/matches-cpu.ts --dist DIST --releases RELEASE_DIR [--rounds 10] [--n 1000] [--rows matches,…]
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './lib/ab-sides.ts';
import { addBenchKey } from './lib/processes.ts';
import { coldMatchPaths, matchRows, MATCH_ROWS, type MatchRow } from './lib/match-requests.ts';
import { sampleKeys } from './lib/sample-keys.ts';
import { ENTITY_INCLUDE } from './lib/serve-measure.ts';

const { values } = parseArgs({ options: { dist: { type: 'string' }, releases: { type: 'string' }, rounds: { type: 'string', default: '10' }, n: { type: 'string', default: '1000' }, rows: { type: 'string' }, help: { type: 'boolean' } } });
const USAGE = 'usage: node --expose-gc bin/run-ts.mjs bench/matches-cpu.ts --dist DIST --releases RELEASE_DIR [--rounds 10] [--n 1000] [--rows matches,matches-cold,…]';
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.dist || !values.releases) throw new Error(USAGE);
const rounds = Number(values.rounds);
const n = Number(values.n);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
type Runtime = Awaited<ReturnType<typeof import('../runtime/server.ts').startRuntime>>;

const work = await mkdtemp(join(tmpdir(), 'matches-cpu-'));
const outfile = join(root, 'bench', 'out', 'matches-cpu', 'runtime.mjs');
await mkdir(dirname(outfile), { recursive: true });
const { build } = await import('esbuild');
await build({ entryPoints: [join(root, 'runtime/server.ts')], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' });
const headers = await addBenchKey(root, join(work, 'keys.json'), 'cpu');

const samples = await sampleKeys(values.releases, 2000, 1);
/** Requests of a row that answer each other's work (the entity and team rows cycle over their samples): the warm-up asks these. */
const WARM = 2000;
// The rows whose requests are all distinct hold enough for the warm-up and every round, so none is asked twice.
const distinct = WARM + rounds * n;
type Row = 'entity' | 'matches-cold' | MatchRow;
const rows: Record<Row, string[]> = {
  entity: samples.entities.map((e) => `/api/v1/entities/${e.id}?include=${ENTITY_INCLUDE}`),
  ...matchRows(samples, distinct),
  'matches-cold': coldMatchPaths(samples.teams, distinct),
};
/** `--rows a,b`: only these rows (e.g. one, under --cpu-prof); the entity row always runs, as the baseline. */
const ROWS: Row[] = ['entity', ...(['matches', 'matches-cold', ...MATCH_ROWS.slice(1)] as const).filter((r) => !values.rows || values.rows.split(',').includes(r))];
const make = (row: Row, i: number): Request => new Request(`http://127.0.0.1${rows[row][i % rows[row].length]}`, { headers });

/** `count` answers of `row`, from request `from` on; the process's CPU µs per answer. */
async function answer(rt: Runtime, row: Row, from: number, count: number): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.cpuUsage();
  for (let i = from; i < from + count; i++) {
    const a = await rt.app.answer(make(row, i));
    if (a.status !== 200) throw new Error(`${row} answered ${a.status} to ${rows[row][i % rows[row].length]}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const { startRuntime } = (await import(pathToFileURL(outfile).href)) as typeof import('../runtime/server.ts');
const rt = await startRuntime({ dist: values.dist, keys: join(work, 'keys.json'), state: 'memory:', port: 0, pages: null, log: () => {}, cursorSecret: 'benchmark cursor secret, not a deployment one' });
try {
  // Warm (caches, cached answers and pages, JIT): the first WARM requests of each row, every sample of the cycling rows.
  for (const row of ROWS) await answer(rt, row, 0, Math.min(WARM, rows[row].length));
  const us: Record<Row, number[]> = Object.fromEntries(ROWS.map((r) => [r, []])) as never;
  const loads: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Each round runs every row once, in an order rotated per round, so drift weighs on all rows alike.
    for (let k = 0; k < ROWS.length; k++) {
      const row = ROWS[(k + r) % ROWS.length];
      us[row].push(await answer(rt, row, WARM + r * n, n));
    }
    loads.push(loadavg()[0]);
  }
  console.log(`CPU µs per answer through app.answer (esbuild bundle), ${rounds} rounds of ${n} answers per row; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${availableParallelism()} cores\n`);
  console.log('| row | µs/answer (median) | / entity, median of rounds |');
  console.log('|---|---|---|');
  for (const row of ROWS) {
    const ratio = median(us[row].map((x, i) => x / us.entity[i]));
    console.log(`| ${row} | ${median(us[row]).toFixed(1)} | ${ratio.toFixed(2)} |`);
  }
} finally {
  await rt.close();
  await rm(work, { recursive: true, force: true });
}
