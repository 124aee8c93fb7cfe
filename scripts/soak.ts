// The long reliability run (`node bin/run-ts.mjs scripts/soak.ts [--minutes 10]`): the test suite's fuzz, crash
// loop and load, scaled up: 100k fuzzed requests, 1,000 SIGKILLs, then N minutes of mixed load on a real server.
// Prints a summary table and exits non-zero on any failure; every phase is bounded, so it always stops by itself.
import { $ } from 'zx';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { compileAll } from '../compiler/compile.ts';
import { addKey } from '../runtime/keys/key-file.ts';
import { validateResponse } from '../test/helpers/openapi-validator.ts';
import { spawnServe, standbyEntry } from '../test/reliability/support/child-server.ts';
import { runCrashLoop } from '../test/reliability/support/crash-loop.ts';
import { ALLOWED_5XX, fuzzTargets, inProcessExchanger, KNOWN_GAPS } from '../test/reliability/support/fuzz-harness.ts';
import { makeCrashWorld, makeFuzzWorld } from '../test/reliability/support/reliability-world.ts';
import { checkExchange, describeRequest, fuzzRequests } from '../test/reliability/support/request-fuzzer.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const USAGE = 'usage: node bin/run-ts.mjs scripts/soak.ts [--minutes 10] [--fuzz 100000] [--kills 1000] [--entities 20000] [--concurrency 16] [--seed N] [--quick]';

interface Row {
  phase: string;
  count: number;
  failures: number;
  p50: number;
  p99: number;
  note: string;
}

const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);

/** Keeps a uniform sample of at most `size` values (Algorithm R), so hours of latencies fit in memory. */
class Reservoir {
  private readonly values: number[] = [];
  seen = 0;
  constructor(private readonly size = 200_000) {}
  add(v: number): void {
    this.seen++;
    if (this.values.length < this.size) this.values.push(v);
    else {
      const i = Math.floor(Math.random() * this.seen);
      if (i < this.size) this.values[i] = v;
    }
  }
  percentile(p: number): number {
    if (!this.values.length) return NaN;
    const sorted = [...this.values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  }
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!(n > 0)) throw new Error(`--${name} must be a positive number, got ${JSON.stringify(raw)}\n${USAGE}`);
  return n;
}

// ---------------------------------------------------------------------------------------------------------------

