// The Worker: the one app (runtime/app.ts and the route table, unchanged) over the edge's parts: the public dist from
// the R2 bucket DIST (or, given DIST_ORIGIN, from a static host over fetch, through runtime/source's HTTP source), the private part (notices) from PRIVATE, keys and state in Durable Objects. Everything read
// from R2 passes the same integrity checks as on Node (runtime/release/). Built per isolate on its first request and
// kept: index.json is re-read at most once a second (the catalog's refresh), verified pieces stay in the isolate's
// caches. The pages (`/`, `/docs`, `/assets/…`) are the built pages folder, carried in the bundle (pages.ts).
// `/_admin/` is the admin route (admin.ts); every other path is the app's.
import pageFiles from 'register:pages';
import { createApp, type App } from '../runtime/app.ts';
import { openapiBytesOf } from '../runtime/openapi-json.ts';
import { operationsOf } from '../runtime/ops/operations.ts';
import { METRICS_TYPE } from '../runtime/ops/ops-routes.ts';
import { systemClock } from '../runtime/interfaces.ts';
import type { ProblemLog } from '../runtime/problem-log.ts';
import { ReleaseCatalog } from '../runtime/release/catalog.ts';
import { createNoticeReader } from '../runtime/release/notice-reader.ts';
import { batchOptionsFor } from '../runtime/routes/batch.ts';
import { allRoutes } from '../runtime/routes/index.ts';
import type { ShardSource } from '../runtime/interfaces.ts';
import { createHttpSource } from '../runtime/source/http-source.ts';
import { createR2Source, type R2SourceOptions } from '../runtime/source/r2-source.ts';
import { ADMIN_PREFIX, adminAnswer } from './admin.ts';
import type { EdgeEnv } from './bindings.ts';
import { edgeGate, edgeStateStore } from './edge-state.ts';
import { appRequest, edgeResponse } from './http.ts';
import { bundledPages } from './pages.ts';

export { KeyDirectory, KeyObject, ProviderObject } from './durable-objects.ts';

/** Largest accepted request body, as on Node (runtime/server.ts). */
const MAX_BODY_BYTES = 256 * 1024;
/** What an isolate keeps of a dist (it has 128 MB in all): verified buckets, shards, finished answers. */
const CACHE_BYTES = { buckets: 24 * 1024 * 1024, shards: 16 * 1024 * 1024, bodies: 8 * 1024 * 1024, source: 32 * 1024 * 1024 };

/**
 * /metrics at the edge: no samples, only a comment (valid exposition text, which a scraper reads as empty) saying
 * why. Node's counters are its process's; an isolate's would be one random slice of the traffic, lost whenever the
 * isolate is evicted. The platform's analytics count the Worker's requests, statuses and CPU instead.
 */
const EDGE_METRICS = '# identity-register at the edge keeps no counters: each isolate sees a slice of the traffic. Read the platform\'s analytics for the Worker.\n';

const log: ProblemLog = (r) => console.error(r.line);

let built: { app: App; source: ShardSource & { stats(): unknown } } | null = null;

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
  if (built) return built.app;
  const source = distSource(env);
  const catalog = new ReleaseCatalog({ source, clock: systemClock, cacheBytes: CACHE_BYTES.buckets, shardCacheBytes: CACHE_BYTES.shards, bodyCacheBytes: CACHE_BYTES.bodies, log });
  const privateSource = env.PRIVATE ? createR2Source({ bucket: env.PRIVATE, name: 'PRIVATE' }) : null;
  const store = edgeStateStore(env);
  const app: App = createApp({
    catalog,
    gate: edgeGate(env),
    store,
    routes: allRoutes({
      openapiJson: openapiBytesOf(() => app.routes),
      maxBodyBytes: MAX_BODY_BYTES,
      batch: batchOptionsFor(source),
      matches: { cursorSecret: env.CURSOR_SECRET ?? null },
    }),
    operations: { ...operationsOf({ catalog, store, source, metrics: null }), metrics: async () => ({ type: METRICS_TYPE, text: EDGE_METRICS }) },
    pages: bundledPages(pageFiles),
    maxBodyBytes: MAX_BODY_BYTES,
    readNotices: privateSource ? createNoticeReader(privateSource, catalog) : undefined,
    log,
  });
  built = { app, source };
  return app;
}

export default {
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    if (new URL(request.url).pathname.startsWith(ADMIN_PREFIX)) return adminAnswer(request, env, () => built?.source.stats() ?? null);
    return edgeResponse(await appFor(env).answer(appRequest(request)));
  },
};
