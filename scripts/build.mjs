#!/usr/bin/env node
// Builds what bin/ runs: the TypeScript sources bundled by esbuild into plain JavaScript under build/ (git-ignored),
// the `register` CLI and the compiler's worker-thread modules; the pages the server shows people (the explorer at
// `/`, the API reference at `/docs`) under build/pages/; and the typed client's types, generated from the OpenAPI
// document into client/openapi-types.ts. Plain JavaScript itself, so it needs no loader.
// `node scripts/build.mjs` builds; bin/register.mjs calls ensureBuilt(), which builds only when a source changed.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'build');
/** What the last build read (paths relative to the root), written after it succeeded; its absence means "build". */
const INPUTS = join(OUT, 'inputs.json');
const LOCK = join(ROOT, '.build.lock');
/** What the server's page wrapper (runtime/pages/) serves: the HTML pages, and their assets named by content hash. */
const PAGES = join(OUT, 'pages');
/** The client's types, generated from the OpenAPI document (git-ignored: a build regenerates them). */
const CLIENT_TYPES = join(ROOT, 'client/openapi-types.ts');
/** The pages' HTML templates: `%name.js%` and `%name.css%` stand for the hashed names of entry `name`'s output. */
const PAGE_TEMPLATES = { 'index.html': 'explorer/index.html', 'docs.html': 'explorer/docs.html' };
/** The pages' browser entries. */
const PAGE_ENTRIES = { explorer: 'explorer/main.ts', docs: 'explorer/docs-page.ts' };
/**
 * Files served as they ship (already minified): Swagger UI's browser bundle and its styles. Bundling them again cost
 * ~5 s a build for the same bytes; they get a content-hashed name like the built assets.
 */
const VENDOR_ASSETS = { 'swagger-ui.js': 'node_modules/swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui.css': 'node_modules/swagger-ui-dist/swagger-ui.css' };

/**
 * A worker module named by URL (`new URL('./side-tables.ts#readSide', import.meta.url)`): the compiler starts worker
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
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [workerUrls(), dependenciesExternal()],
    write: false,
  });
  const types = await generateClientTypes(esbuild);
  const pages = await buildPages(esbuild);
  const client = await buildClient(esbuild);
  const files = [...result.outputFiles].sort((a, b) => Number(isEntry(a.path)) - Number(isEntry(b.path)));
  // Chunks before the entries that import them; page assets before the HTML that names them.
  replaceFiles([...files, ...pages.files, ...client.files]);
  const written = new Set(files.map((f) => basename(f.path)));
  sweepOld(OUT, (name) => name.startsWith('chunk-') && !written.has(name));
  const assets = new Set(pages.files.map((f) => basename(f.path)));
  sweepOld(join(PAGES, 'assets'), (name) => !assets.has(name));
  const inputs = [...new Set([...Object.keys(result.metafile.inputs), ...types.inputs, ...pages.inputs, ...client.inputs])].filter((p) => !p.startsWith('node_modules/')).sort();
  writeFileSync(`${INPUTS}.${process.pid}.tmp`, JSON.stringify({ started, inputs }, null, 1) + '\n');
  renameSync(`${INPUTS}.${process.pid}.tmp`, INPUTS);
  return written.size + pages.files.length + client.files.length + types.written;
}

/**
 * A command may be starting from build/ meanwhile: each file is replaced whole (written aside, then renamed), in the
 * order given, and a file whose bytes did not change is left alone.
 */
function replaceFiles(files) {
  for (const f of files) {
    mkdirSync(dirname(f.path), { recursive: true });
    let same = false;
    try {
      same = readFileSync(f.path).equals(f.contents);
    } catch {}
    if (same) continue;
    const aside = `${f.path}.${process.pid}.tmp`;
    writeFileSync(aside, f.contents);
    renameSync(aside, f.path);
  }
}

/** Files of earlier builds (other hashes) go once an hour old: a server started from an earlier build may still use a younger one. */
function sweepOld(dir, isStale) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    if (!isStale(name)) continue;
    const at = join(dir, name);
    if (Date.now() - statSync(at).mtimeMs > 3600_000) rmSync(at, { force: true });
  }
}

/**
 * Writes the OpenAPI document as JSON and generates the client's TypeScript types from it with openapi-typescript,
 * so the client follows the document wherever it changes. openapi-typescript is a development tool: an install
 * without development dependencies (the image) skips this step, as it runs no type check.
 */