async function fuzzPhase(runs: number, seed: number, failures: string[]): Promise<Row> {
  const world = await makeFuzzWorld();
  const ex = inProcessExchanger(world);
  const lat = new Reservoir();
  const statuses = new Map<number, number>();
  let bad = 0;
  const t0 = performance.now();
  // Sampled up front in slices: the same generator as the test, without fast-check's shrinking bookkeeping.
  const arb = fuzzRequests(fuzzTargets(world));
  for (let done = 0; done < runs; ) {
    const slice = fc.sample(arb, { numRuns: Math.min(5000, runs - done), seed: seed + done });
    for (const r of slice) {
      const s0 = performance.now();
      const x = await ex.exchange(r);
      lat.add(performance.now() - s0);
      statuses.set(x.status, (statuses.get(x.status) ?? 0) + 1);
      const problems = checkExchange(x, { knownGaps: KNOWN_GAPS, allowed5xx: ALLOWED_5XX });
      if (problems.length) {
        bad++;
        if (failures.length < 20) failures.push(`fuzz: ${problems[0]}\n    request: ${describeRequest(r)}`);
      }
    }
    done += slice.length;
    if (done % 20_000 === 0) log(`fuzz: ${done} requests, ${bad} failing`);
  }
  await ex.close();
  rmSync(world.root, { recursive: true, force: true });
  const by = [...statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`).join(' ');
  return { phase: 'fuzz (in-process)', count: runs, failures: bad, p50: lat.percentile(50), p99: lat.percentile(99), note: `${((performance.now() - t0) / 1000).toFixed(0)} s; ${by}` };
}

async function crashPhase(kills: number, seed: number, failures: string[]): Promise<Row> {
  // Up to three acknowledgement requests of up to two findings per cycle, so the feed never runs out.
  const world = await makeCrashWorld(kills * 6 + 100);
  const state = mkdtempSync(join(tmpdir(), 'ir-soak-state-'));
  const entry = await standbyEntry();
  try {
    const report = await runCrashLoop({ world, state, entry, kills, seed, log });
    const { ledger } = report;
    // The final word comes from a cold `register serve` on what the loop left.
    const last = spawnServe(['--dist', world.dist, '--keys', world.keysFile, '--state', state, '--port', '0']);
    await ledger.verify(await last.ready, 'final cold start');
    last.proc.kill('SIGTERM');
    const exit = await last.exited;
    if (exit.code !== 0) ledger.violations.push(`final SIGTERM exit ${JSON.stringify(exit)}`);
    for (const v of ledger.violations.slice(0, 20 - failures.length)) failures.push(`crash loop: ${v}`);
    const cycles = new Reservoir();
    for (const c of report.cycleMs) cycles.add(c);
    const ready = new Reservoir();
    for (const r of report.readyMs) ready.add(r);
    return {
      phase: `crash loop (${entry.kind})`,
      count: report.kills,
      failures: ledger.violations.length,
      p50: cycles.percentile(50),
      p99: cycles.percentile(99),
      note:
        `cycle ms; go→listening p50 ${ready.percentile(50).toFixed(0)} p99 ${ready.percentile(99).toFixed(0)} ms; ${report.startupKills} kills in start-up; ` +
        `acks ${ledger.ackAnswered.size}/${ledger.ackAttempted.size}, lookups ${ledger.lookupsAnswered}/${ledger.lookupsAttempted} confirmed/sent`,
    };
  } finally {
    entry.dispose();
    rmSync(state, { recursive: true, force: true });
    rmSync(world.root, { recursive: true, force: true });
  }
}

/** A compiled world for the load phase: a generated release of `entities` when `register generate` is there. */
async function loadWorld(entities: number): Promise<{ root: string; dist: string; keysFile: string; ids: string[]; bridges: [string, string, string][]; findingIds: string[] }> {
  const root = mkdtempSync(join(tmpdir(), 'ir-soak-load-'));
  const stamp = '20260101T000000Z';
  const gen = await $({ cwd: ROOT, quiet: true, nothrow: true })`${process.execPath} ${join(ROOT, 'bin/register.mjs')} generate --out ${join(root, 'releases', stamp)} --entities ${entities}`;
  const keysFile = join(root, 'keys.json');
  if (gen.exitCode === 0) {
    await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false });
    const rows = (name: string) => gunzipSync(readFileSync(join(root, 'releases', stamp, 'csv', `${name}.csv.gz`))).toString('utf8').split('\n').slice(1).filter(Boolean);
    const ids = rows('entities').map((l) => l.split(',')[0]);
    const bridges = rows('bridges').slice(0, 50_000).map((l) => l.split(',')).map((f) => [f[0], f[1], f[2]] as [string, string, string]);
    return { root, dist: join(root, 'dist'), keysFile, ids, bridges, findingIds: [] };
  }
  log(`register generate is not available (${gen.stderr.trim().split('\n')[0]}); load runs on the hand world`);
  rmSync(root, { recursive: true, force: true });
  const w = await makeFuzzWorld();
  const t = fuzzTargets(w);
  return { root: w.root, dist: w.dist, keysFile: w.keysFile, ids: t.ids, bridges: t.bridges.map((b) => [b.provider, b.namespace, b.externalId]), findingIds: t.findingIds };
}

async function loadPhase(minutes: number, entities: number, concurrency: number, failures: string[]): Promise<Row[]> {
  const w = await loadWorld(entities);
  const partner = (await addKey({ file: w.keysFile, name: 'soak', quota: 1_000_000_000, rate: 1_000_000 })).key;
  const state = mkdtempSync(join(tmpdir(), 'ir-soak-state-'));
  const server = spawnServe(['--dist', w.dist, '--keys', w.keysFile, '--state', state, '--port', '0']);
  const base = await server.ready;
  const rss = () => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, 'utf8'))![1]) / 1024;
    } catch {
      return NaN;
    }
  };
  const rssStart = rss();
  let rssMax = rssStart;
  const kinds = ['entity', 'resolve', 'search', 'batch', 'meta'] as const;
  const stats = new Map(kinds.map((k) => [k, { lat: new Reservoir(), count: 0, bad: 0 }]));
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
  // Three letters or more each, and two different words: a valid query whatever the pair (the search counts a
  // repeated token once).
  const words = ['united', 'city', 'real', 'club', 'sport', 'athletic', 'john', 'smith', 'league', 'town'];
  const deadline = performance.now() + minutes * 60_000;
  let validated = 0;
  const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rss())), 1000);

  const one = async (): Promise<void> => {
    const kind = pick([...kinds, 'entity', 'entity', 'resolve'] as const);
    let path: string;
    let init: RequestInit = { headers: { authorization: `Bearer ${partner}` } };
    if (kind === 'entity') path = `/entities/${pick(w.ids)}${Math.random() < 0.5 ? '?include=aliases,bridges,relationships' : ''}`;
    else if (kind === 'resolve') {
      const [p, ns, id] = pick(w.bridges);
      path = `/resolve/${encodeURIComponent(p)}/${encodeURIComponent(id)}?namespace=${encodeURIComponent(ns)}`;
    } else if (kind === 'search') {
      const i = Math.floor(Math.random() * words.length);
      path = `/search?q=${encodeURIComponent(`${words[i]} ${words[(i + 1 + Math.floor(Math.random() * (words.length - 1))) % words.length]}`)}`;
    }
    else if (kind === 'meta') path = '/meta';
    else {
      path = '/batch';
      const requests = Array.from({ length: 20 }, () => ({ type: 'entity', id: pick(w.ids) }));
      init = { method: 'POST', headers: { authorization: `Bearer ${partner}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests }) };
    }
    const s = stats.get(kind)!;
    const t0 = performance.now();
    try {
      const res = await fetch(`${base}${path}`, init);
      const text = await res.text();
      s.lat.add(performance.now() - t0);
      s.count++;
      if (res.status >= 500 || ![200, 404, 409, 410].includes(res.status)) {
        s.bad++;
        if (failures.length < 20) failures.push(`load: ${init.method ?? 'GET'} ${path} → ${res.status} ${text.slice(0, 160)}`);
      } else if (Math.random() < 0.01) {
        validated++;
        validateResponse({ method: init.method ?? 'GET', path: `/api/v1${path}`, status: res.status, headers: res.headers, body: text });
      }
    } catch (e) {
      s.count++;
      s.bad++;
      if (failures.length < 20) failures.push(`load: ${path}: ${(e as Error).message.split('\n')[0]}`);
    }
  };
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(rssTimer);
  const rssEnd = rss();
  server.proc.kill('SIGTERM');
  const exit = await server.exited;
  if (exit.code !== 0) failures.push(`load: server exited ${JSON.stringify(exit)} on SIGTERM`);
  rmSync(state, { recursive: true, force: true });
  rmSync(w.root, { recursive: true, force: true });
  const total = [...stats.values()].reduce((a, s) => a + s.count, 0);
  return [...stats].map(([kind, s]) => ({
    phase: `load: ${kind}`,
    count: s.count,
    failures: s.bad,
    p50: s.lat.percentile(50),
    p99: s.lat.percentile(99),
    note:
      kind === 'entity'
        ? `${(total / seconds).toFixed(0)} req/s overall over ${seconds.toFixed(0)} s, ${concurrency} clients, ${w.ids.length} entities; server RSS ${rssStart.toFixed(0)} → max ${rssMax.toFixed(0)} → ${rssEnd.toFixed(0)} MB; ${validated} responses validated; SIGTERM exit ${exit.code}`
        : '',
  }));
}

