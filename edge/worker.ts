// The Worker: the one app (runtime/composition.ts composeApp, as Node composes it) over the edge's parts: the public
// dist from the R2 bucket DIST (or, given DIST_ORIGIN, from a static host over fetch, through runtime/source's HTTP
// source), the private part (notices) from PRIVATE, the gate and the state in Durable Objects (edge-state.ts), the
// admin routes over the key objects (admin.ts). Everything read from R2 passes the same integrity checks as on Node
// (runtime/release/). Built per isolate on its first request and kept: index.json is re-read at most once a second
// (the catalog's refresh), verified pieces stay in the isolate's caches. The pages (`/`, `/docs`, `/assets/…`) are
// the built pages folder, carried in the bundle (pages.ts).
import pageFiles from 'register:pages';
import type { App } from '../runtime/app.ts';
import { composeApp } from '../runtime/composition.ts';
import type { ProblemLog } from '../runtime/problem-log.ts';
import type { ShardSource } from '../runtime/interfaces.ts';
import { createHttpSource } from '../runtime/source/http-source.ts';
import { createR2Source, type R2SourceOptions } from '../runtime/source/r2-source.ts';
import { edgeAdminKeys } from './admin.ts';
import type { EdgeEnv } from './bindings.ts';
import { edgeGate, edgeStateStore } from './edge-state.ts';
import { appRequest } from './http.ts';
import { bundledPages } from './pages.ts';
import { edgeTrust } from './trust-mark.ts';

export { KeyDirectory, KeyObject, ProviderObject, TrustMarkObject } from './durable-objects.ts';

/** What an isolate keeps of a dist (it has 128 MB in all): verified buckets, shards, finished answers. */
const CACHE_BYTES = { buckets: 24 * 1024 * 1024, shards: 16 * 1024 * 1024, bodies: 8 * 1024 * 1024, source: 32 * 1024 * 1024 };

/**
 * /metrics at the edge: no samples, only a comment (valid exposition text, which a scraper reads as empty) saying
 * why. Node's counters are its process's; an isolate's would be one random slice of the traffic, lost whenever the
 * isolate is evicted. The platform's analytics count the Worker's requests, statuses and CPU instead.
 */
const EDGE_METRICS = '# identity-register at the edge keeps no counters: each isolate sees a slice of the traffic. Read the platform\'s analytics for the Worker.\n';

const log: ProblemLog = (r) => console.error(r.line);

let built: App | null = null;

/** The Cache API where the runtime has one (workerd's `caches.default`). */
const sharedCache = (): R2SourceOptions['cache'] => (globalThis as { caches?: { default?: R2SourceOptions['cache'] } }).caches?.default ?? null;

/**
 * Where the public dist is read: the static host DIST_ORIGIN names, else the R2 bucket DIST. An origin's answers
 * pass through the platform's own cache in front of fetch, so the Cache API tier is the R2 source's alone.
 */
function distSource(env: EdgeEnv): ShardSource & { stats(): unknown } {
  if (env.DIST_ORIGIN) {
    // workerd's fetch must be called as the global's own (a detached reference throws "Illegal invocation").
    return createHttpSource({ baseUrl: env.DIST_ORIGIN, cacheBytes: CACHE_BYTES.source, fetch: (input, init) => fetch(input, init), log });
  }
  if (!env.DIST) throw new Error('[edge] no dist: bind the R2 bucket DIST or set DIST_ORIGIN to a static host holding the dist');
  return createR2Source({ bucket: env.DIST, name: 'DIST', cacheBytes: CACHE_BYTES.source, cache: sharedCache() });
}

function appFor(env: EdgeEnv): App {
  if (built) return built;
  const source = distSource(env);
  built = composeApp({
    source,
    privateSource: env.PRIVATE ? createR2Source({ bucket: env.PRIVATE, name: 'PRIVATE' }) : null,
    store: edgeStateStore(env),
    gate: edgeGate(env),
    pages: bundledPages(pageFiles),
    log,
    metrics: null,
    metricsNote: EDGE_METRICS,
    limits: { cacheBytes: CACHE_BYTES.buckets, shardCacheBytes: CACHE_BYTES.shards, bodyCacheBytes: CACHE_BYTES.bodies },
    cursorSecret: env.CURSOR_SECRET ?? null,
    // serve --trust at the edge: the TRUST var's keys and the rollback mark's Durable Object (trust-mark.ts).
    catalog: edgeTrust(env),
    admin: { token: env.ADMIN_TOKEN, tokenHint: 'set the ADMIN_TOKEN secret', keys: edgeAdminKeys(env), sourceStats: () => source.stats() },
    // Cloudflare's front end codes the Worker's answers (http.ts).
    codedAhead: true,
  }).app;
  return built;
}

export default {
  fetch: (request: Request, env: EdgeEnv): Promise<Response> => appFor(env).fetch(appRequest(request)),
};
