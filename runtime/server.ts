// Node's choice of parts: a shard source (local dist or HTTP mirror), the key store with the state store as its gate,
// the pages folder, the metrics and the access log, the admin routes over the keys it serves; composed into the one
// app by composition.ts, as the Worker's are (openRuntime); and served with the Node adapter (startRuntime).
// `register serve`, `npm start` and the socket tests start it here; route specs open it and call the app in process.
import type { App } from './app.ts';
import { composeApp } from './composition.ts';
import type { Clock, KeyRepository, KeyStore, ShardSource, StateStore } from './interfaces.ts';
import { RegisterError } from '../common/errors.ts';
import { INDEX_FILE } from '../common/dist-layout.ts';
import { openIndex } from '../common/index-file.ts';
import { openKeyStore, openRepositoryKeyStore } from './keys/key-store.ts';
import { fileKeyRepository } from './keys/file-key-repository.ts';
import { keyRepositoryFor } from './keys/state-key-repository.ts';
import type { Logger } from './ops/logger.ts';
import { createMetrics, instrumentStore, type RuntimeMetrics } from './ops/metrics.ts';
import { observerOf } from './ops/operations.ts';
import { pageFolder } from './pages/page-folder.ts';
import { listen, type RunningServer } from './node-adapter.ts';
import type { LogRecord, ProblemLog } from './problem-log.ts';
import { ReleaseCatalog } from './release/catalog.ts';
import type { TrustedKeys } from '../common/signing.ts';
import type { MarkStore } from '../common/trust.ts';
import { openServeMarks } from './release/trust-mark-place.ts';
import { MIN_ADMIN_TOKEN, repositoryAdminKeys } from './routes/admin.ts';
import type { KeyExtension } from './routes/key.ts';
import { createFsSource } from './source/fs-source.ts';
import { createHttpSource } from './source/http-source.ts';
import { keyStoreGate } from './state/admit.ts';
import { DEFAULT_STATE, describeStateLocation, openStateStore } from './state/open-state-store.ts';

/** Where `register serve` reads the admin token (a flag's value would show in `ps`). */
export const ADMIN_TOKEN_ENV = 'REGISTER_ADMIN_TOKEN';

/** Options of startRuntime. */
export interface RuntimeOptions {
  /** A local dist folder, or the http(s) base URL of a mirror of its public part (default `dist`). */
  dist?: string;
  /** Local dist folder holding the private part (notices); default: `dist` when it is local, else none. */
  privateDist?: string | null;
  /** Keys file (default `keys.json`), or `state`: the keys live in the state store (`register keys … --state URL`). */
  keys?: string;
  /** Serve this compiled stamp on both namespaces instead of what index.json points at (previewing it). Default none. */
  stamp?: string;
  /**
   * Trusted signing keys (`serve --trust`): serve only an index.json and stamps signed by one of them, unexpired and
   * not older than what was served (docs/integrity.md, "Signatures"). Default none: signatures are not read.
   */
  trust?: TrustedKeys;
  /** With trust: where the rollback mark persists. Default: beside a local dist, or in the --state folder (openServeMarks). */
  trustMarks?: MarkStore;
  /** The state store: `sqlite:PATH`, a folder (its `register.db`), `redis://…` or `memory:`. Default `.state`. */
  state?: string;
  /** A read-only mirror: acknowledgements answer 503; quota is kept in the state store like on any instance. Default false. */
  readOnly?: boolean;
  /** Check a SQLite state database's integrity before serving. Default true (a `--workers` worker: false). */
  checkState?: boolean;
  port?: number;
  host?: string;
  clock?: Clock;
  /**
   * The caches' one memory budget in bytes (`serve --cache-mib`), divided among them by release/cache-budget.ts's
   * rule. Default DEFAULT_CACHE_MIB MiB.
   */
  cacheBudgetBytes?: number;
  /** Bucket cache across families and releases, in bytes: overrides its share of the budget. */
  cacheBytes?: number;
  /** Entity shard cache across releases, in bytes: overrides its share of the budget (0 keeps none). */
  shardCacheBytes?: number;
  /** Finished answers kept across releases, in bytes: overrides their share of the budget (0 keeps none). */
  bodyCacheBytes?: number;
  maxBodyBytes?: number;
  /** What GET /key tells the holder of an expiring key about extending it. Default DEFAULT_KEY_EXTENSION. */
  keyExtension?: KeyExtension;
  /**
   * The secret that signs /matches cursors (at least 32 characters), the same on every instance; `register serve`
   * takes it from REGISTER_CURSOR_SECRET or --cursor-secret-file. Without it /matches answers 503. Default none.
   */
  cursorSecret?: string | null;
  /** Largest /matches page in bytes (default 262,144; tests set it lower). */
  matchPageBytes?: number;
  /** Structured log for access lines and server-side failures (runtime/ops/logger.ts). Default none. */
  logger?: Logger | null;
  /** Write one access-log line per request to `logger`. Default true when a logger is given. */
  accessLog?: boolean;
  /** Serve the explorer at `/` and the API reference at `/docs` from this built pages folder; null serves neither. Default build/pages. */
  pages?: string | null;
  /** Where plain start-up and state lines go. Default stderr. */
  log?: (line: string) => void;
  /**
   * The admin token (at least 32 characters): opens the admin routes (`/_admin/keys`, routes/admin.ts) over the keys
   * this server serves, so `register keys … --edge URL` manages them as at the edge. `register serve` takes it from
   * $REGISTER_ADMIN_TOKEN. Default none: the admin routes answer 503 admin_disabled.
   */
  adminToken?: string | null;
  /** Overrides for tests: a state store or key store built elsewhere (with a `keyStore`, no admin routes). */
  store?: StateStore;
  keyStore?: KeyStore;
  /**
   * Where failures are reported (a damaged file, an origin that is down, a bug), one record each. Default: an error
   * line on `logger` carrying the record's facts, or else the plain line on `log`.
   */
  problems?: ProblemLog;
}

