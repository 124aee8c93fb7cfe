// /reconcile of 10 queries, latency at 100k entities (issue 48: p99 ≤ 25 ms at full size). A generated release of
// `--entities` is compiled once (kept under bench/out/reconcile/, reused while its size is the same), served by
// `register serve` (build/, as production runs it) on a free port, and asked by one client, one request after
// another: a form POST of 10 queries as OpenRefine sends it, drawn from the release's own labels (a third with the
// entity's type, a third with a provider-ID property, the rest a name alone), every request a new batch. The first
// `--warm` requests fill the caches and are not counted. Beside the latencies, the server's own CPU per request (from
// /proc), which a busy machine moves far less than it moves the p99.
// node bin/run-ts.mjs bench/reconcile.ts [--entities 100000] [--n 2000] [--warm 200]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { freePort } from './lib/processes.ts';

const { values } = parseArgs({ options: { entities: { type: 'string', default: '100000' }, n: { type: 'string', default: '2000' }, warm: { type: 'string', default: '200' } } });
const entities = Number(values.entities);
const n = Number(values.n);
const warm = Number(values.warm);
const ROOT = join(import.meta.dirname, '..');
const STAMP = '20261001T000000Z';
const work = join(ROOT, 'bench', 'out', 'reconcile', String(entities));
const register = (args: string[]): void => {
  const r = spawn(process.execPath, [join(ROOT, 'bin/register.mjs'), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const code = new Promise<number | null>((res) => r.once('exit', res));
  waits.push(code.then((c) => void (c === 0 || fail(`register ${args[0]} exited ${c}`))));
};
const waits: Promise<void>[] = [];
const fail = (why: string): never => {
  throw new Error(why);
};

const releases = join(work, 'releases');
const dist = join(work, 'dist');
if (!existsSync(join(dist, 'index.json'))) {
  mkdirSync(releases, { recursive: true });
  const t0 = Date.now();
  register(['generate', '--out', join(releases, STAMP), '--entities', String(entities), '--force']);
  await Promise.all(waits.splice(0));
  register(['compile', '--releases', releases, '--out', dist]);
  await Promise.all(waits.splice(0));
  console.error(`[bench] generated and compiled ${entities} entities in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Rows of one table (the columns read here hold no quoted commas; a row with a quote is skipped). */
function table(name: string): Record<string, string>[] {
  const [head, ...lines] = gunzipSync(readFileSync(join(releases, STAMP, 'csv', `${name}.csv.gz`))).toString('utf8').trimEnd().split('\n');
  const cols = head.split(',');
  return lines.filter((l) => !l.includes('"')).map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}
const live = table('entities').filter((e) => e.status === 'active' && ['team', 'player', 'coach', 'competition'].includes(e.entity_type));
const bridgeOf = new Map<string, Record<string, string>>();
for (const b of table('bridges')) if (!bridgeOf.has(b.reep_id)) bridgeOf.set(b.reep_id, b);

/** Query `i` of the run: deterministic, so two runs ask the same. */
function query(i: number): Record<string, unknown> {
  const e = live[(i * 7919) % live.length];
  const b = bridgeOf.get(e.reep_id);
  if (i % 3 === 1 && b) return { query: e.label, properties: [{ pid: b.namespace ? `${b.provider}:${b.namespace}` : b.provider, v: b.external_id }] };
  return i % 3 === 0 ? { query: e.label, type: e.entity_type } : { query: e.label };
}

const keys = join(work, 'keys.json');
const key = await new Promise<string>((res, rej) => {
  let out = '';
  const r = spawn(process.execPath, [join(ROOT, 'bin/register.mjs'), 'keys', 'add', '--name', `bench-${Date.now()}`, '--quota', '100000000', '--rate', '100000', '--keys', keys], { stdio: ['ignore', 'pipe', 'inherit'] });
  r.stdout.on('data', (d: Buffer) => (out += d));
  r.once('exit', (c) => (c === 0 ? res(out.trim().split('\n').pop()!) : rej(new Error(`keys add exited ${c}`))));
});

const port = await freePort();
const server = spawn(process.execPath, [join(ROOT, 'bin/register.mjs'), 'serve', '--dist', dist, '--keys', keys, '--state', 'memory:', '--port', String(port), '--access-log', 'off'], { stdio: ['ignore', 'ignore', 'pipe'] });
try {
  const base = `http://127.0.0.1:${port}/api/v1/reconcile`;
  for (let i = 0; ; i++) {
    if ((await fetch(base).catch(() => null))?.ok) break;
    if (i > 600) fail('register serve did not answer');
    await new Promise((r) => setTimeout(r, 100));
  }
  /** The server's CPU seconds so far (Linux: utime + stime of /proc/PID/stat, in clock ticks of 1/100 s). */
  const serverCpu = (): number => {
    const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  let cpuFrom = 0;
  const times: number[] = [];
  let matched = 0;
  let candidates = 0;
  for (let r = 0; r < warm + n; r++) {
    const batch: Record<string, unknown> = {};
    for (let q = 0; q < 10; q++) batch[`q${q}`] = query(r * 10 + q);
    const body = new URLSearchParams({ queries: JSON.stringify(batch) }).toString();
    const t0 = performance.now();
    const res = await fetch(base, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' }, body });
    const json = (await res.json()) as Record<string, { result: { match: boolean }[] }>;
    const ms = performance.now() - t0;
    if (res.status !== 200) fail(`status ${res.status}: ${JSON.stringify(json)}`);
    if (r < warm) {
      if (r === warm - 1) cpuFrom = serverCpu();
      continue;
    }
    times.push(ms);
    for (const v of Object.values(json)) {
      candidates += v.result.length;
      if (v.result[0]?.match) matched++;
    }
  }
  const cpuMs = ((serverCpu() - cpuFrom) * 1000) / n;
  times.sort((a, b) => a - b);
  const at = (p: number): number => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  const result = {
    what: '/reconcile, 10 queries a request (form POST), one client, over HTTP to `register serve`',
    entities, requests: n, warm,
    p50_ms: +at(0.5).toFixed(2), p90_ms: +at(0.9).toFixed(2), p99_ms: +at(0.99).toFixed(2), max_ms: +times[times.length - 1].toFixed(2),
    server_cpu_ms_per_request: +cpuMs.toFixed(2),
    queries_matched: +(matched / (n * 10)).toFixed(3), candidates_per_query: +(candidates / (n * 10)).toFixed(2),
    cores: availableParallelism(), load_average: loadavg()[0],
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(join(work, 'result.json'), JSON.stringify(result, null, 2));
} finally {
  server.kill();
}
