// `register edge build|dev|publish`: the Worker bundle and its wrangler.toml; the Worker on this machine (workerd,
// through miniflare) over a dist loaded into its local R2; a dist published into R2, local or Cloudflare's.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { defineCommand, type ArgsDef, type CommandDef } from 'citty';
import { RegisterError } from '../common/errors.ts';
import { badValue, ioOf, trustOption } from '../cli/command-line.ts';
import { MIN_ADMIN_TOKEN } from '../runtime/routes/admin.ts';
import { buildEdge } from './bundle.ts';
import { INSTALL_EDGE_TOOLS, startLocalEdge } from './local-edge.ts';
import { publishDist, type PublishReport, type PublishTarget } from './publish.ts';

const DEFAULT_NAME = 'identity-register';
const DEFAULT_BUCKET = 'identity-register-dist';
const DEFAULT_PRIVATE_BUCKET = 'identity-register-private';

const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;

const build = defineCommand({
  meta: { name: 'build', description: 'Write the Worker bundle (worker.mjs) and its wrangler.toml (R2, Durable Object and secret bindings) into a folder' },
  args: {
    out: { type: 'string', description: 'Folder to write into', valueHint: 'DIR', required: true },
    name: { type: 'string', description: `Worker name (default ${DEFAULT_NAME})`, valueHint: 'NAME', default: DEFAULT_NAME },
    bucket: { type: 'string', description: `R2 bucket of the public dist (default ${DEFAULT_BUCKET})`, valueHint: 'NAME', default: DEFAULT_BUCKET },
    'private-bucket': { type: 'string', description: `R2 bucket of the private part (default ${DEFAULT_PRIVATE_BUCKET})`, valueHint: 'NAME', default: DEFAULT_PRIVATE_BUCKET },
    origin: { type: 'string', description: 'Read the public dist from this static host (DIST_ORIGIN) instead of the R2 bucket', valueHint: 'URL' },
  },
  async run(ctx) {
    const a = ctx.args;
    const origin = a.origin === undefined ? null : originUrl(a.origin);
    const bundle = await buildEdge(a.out, { name: a.name, bucket: a.bucket, privateBucket: a['private-bucket'], origin });
    ioOf(ctx).out(`[edge] wrote ${a.out}/worker.mjs (${kib(bundle.bytes)}, ${kib(bundle.gzipBytes)} gzipped) and ${a.out}/wrangler.toml\n`);
  },
});

/** The secrets `edge dev` gives the Worker, from the environment as `register serve` reads them. */
function secretsFromEnv(): { cursorSecret: string | null; adminToken: string | null } {
  const adminToken = process.env.REGISTER_EDGE_ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.length < MIN_ADMIN_TOKEN) throw badValue('edge', `REGISTER_EDGE_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN} characters`);
  return { cursorSecret: process.env.REGISTER_CURSOR_SECRET || null, adminToken };
}

