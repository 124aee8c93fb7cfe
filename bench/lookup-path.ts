// What one first entity lookup runs, counted rather than read off the code: a runtime from the checkout `--root`
// serves `--dist` in this process; after /meta opened the release, V8's precise coverage counts the functions of
// runtime/ and common/ that ran for one GET /entities/{id} whose ID nothing looked up before (its index entry and
// shard not ready). Prints the files and functions, so two checkouts can be compared.
// node bin/run-ts.mjs bench/lookup-path.ts --root /work/wt-int --dist bench/out/100000-s1/dist --id rp-…
import { Session } from 'node:inspector/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { addBenchKey } from './lib/processes.ts';

const { values } = parseArgs({ options: { root: { type: 'string' }, dist: { type: 'string' }, id: { type: 'string' }, include: { type: 'string', default: 'aliases,bridges,overlay' } } });
if (!values.root || !values.dist || !values.id) throw new Error('usage: bench/lookup-path.ts --root CHECKOUT --dist DIST --id REGISTER_ID');
const root = resolve(values.root);
const work = await mkdtemp(join(tmpdir(), 'lookup-path-'));
const keys = join(work, 'keys.json');
const auth = await addBenchKey(root, keys, 'path');

const { startRuntime } = (await import(pathToFileURL(join(root, 'runtime/server.ts')).href)) as typeof import('../runtime/server.ts');
const rt = await startRuntime({ dist: resolve(values.dist), keys, state: 'memory:', port: 0, pages: null, log: () => {} });
const session = new Session();
session.connect();
try {
  const meta = await fetch(`${rt.url}/api/v1/meta`, { headers: auth });
  if (!meta.ok) throw new Error(`/meta answered ${meta.status}`);
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // resets the counters: only the lookup below is counted
  const res = await fetch(`${rt.url}/api/v1/entities/${encodeURIComponent(values.id)}?include=${values.include}`, { headers: auth });
  await res.arrayBuffer();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  if (res.status !== 200) throw new Error(`the lookup answered ${res.status}`);
  const files = new Map<string, string[]>();
  for (const script of result) {
    if (!script.url.startsWith('file:')) continue;
    const file = relative(root, fileURLToPath(script.url));
    if (!/^(runtime|common)\//.test(file)) continue;
    // The module's top level (the range from offset 0) ran when it was loaded: not part of this lookup.
    const ran = script.functions.filter((f) => f.ranges[0].startOffset > 0 && f.ranges[0].count > 0).map((f) => f.functionName || '(anonymous)');
    if (ran.length) files.set(file, ran);
  }
  const functions = [...files.values()].reduce((n, f) => n + f.length, 0);
  console.log(`${root}: one first GET /entities/{id}?include=${values.include} ran ${functions} functions in ${files.size} files of runtime/ and common/`);
  for (const [file, ran] of [...files].sort()) console.log(`  ${file}: ${ran.join(', ')}`);
} finally {
  session.disconnect();
  await rt.close();
  await rm(work, { recursive: true, force: true });
}
