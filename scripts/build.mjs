#!/usr/bin/env node
// Builds what bin/ runs: the TypeScript sources bundled by esbuild into plain JavaScript under build/ (git-ignored),
// the `register` CLI and the compiler's worker-thread modules. Plain JavaScript itself, so it needs no loader.
// `node scripts/build.mjs` builds; bin/register.mjs calls ensureBuilt(), which builds only when a source changed.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'build');
/** What the last build read (paths relative to the root), written after it succeeded; its absence means "build". */
const INPUTS = join(OUT, 'inputs.json');
const LOCK = join(ROOT, '.build.lock');

/**
 * A worker module named by URL (`new URL('./read-tables.ts#readSide', import.meta.url)`): the compiler starts worker
 * threads on such modules. Built, each is an entry of its own beside the chunk that names it, so the same
 * expression with `.mjs` finds it.
 */
const WORKER_URL = /new URL\((['"])\.\/([\w-]+)\.ts(#\w+)?\1, import\.meta\.url\)/g;

/** Source folders whose modules may start workers that way. */
const WORKER_SOURCES = ['compiler/**/*.ts', 'generator/**/*.ts'];

/** Builds build/ from the sources; returns the number of files written. */
export async function build() {
  const { build: esbuild } = await import('esbuild');
  const { default: fg } = await import('fast-glob');
  const entryPoints = { register: join(ROOT, 'cli/main.ts'), 'ts-worker': join(ROOT, 'compiler/worker/ts-worker.mjs') };
  for (const file of await fg(WORKER_SOURCES, { cwd: ROOT, absolute: true })) {
    for (const m of readFileSync(file, 'utf8').matchAll(WORKER_URL)) {
      const target = join(dirname(file), `${m[2]}.ts`);
      const name = m[2];
      if (entryPoints[name] && entryPoints[name] !== target) {
        throw new Error(`[build] two worker modules are called ${name}.ts (${relative(ROOT, entryPoints[name])}, ${relative(ROOT, target)}): built side by side they would collide`);
      }
      entryPoints[name] = target;
    }
  }
  const started = Date.now();
  const result = await esbuild({
    entryPoints,
    outdir: OUT,
    // Paths in the metafile (inputs.json) are relative to the root, wherever the command was started.
    absWorkingDir: ROOT,
    // Flat: a chunk's import.meta.url then finds ts-worker.mjs and the worker modules beside it.
    entryNames: '[name]',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    bundle: true,
    // Lazily loaded commands stay separate files: `register keys list` does not parse the compiler.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Dependencies are imported from node_modules at run time, as the sources import them.
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [workerUrls()],
    write: false,
  });
  // A command may be starting from build/ meanwhile: each file is replaced whole (written aside, then renamed), chunks
  // before the entries that import them, and a file whose bytes did not change is left alone.
  mkdirSync(OUT, { recursive: true });
  const files = [...result.outputFiles].sort((a, b) => Number(isEntry(a.path)) - Number(isEntry(b.path)));
  for (const f of files) {
    let same = false;
    try {
      same = readFileSync(f.path).equals(f.contents);
    } catch {}
    if (same) continue;
    const aside = `${f.path}.${process.pid}.tmp`;
    writeFileSync(aside, f.contents);
    renameSync(aside, f.path);
  }
  // Chunks of earlier builds are named by other hashes. Those an hour old go: a process started from an earlier
  // build (a server) may still import one of the younger ones.
  const written = new Set(files.map((f) => basename(f.path)));
  for (const name of readdirSync(OUT)) {
    if (!name.startsWith('chunk-') || written.has(name)) continue;
    const at = join(OUT, name);
    if (Date.now() - statSync(at).mtimeMs > 3600_000) rmSync(at, { force: true });
  }
  const inputs = Object.keys(result.metafile.inputs).filter((p) => !p.startsWith('node_modules/'));
  writeFileSync(`${INPUTS}.${process.pid}.tmp`, JSON.stringify({ started, inputs }, null, 1) + '\n');
  renameSync(`${INPUTS}.${process.pid}.tmp`, INPUTS);
  return written.size;
}

const isEntry = (path) => !basename(path).startsWith('chunk-');

/** Rewrites each worker module URL to the built module's name; the expression stays what the source wrote. */
function workerUrls() {
  return {
    name: 'worker-urls',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        return { contents: text.replace(WORKER_URL, (_all, q, name, fragment = '') => `new URL(${q}./${name}.mjs${fragment}${q}, import.meta.url)`), loader: 'ts' };
      });
    },
  };
}

/** Why build/ needs building ('missing', or the first source changed since), or null when it is current. */
export function staleness() {
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(INPUTS, 'utf8'));
  } catch {
    return 'no build yet';
  }
  for (const input of recorded.inputs) {
    let st;
    try {
      st = statSync(join(ROOT, input));
    } catch {
      return `${input} is gone`;
    }
    if (st.mtimeMs >= recorded.started) return `${input} changed`;
  }
  return null;
}

/**
 * Builds when a source changed since the last build (a few ms of stat calls when none did). Concurrent callers
 * (several commands started at once) build once: one holds a lock file, the others wait for it and check again.
 * A build that cannot be written (a read-only install) leaves the existing one in use, with a warning.
 */
export async function ensureBuilt({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const why = staleness();
  if (why === null) return;
  try {
    await locked(async () => {
      const still = staleness(); // null when another process built it while this one waited
      if (still === null) return;
      const t0 = Date.now();
      const files = await build();
      log(`[build] ${still}: built ${files} files into build/ in ${Date.now() - t0} ms`);
    });
  } catch (e) {
    if (!e.code || !existsSync(join(OUT, 'register.mjs'))) throw e;
    log(`[build] ${why}, but build/ cannot be written (${e.code}); running the existing build`);
  }
}

/** Runs `fn` holding the build lock: one build at a time, whoever starts it (npm's prepare, a command, the tests). */
async function locked(fn) {
  let fd;
  for (;;) {
    try {
      fd = openSync(LOCK, 'wx');
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      // Another process is building; a lock older than a minute belongs to a build that died.
      if (Date.now() - lockAge() > 60_000) rmSync(LOCK, { force: true });
      await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    closeSync(fd);
    rmSync(LOCK, { force: true });
  }
}

function lockAge() {
  try {
    return statSync(LOCK).mtimeMs;
  } catch {
    return Date.now();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const t0 = Date.now();
  const files = await locked(build);
  process.stderr.write(`[build] ${files} files into build/ in ${Date.now() - t0} ms\n`);
}
