// Same-run A/B of two checkouts' runtimes on one compiled dist: `register serve` from each checkout, then the
// entity (with includes), resolve and 100-item batch loads on each in alternating pairs, A then B, then B then A, so
// the machine's drift over minutes lands on both sides alike. Prints a Markdown table for bench/HISTORY.md.
// node bin/run-ts.mjs bench/ab-serve.ts --a /work/wt-int --b . --dist bench/out/100000-s1/dist \
//   --releases bench/out/100000-s1/releases/20261008T000000Z [--pairs 3] [--duration 5] [--concurrency 50]
//   [--dist-a DIST --dist-b DIST]   each side's own dist, where the two checkouts' dist formats differ
//   [--side-a ARGS] [--side-b ARGS]   more `serve` arguments for one side (`--access-log off`, `--state memory:`)
//   [--node-a FLAGS] [--node-b FLAGS]   Node's own flags for one side's process (`--max-semi-space-size=32`)
//   AB_ROWS=entity,resolve,search,batch   the rows to load (default entity,resolve,batch)
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AB_ROWS, abCommandLine, abRequests, median } from './lib/ab-sides.ts';
import { runLoad, type LoadRequest, type LoadResult } from './lib/load-generator.ts';
import { addBenchKey, freePort, memoryOf, startChild, stopChild, waitFor200, type StartedChild } from './lib/processes.ts';

const { roots, dists, sides, nodeFlags, described, releases, own } = abCommandLine('bench/ab-serve.ts', { pairs: '3', duration: '5', concurrency: '50', samples: '4000' });
const { pairs, concurrency } = own;
const durationMs = own.duration * 1000;
const log = (line: string) => process.stderr.write(`[ab] ${line}\n`);

const work = await mkdtemp(join(tmpdir(), 'ab-serve-'));
const logFile = join(work, 'serve.log');
const keys = join(work, 'keys.json');
const auth = await addBenchKey(roots.B, keys, 'ab', logFile);

/** `register serve` from `root`, with its own state, once /meta answers 200. */
async function serve(side: 'A' | 'B'): Promise<StartedChild & { port: number }> {
  const port = await freePort();
  const extra = sides[side]?.split(' ').filter(Boolean) ?? [];
  const child = await startChild({
    command: process.execPath,
    args: [...nodeFlags[side], 'bin/register.mjs', 'serve', '--dist', dists[side], '--keys', keys, '--port', String(port), '--host', '127.0.0.1', ...(extra.includes('--state') ? [] : ['--state', join(work, `state-${side}`)]), ...extra],
    cwd: roots[side],
    logFile,
  });
  try {
    await waitFor200(port, '/api/v1/meta', auth, 60_000);
  } catch (e) {
    await stopChild(child.child);
    throw new Error(`${side} (${roots[side]}) did not answer /meta; see ${logFile}`, { cause: e });
  }
  return Object.assign(child, { port });
}

const all: Record<string, LoadRequest[]> = await abRequests(releases, own.samples);
// AB_ROWS=entity,search: only those rows (default entity, resolve, batch).
const rows: Record<string, LoadRequest[]> = Object.fromEntries((process.env.AB_ROWS?.split(',') ?? AB_ROWS).filter((row) => all[row]).map((row) => [row, all[row]]));

const servers = { A: await serve('A'), B: await serve('B') };
/** Server CPU per answer in µs: less moved by other jobs than req/s on a shared machine. */
const cpuUs = (r: LoadResult): number | null => (r.serverCpuPct === null || r.rps === 0 ? null : Math.round((r.serverCpuPct / 100 / r.rps) * 1e6));
const results: { row: string; pair: number; side: 'A' | 'B'; r: LoadResult; load: number }[] = [];
try {
  // One unmeasured pass over every request on each side: the page cache, the bucket and shard caches, the JIT.
  for (const side of ['A', 'B'] as const) {
    for (const list of Object.values(rows)) await runLoad({ host: '127.0.0.1', port: servers[side].port, headers: auth, concurrency, durationMs: 3000, warmupMs: 0, next: (i) => list[i % list.length] });
  }
  for (const [row, list] of Object.entries(rows)) {
    for (let pair = 0; pair < pairs; pair++) {
      for (const side of pair % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
        const s = servers[side];
        const r = await runLoad({ host: '127.0.0.1', port: s.port, headers: auth, concurrency, durationMs, warmupMs: 1000, serverPid: s.pid, next: (i) => list[i % list.length] });
        const load = loadavg()[0];
        results.push({ row, pair, side, r, load });
        log(`${row} pair ${pair + 1} ${side}: ${r.rps} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${cpuUs(r)} µs CPU/answer, other ${r.otherCpuPct}%, statuses ${JSON.stringify(r.statuses)}, load ${load.toFixed(2)}`);
      }
    }
  }
  // Each server's resident memory once every load has run (its children's too): what a larger young generation costs.
  for (const side of ['A', 'B'] as const) {
    const m = memoryOf(servers[side].pid);
    if (m) log(`${side} after the loads: RSS ${Math.round(m.rssBytes / 2 ** 20)} MiB, peak ${Math.round(m.hwmBytes / 2 ** 20)} MiB`);
  }
} finally {
  await stopChild(servers.A.child);
  await stopChild(servers.B.child);
  await rm(work, { recursive: true, force: true });
}

console.log(`A = ${described.A}, B = ${described.B}; ${pairs} pairs of ${durationMs / 1000} s at ${concurrency} connections\n`);
console.log('| row | pair | A req/s | B req/s | B/A | A µs CPU/answer | B µs CPU/answer | B/A CPU | other CPU % (A, B) | load |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const row of Object.keys(rows)) {
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const a = results.find((x) => x.row === row && x.pair === pair && x.side === 'A')!;
    const b = results.find((x) => x.row === row && x.pair === pair && x.side === 'B')!;
    const [ca, cb] = [cpuUs(a.r), cpuUs(b.r)];
    ratios.push(b.r.rps / a.r.rps);
    if (ca && cb) cpuRatios.push(cb / ca);
    console.log(`| ${row} | ${pair + 1} | ${a.r.rps} | ${b.r.rps} | ${(b.r.rps / a.r.rps).toFixed(3)} | ${ca} | ${cb} | ${ca && cb ? (cb / ca).toFixed(3) : '-'} | ${a.r.otherCpuPct}, ${b.r.otherCpuPct} | ${a.load.toFixed(2)}, ${b.load.toFixed(2)} |`);
  }
  console.log(`| ${row} | median | | | ${median(ratios).toFixed(3)} | | | ${cpuRatios.length ? median(cpuRatios).toFixed(3) : '-'} | | |`);
}
