// The Worker: the one app (runtime/app.ts and the route table, unchanged) over the edge's parts: the public dist from
// the R2 bucket DIST, the private part (notices) from PRIVATE, keys and state in Durable Objects. Everything read
// from R2 passes the same integrity checks as on Node (runtime/release/). Built per isolate on its first request and
// kept: index.json is re-read at most once a second (the catalog's refresh), verified pieces stay in the isolate's
// caches. The pages (`/`, `/docs`, `/assets/…`) are the built pages folder, carried in the bundle (pages.ts).
// `/_admin/` is the admin route (admin.ts); every other path is the app's.
import pageFiles from 'register:pages';
import { createApp, type App } from '../runtime/app.ts';
import { openapiBytesOf } from '../runtime/openapi-json.ts';
import { operationsOf } from '../runtime/ops/operations.ts';
import { systemClock } from '../runtime/interfaces.ts';
import type { ProblemLog } from '../runtime/problem-log.ts';
import { ReleaseCatalog } from '../runtime/release/catalog.ts';
import { createNoticeReader } from '../runtime/release/notice-reader.ts';
import { batchOptionsFor } from '../runtime/routes/batch.ts';
import { allRoutes } from '../runtime/routes/index.ts';
import { createR2Source } from '../runtime/source/r2-source.ts';
import { ADMIN_PREFIX, adminAnswer } from './admin.ts';
import type { EdgeEnv } from './bindings.ts';
import { edgeAuthenticator, edgeStateStore } from './edge-state.ts';
import { appRequest, edgeResponse } from './http.ts';
import { bundledPages } from './pages.ts';

export { KeyDirectory, KeyObject, ProviderObject } from './durable-objects.ts';

/** Largest accepted request body, as on Node (runtime/server.ts). */
const MAX_BODY_BYTES = 256 * 1024;
/** What an isolate keeps of a dist (it has 128 MB in all): verified buckets, shards, finished answers. */
const CACHE_BYTES = { buckets: 24 * 1024 * 1024, shards: 16 * 1024 * 1024, bodies: 8 * 1024 * 1024 };

const log: ProblemLog = (r) => console.error(r.line);

let built: App | null = null;

function appFor(env: EdgeEnv): App {
  if (built) return built;
  const source = createR2Source({ bucket: env.DIST, name: 'DIST' });
  const catalog = new ReleaseCatalog({ source, clock: systemClock, cacheBytes: CACHE_BYTES.buckets, shardCacheBytes: CACHE_BYTES.shards, bodyCacheBytes: CACHE_BYTES.bodies, log });
  const privateSource = env.PRIVATE ? createR2Source({ bucket: env.PRIVATE, name: 'PRIVATE' }) : null;
  const store = edgeStateStore(env);
  const app: App = createApp({
    catalog,
    keys: edgeAuthenticator(env),
    store,
    routes: allRoutes({
      openapiJson: openapiBytesOf(() => app.routes),
      maxBodyBytes: MAX_BODY_BYTES,
      batch: batchOptionsFor(source),
      matches: { cursorSecret: env.CURSOR_SECRET ?? null },
    }),
    operations: operationsOf({ catalog, store, source, metrics: null }),
    pages: bundledPages(pageFiles),
    maxBodyBytes: MAX_BODY_BYTES,
    readNotices: privateSource ? createNoticeReader(privateSource, catalog) : undefined,
    log,
  });
  built = app;
  return built;
}

export default {
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    if (new URL(request.url).pathname.startsWith(ADMIN_PREFIX)) return adminAnswer(request, env);
    return edgeResponse(await appFor(env).answer(appRequest(request)));
  },
};