/** Failure records as lines of the structured log when there is one (its facts as fields), else as plain lines. */
function problemLogOf(logger: Logger | null, log: ((line: string) => void) | undefined): ProblemLog {
  if (logger) return ({ level, event, line, file, check }: LogRecord) => logger[level]({ event, ...(file ? { file } : {}), ...(check ? { check } : {}) }, line);
  const plain = log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  return (r) => plain(r.line);
}

/** An opened runtime listening on a socket; close() stops the server, then closes what openRuntime opened. */
export interface Runtime extends OpenedRuntime {
  server: RunningServer;
  url: string;
}

export function isUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

/**
 * The one app over its parts, with no socket (composition.ts composeApp, as the Worker builds it): the API, the
 * operational endpoints, (unless `pages` is null) the pages, and given a `keyRepository` the admin routes over it.
 * `metrics`: the registry the state store was instrumented with (startRuntime); default a new one. `close` releases
 * what it opened itself (the private part's file handles).
 */
export function buildApp(opts: RuntimeOptions & { source: ShardSource; store: StateStore; keyStore: KeyStore; metrics?: RuntimeMetrics; keyRepository?: KeyRepository }): {
  app: App;
  catalog: ReleaseCatalog;
  metrics: RuntimeMetrics;
  close(): Promise<void>;
} {
  const dist = opts.dist ?? 'dist';
  const privateDist = opts.privateDist !== undefined ? opts.privateDist : isUrl(dist) ? null : dist;
  const logger = opts.logger ?? null;
  let catalog: ReleaseCatalog | null = null;
  const metrics = opts.metrics ?? createMetrics(() => catalog, () => opts.keyStore);
  // Notices are read from the local private part only; a mirror never hosts them.
  const privateSource = privateDist ? createFsSource({ root: privateDist }) : null;
  const composed = composeApp({
    source: opts.source,
    privateSource,
    store: opts.store,
    gate: keyStoreGate(opts.keyStore, opts.store),
    pages: opts.pages === null ? null : pageFolder(opts.pages),
    log: opts.problems ?? problemLogOf(logger, opts.log),
    clock: opts.clock,
    metrics,
    observe: observerOf(metrics, logger && (opts.accessLog ?? true) ? logger : null),
    limits: {
      maxBodyBytes: opts.maxBodyBytes, cacheBudgetBytes: opts.cacheBudgetBytes, cacheBytes: opts.cacheBytes, shardCacheBytes: opts.shardCacheBytes, bodyCacheBytes: opts.bodyCacheBytes, matchPageBytes: opts.matchPageBytes,
    },
    cursorSecret: opts.cursorSecret,
    keyExtension: opts.keyExtension,
    catalog: { pin: opts.stamp, trust: opts.trust, trustMarks: opts.trustMarks },
    admin: opts.keyRepository && {
      token: opts.adminToken,
      tokenHint: `start the server with ${ADMIN_TOKEN_ENV} set`,
      keys: repositoryAdminKeys(opts.keyRepository),
      sourceStats: () => (opts.source as { stats?: () => unknown }).stats?.() ?? null,
    },
  });
  catalog = composed.catalog;
  return { app: composed.app, catalog, metrics, close: async () => privateSource?.close() };
}

