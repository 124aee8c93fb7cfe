// The one composition of the app from its parts: Node (server.ts) and the Worker (edge/worker.ts) each choose the
// parts (where the dist and the notices are read, the state store, the gate, the pages, the log, the metrics, the
// limits, the admin routes' keys) and build the app here, so the catalog, the route table, the operational
// endpoints and the admin routes are put together once, the same way on both.
import { createApp, type App, type Observer } from './app.ts';
import { systemClock, type Clock, type Gate, type ShardSource, type StateStore } from './interfaces.ts';
import { openapiBytesOf } from './openapi-json.ts';
import type { RuntimeMetrics } from './ops/metrics.ts';
import { operationsOf } from './ops/operations.ts';
import { METRICS_TYPE } from './ops/ops-routes.ts';
import type { ProblemLog } from './problem-log.ts';
import { ReleaseCatalog, type CatalogOptions } from './release/catalog.ts';
import { DEFAULT_CACHE_BYTES, divideCacheBudget } from './release/cache-budget.ts';
import { createNoticeReader } from './release/notice-reader.ts';
import type { PageFiles } from './route.ts';
import type { AdminOptions } from './routes/admin.ts';
import { batchOptionsFor } from './routes/batch.ts';
import { allRoutes } from './routes/index.ts';
import type { KeyExtension } from './routes/key.ts';

/** Largest accepted request body by default, in bytes; larger is 413. */
const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

/** What an app is made of: each platform's choice of parts. */
export interface AppParts {
  /** The public dist: a local folder, a mirror over HTTP, an R2 bucket. */
  source: ShardSource;
  /** The private part (each stamp's notices), or null: the notice feed is empty (a mirror never hosts it). */
  privateSource?: ShardSource | null;
  store: StateStore;
  /** Who may ask, and whether a costing request may go ahead (interfaces.ts Gate). */
  gate: Gate;
  /** The pages' files; null: the table holds no page routes. */
  pages: PageFiles | null;
  /** Where failures are reported, one record each. */
  log: ProblemLog;
  /** Default: the system clock. */
  clock?: Clock;
  /**
   * The counters /metrics exposes and every answer is counted in; null where a process keeps none (the edge), and
   * /metrics then answers `metricsNote` (a comment saying why) or an empty exposition.
   */
  metrics: RuntimeMetrics | null;
  metricsNote?: string;
  /** Called once per answer: its metrics and its access-log line (ops/operations.ts observerOf); default none. */
  observe?: Observer | null;
  limits?: {
    /** Largest accepted request body in bytes (default DEFAULT_MAX_BODY_BYTES). */
    maxBodyBytes?: number;
    /**
     * The one memory budget of the caches, in bytes, divided among them by release/cache-budget.ts's rule (default
     * DEFAULT_CACHE_MIB; `serve --cache-mib`).
     */
    cacheBudgetBytes?: number;
    /** Overrides of single shares, outside the budget: buckets, entity shards, finished answers (0 keeps none). */
    cacheBytes?: number;
    shardCacheBytes?: number;
    bodyCacheBytes?: number;
    /** Largest /matches page in bytes (default 262,144). */
    matchPageBytes?: number;
  };
  /** The secret that signs /matches cursors; null: /matches answers 503. */
  cursorSecret?: string | null;
  /** What GET /key tells the holder of an expiring key about extending it. */
  keyExtension?: KeyExtension;
  /** The catalog's own choices: a pinned stamp, the trusted signing keys, and what else the catalog takes. */
  catalog?: Omit<CatalogOptions, 'source' | 'clock' | 'log' | 'caches'>;
  /** The admin routes (`/_admin/…`) and what they act on; absent: the table holds none. */
  admin?: AdminOptions;
  /** A platform in front codes the answers (the edge): see createApp's `codedAhead`. */
  codedAhead?: boolean;
}

/** The app composed from `parts`, with the catalog it serves (for the metrics' and the tests' eyes). */
export function composeApp(parts: AppParts): { app: App; catalog: ReleaseCatalog } {
  const clock = parts.clock ?? systemClock;
  const limits = parts.limits ?? {};
  const maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const { source, store, log } = parts;
  const caches = divideCacheBudget(limits.cacheBudgetBytes ?? DEFAULT_CACHE_BYTES, {
    buckets: limits.cacheBytes, shards: limits.shardCacheBytes, answers: limits.bodyCacheBytes,
  });
  const catalog = new ReleaseCatalog({ ...parts.catalog, source, clock, log, caches });
  const counted = operationsOf({ catalog, store, source, metrics: parts.metrics });
  const note = parts.metricsNote;
  const operations = parts.metrics === null && note !== undefined ? { ...counted, metrics: async () => ({ type: METRICS_TYPE, text: note }) } : counted;
  const app: App = createApp({
    catalog,
    gate: parts.gate,
    store,
    clock,
    routes: allRoutes({
      // The document this app serves is the one of its own table.
      openapiJson: openapiBytesOf(() => app.routes),
      maxBodyBytes,
      batch: batchOptionsFor(source),
      key: { extension: parts.keyExtension },
      matches: { cursorSecret: parts.cursorSecret ?? null, maxPageBytes: limits.matchPageBytes, keptPageBytes: caches.pages },
      pages: parts.pages !== null,
      admin: parts.admin,
    }),
    operations,
    pages: parts.pages,
    observe: parts.observe ?? undefined,
    maxBodyBytes,
    // Notices are read from the private part only.
    readNotices: parts.privateSource ? createNoticeReader(parts.privateSource, catalog) : undefined,
    log,
    codedAhead: parts.codedAhead,
  });
  return { app, catalog };
}
