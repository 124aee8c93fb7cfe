// `register edge build`: the Worker as one ES-module bundle (edge/worker.ts and everything it imports) and the
// wrangler.toml that deploys it with its bindings. Bundled by esbuild with the `workerd` condition, so the platform
// seam (package.json "imports", #platform/*) picks its Web side, and checked to import no Node built-in: the bundle
// runs on workerd as it is, without `nodejs_compat`. The built pages (build/pages/) go inside it, so the edge's route
// table and document are Node's, pages included.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Plugin } from 'esbuild';
import { RegisterError } from '../common/errors.ts';
import { BINDINGS, DURABLE_CLASSES } from './bindings.ts';
import type { BundledFile } from './pages.ts';

/** The Workers runtime's compatibility date the bundle is written for (the pinned workerd's is 2026-04-26). */
export const COMPATIBILITY_DATE = '2026-04-01';
export const WORKER_FILE = 'worker.mjs';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * flexsearch's module build mentions `worker_threads` for its Node worker pool, which the register never starts (it
 * uses the Encoder only): that import is answered with an empty module rather than left as a Node built-in.
 */
const noWorkerThreads: Plugin = {
  name: 'no-worker-threads',
  setup(b) {
    b.onResolve({ filter: /^(node:)?worker_threads$/ }, () => ({ path: 'worker_threads', namespace: 'absent' }));
    b.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({ contents: 'export const Worker = undefined; export default { Worker: undefined };', loader: 'js' }));
  },
};

/** The pages scripts/build.mjs writes, which Node serves by default (runtime/pages/page-folder.ts). */
const PAGES_DIR = join(ROOT, 'build', 'pages');
const PAGES_MODULE = 'register:pages';

/**
 * Every file of the pages folder, by its path under it, in name order (the same folder, the same bundle). A file that
 * is UTF-8 (all of them, as built) goes in as its text rather than base64, so it gzips as the file itself does.
 */
async function pagesModule(dir: string): Promise<string> {
  if (!existsSync(join(dir, 'index.html'))) throw new RegisterError('edge', `the pages are not built (${join(dir, 'index.html')} is missing): run npm run build, the Worker bundle carries them`);
  const names = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1).split(sep).join('/'))
    .sort();
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const files: Record<string, BundledFile> = {};
  for (const name of names) {
    const bytes = await readFile(join(dir, name));
    let text: string | null = null;
    try {
      text = utf8.decode(bytes);
    } catch {
      // Not UTF-8: carried as base64.
    }
    files[name] = text === null ? { base64: bytes.toString('base64') } : { text };
  }
  return `export default ${JSON.stringify(files)};`;
}

function bundledPagesPlugin(dir: string): Plugin {
  return {
    name: 'bundled-pages',
    setup(b) {
      b.onResolve({ filter: new RegExp(`^${PAGES_MODULE}$`) }, () => ({ path: PAGES_MODULE, namespace: 'pages' }));
      b.onLoad({ filter: /.*/, namespace: 'pages' }, async () => ({ contents: await pagesModule(dir), loader: 'js' }));
    },
  };
}

export interface WorkerBundle {
  code: string;
  /** Its size, and gzipped (what the platform's limit counts). */
  bytes: number;
  gzipBytes: number;
}

/**
 * The Worker bundle, in memory, with the pages of `pagesDir`. Throws naming any Node built-in it would import.
 * `entry`: another Worker module bundled the same way (a test's Worker over the edge's drivers).
 */
export async function bundleWorker(pagesDir: string = PAGES_DIR, entry = join(ROOT, 'edge/worker.ts')): Promise<WorkerBundle> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:*'],
    target: 'es2022',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [noWorkerThreads, bundledPagesPlugin(pagesDir)],
  });
  const builtins = Object.values(result.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external && !i.path.startsWith('cloudflare:')).map((i) => i.path));
  if (builtins.length) throw new RegisterError('edge', `the Worker bundle would import ${[...new Set(builtins)].join(', ')}: nothing in it may need a Node built-in`);
  const code = result.outputFiles[0].text;
  const bytes = Buffer.byteLength(code);
  return { code, bytes, gzipBytes: gzipSync(code, { level: 9 }).length };
}

export interface WranglerOptions {
  name: string;
  bucket: string;
  privateBucket: string;
  /** The static host holding the public dist (the DIST_ORIGIN var), in place of the bucket; default none. */
  origin?: string | null;
}

/** wrangler.toml for the bundle: its R2 buckets, Durable Object classes (SQLite-backed) and the secrets it reads. */
export function wranglerToml(o: WranglerOptions): string {
  const objects = Object.entries(DURABLE_CLASSES)
    .map(([binding, cls]) => `[[durable_objects.bindings]]\nname = "${binding}"\nclass_name = "${cls}"\n`)
    .join('\n');
  return `# Written by \`register edge build\`; deploy with \`wrangler deploy\` from this folder (docs/edge.md).
name = "${o.name}"
main = "${WORKER_FILE}"
compatibility_date = "${COMPATIBILITY_DATE}"
# Already bundled by \`register edge build\`, and it needs no Node built-in (no nodejs_compat).
no_bundle = true

[[rules]]
type = "ESModule"
globs = ["**/*.mjs"]

${
    o.origin
      ? `# The public dist, read from this static host (ranges over fetch) rather than from an R2 bucket.
[vars]
${BINDINGS.distOrigin} = ${JSON.stringify(o.origin)}
`
      : `# The public dist (\`register edge publish --bucket\`); readable by the Worker only, served through it.
[[r2_buckets]]
binding = "${BINDINGS.dist}"
bucket_name = "${o.bucket}"
`
  }
# The private part (provider notices); never public.
[[r2_buckets]]
binding = "${BINDINGS.private}"
bucket_name = "${o.privateBucket}"

${objects}
[[migrations]]
tag = "v1"
new_sqlite_classes = [${Object.values(DURABLE_CLASSES).filter((c) => c !== DURABLE_CLASSES.TRUST_MARK).map((c) => `"${c}"`).join(', ')}]

# The rollback mark of ${BINDINGS.trust} (edge/durable-objects.ts, used by edge/trust-mark.ts), added after v1 was deployed.
[[migrations]]
tag = "v2"
new_sqlite_classes = ["${DURABLE_CLASSES.TRUST_MARK}"]

# Serve only signed releases: set the var ${BINDINGS.trust} to the trusted public keys (ed25519:…, comma-separated),
# in [vars] here or with the dashboard (docs/integrity.md, "Signatures").
# Secrets, set with \`wrangler secret put\` (never in this file):
#   ${BINDINGS.cursorSecret}  signs /matches cursors (at least 32 characters)
#   ${BINDINGS.adminToken}    the admin route's token, for \`register keys … --edge URL\` (at least 32 characters)
`;
}

/** `register edge build --out DIR`: writes worker.mjs and wrangler.toml; returns the bundle's sizes. */
export async function buildEdge(out: string, o: WranglerOptions): Promise<WorkerBundle> {
  const bundle = await bundleWorker();
  await mkdir(out, { recursive: true });
  await writeFile(join(out, WORKER_FILE), bundle.code);
  await writeFile(join(out, 'wrangler.toml'), wranglerToml(o));
  return bundle;
}
