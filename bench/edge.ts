// The edge against Node in one run, on the same dist: `register edge dev` (the Worker on workerd, miniflare) and
// `register serve`, each in its own process, with the same key. Rows for entity-with-includes, resolve, search and a
// 100-item batch, alternating Node and edge per row: requests per second and server CPU per answer (both processes
// and their children, from /proc), and their ratio. Also the bundle's size gzipped, the time from start to the first
// answer, and R2 reads per entity lookup on a warm isolate, counted by the Worker itself (its admin route's
// `/_admin/source`: R2 operations and Cache API hits of the isolate that answered): over --samples sampled IDs after
// as many others, then over --wide lookups of IDs drawn from the whole release (bounded by --wide-seconds).
//   node bin/run-ts.mjs bench/edge.ts [--releases releases] [--release releases/20261008T120000Z] [--duration 3] [--samples 4000] [--wide 200000] [--wide-seconds 600] [--concurrency 8]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import { bundleWorker } from '../edge/bundle.ts';
import { edgeKeyRepository } from '../runtime/keys/edge-key-repository.ts';
import { addKey } from '../runtime/keys/key-file.ts';
import { abRequests } from './lib/ab-sides.ts';
import { runLoad, type LoadRequest } from './lib/load-generator.ts';
import { runToEnd, startChild, stopChild, freePort } from './lib/processes.ts';
import { sampleKeys } from './lib/sample-keys.ts';