async function generateClientTypes(esbuild) {
  // The document is assembled from the route table, so the bundle reaches the routes and their dependencies: those
  // stay imports from node_modules, and the bundle is written beside them (a data: URL could not resolve them).
  const doc = await esbuild({
    entryPoints: [join(ROOT, 'runtime/openapi-json.ts')],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const inputs = Object.keys(doc.metafile.inputs);
  let openapiTS;
  try {
    openapiTS = await import('openapi-typescript');
  } catch (e) {
    if (e?.code === 'ERR_MODULE_NOT_FOUND') return { inputs, written: 0 };
    throw e;
  }
  const bundle = join(ROOT, `.openapi-json-${process.pid}.mjs`);
  let openapiJsonText;
  try {
    writeFileSync(bundle, doc.outputFiles[0].contents);
    ({ openapiJsonText } = await import(pathToFileURL(bundle).href));
  } finally {
    rmSync(bundle, { force: true });
  }
  const ast = await openapiTS.default(withDiscriminatorMappings(JSON.parse(openapiJsonText())), { alphabetize: false, silent: true, defaultNonNullable: false });
  const text = `// Generated by scripts/build.mjs from the contract (runtime/contract/, runtime/routes/) with openapi-typescript: do not edit.\n${openapiTS.astToString(ast)}`;
  replaceFiles([{ path: CLIENT_TYPES, contents: Buffer.from(text) }]);
  return { inputs, written: 1 };
}

/** The typed client as one plain module (build/client.mjs), what `identity-register/client` resolves to in Node. */
async function buildClient(esbuild) {
  const result = await esbuild({
    entryPoints: { client: join(ROOT, 'client/register-client.ts') },
    outdir: OUT,
    absWorkingDir: ROOT,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    // Neutral: no Node built-in may creep in, since browsers run the same client.
    platform: 'neutral',
    target: 'es2022',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  return { files: result.outputFiles, inputs: Object.keys(result.metafile.inputs) };
}

/**
 * A discriminator without a mapping means "the value is the schema's name" in OpenAPI, and openapi-typescript types it
 * so; the document's events carry their own `const` values instead (and its validator, ajv, takes no mapping). The
 * generator is handed the mapping those consts imply, so the client's types carry the values the server sends.
 */
function withDiscriminatorMappings(doc) {
  const schemas = doc.components?.schemas ?? {};
  for (const schema of Object.values(schemas)) {
    const d = schema.discriminator;
    if (!d || d.mapping || !Array.isArray(schema.oneOf)) continue;
    d.mapping = {};
    for (const { $ref } of schema.oneOf) {
      const value = schemas[$ref.split('/').pop()]?.properties?.[d.propertyName]?.const;
      if (typeof value !== 'string') throw new Error(`[build] openapi: ${$ref} has no const ${d.propertyName} for its discriminator`);
      d.mapping[value] = $ref;
    }
  }
  return doc;
}

/**
 * The explorer and the API reference: browser bundles (the page's TypeScript with the typed client, Chart.js, Swagger
 * UI and their CSS) named by content hash, so the server may cache them forever, and the two HTML pages naming them.
 */
async function buildPages(esbuild) {
  const result = await esbuild({
    entryPoints: PAGE_ENTRIES,
    outdir: join(PAGES, 'assets'),
    absWorkingDir: ROOT,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    // Licence notices stay in the served file itself (the assets folder serves scripts and styles only).
    legalComments: 'eof',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const names = {};
  const vendor = Object.entries(VENDOR_ASSETS).map(([asset, from]) => {
    const contents = readFileSync(join(ROOT, from));
    const [stem, ext] = asset.split('.');
    names[asset] = `${stem}-${contentHash(contents)}.${ext}`;
    return { path: join(PAGES, 'assets', names[asset]), contents };
  });
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const entry = Object.keys(PAGE_ENTRIES).find((k) => PAGE_ENTRIES[k] === meta.entryPoint);
    if (!entry) continue;
    names[`${entry}.js`] = basename(out);
    if (meta.cssBundle) names[`${entry}.css`] = basename(meta.cssBundle);
  }
  const html = Object.entries(PAGE_TEMPLATES).map(([name, template]) => {
    const text = readFileSync(join(ROOT, template), 'utf8').replace(/%([\w-]+\.(?:js|css))%/g, (all, asset) => {
      if (!names[asset]) throw new Error(`[build] ${template}: ${all} names no built asset (built: ${Object.keys(names).join(', ')})`);
      return `/assets/${names[asset]}`;
    });
    return { path: join(PAGES, name), contents: Buffer.from(text) };
  });
  return { files: [...result.outputFiles, ...vendor, ...html], inputs: [...Object.keys(result.metafile.inputs), ...Object.values(PAGE_TEMPLATES)] };
}

/** Eight characters of the bytes' SHA-256 in base 32 (A-Z, 2-7), the shape of esbuild's own hashed names. */
function contentHash(bytes) {
  const digest = createHash('sha256').update(bytes).digest();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length === 8) return out;
  }
  return out;
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

// Packages bundled into build/ rather than imported from node_modules: TypeBox ships ~150 small ES modules, and
// resolving and loading them one by one took `serve` from ~290 to ~435 ms of CPU to start (read from /proc).
const BUNDLED_PACKAGES = /^@sinclair\/typebox(\/|$)/;

/**
 * esbuild's `packages: 'external'`, but for BUNDLED_PACKAGES: every other dependency is imported from node_modules
 * at run time, as the sources import it. Also used by the crash tests' standby bundle, to start like `serve` does.
 */
export function dependenciesExternal() {
  return {
    name: 'dependencies-external',
    setup(b) {
      // `#…` names the project's own modules (package.json "imports": the platform seam), bundled like any source file.
      b.onResolve({ filter: /^[^./#]/ }, (args) => (BUNDLED_PACKAGES.test(args.path) ? undefined : { path: args.path, external: true }));
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