function printTable(rows: Row[]): void {
  const head = ['phase', 'count', 'failures', 'p50 ms', 'p99 ms', 'notes'];
  const body = rows.map((r) => [r.phase, String(r.count), String(r.failures), r.p50.toFixed(1), r.p99.toFixed(1), r.note]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (i === 5 ? 0 : b[i].length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === 5 ? c : c.padEnd(widths[i]))).join(' | ');
  console.log(line(head));
  console.log(widths.map((w, i) => '-'.repeat(i === 5 ? 5 : w)).join('-|-'));
  for (const b of body) console.log(line(b));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      minutes: { type: 'string' },
      fuzz: { type: 'string' },
      kills: { type: 'string' },
      entities: { type: 'string' },
      concurrency: { type: 'string' },
      seed: { type: 'string' },
      quick: { type: 'boolean' },
    },
    strict: true,
  });
  const quick = values.quick ?? false;
  const minutes = positive('minutes', values.minutes, quick ? 0.25 : 10);
  const fuzzRuns = positive('fuzz', values.fuzz, quick ? 3000 : 100_000);
  const kills = positive('kills', values.kills, quick ? 20 : 1000);
  const entities = positive('entities', values.entities, quick ? 2000 : 20_000);
  const concurrency = positive('concurrency', values.concurrency, 16);
  const seed = positive('seed', values.seed, Date.now() % 1_000_000);
  log(`seed ${seed}: fuzz ${fuzzRuns} requests, crash loop ${kills} kills, load ${minutes} min`);

  const rows: Row[] = [];
  const failures: string[] = [];
  const t0 = performance.now();
  log('phase 1/3: fuzz');
  rows.push(await fuzzPhase(fuzzRuns, seed, failures));
  log('phase 2/3: crash loop');
  rows.push(await crashPhase(kills, seed, failures));
  log('phase 3/3: load');
  rows.push(...(await loadPhase(minutes, entities, concurrency, failures)));

  console.log(`\nsoak summary (seed ${seed}, ${((performance.now() - t0) / 60_000).toFixed(1)} min)\n`);
  printTable(rows);
  const failed = rows.reduce((a, r) => a + r.failures, 0);
  if (failures.length) console.log(`\nfirst failures:\n${failures.map((f) => `  ${f}`).join('\n')}`);
  console.log(`\n${failed === 0 ? 'PASS' : `FAIL: ${failed} failure(s)`}`);
  return failed === 0 ? 0 : 1;
}

process.exit(await main().catch((e) => {
  console.error(e);
  return 2;
}));
