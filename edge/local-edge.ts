// The edge on this machine: the Worker bundle run by workerd through miniflare (`register edge dev`), with its R2
// buckets and Durable Objects kept under --persist (or in memory), and the local R2 that `edge publish --local`
// writes into. miniflare is Cloudflare's own local runtime; it ships workerd as a binary in its npm package.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Miniflare, MiniflareOptions } from 'miniflare';
import { BINDINGS, DURABLE_CLASSES } from './bindings.ts';
import { bundleWorker, COMPATIBILITY_DATE, WORKER_FILE } from './bundle.ts';
import type { PublishTarget } from './publish.ts';

/** The local bucket names behind the two R2 bindings. */
export const LOCAL_BUCKETS = { public: 'register-dist', private: 'register-private' } as const;

export interface LocalEdgeOptions {
  /** Folder holding the local R2 buckets and Durable Objects; none: in memory, gone when it stops. */
  persist?: string | null;
  /** Serve on 127.0.0.1:port (0: any free port); none: no socket (publishing only). */
  port?: number | null;
  cursorSecret?: string | null;
  adminToken?: string | null;
  /** A prebuilt bundle's code; default: bundled now. */
  code?: string;
}

/** R2 objects as miniflare's proxy hands them to Node. */
interface LocalBucket {
  list(options: { cursor?: string; limit: number; include: ['customMetadata'] }): Promise<{ objects: { key: string; customMetadata?: Record<string, string> }[]; truncated: boolean; cursor?: string }>;
  put(key: string, value: Uint8Array, options: { httpMetadata: { cacheControl: string; contentType: string }; customMetadata: Record<string, string> }): Promise<unknown>;
}

export interface LocalEdge {
  mf: Miniflare;
  /** http://127.0.0.1:PORT, when it listens. */
  url: string | null;
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

export async function startLocalEdge(o: LocalEdgeOptions): Promise<LocalEdge> {
  const { Miniflare } = await import('miniflare');
  const persist = o.persist ? resolve(o.persist) : null;
  if (persist) await mkdir(persist, { recursive: true });
  const code = o.code ?? (await bundleWorker()).code;
  const bindings: Record<string, string> = {};
  if (o.cursorSecret) bindings[BINDINGS.cursorSecret] = o.cursorSecret;
  if (o.adminToken) bindings[BINDINGS.adminToken] = o.adminToken;
  const options: MiniflareOptions = {
    modules: [{ type: 'ESModule', path: join(process.cwd(), WORKER_FILE), contents: code }],
    compatibilityDate: COMPATIBILITY_DATE,
    r2Buckets: { [BINDINGS.dist]: LOCAL_BUCKETS.public, [BINDINGS.private]: LOCAL_BUCKETS.private },
    durableObjects: { ...DURABLE_CLASSES },
    bindings,
    r2Persist: persist ? join(persist, 'r2') : false,
    durableObjectsPersist: persist ? join(persist, 'do') : false,
    host: '127.0.0.1',
    ...(o.port === null || o.port === undefined ? {} : { port: o.port }),
  };
  // Another edge this process runs (tests start several) has its own workerd and its own watchdog.
  const before = new Set(workerdChildren());
  const mf = new Miniflare(options);
  const url = o.port === null || o.port === undefined ? null : (await mf.ready).toString().replace(/\/$/, '');
  if (url === null) await mf.ready;
  const reaper = reapWithParent(workerdChildren().filter((p) => !before.has(p)));
  return {
    mf,
    url,
    async target(which) {
      const bucket = (await mf.getR2Bucket(which === 'public' ? BINDINGS.dist : BINDINGS.private)) as unknown as LocalBucket;
      return {
        async stored() {
          const out = new Map<string, string>();
          let cursor: string | undefined;
          // Bounded: a listing of 1,000 objects a page, at most a million objects.
          for (let page = 0; page < 1000; page++) {
            const listed = await bucket.list({ cursor, limit: 1000, include: ['customMetadata'] });
            for (const o of listed.objects) if (o.customMetadata?.sha256) out.set(o.key, o.customMetadata.sha256);
            if (!listed.truncated) break;
            cursor = listed.cursor;
          }
          return out;
        },
        put: async (key, bytes, meta) =>
          void (await bucket.put(key, bytes, { httpMetadata: { cacheControl: meta.cacheControl, contentType: meta.contentType }, customMetadata: { sha256: meta.sha256 } })),
      };
    },
    async close() {
      await mf.dispose();
      reaper.stop();
    },
  };
}