/** --origin as the Worker gets it: an http(s) URL, without credentials (a var is not a secret). */
function originUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badValue('edge', `--origin must be an http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badValue('edge', `--origin must be an http(s) URL, got ${url.protocol}`);
  if (url.username || url.password) throw badValue('edge', '--origin must not carry credentials (the Worker would hold them as a plain var)');
  return url.href;
}

function reportLine(what: string, r: PublishReport): string {
  return `[edge] ${what}: ${r.stamps.length} stamp(s) (${r.stamps.join(', ') || 'none'}); ${r.uploaded} object(s) uploaded (${kib(r.bytes)} of ${kib(r.total)}, ${r.total ? ((100 * r.bytes) / r.total).toFixed(1) : '0.0'}%), ${r.unchanged} already there\n`;
}

const dev = defineCommand({
  meta: { name: 'dev', description: 'Run the Worker on workerd on this machine (127.0.0.1), the dist loaded into its local R2, until stopped' },
  args: {
    dist: { type: 'string', description: 'Compiled dist to serve (loaded into the local R2 buckets; with --origin, its private part only)', valueHint: 'DIST' },
    origin: { type: 'string', description: 'Read the public dist from this static host (http(s) URL of the dist root) instead of the local R2', valueHint: 'URL' },
    port: { type: 'string', description: 'Port on 127.0.0.1 (0: any free one)', valueHint: 'P', required: true },
    persist: { type: 'string', description: 'Keep the local R2 buckets and Durable Objects in this folder (default: in memory)', valueHint: 'DIR' },
    worker: { type: 'string', description: 'Run this bundle (worker.mjs, as `edge build` wrote it) rather than bundling the sources now', valueHint: 'FILE' },
    trust: { type: 'string', description: 'Serve only releases signed by one of these public keys (.pub files or ed25519:… keys, comma-separated): the TRUST var', valueHint: 'KEY[,KEY…]' },
  },
  async run(ctx) {
    const a = ctx.args;
    const io = ioOf(ctx);
    // The Worker takes the keys themselves (a var), whether given as keys or as .pub files.
    const keys = await trustOption('edge', a.trust);
    const trust = keys && [...keys.values()].map((k) => k.text).join(',');
    const code = a.worker === undefined ? undefined : await readFile(a.worker, 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw badValue('edge', `--worker ${a.worker}: ${e.code === 'ENOENT' ? 'no such file (write it with register edge build --out DIR)' : e.message}`);
    });
    const port = /^\d+$/.test(a.port) && Number(a.port) <= 65535 ? Number(a.port) : NaN;
    if (Number.isNaN(port)) throw badValue('edge', `--port must be a port number, got ${JSON.stringify(a.port)}`);
    const origin = a.origin === undefined ? null : originUrl(a.origin);
    if (origin === null && a.dist === undefined) throw badValue('edge', 'give --dist DIST (loaded into the local R2) or --origin URL (a static host holding the dist)');
    // The dist goes into the local R2 before the port opens: whoever waits for the port (as every wait-on tool
    // does) finds the Worker answering from it, never a 503 while it loads.
    const dist = a.dist;
    const edge = await startLocalEdge({
      port,
      persist: a.persist ?? null,
      origin,
      code,
      trust,
      ...secretsFromEnv(),
      load: dist === undefined ? undefined : async (loading) => {
        const report = await publishDist(dist, origin === null ? await loading.target('public') : null, await loading.target('private'));
        io.err(reportLine(`loaded ${origin === null ? dist : `the private part of ${dist}`} into the local R2`, report));
      },
    });
    let stopping: Promise<void> | null = null;
    const stop = () => (stopping ??= edge.close());
    const from = origin === null ? '' : `; the dist from ${origin}`;
    io.err(`[edge] listening on ${edge.url}/api/v1 (workerd; R2 and Durable Objects ${a.persist ? `in ${resolve(a.persist)}` : 'in memory'}${from})\n`);
    await new Promise<void>((done) => {
      for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void stop().then(done));
    });
  },
});

/** A real R2 bucket, written through wrangler (its credentials are wrangler's: `wrangler login` or CLOUDFLARE_API_TOKEN). */
function wranglerTarget(bucket: string): PublishTarget {
  const wrangler = resolve(import.meta.dirname, '..', 'node_modules/.bin/wrangler');
  // A development dependency, as miniflare is (local-edge.ts): an install without them says what to do.
  if (!existsSync(wrangler)) throw new RegisterError('edge', `wrangler is not installed (it uploads to R2, and is a development dependency): ${INSTALL_EDGE_TOOLS}`);
  const run = (args: string[]) =>
    new Promise<void>((done, fail) => {
      const child = spawn(wrangler, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d));
      child.once('error', fail);
      child.once('close', (code) => (code === 0 ? done() : fail(new RegisterError('edge', `wrangler ${args.slice(0, 4).join(' ')} failed: ${err.trim().split('\n').pop()}`))));
    });
  return {
    // wrangler cannot list a bucket: every file is sent (an unchanged object is rewritten with the same bytes).
    stored: async () => new Map(),
    async put(key, bytes, meta) {
      const { writeFile, rm, mkdtemp } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const dir = await mkdtemp(`${tmpdir()}/edge-publish-`);
      try {
        await writeFile(`${dir}/object`, bytes);
        await run(['r2', 'object', 'put', `${bucket}/${key}`, '--file', `${dir}/object`, '--cache-control', meta.cacheControl, '--content-type', meta.contentType, '--remote']);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

const publish = defineCommand({
  meta: { name: 'publish', description: 'Upload a compiled dist to R2: the public tree to --bucket (index.json last), notices to --private-bucket' },
  args: {
    dist: { type: 'string', description: 'Compiled dist', valueHint: 'DIST', required: true },
    bucket: { type: 'string', description: 'R2 bucket of the public dist', valueHint: 'NAME', required: true },
    'private-bucket': { type: 'string', description: 'R2 bucket of the private part (notices); without it they are not published', valueHint: 'NAME' },
    local: { type: 'boolean', description: 'Into the local R2 that `edge dev --persist` reads (the bucket names are then its own)' },
    persist: { type: 'string', description: 'With --local: the folder `edge dev --persist` uses', valueHint: 'DIR' },
  },
  async run(ctx) {
    const a = ctx.args;
    const io = ioOf(ctx);
    if (a['private-bucket'] !== undefined && a['private-bucket'] === a.bucket) throw badValue('edge', '--private-bucket must not be the public --bucket');
    if (a.local) {
      if (!a.persist) throw badValue('edge', '--local needs --persist DIR (the folder `edge dev --persist` reads)');
      const edge = await startLocalEdge({ port: null, persist: a.persist });
      try {
        const report = await publishDist(a.dist, await edge.target('public'), a['private-bucket'] !== undefined ? await edge.target('private') : null);
        io.out(reportLine(`published ${a.dist} into the local R2 in ${relative(process.cwd(), resolve(a.persist)) || '.'}`, report));
      } finally {
        await edge.close();
      }
      return;
    }
    if (a.persist) throw badValue('edge', '--persist goes with --local');
    const report = await publishDist(a.dist, wranglerTarget(a.bucket), a['private-bucket'] !== undefined ? wranglerTarget(a['private-bucket']) : null, 4);
    io.out(reportLine(`published ${a.dist} to r2:${a.bucket}`, report));
  },
});

export const edgeCommand = defineCommand({
  meta: { name: 'edge', description: 'The router at the edge: build the Worker, run it here on workerd, publish a dist to R2' },
  subCommands: { build, dev, publish },
}) as CommandDef<ArgsDef>;
