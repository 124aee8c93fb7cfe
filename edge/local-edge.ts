// The edge on this machine: the Worker bundle run by workerd through miniflare (`register edge dev`), with its R2
// buckets and Durable Objects kept under --persist (or in memory), and the local R2 that `edge publish --local`
// writes into. miniflare is Cloudflare's own local runtime; it ships workerd as a binary in its npm package.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Miniflare, MiniflareOptions } from 'miniflare';
import { RegisterError } from '../common/errors.ts';
import { BINDINGS, DURABLE_CLASSES } from './bindings.ts';
import { bundleWorker, COMPATIBILITY_DATE, WORKER_FILE } from './bundle.ts';
import type { PublishTarget } from './publish.ts';

/** The local bucket names behind the two R2 bindings. */
const LOCAL_BUCKETS = { public: 'register-dist', private: 'register-private' } as const;

export interface LocalEdgeOptions {
  /** Folder holding the local R2 buckets and Durable Objects; none: in memory, gone when it stops. */
  persist?: string | null;
  /** Serve on 127.0.0.1:port (0: any free port); none: no socket (publishing only). */
  port?: number | null;
  cursorSecret?: string | null;
  adminToken?: string | null;
  /** Read the public dist from this static host (the DIST_ORIGIN var) rather than from the local R2 bucket. */
  origin?: string | null;
  /** Serve only releases signed by these public keys (the TRUST var: `ed25519:…`, comma-separated); default none. */
  trust?: string | null;
  /** Whether the Worker has the Cache API (caches.default); default true. */
  cache?: boolean;
  /** A prebuilt bundle's code; default: bundled now. */
  code?: string;
  /**
   * What to store in the local R2 (through `edge.target`) before the Worker is served: until it resolves, nothing
   * answers on `port`. The targets it is handed serve the load only.
   */
  load?: (edge: LocalEdge) => Promise<void>;
}

/**
 * The loader worker: `GET /stored` lists a bucket's objects with the sha256 in their metadata; `POST /put` stores a
 * batch of objects: a 4-byte length, that many bytes of JSON listing each object's key, metadata and length, then
 * the objects' bytes one after another.
 */
const LOADER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const bucket = env[url.searchParams.get('bucket')];
    if (!bucket) return new Response('no such bucket', { status: 404 });
    if (url.pathname === '/stored') {
      const out = {};
      let cursor;
      for (let page = 0; page < 1000; page++) {
        const listed = await bucket.list({ cursor, limit: 1000, include: ['customMetadata'] });
        for (const o of listed.objects) if (o.customMetadata && o.customMetadata.sha256) out[o.key] = o.customMetadata.sha256;
        if (!listed.truncated) break;
        cursor = listed.cursor;
      }
      return Response.json(out);
    }
    if (url.pathname === '/put' && request.method === 'POST') {
      const all = new Uint8Array(await request.arrayBuffer());
      const headLength = new DataView(all.buffer).getUint32(0);
      const parts = JSON.parse(new TextDecoder().decode(all.subarray(4, 4 + headLength)));
      let at = 4 + headLength;
      await Promise.all(parts.map((p) => {
        const bytes = all.slice(at, at + p.length);
        at += p.length;
        return bucket.put(p.key, bytes, { httpMetadata: { cacheControl: p.cacheControl, contentType: p.contentType }, customMetadata: { sha256: p.sha256 } });
      }));
      return new Response('ok');
    }
    return new Response('not found', { status: 404 });
  },
};`;

export interface LocalEdge {
  mf: Miniflare;
  /** http://127.0.0.1:PORT, once it listens (after the load). */
  readonly url: string | null;
  target(which: 'public' | 'private'): Promise<PublishTarget>;
  close(): Promise<void>;
}

/** The workerd processes this process started (Linux: read from /proc), by pid. */
function workerdChildren(): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces, so the fields are read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && stat.includes('(workerd)')) out.push(Number(e));
    } catch {}
  }
  return out;
}

/**
 * workerd outlives a parent that is killed outright (SIGKILL gives miniflare no chance to stop it), and would keep
 * the port and the persisted files. A small watchdog, started here, waits for this process to go and then kills the
 * workerd it started, by pid, if that pid is still workerd. Stopped by close(). Linux only (it reads /proc).
 */
function reapWithParent(pids: number[]): { stop(): void } {
  if (pids.length === 0) return { stop() {} };
  const kills = pids.map((p) => `grep -q workerd /proc/${p}/cmdline 2>/dev/null && kill -9 ${p}`).join('; ');
  const watchdog = spawn('sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; ${kills}`], { detached: true, stdio: 'ignore' });
  watchdog.on('error', () => {});
  watchdog.unref();
  return { stop: () => void (watchdog.pid !== undefined && watchdog.exitCode === null && watchdog.kill('SIGKILL')) };
}