/** Refuses to start pinned to a stamp the dist does not hold, naming the stamps it does. */
async function checkPinnedStamp(source: ShardSource, stamp: string, dist: string): Promise<void> {
  const bytes = await source.readFile(INDEX_FILE);
  const stamps = bytes ? openIndex(new TextDecoder().decode(bytes)).releases.map((r) => r.stamp) : [];
  if (!stamps.includes(stamp)) {
    throw new RegisterError('serve', `--stamp ${stamp} is not compiled in ${dist}; compiled stamps: ${stamps.length ? stamps.join(', ') : 'none'}`);
  }
}

/** A runtime without a socket: the whole composed app (API, pages, operations) over its opened parts. */
export interface OpenedRuntime {
  app: App;
  metrics: RuntimeMetrics;
  /** Releases the stores, the sources and the log; the app answers nothing reliable after it. */
  close(): Promise<void>;
}

/**
 * Opens everything startRuntime serves (stores, sources, catalog, the composed app) without listening: for a caller
 * that hands the app requests itself (`app.fetch`), as route specs and other Web-standard hosts do.
 */
export async function openRuntime(opts: RuntimeOptions = {}): Promise<OpenedRuntime> {
  // A short token would leave the admin routes closed without saying so at start: refused here, as the edge's CLI does.
  if (typeof opts.adminToken === 'string' && opts.adminToken.length < MIN_ADMIN_TOKEN) {
    throw new RegisterError('serve', `${ADMIN_TOKEN_ENV} must be at least ${MIN_ADMIN_TOKEN} characters`);
  }
  const dist = opts.dist ?? 'dist';
  const log = opts.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const logger = opts.logger ?? null;
  const trustMarks = opts.trust ? (opts.trustMarks ?? (await openServeMarks(dist, isUrl(dist), opts.state ?? DEFAULT_STATE, log))) : undefined;
  const opened = opts.store ? null : await openStateStore(opts.state ?? DEFAULT_STATE, { readOnly: opts.readOnly, check: opts.checkState, log });
  const rawStore = opts.store ?? opened!.store;
  let keyStore: KeyStore;
  // Where the keys are kept, for the admin routes: the key store serves what they write at its next check.
  let keyRepository: KeyRepository | undefined;
  try {
    if (opts.keyStore) keyStore = opts.keyStore;
    else if (opts.keys === 'state') {
      if (!opened) throw new RegisterError('keys', '--keys state needs the state store opened from --state');
      keyRepository = keyRepositoryFor(opened, describeStateLocation(opened.location));
      keyStore = await openRepositoryKeyStore({ repository: keyRepository, log });
    } else {
      keyStore = openKeyStore({ file: opts.keys ?? 'keys.json', log });
      keyRepository = fileKeyRepository(opts.keys ?? 'keys.json');
    }
  } catch (e) {
    await rawStore.close();
    throw e;
  }
  // One problem log for the origin's outage lines and the catalog's (buildApp would make the same one again).
  const problems = opts.problems ?? problemLogOf(logger, opts.log);
  const source = isUrl(dist) ? createHttpSource({ baseUrl: dist, log: problems }) : createFsSource({ root: dist });
  let catalog: ReleaseCatalog | null = null;
  const metrics = createMetrics(() => catalog, () => keyStore);
  // The store writes one line when it stops answering and one when it answers again (to `log`), not one per request.
  const store = instrumentStore(rawStore, metrics);
  const built = buildApp({ ...opts, trustMarks, problems, source, store, keyStore, metrics, keyRepository });
  catalog = built.catalog;
  const app = built.app;
  const close = async (): Promise<void> => {
    await store.close();
    keyStore.close();
    await built.close();
    await source.close();
    // Access lines are buffered (runtime/ops/logger.ts): write out the last of them before the process exits.
    if (logger) await new Promise<void>((resolve) => logger.flush(() => resolve()));
  };
  try {
    if (opts.stamp !== undefined) await checkPinnedStamp(source, opts.stamp, dist);
  } catch (e) {
    await close();
    throw e;
  }
  return { app, metrics, close };
}

/** openRuntime, served over HTTP by the Node adapter. */
export async function startRuntime(opts: RuntimeOptions = {}): Promise<Runtime> {
  const opened = await openRuntime(opts);
  let server: RunningServer;
  try {
    // What the adapter cannot explain goes where the app's failures go.
    const log = opts.problems ?? problemLogOf(opts.logger ?? null, opts.log);
    server = await listen(opened.app, { port: opts.port ?? 8787, host: opts.host ?? '127.0.0.1', maxBodyBytes: opts.maxBodyBytes, log });
  } catch (e) {
    await opened.close();
    throw e;
  }
  return {
    app: opened.app,
    server,
    url: server.url,
    metrics: opened.metrics,
    async close() {
      await server.close();
      await opened.close();
    },
  };
}