const { values: a } = parseArgs({
  options: {
    releases: { type: 'string', default: 'releases' },
    release: { type: 'string', default: 'releases/20261008T120000Z' },
    duration: { type: 'string', default: '3' },
    samples: { type: 'string', default: '4000' },
    wide: { type: 'string', default: '200000' },
    'wide-seconds': { type: 'string', default: '600' },
    concurrency: { type: 'string', default: '8' },
  },
});
const work = mkdtempSync(join(tmpdir(), 'bench-edge-'));
const log = join(work, 'log.txt');
const dist = join(work, 'dist');
const token = 'bench-admin-token-0123456789abcdef0123456789';
const env = { ...process.env, REGISTER_EDGE_ADMIN_TOKEN: token, REGISTER_CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef0123' };
const durationMs = Number(a.duration) * 1000;
const concurrency = Number(a.concurrency);

console.log(`[bench:edge] load before: ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const compiled = await runToEnd(process.execPath, ['bin/register.mjs', 'compile', '--releases', a.releases!, '--out', dist], { logFile: log });
if (compiled.code !== 0) throw new Error(`compile failed (see ${log})`);

const bundle = await bundleWorker();

// Start to first answer: the process started, to the first 200 of GET /api/v1/.
const firstAnswer = async (args: string[], ready: RegExp) => {
  const t0 = performance.now();
  const started = await startChild({ command: process.execPath, args: ['bin/register.mjs', ...args], env, logFile: log, ready, timeoutMs: 300_000 });
  const url = started.ready;
  for (let i = 0; i < 600; i++) {
    const r = await fetch(`${url}/api/v1/`).catch(() => null);
    if (r?.status === 200) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return { ...started, url, firstMs: performance.now() - t0 };
};
const persist = join(work, 'edge');
const edge = await firstAnswer(['edge', 'dev', '--dist', dist, '--port', '0', '--persist', persist], /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/);
// The same key on both: issued at the edge, written into Node's keys file.
const repository = edgeKeyRepository(edge.url, token);
const { key } = await addKey({ repository, name: 'bench', quota: 1_000_000_000, rate: 1_000_000 });
const keysFile = join(work, 'keys.json');
writeFileSync(keysFile, JSON.stringify({ keys: await repository.entries() }));
const nodePort = await freePort();
const node = await firstAnswer(['serve', '--dist', dist, '--keys', keysFile, '--state', 'memory:', '--port', String(nodePort)], /listening on (http:\/\/127\.0\.0\.1:\d+)\/api\/v1/);

// Keys sampled from the newest release, which v1 serves.
const rows = await abRequests(a.release!, Number(a.samples));
const samples = await sampleKeys(a.release!, Number(a.samples), 2);
const search: LoadRequest[] = samples.entities.map((e) => ({ method: 'GET', path: `/api/v1/search?q=${encodeURIComponent(e.label.split(' ')[0])}` }));
const table: Record<string, LoadRequest[]> = { 'entity (include)': rows.entity, resolve: rows.resolve, search, 'batch (100)': rows.batch };

interface Row { rps: number; cpuMsPerAnswer: number | null; other: number | null }
const measure = async (target: { url: string; pid: number }, list: LoadRequest[]): Promise<Row> => {
  const port = Number(new URL(target.url).port);
  const r = await runLoad({ host: '127.0.0.1', port, next: (i) => list[i % list.length], headers: { authorization: `Bearer ${key}` }, concurrency, durationMs, warmupMs: 1000, serverPid: target.pid });
  const bad = Object.entries(r.statuses).filter(([s]) => s !== '200');
  if (bad.length) console.log(`[bench:edge] non-200 answers: ${JSON.stringify(r.statuses)}`);
  return { rps: r.rps, cpuMsPerAnswer: r.serverCpuPct === null ? null : (r.serverCpuPct / 100) * (r.seconds * 1000) / r.requests, other: r.otherCpuPct };
};
const results: string[] = [];
for (const [name, list] of Object.entries(table)) {
  // Node, edge, edge, Node: each side measured first once.
  const n1 = await measure(node, list);
  const e1 = await measure(edge, list);
  const e2 = await measure(edge, list);
  const n2 = await measure(node, list);
  const avg = (x: Row, y: Row, k: keyof Row) => (x[k] === null || y[k] === null ? null : ((x[k] as number) + (y[k] as number)) / 2);
  const [nr, er] = [avg(n1, n2, 'rps')!, avg(e1, e2, 'rps')!];
  const [nc, ec] = [avg(n1, n2, 'cpuMsPerAnswer'), avg(e1, e2, 'cpuMsPerAnswer')];
  results.push(`| ${name} | ${nr.toFixed(0)} | ${er.toFixed(0)} | ${(er / nr).toFixed(2)} | ${nc?.toFixed(3) ?? '-'} | ${ec?.toFixed(3) ?? '-'} | ${nc && ec ? (ec / nc).toFixed(2) : '-'} |`);
  console.log(results.at(-1));
}
await stopChild(node.child);

// R2 reads per entity lookup, counted by the isolate that answers (one in edge dev). Lookups over HTTP, a few at a
// time, each with its includes; the counters read before and after.
type SourceStats = { reads: number; cacheHits: number };
const sourceStats = async (): Promise<SourceStats> => (await (await fetch(`${edge.url}/_admin/source`, { headers: { authorization: `Bearer ${token}` } })).json()) as SourceStats;
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const lookUp = async (ids: string[], untilMs = Infinity): Promise<{ lookups: number; reads: number; cacheHits: number }> => {
  const before = await sourceStats();
  let next = 0;
  const one = (id: string) =>
    new Promise<number>((done, fail) => {
      const req = httpRequest(`${edge.url}/api/v1/entities/${encodeURIComponent(id)}?include=bridges,aliases`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      });
      req.on('error', fail);
      req.end();
    });
  const statuses: Record<number, number> = {};
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length && performance.now() < untilMs) {
        const s = await one(ids[next++]);
        statuses[s] = (statuses[s] ?? 0) + 1;
      }
    }),
  );
  if (Object.keys(statuses).some((s) => s !== '200')) console.log(`[bench:edge] lookups answered ${JSON.stringify(statuses)}`);
  const after = await sourceStats();
  const lookups = Object.values(statuses).reduce((x, y) => x + y, 0);
  return { lookups, reads: after.reads - before.reads, cacheHits: after.cacheHits - before.cacheHits };
};
// Warm: as many other IDs looked up first (another draw), so the index buckets a lookup needs are mostly kept.
const warm = await sampleKeys(a.release!, Number(a.samples), 3, { bridges: false });
await lookUp(warm.entities.map((e) => e.id));
const sampled = await lookUp(samples.entities.map((e) => e.id));
// Wide: IDs drawn from the whole release, each entity at most once per pass, passes repeated up to --wide lookups.
const all = await sampleKeys(a.release!, Number(a.wide), 4, { bridges: false });
const wideIds = Array.from({ length: Number(a.wide) }, (_, i) => all.entities[i % all.entities.length].id);
const wide = await lookUp(wideIds, performance.now() + Number(a['wide-seconds']) * 1000);
agent.destroy();
await stopChild(edge.child);
const perLookup = (m: { lookups: number; reads: number; cacheHits: number }) =>
  `${(m.reads / m.lookups).toFixed(3)} R2 reads and ${(m.cacheHits / m.lookups).toFixed(3)} Cache API hits a lookup over ${m.lookups} lookups`;

const out = [
  `edge bench, ${new Date().toISOString()}, dist ${a.releases}, ${a.samples} samples, ${concurrency} connections, ${a.duration} s a side per row; load before ${(await import('node:os')).loadavg()[0].toFixed(2)}`,
  '',
  `| row | Node req/s | edge req/s | edge/Node | Node CPU ms/answer | edge CPU ms/answer | edge/Node |`,
  `|---|---|---|---|---|---|---|`,
  ...results,
  '',
  `bundle: ${(bundle.bytes / 1024).toFixed(1)} KiB, ${(bundle.gzipBytes / 1024).toFixed(1)} KiB gzipped`,
  `start to first answer: Node ${node.firstMs.toFixed(0)} ms, edge ${edge.firstMs.toFixed(0)} ms (edge dev bundles the Worker, starts workerd and checks the local R2 first)`,
  `warm isolate, ${Number(a.samples)} sampled IDs after as many others: ${perLookup(sampled)}`,
  `warm isolate, IDs drawn from the whole release (${all.entities.length} distinct): ${perLookup(wide)}`,
];
console.log(out.join('\n'));
writeFileSync(join(work, 'edge-results.md'), out.join('\n') + '\n');
console.log(`[bench:edge] written ${join(work, 'edge-results.md')}`);
