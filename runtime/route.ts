// What a route is: a path template, whether it needs a key, its operation in the contract, and a handler in two:
// `prepare` validates (400s cost nothing) and says the cost; `run` does the lookup once the cost is charged. The
// API's lookups, the operational endpoints and the pages for people are all routes of this one shape.
import type { Namespace } from '../common/ids.ts';
import type { NoticeBatch } from '../common/dist-layout.ts';
import type { ApiError } from './api-error.ts';
import type { RouteOperation } from './contract/http-parts.ts';
import type { Clock, KeyRecord, MaybePromise, StateStore } from './interfaces.ts';
import type { Release } from './release/open-release.ts';
import type { ReleaseCatalog } from './release/catalog.ts';

/**
 * A response body: text, bytes, or bytes in pieces sent one after another (a large batch, so its answer is never
 * held twice: once in pieces and once joined).
 */
export type Body = string | Uint8Array | Uint8Array[] | null;

/** A response a handler produced: status, exact body bytes or text, and extra headers. */
export interface Reply {
  status: number;
  body: Body;
  headers?: Record<string, string>;
  /** Lookups of the charge to refund: a batch's items that could not be answered (each a 503 in place). */
  refund?: number;
}

/**
 * The part of a Web `Request` the app reads. A Web Request is one; an adapter may hand over a lighter object of this
 * shape (node-adapter.ts: building an undici Request per call was a measurable share of each lookup).
 */
export interface AppRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: { get(name: string): string | null };
  arrayBuffer(): Promise<ArrayBuffer>;
}

export interface RequestContext {
  request: AppRequest;
  method: string;
  ns: Namespace;
  /** The path as sent (percent-escapes kept), without the query. */
  pathname: string;
  /** Decoded path parameters. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The release this namespace serves (null only for routes that allow it). */
  release: Release;
  /**
   * The authenticated key; null on a route without auth, and on a costing route, whose key is checked in the call that
   * charges it, after prepare() (Gate.enter): a costing route does not read it.
   */
  key: KeyRecord | null;
  now: number;
  services: Services;
}

export interface Services {
  catalog: ReleaseCatalog;
  store: StateStore;
  clock: Clock;
  /** The private notice batch of `stamp` for `provider`, checked (local disk only), or null when there is none. */
  readNotices(stamp: string, provider: string): Promise<NoticeBatch | null>;
  /**
   * The answer to a failure, for a route that answers it in place (a batch item): the core's one mapping from
   * errors to ApiError, which also writes the failure's log line (runtime/app.ts).
   */
  failure(e: unknown): ApiError;
  /** Readiness and metrics, for the operational routes (ops/). */
  operations: Operations;
  /** The built pages' files, for the page routes (pages/); null when the server shows no pages. */
  pages: PageFiles | null;
}

/** Why the server is not ready to serve the API, or null when it is; and the stamp it serves, once loaded. */
export interface Readiness {
  notReady: string | null;
  stamp: string | null;
}

export interface Operations {
  readiness(): Promise<Readiness>;
  /** The metrics in the Prometheus text format, and its content type. */
  metrics(): Promise<{ type: string; text: string }>;
}

/**
 * Where the page routes read their files (index.html, docs.html, assets/<name>): a folder on Node
 * (pages/page-folder.ts), bundled assets at the edge. Null: no such file.
 */
export interface PageFiles {
  read(name: string): Promise<Uint8Array | null>;
  /** Where `name` was looked for, for the message that says the pages are not built. */
  location(name: string): string;
}

export interface Prepared {
  /**
   * A lookup whose data is ready answers without a promise (MaybePromise, runtime/interfaces.ts); the core awaits
   * it inside one try, so it may throw as well as reject.
   */
  run(): MaybePromise<Reply>;
}
/** What a route whose cost is `per_item` (the batch) prepares: the lookups this request costs once validated. */
interface PreparedPerItem extends Prepared {
  cost: number;
}

/** A route as its module declares it: where it answers, what the document says of it, and its handler. */
/**
 * Where a route answers and which rules frame it. `api`: under each namespace (/api/v1, /api/next), with the CORS
 * headers, the release stamp, the URL cap, the key and the quota as the route declares. `operations`, `pages` and
 * `admin`: at the server root, for operators, for people and for the holder of the admin token, framed by nothing
 * but their own headers; a page path asked with another method is an unknown path (pages are documented apart from
 * the API's paths, under `x-pages`); the admin routes are left out of the published document (routes/admin.ts).
 */
export type Scope = 'api' | 'operations' | 'pages' | 'admin';

interface RouteSpec {
  method: 'GET' | 'POST';
  /** Template relative to the namespace, e.g. `/entities/{reep_id}/bridges`; from the server root outside `api`. */
  path: string;
  /** Default `api`. */
  scope?: Scope;
  auth: boolean;
  /** The operation as the OpenAPI document states it (runtime/contract/document.ts assembles them). */
  operation: RouteOperation;
  /** Routes that answer without a compiled release (the OpenAPI document). */
  noRelease?: boolean;
  /**
   * The 200 body is a function of the release and the request alone (never of the key): it gets a strong ETag
   * derived from both (response-headers.ts derivedEtag), and a matching If-None-Match answers 304.
   */
  perStamp?: boolean;
  /**
   * The key may also come as the `key` query parameter when no Authorization header is sent: the reconciliation
   * routes only (routes/reconcile.ts), since OpenRefine cannot send headers to a reconciliation service. The access
   * log writes the path without the query (ops/operations.ts), so that key is logged nowhere.
   */
  queryKey?: boolean;
  /**
   * A request this route answers without a key and at no cost, decided from the query before the key is asked for:
   * the reconciliation service's manifest (GET /reconcile without `queries`), which its spec says needs no credentials.
   */
  keyless?(query: URLSearchParams): boolean;
  /** The cost is the operation's (declared once, in the document); only a `per_item` route says it per request. */
  prepare(c: RequestContext): MaybePromise<Prepared & { cost?: number }>;
}

export interface RouteDef extends RouteSpec {
  /** Costing routes go through the rate limit and the quota: those whose operation costs lookups. */
  costing: boolean;
  /** Lookups a request costs once prepared: the operation's number, or (per_item) what prepare() counted. */
  costOf(prepared: Prepared & { cost?: number }): number;
}

type FixedCost = Omit<RouteSpec, 'operation' | 'prepare'> & {
  operation: RouteOperation & { cost: number };
  prepare(c: RequestContext): MaybePromise<Prepared & { cost?: never }>;
};
type PerItemCost = Omit<RouteSpec, 'operation' | 'prepare'> & {
  operation: RouteOperation & { cost: 'per_item' };
  prepare(c: RequestContext): MaybePromise<PreparedPerItem>;
};

/** A route from its one declaration: its cost in the document decides whether it is rate-limited and charged. */
export function defineRoute(spec: FixedCost | PerItemCost): RouteDef {
  const cost = spec.operation.cost;
  return {
    ...spec,
    costing: cost !== 0,
    costOf: typeof cost === 'number' ? () => cost : (prepared) => prepared.cost!,
  };
}