/** What an install without the edge's development dependencies is told to do (`edge dev`, `edge publish`). */
export const INSTALL_EDGE_TOOLS = 'run `npm install -D wrangler miniflare`, or `npm ci` in a clone of the register';

/**
 * miniflare, loaded when an edge command runs: it is a development dependency (it carries workerd, which the Node
 * image has no use for), so an install without them (`npm ci --omit=dev`) says what to do rather than a stack.
 */
async function loadMiniflare(): Promise<typeof import('miniflare')> {
  try {
    return await import('miniflare');
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code !== 'ERR_MODULE_NOT_FOUND' || !/'miniflare'/.test((e as Error).message)) throw e;
    throw new RegisterError('edge', `miniflare is not installed (it runs workerd, and is a development dependency): ${INSTALL_EDGE_TOOLS}`);
  }
}

export async function startLocalEdge(o: LocalEdgeOptions): Promise<LocalEdge> {
  const { Miniflare } = await loadMiniflare();
  const persist = o.persist ? resolve(o.persist) : null;
  if (persist) await mkdir(persist, { recursive: true });
  // Without a socket the edge only publishes: the loader worker alone, and no bundle to make.
  const serving = o.port !== null && o.port !== undefined;
  // Made while the local R2 loads, where there is a load.
  const code = serving ? (o.code !== undefined ? Promise.resolve(o.code) : bundleWorker().then((b) => b.code)) : null;
  code?.catch(() => {});
  const bindings: Record<string, string> = {};
  if (o.cursorSecret) bindings[BINDINGS.cursorSecret] = o.cursorSecret;
  if (o.adminToken) bindings[BINDINGS.adminToken] = o.adminToken;
  if (o.origin) bindings[BINDINGS.distOrigin] = o.origin;
  if (o.trust) bindings[BINDINGS.trust] = o.trust;
  const shared = {
    compatibilityDate: COMPATIBILITY_DATE,
    r2Buckets: { [BINDINGS.dist]: LOCAL_BUCKETS.public, [BINDINGS.private]: LOCAL_BUCKETS.private },
  };
  const optionsFor = (worker: string | null): MiniflareOptions => ({
    r2Persist: persist ? join(persist, 'r2') : false,
    durableObjectsPersist: persist ? join(persist, 'do') : false,
    // The Cache API (caches.default), kept with the rest: a restarted edge dev is a fresh isolate over a warm cache.
    cachePersist: persist ? join(persist, 'cache') : false,
    host: '127.0.0.1',
    // No port: any free one, which nobody is told (miniflare always listens, for its first worker).
    ...(worker === null ? {} : { port: o.port! }),
    workers: [
      // Without the Worker, a first worker that answers nothing, so the loader stays off the socket (bound to the
      // buckets all the same: mf.getR2Bucket reads the first worker's).
      ...(worker === null
        ? [{ name: 'closed', modules: true, script: 'export default { fetch: () => new Response(null, { status: 404 }) };', ...shared }]
        : [
            {
              name: 'register',
              modules: [{ type: 'ESModule' as const, path: join(process.cwd(), WORKER_FILE), contents: worker }],
              durableObjects: { ...DURABLE_CLASSES },
              bindings,
              cache: o.cache ?? true,
              ...shared,
            },
          ]),
      // Publishing: a worker on the same local buckets, never on the socket (the first worker is the one served),
      // that stores a batch of objects per request, where miniflare's binding proxy costs a round trip each.
      { name: 'loader', modules: true, script: LOADER, ...shared },
    ],
  });
  // Another edge this process runs (tests start several) has its own workerd and its own watchdog.
  const before = new Set(workerdChildren());
  // With a load, the buckets are filled first with nothing on the given port, then workerd is started again with
  // the Worker on it (miniflare keeps even in-memory storage in a folder of its own across the restart): whoever
  // waits for the port finds it open only once the Worker can answer from what was loaded.
  const mf = new Miniflare(optionsFor(code !== null && !o.load ? await code : null));
  await mf.ready;
  let reaper = reapWithParent(workerdChildren().filter((p) => !before.has(p)));
  let url: string | null = null;
  const edge: LocalEdge = {
    mf,
    get url() {
      return url;
    },
    async target(which) {
      const binding = which === 'public' ? BINDINGS.dist : BINDINGS.private;
      const loader = (await mf.getWorker('loader')) as unknown as { fetch(url: string, init?: object): Promise<Response> };
      const call = async (path: string, body?: Uint8Array): Promise<Response> => {
        const res = await loader.fetch(`http://loader/${path}?bucket=${binding}`, body ? { method: 'POST', body } : {});
        if (res.status !== 200) throw new Error(`[edge] local R2 ${binding}: ${path} answered ${res.status}: ${await res.text()}`);
        return res;
      };
      type Part = { key: string; bytes: Uint8Array; meta: { cacheControl: string; contentType: string; sha256: string } };
      let batch: { parts: Part[]; bytes: number; stored: Promise<void> } | null = null;
      const send = async (parts: Part[]): Promise<void> => {
        const head = new TextEncoder().encode(JSON.stringify(parts.map((p) => ({ key: p.key, length: p.bytes.length, ...p.meta }))));
        const body = new Uint8Array(4 + head.length + parts.reduce((n, p) => n + p.bytes.length, 0));
        new DataView(body.buffer).setUint32(0, head.length);
        body.set(head, 4);
        let at = 4 + head.length;
        for (const p of parts) {
          body.set(p.bytes, at);
          at += p.bytes.length;
        }
        await call('put', body);
      };
      return {
        stored: async () => new Map(Object.entries((await (await call('stored')).json()) as Record<string, string>)),
        // The puts made in one tick go as one batch (the publisher runs many at once); each resolves once its batch
        // is stored.
        async put(key, bytes, meta) {
          if (!batch) {
            const parts: Part[] = [];
            batch = { parts, bytes: 0, stored: new Promise<void>((r) => setTimeout(r, 0)).then(() => {
              if (batch?.parts === parts) batch = null;
              return send(parts);
            }) };
          }
          batch.parts.push({ key, bytes, meta });
          const stored = batch.stored;
          if ((batch.bytes += bytes.length) >= 8 * 1024 * 1024) batch = null;
          await stored;
        },
      };
    },
    async close() {
      await mf.dispose();
      reaper.stop();
    },
  };
  try {
    if (o.load) await o.load(edge);
    if (code !== null) {
      if (o.load) {
        await mf.setOptions(optionsFor(await code));
        reaper.stop();
        reaper = reapWithParent(workerdChildren().filter((p) => !before.has(p)));
      }
      url = (await mf.ready).toString().replace(/\/$/, '');
    }
  } catch (e) {
    await edge.close();
    throw e;
  }
  return edge;
}
