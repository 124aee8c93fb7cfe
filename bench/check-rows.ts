// `node bin/run-ts.mjs bench/check-rows.ts [--entities N] [--rows N]`: `register check` of a contribution file
// against a generated release, timed as a user runs it (bin/register.mjs in a child process, JSON to /dev/null),
// with its wall time, CPU and peak RSS from /usr/bin/time. Issue 48's target is ≥ 50k rows/s on one core and
// ≤ 512 MiB at 100k rows against the full-size release; this measures what it is given (default 100k entities,
// 100k rows) and says so. The release and the file are generated under tmp/bench-check/ once and reused.
//
// The rows mix what contributors send: a provider ID the release holds (already_bridged), a new provider ID with a
// cross-ID (new_bridge or conflict), a name alone (name candidates), an unknown provider (invalid).
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { csvField } from '../common/csv-records.ts';
import { readCsv } from '../compiler/read/csv-reader.ts';
import { addKey } from '../runtime/keys/key-file.ts';
import { openRuntime } from '../runtime/server.ts';
import { runToExit } from '../test/helpers/run-command.ts';

const { values } = parseArgs({ options: { entities: { type: 'string', default: '100000' }, rows: { type: 'string', default: '100000' } }, strict: true });
const entities = Number(values.entities);
const rowCount = Number(values.rows);
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/register.mjs');
const STAMP = '20261001T000000Z';
const dir = join(ROOT, 'tmp/bench-check', `${entities}`);
const releases = join(dir, 'releases');
const dist = join(dir, 'dist');
const log = (s: string) => process.stderr.write(`[bench:check] ${s}\n`);

async function run(args: string[]): Promise<void> {
  const r = await runToExit(process.execPath, [BIN, ...args], { timeoutMs: 3_600_000 });
  if (r.status !== 0) throw new Error(`register ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
}

if (!existsSync(join(releases, STAMP, 'release.json'))) {
  log(`generating ${entities} entities`);
  await run(['generate', '--out', join(releases, STAMP), '--entities', String(entities), '--seed', '1', '--force']);
}
if (!existsSync(join(dist, 'index.json'))) {
  log('compiling');
  await run(['compile', '--releases', releases, '--out', dist]);
}

/** The contribution file: `rowCount` rows built from the release's own bridges and entities. */
async function writeRows(path: string): Promise<void> {
  const bridges: { provider: string; namespace: string; id: string; reep: string }[] = [];
  const labels = new Map<string, { label: string; type: string }>();
  await readCsv(join(releases, STAMP, 'csv/entities.csv.gz'), 'entities', {
    row: (f) => void (f[2] === 'active' && labels.size < rowCount && labels.set(f[0], { label: f[3], type: f[1] })),
  });
  await readCsv(join(releases, STAMP, 'csv/bridges.csv.gz'), 'bridges', {
    row: (f) => void (bridges.length < 4 * rowCount && labels.has(f[3]) && bridges.push({ provider: f[0], namespace: f[1], id: f[2], reep: f[3] })),
  });
  const tm = bridges.filter((b) => b.provider === 'transfermarkt');
  const lines = ['provider,external_id,name,type,namespace,transfermarkt_id,note'];
  for (let i = 0; i < rowCount; i++) {
    const b = bridges[(i * 7919) % bridges.length];
    const e = labels.get(b.reep)!;
    const x = tm[(i * 104729) % tm.length];
    const xe = labels.get(x.reep)!;
    switch (i % 10) {
      case 0: case 1: case 2: case 3: // a provider ID the release holds, with its name
        lines.push([b.provider, b.id, csvField(e.label), e.type, b.namespace, '', `r${i}`].join(','));
        break;
      case 4: case 5: case 6: // a new ID of a provider, pointed at an entity by its Transfermarkt ID
        lines.push(['fotmob', `new-${i}`, csvField(xe.label), xe.type, '', x.id, `r${i}`].join(','));
        break;
      case 7: case 8: // a name alone
        lines.push(['fotmob', `name-${i}`, csvField(e.label), e.type, '', '', `r${i}`].join(','));
        break;
      default: // a provider the release does not know
        lines.push(['nosuch', String(i), '', '', '', '', `r${i}`].join(','));
    }
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

const file = join(dir, `rows-${rowCount}.csv`);
if (!existsSync(file)) {
  log(`writing ${rowCount} rows`);
  await writeRows(file);
}

mkdirSync(dir, { recursive: true });
log(`checking ${rowCount} rows (${(statSync(file).size / 1e6).toFixed(1)} MB) against ${entities} entities`);
const timed = existsSync('/usr/bin/time');
const args = [BIN, 'check', file, '--stamp', STAMP, '--dist', dist];
const t0 = performance.now();
const r = timed
  ? await runToExit('/usr/bin/time', ['-f', 'TIME %e %U %S %M', 'sh', '-c', `"${process.execPath}" ${args.map((a) => `'${a}'`).join(' ')} > /dev/null`], { timeoutMs: 3_600_000 })
  : await runToExit('sh', ['-c', `"${process.execPath}" ${args.map((a) => `'${a}'`).join(' ')} > /dev/null`], { timeoutMs: 3_600_000 });
const wall = (performance.now() - t0) / 1000;
if (r.status !== 0) throw new Error(`register check: exit ${r.status}\n${r.stderr}`);
const summary = /\[check\] .*/.exec(r.stderr)?.[0] ?? '';
const t = /TIME (\S+) (\S+) (\S+) (\d+)/.exec(r.stderr);
const result = {
  entities,
  rows: rowCount,
  wall_s: Number(wall.toFixed(2)),
  rows_per_s: Math.round(rowCount / wall),
  cpu_s: t ? Number((Number(t[2]) + Number(t[3])).toFixed(2)) : null,
  rows_per_cpu_s: t ? Math.round(rowCount / (Number(t[2]) + Number(t[3]))) : null,
  peak_rss_mib: t ? Math.round(Number(t[4]) / 1024) : null,
  summary,
};

// The route: POST /contributions/check of 1,000 rows (CSV), one request after another, in process (no socket: the
// check's own time), on the same release and file.
const keys = join(dir, 'keys.json');
const key = (await addKey({ file: keys, name: 'bench', quota: 10_000_000, rate: 1_000_000 })).key;
const rt = await openRuntime({ dist, keys, state: 'memory:', stamp: STAMP, pages: null });
const [head, ...records] = readFileSync(file, 'utf8').trimEnd().split('\n');
const times: number[] = [];
const REQUESTS = 40;
// The first requests open the release and warm its caches: WARM_UP of them are sent first and not counted.
const WARM_UP = 3;
for (let i = -WARM_UP; i < REQUESTS; i++) {
  const from = (i + WARM_UP) * 1000;
  const body = `${head}\n${records.slice(from, from + 1000).join('\n')}\n`;
  const t = performance.now();
  const res = await rt.app.fetch(new Request('http://bench.test/api/v1/contributions/check', { method: 'POST', body, headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' } }));
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`POST /contributions/check: ${res.status}`);
  if (i >= 0) times.push(performance.now() - t);
}
await rt.close();
const sorted = [...times].sort((a, b) => a - b);
const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
process.stdout.write(`${JSON.stringify({ ...result, route_1000_rows_ms: { requests: REQUESTS, p50: at(0.5), p99: at(0.99), max: at(1) } }, null, 2)}\n`);
