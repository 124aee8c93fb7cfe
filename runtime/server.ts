// Wires a runtime from its parts: a shard source (local dist or HTTP mirror), the key store, the state store, the
// route table and the Node adapter. `register serve`, `npm start` and the end-to-end tests all start it here.
import { createApp, type App } from './app.ts';
import { systemClock, type Clock, type KeyStore, type ShardSource, type StateStore } from './interfaces.ts';
import { openKeyStore } from './keys/key-store.ts';
import { listen, type RunningServer } from './node-adapter.ts';
import { stderrLogger, type Logger } from './log.ts';
import { ReleaseCatalog } from './release/catalog.ts';
import { createNoticeReader } from './release/notice-reader.ts';
import { allRoutes } from './routes/index.ts';
import { batchOptionsFor } from './routes/batch.ts';
import { createFsSource } from './source/fs-source.ts';
import { createHttpSource } from './source/http-source.ts';
import { openStateStore } from './state/open-state-store.ts';

/** Options of startRuntime. */
export interface RuntimeOptions {
  /** A local dist folder, or the http(s) base URL of a mirror of its public part (default `dist`). */
  dist?: string;
  /** Local dist folder holding the private part (notices); default: `dist` when it is local, else none. */
  privateDist?: string | null;
  /** Keys file (default `keys.json`). */
  keys?: string;
  /** State folder (default `.state`); null runs a read-only mirror (acknowledgements answer 503). */
  state?: string | null;
  port?: number;
  host?: string;
  clock?: Clock;
  /** Bucket cache across families and releases, in bytes (default DEFAULT_BUCKET_CACHE_BYTES). */
  cacheBytes?: number;
  /** Entity shard cache across releases, in bytes (default DEFAULT_SHARD_CACHE_BYTES; 0 keeps none). */
  shardCacheBytes?: number;
  /** Finished entity answers kept across releases, in bytes (default DEFAULT_BODY_CACHE_BYTES; 0 keeps none). */
  bodyCacheBytes?: number;
  maxBodyBytes?: number;
  /** Overrides for tests: a state store or key store built elsewhere. */
  store?: StateStore;
  keyStore?: KeyStore;
  /** Where failures are reported (a damaged file, an origin that is down, a bug), one record each. Default: stderr. */
  log?: Logger;
}

export interface Runtime {
  app: App;
  server: RunningServer;
  url: string;
  close(): Promise<void>;
}

export function isUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

/** An app over its parts; `close` releases what it opened itself (the private part's file handles). */
export function buildApp(opts: RuntimeOptions & { source: ShardSource; store: StateStore; keyStore: KeyStore }): { app: App; catalog: ReleaseCatalog; close(): Promise<void> } {
  const clock = opts.clock ?? systemClock;
  const dist = opts.dist ?? 'dist';
  const privateDist = opts.privateDist !== undefined ? opts.privateDist : isUrl(dist) ? null : dist;
  const log = opts.log ?? stderrLogger;
  const catalog = new ReleaseCatalog({ source: opts.source, clock, cacheBytes: opts.cacheBytes, shardCacheBytes: opts.shardCacheBytes, bodyCacheBytes: opts.bodyCacheBytes, log });
  const privateSource = privateDist ? createFsSource({ root: privateDist }) : null;
  const maxBodyBytes = opts.maxBodyBytes ?? 256 * 1024;
  const app = createApp({
    catalog,
    keys: opts.keyStore,
    store: opts.store,
    clock,
    routes: allRoutes(maxBodyBytes, batchOptionsFor(opts.source)),
    maxBodyBytes,
    // Notices are read from the local private part only; a mirror never hosts them.
    readNotices: privateSource ? createNoticeReader(privateSource, catalog) : undefined,
    log,
  });
  return { app, catalog, close: async () => privateSource?.close() };
}

export async function startRuntime(opts: RuntimeOptions = {}): Promise<Runtime> {
  const dist = opts.dist ?? 'dist';
  const source = isUrl(dist) ? createHttpSource({ baseUrl: dist }) : createFsSource({ root: dist });
  const store = opts.store ?? (await openStateStore(opts.state === undefined ? '.state' : opts.state));
  const keyStore = opts.keyStore ?? openKeyStore({ file: opts.keys ?? 'keys.json' });
  const built = buildApp({ ...opts, source, store, keyStore });
  const app = built.app;
  const server = await listen(app, { port: opts.port ?? 8787, host: opts.host ?? '127.0.0.1', maxBodyBytes: opts.maxBodyBytes });
  return {
    app,
    server,
    url: server.url,
    async close() {
      await server.close();
      await store.close();
      keyStore.close();
      await built.close();
      await source.close();
    },
  };
}
