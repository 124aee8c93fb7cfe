// `register pull` against a plain parallel download of the same files from the same local static host (`serve`'s
// CLI in its own process): curl with as many parallel transfers as pull's --parallel, verifying nothing. In
// alternating pairs (curl then pull, pull then curl), since this VM's speed drifts within minutes; prints each
// pair's bytes per second and the ratio, the time to verify one stamp (its signatures and every file's sha256), and
// what pulling the next stamp after the first fetches. The pairs fetch the newest stamp alone into an empty folder,
// so pull links nothing and both sides move the same bytes. --all fetches every stamp instead (a larger transfer, in
// which the CLI's start weighs less; a generated successor shares no file with its predecessor, so still nothing is
// linked). --before FILE also runs another build's CLI (e.g. a worktree of the previous commit's bin/register.mjs)
// in the same rounds, so a change is measured against its baseline under the same load.
// node bin/run-ts.mjs bench/pull.ts --dist bench/out/100000-s1/dist [--pairs 3] [--parallel 8] [--all] [--before FILE]
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { $ } from 'zx';
import { INDEX_FILE, PUBLIC_DIR, INDEX_SIG_FILE, manifestSigPath } from '../common/dist-layout.ts';
import { openIndex } from '../common/index-file.ts';
import { verifyBytes, SIGNS_INDEX, SIGNS_MANIFEST } from '../common/signing.ts';
import { readSigningKey, readTrust, signDistIndex, signStampManifest, writeNewSigningKey } from '../common/signing-files.ts';
import { sha256File } from '../compiler/read/release-input.ts';
import { freePort, startChild, stopChild } from './lib/processes.ts';

const { values } = parseArgs({
  options: { dist: { type: 'string' }, pairs: { type: 'string', default: '3' }, parallel: { type: 'string', default: '8' }, all: { type: 'boolean', default: false }, before: { type: 'string' } },
});
if (!values.dist) throw new Error('usage: bench/pull.ts --dist DIST [--pairs N] [--parallel N]');
const pairs = Number(values.pairs);
const parallel = Number(values.parallel);
const root = join(import.meta.dirname, '..');
const log = (line: string) => process.stderr.write(`[bench pull] ${line}\n`);
$.verbose = false;

const work = await mkdtemp(join(tmpdir(), 'bench-pull-'));
const published = join(work, 'public');
// What a host holds: publish-public.sh's tree, signed with a fresh key (as `compile --sign` would have).
await $`${join(root, 'scripts/publish-public.sh')} ${values.dist} ${published}`;
const keyFile = join(work, 'bench.key');
const { publicKeyPath } = await writeNewSigningKey(keyFile);
const key = await readSigningKey(keyFile);
const index = openIndex(await readFile(join(published, INDEX_FILE), 'utf8'));
for (const r of index.releases) await signStampManifest(published, r.stamp, key);
await signDistIndex(published, key);

// Every file pull fetches for the newest stamp, as the list curl downloads.
const stamp = index.next!;
const files: { path: string; bytes: number; sha256: string }[] = [INDEX_FILE, INDEX_SIG_FILE].map((p) => ({ path: p, bytes: 0, sha256: '' }));
for (const r of index.releases.filter((x) => values.all || x.stamp === stamp)) {
  const m = JSON.parse(await readFile(join(published, r.stamp, PUBLIC_DIR, 'manifest.json'), 'utf8')) as { files: Record<string, { bytes: number; sha256: string }> };
  files.push({ path: `${r.stamp}/${PUBLIC_DIR}/manifest.json`, bytes: 0, sha256: '' }, { path: manifestSigPath(r.stamp), bytes: 0, sha256: '' });
  for (const [p, f] of Object.entries(m.files)) files.push({ path: `${r.stamp}/${PUBLIC_DIR}/${p}`, ...f });
}
const payload = files.reduce((s, f) => s + f.bytes, 0);
log(`${values.all ? 'every stamp' : `stamp ${stamp}`} of ${index.releases.length}, ${files.length} files, ${(payload / 2 ** 20).toFixed(1)} MiB of content files`);

const port = await freePort();
const host = await startChild({
  command: process.execPath,
  args: [join(root, 'node_modules/serve/build/main.js'), '-l', `tcp://127.0.0.1:${port}`, '--no-port-switching', '-L', '-n', published],
  env: { ...process.env, NO_UPDATE_CHECK: '1' },
  cwd: root,
  logFile: join(work, 'host.log'),
  ready: /Accepting connections/,
});
const base = `http://127.0.0.1:${port}/`;

/**
 * curl, `parallel` transfers at once, every file to its path under `out`; wall ms, and the ms of a `sync` after it:
 * pull fsyncs each file before a stamp is renamed into place, curl leaves its bytes in the page cache, so the second
 * baseline is a download that is on disk when it ends (`sync` flushes the whole machine's dirty pages, so it is noisy).
 */
async function curlAll(out: string): Promise<number> {
  const config = files.map((f) => `url = "${base}${f.path}"\noutput = "${join(out, f.path)}"\n`).join('');
  await writeFile(join(work, 'curl.config'), config);
  const t0 = performance.now();
  await $`curl --silent --show-error --fail --create-dirs --parallel --parallel-max ${parallel} --config ${join(work, 'curl.config')}`.quiet();
  const t1 = performance.now();
  await $`sync`;
  lastSync = performance.now() - t1;
  return t1 - t0;
}
let lastSync = 0;

/** `register pull` of `only` (default the newest stamp, or all with --all) with --trust; wall ms and its summary lines. */
async function pullAll(out: string, only: string | null = values.all ? null : stamp, cli = join(root, 'bin/register.mjs')): Promise<number> {
  const t0 = performance.now();
  const r = await $`${process.execPath} ${cli} pull ${base} --out ${out} --trust ${publicKeyPath} --parallel ${parallel} ${only ? ['--stamp', only] : []}`.quiet();
  lastPull = r.stderr.trim();
  return performance.now() - t0;
}
let lastPull = '';

const rows: { curl: number; sync: number; pull: number; before: number }[] = [];
let successor = '';
try {
  await pullAll(join(work, 'warm')); // builds bin/ if stale, and warms the page cache of the host's files
  await rm(join(work, 'warm'), { recursive: true, force: true });
  for (let i = 0; i < pairs; i++) {
    const sides = values.before ? (['curl', 'pull', 'before'] as const) : (['curl', 'pull'] as const);
    const order = i % 2 === 0 ? [...sides] : [...sides].reverse();
    const row = { curl: 0, sync: 0, pull: 0, before: 0 };
    for (const side of order) {
      const out = join(work, `${side}-${i}`);
      if (side === 'curl') {
        row.curl = await curlAll(out);
        row.sync = lastSync;
      } else if (side === 'pull') {
        row.pull = await pullAll(out);
      } else {
        row.before = await pullAll(out, undefined, values.before);
      }
      await rm(out, { recursive: true, force: true });
    }
    rows.push(row);
    const mbps = (ms: number) => payload / 2 ** 20 / (ms / 1000);
    log(`pair ${i + 1} (${order.join(' then ')}): curl ${mbps(row.curl).toFixed(1)} MiB/s, pull ${mbps(row.pull).toFixed(1)} MiB/s, ratio ${(row.curl / row.pull).toFixed(2)}×${values.before ? `, before ${mbps(row.before).toFixed(1)} MiB/s` : ''}`);
  }
  // A mirror holding the stamp before pulls the newest: only what changed crosses the network.
  if (index.releases.length > 1) {
    const out = join(work, 'successor');
    const prior = index.releases.at(-2)!.stamp;
    await pullAll(out, prior);
    const ms = await pullAll(out, stamp);
    successor = `${prior} held, then ${stamp} in ${(ms / 1000).toFixed(2)} s: ${lastPull.split('\n').find((l) => l.includes(`${stamp}: `)) ?? lastPull}`;
    await rm(out, { recursive: true, force: true });
  }
} finally {
  await stopChild(host.child);
}

// Verifying one stamp, as pull does once its files are here: both signatures, then every file's sha256.
const trusted = await readTrust([publicKeyPath]);
const t0 = performance.now();
const indexText = await readFile(join(published, INDEX_FILE));
const ok1 = await verifyBytes(await readFile(join(published, INDEX_SIG_FILE), 'utf8'), indexText, { signs: SIGNS_INDEX, stamp: index.next!, trusted, now: new Date() });
const manifestBytes = await readFile(join(published, stamp, PUBLIC_DIR, 'manifest.json'));
const ok2 = await verifyBytes(await readFile(join(published, manifestSigPath(stamp)), 'utf8'), manifestBytes, { signs: SIGNS_MANIFEST, stamp, trusted, now: new Date() });
const tSig = performance.now() - t0;
const ofStamp = files.filter((f) => f.path.startsWith(`${stamp}/`) && f.sha256);
let bad = 0;
for (const f of ofStamp) if ((await sha256File(join(published, f.path))) !== f.sha256) bad++;
const tAll = performance.now() - t0;
if (!ok1.ok || !ok2.ok || bad) throw new Error(`verification failed: ${JSON.stringify([ok1, ok2, bad])}`);
const stampBytes = ofStamp.reduce((s, f) => s + f.bytes, 0);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = payload / 2 ** 20;
const b = values.before;
console.log(`| round | curl (MiB/s) | curl + sync (MiB/s) | pull (MiB/s) | pull / curl | pull / (curl + sync) |${b ? ' before (MiB/s) | before / curl |' : ''}`);
console.log(`|---|---|---|---|---|---|${b ? '---|---|' : ''}`);
const rate = (ms: number) => (mib / (ms / 1000)).toFixed(1);
rows.forEach((r, i) => console.log(`| ${i + 1} | ${rate(r.curl)} | ${rate(r.curl + r.sync)} | ${rate(r.pull)} | ${(r.curl / r.pull).toFixed(2)}× | ${((r.curl + r.sync) / r.pull).toFixed(2)}× |${b ? ` ${rate(r.before)} | ${(r.curl / r.before).toFixed(2)}× |` : ''}`));
if (b) console.log(`\nbefore (${b}): median ${median(rows.map((r) => r.curl / r.before)).toFixed(2)}× of curl, ${median(rows.map((r) => (r.curl + r.sync) / r.before)).toFixed(2)}× of curl + sync`);
console.log(`\nmedian ratios ${median(rows.map((r) => r.curl / r.pull)).toFixed(2)}× and ${median(rows.map((r) => (r.curl + r.sync) / r.pull)).toFixed(2)}× over ${mib.toFixed(1)} MiB in ${files.length} files, --parallel ${parallel}`);
if (successor) console.log(successor);
console.log(`verify stamp ${stamp}: signatures ${tSig.toFixed(1)} ms, with every file's sha256 ${(tAll / 1000).toFixed(2)} s for ${(stampBytes / 2 ** 20).toFixed(1)} MiB in ${ofStamp.length} files (${(stampBytes / 2 ** 20 / (tAll / 1000)).toFixed(0)} MiB/s)`);
await rm(work, { recursive: true, force: true });
