// The router core: a Web-standard `fetch(Request) → Response` over one route table: the API under each namespace,
// and the operational endpoints and the pages at the server root (route.ts `scope`). A request goes through one
// declared list of steps (STEPS below), in the contract's order of checks (auth 401 → validation 400 → rate 429 →
// quota 402 → charged lookup). Every failure becomes its answer in one place (ApiError's errorReply, framed here
// with the request's headers), with one log line, and a charge whose request then failed (5xx) is refunded.
// Nothing here touches node:http; runtime/node-adapter.ts does.
import { NAMESPACES, type Namespace } from '../common/ids.ts';
import { ApiError, errorReply } from './api-error.ts';
import { isPromise, systemClock, StateUnavailableError, type Admission, type AuthResult, type Clock, type Gate, type KeyAdmission, type KeyRecord, type MaybePromise, type StateStore } from './interfaces.ts';
import type { ReleaseCatalog } from './release/catalog.ts';
import type { Release } from './release/open-release.ts';
import type { AppRequest, Body, Operations, PageFiles, Prepared, Reply, RequestContext, RouteDef, Scope, Services } from './route.ts';
import { quotaPeriod, quotaPeriodEnd } from './state/quota-period.ts';
import { pathAsSent, requestTarget } from './request-target.ts';
import { ArtefactError, UpstreamError, UntrustedError } from './read-errors.ts';
import { keyExpiryHeaders } from './keys/key-expiry.ts';
import { corsHeaders, matchesEtag, perStampEtag, preflightHeaders, rateLimitHeaders } from './response-headers.ts';
import { stderrProblemLog, type ProblemLog } from './problem-log.ts';
import type { AuthErrorCode } from './contract/error-codes.ts';
import { MAX_PATH_PARAMETER_CHARS, MAX_URL_CHARS } from '../common/request-limits.ts';

/** Options of createApp. */
export interface AppOptions {
  catalog: ReleaseCatalog;
  /** Who may ask, and whether a costing request may go ahead (interfaces.ts Gate). */
  gate: Gate;
  store: StateStore;
  /** Every route: the API's, the operational endpoints, the pages and the admin routes (composition.ts). */
  routes: RouteDef[];
  /** What the operational routes read (ops/operations.ts). */
  operations: Operations;
  /** The pages' files; null or absent: the page routes answer 503. */
  pages?: PageFiles | null;
  /** Called once per answer, for metrics and the access log (ops/operations.ts observerOf). Default none. */
  observe?: Observer;
  /** Default: the system clock. */
  clock?: Clock;
  /** Reads a private notice batch (see Services.readNotices); default: none (notices feed is empty). */
  readNotices?: Services['readNotices'];
  /** Largest accepted request body in bytes (default 256 KiB); larger is 413. */
  maxBodyBytes?: number;
  /**
   * Where failures are reported, one record per failed answer (a damaged file, an origin that is down, a bug) naming
   * the file or URL and the check; never a key. Default: each record's line on stderr.
   */
  log?: ProblemLog;
  /**
   * A platform in front of the app codes the bodies it sends (the edge's front end): App.fetch's Responses then name
   * Accept-Encoding in Vary and state their identity length, as the Node adapter's coded answers do (toResponse).
   * Default false.
   */
  codedAhead?: boolean;
}

/** Sees every answer once it is made: the request, the answer, and the seconds it took. */
export type Observer = (request: AppRequest, answer: Answer, seconds: number) => void;

export interface App {
  /** The Web-standard entry: any runtime that speaks Request and Response can serve the API through it. */
  fetch(request: Request): Promise<Response>;
  /**
   * The same answer before it is wrapped in a Response, for adapters that write bytes themselves (node-adapter.ts):
   * building an undici Response (and its body stream) per request was ~10% of an entity lookup's CPU.
   */
  answer(request: AppRequest): Promise<Answer>;
  readonly routes: RouteDef[];
}

/** A finished answer: status, headers (lower-case names) and the exact body bytes or text, maybe in pieces (null: no body). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Body;
  /** For the access log and metrics, never sent: the authenticated key's ID, the matched route template, an error's code. */
  keyId?: string | null;
  route?: string | null;
  error?: string;
  /**
   * Present when this answer charged lookups: gives them back, at most once. For an adapter that could not deliver
   * the answer (its client closed the connection first): nobody pays for an answer they did not get.
   */
  giveBack?: () => Promise<void>;
  /**
   * A HEAD answer's untransmitted body: what the GET would send. An adapter that codes bodies needs it to state the
   * GET's headers exactly (its Content-Encoding, coded ETag and coded length).
   */
  omitted?: Exclude<Body, null>;
}

/** What the rate-limit and credit headers of a costing answer are made from (see finish). */
interface Meter {
  key: KeyRecord;
  now: number;
  credits: number | null;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** The protection space named in WWW-Authenticate. */
const REALM = 'identity-register';
/** Marks a path parameter that is not valid percent-encoding, too long or holds NUL; refused after auth. */
const BAD_PARAM = '\u0000bad';

interface CompiledRoute {
  def: RouteDef;
  segments: (string | { param: string })[];
}

/** One request on its way through the steps: what each step learns, for the steps after it. */
interface Exchange {
  request: AppRequest;
  head: boolean;
  /** The answer's headers so far; errors are answered with them too. */
  headers: Record<string, string>;
  pathname: string;
  query: URLSearchParams;
  /** The path's segments after the namespace (under /api), or all of them (at the root). */
  segments: string[];
  ns: Namespace | null;
  release: Release | null;
  /** Why the release could not be opened, thrown if the route needs it. */
  unavailable: unknown;
  def: RouteDef | null;
  /** The route's frame: the API's (CORS, stamp, URL cap, key) or the root's (nothing but the route's own headers). */
  api: boolean;
  params: Record<string, string>;
  now: number;
  key: KeyRecord | null;
  /** The key is to be checked in the call that charges the request (Gate.enter). */
  keyLater: boolean;
  costing: boolean;
  prepared: Prepared | null;
  credits: number | null;
  /** Lookups charged to `key` in `period` and not refunded yet: returned if the answer turns out a 5xx. */
  charged: number;
  period: string;
  reply: Reply | null;
  /** Set by a step that answers on its own (a preflight): the steps after it are skipped. */
  answered: Answer | null;
}

/** A step: learns something about the exchange, or refuses it by throwing an ApiError. Sync steps cost no await. */
type Step = (x: Exchange) => void | Promise<void>;

export function createApp(opts: AppOptions): App {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? stderrProblemLog;
  const observe = opts.observe ?? null;
  const codedAhead = opts.codedAhead ?? false;

  /**
   * What a client is told for a failure, and the one log line about it. Domain errors carry the file or URL and the
   * check for the log; the answer names neither (a wrong ID's `detail` at most).
   */
  function failure(e: unknown): ApiError {
    if (e instanceof ApiError) return e;
    if (e instanceof ArtefactError) {
      // A refused signature is logged once by the catalog when it refuses it.
      if (!(e instanceof UntrustedError)) log({ level: 'error', event: 'artefact_corrupt', line: `[serve] artefact_corrupt: ${e.file}: ${e.check}`, file: e.file, check: e.check });
      return new ApiError(503, 'artefact_corrupt', 'A compiled artefact this answer needs failed its integrity check; nothing was charged.', e.subject === undefined ? {} : { detail: e.subject });
    }
    if (e instanceof UpstreamError) {
      // An outage of the origin is logged by its source, once when it starts and once when it ends.
      if (!e.outage) log({ level: 'error', event: 'upstream_unavailable', line: `[serve] upstream_unavailable: ${e.url}: ${e.reason}`, file: e.url, check: e.reason });
      return new ApiError(503, 'upstream_unavailable', "The mirror's origin cannot be reached right now; nothing was charged.");
    }
    if (e instanceof StateUnavailableError) return new ApiError(503, 'state_unavailable', 'The state store cannot record this request right now; nothing was charged.');
    log({ level: 'error', event: 'internal_error', line: `[serve] internal error: ${(e as Error)?.stack ?? String(e)}` });
    return new ApiError(500, 'internal_error', 'The server failed to answer this request.');
  }

  /** Refunds `cost` lookups charged in `period`: nobody pays for a server error. Returns the credits after it. */
  async function giveBack(key: KeyRecord, period: string, cost: number, credits: number | null): Promise<number | null> {
    try {
      await opts.store.refund(key.id, period, cost);
      return credits === null ? null : Math.min(key.quota, credits + cost);
    } catch (e) {
      log({ level: 'error', event: 'refund_failed', line: `[serve] refund_failed: ${cost} lookup(s) of key ${key.id} in ${period} not refunded: ${(e as Error)?.message ?? String(e)}` });
      return credits;
    }
  }

  const services: Services = {
    catalog: opts.catalog,
    store: opts.store,
    clock,
    readNotices: opts.readNotices ?? (async () => null),
    failure,
    operations: opts.operations,
    pages: opts.pages ?? null,
  };
  const compile = (def: RouteDef): CompiledRoute => ({ def, segments: def.path.split('/').slice(1).map((s) => (s.startsWith('{') ? { param: s.slice(1, -1) } : s)) });
  const apiRoutes = opts.routes.filter((r) => (r.scope ?? 'api') === 'api').map(compile);
  const rootRoutes = opts.routes.filter((r) => (r.scope ?? 'api') !== 'api').map(compile);

  /** The order of concerns, each a step; a refusal (a throw) skips the rest and is answered by `refused`. */
  const STEPS: readonly Step[] = [
    function namespace(x) {
      const { pathname, query } = requestTarget(x.request.url);
      x.pathname = pathname;
      x.query = query;
      const segs = pathname.split('/');
      // ['', 'api', 'v1', ...rest]
      x.ns = (NAMESPACES as readonly string[]).includes(segs[2]) && segs[1] === 'api' ? (segs[2] as Namespace) : null;
      // The root's paths are matched as sent: `/api/..` is no way to the explorer, nor `/x/../healthz` to health.
      if (x.ns === null) x.pathname = pathAsSent(x.request.url);
      x.segments = x.ns ? segs.slice(3) : x.pathname.split('/').slice(1);
      if (x.segments.length === 0) x.segments.push('');
    },
    function release(x) {
      // Every answer names the stamp it was made from once a release is loaded, errors included.
      const served = opts.catalog.forNamespace(x.ns ?? 'v1');
      // Nearly always at once: awaiting only a pending release spares each request a microtask hop.
      if (!isPromise(served)) return void stamp(x, served);
      return served.then(
        (r) => stamp(x, r),
        (e: unknown) => void (x.unavailable = e),
      );
    },
    function preflight(x) {
      // A CORS preflight is answered before auth and costs nothing: the browser sends it without the key.
      if (x.ns === null || x.request.method !== 'OPTIONS' || x.request.headers.get('access-control-request-method') === null) return;
      const { allowed } = match(apiRoutes, x.segments, '');
      if (allowed.length === 0) throw new ApiError(404, 'not_found', 'No such path.');
      delete x.headers['content-type'];
      x.answered = { status: 204, headers: { ...x.headers, ...preflightHeaders(allowed) }, body: null };
    },
    function route(x) {
      // HEAD is GET without the body: the same route, checks, charge and headers (see finish).
      const { route, params, allowed, scope } = match(x.ns ? apiRoutes : rootRoutes, x.segments, x.head ? 'GET' : x.request.method);
      if (route) {
        x.def = route;
        x.params = params;
        if (scope !== 'api') {
          x.api = false;
          x.headers = { 'content-type': JSON_TYPE };
        }
        return;
      }
      // A page path asked with another method is no path at all: the pages are not part of the API's paths.
      if (allowed.length && scope !== 'pages') {
        if (scope === 'operations' || scope === 'admin') x.headers = { 'content-type': JSON_TYPE };
        throw new ApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} on this path.`, { headers: { allow: allowed.join(', ') } });
      }
      throw new ApiError(404, 'not_found', x.ns ? 'No such path.' : 'No such path; the API lives under /api/v1 and /api/next.');
    },
    function urlCap(x) {
      // After routing, so an unknown path is a 404 whatever its length; before anything reads the parameters.
      if (x.api && x.request.url.length > MAX_URL_CHARS) throw new ApiError(414, 'uri_too_long', `The request URL is longer than ${MAX_URL_CHARS} characters.`);
    },
    function releaseNeeded(x) {
      // A release that exists but cannot be opened (damaged, or its mirror's origin is down) answers why, 503 either way.
      if (!x.release && !x.def!.noRelease) throw x.unavailable ?? new ApiError(503, 'index_unavailable', 'No compiled release is available for this namespace yet.');
    },
    function auth(x) {
      const def = x.def!;
      x.now = clock.now();
      if (!def.auth || def.keyless?.(x.query)) {
        if (x.api) x.headers['cache-control'] = 'no-cache';
        return;
      }
      // A costing request's key is checked in the call that charges it (Gate.enter), after the validation steps, by
      // `admitting`, or by `keyFirst` if they refuse it: one call either way, on every platform.
      if (def.costing) return void (x.keyLater = true);
      // A gate may have to ask elsewhere (the edge's): only then is this step awaited.
      const checked: MaybePromise<AuthResult> = opts.gate.check(authorizationOf(x), new Date(x.now));
      if (!isPromise(checked)) return void admitKey(x, def, checked);
      return checked.then((r) => admitKey(x, def, r));
    },
    function parameters(x) {
      // A malformed path parameter is a 400, but only once the key is known (the order of checks).
      if (!x.api) return;
      for (const [name, v] of Object.entries(x.params)) {
        if (v === BAD_PARAM) throw new ApiError(400, 'invalid_parameter', `Path parameter ${name} is not valid: bad percent-encoding, NUL, or over ${MAX_PATH_PARAMETER_CHARS} characters.`);
      }
    },
    function prepare(x) {
      const ctx: RequestContext = {
        request: x.request, method: x.request.method, ns: x.ns ?? 'v1', pathname: x.pathname, params: x.params, query: x.query, release: x.release!, key: x.key, now: x.now, services,
      };
      const prepared = x.def!.prepare(ctx);
      if (!isPromise(prepared)) return void (x.prepared = prepared);
      return prepared.then((p) => void (x.prepared = p));
    },
    function admitting(x) {
      if (x.keyLater) return checkAndCharge(x);
    },
    function run(x) {
      const reply = x.prepared!.run();
      if (!isPromise(reply)) return void (x.reply = reply);
      return reply.then((r) => void (x.reply = r));
    },
    function refund(x) {
      // A 5xx costs nothing; a batch answered whole refunds its items that could not be answered.
      const back = x.reply!.status >= 500 ? x.charged : Math.min(x.charged, x.reply!.refund ?? 0);
      if (back <= 0) return;
      x.charged = 0;
      return giveBack(x.key!, x.period, back, x.credits).then((credits) => void (x.credits = credits));
    },
    function revalidate(x) {
      const reply = x.reply!;
      if (reply.status !== 200) return;
      // A 304 is decided after the lookup, so it is never given for an answer that would not have been this 200;
      // on a costing route it is charged like the 200 (the lookup was made).
      const def = x.def!;
      const etag = reply.headers?.etag ?? (def.perStamp ? perStampEtag(x.release!.answerScope, x.release!.manifestSha256, def.path, x.request.url, x.params, x.query) : undefined);
      if (etag === undefined) return;
      x.headers.etag = etag;
      if (matchesEtag(x.request.headers.get('if-none-match'), etag)) x.reply = { status: 304, body: null, headers: reply.headers };
    },
  ];

  /** The key check, the rate limit and the quota in one call (Gate.enter): refused in that order, a refusal charging nothing. */
  async function checkAndCharge(x: Exchange): Promise<void> {
    x.keyLater = false;
    const cost = x.def!.costOf(x.prepared!);
    x.period = quotaPeriod(x.now);
    const r = await checkKey(x, x.period, cost);
    admitKey(x, x.def!, r);
    // A 429's credits, which `refused` would otherwise ask the store for.
    if (r.admission?.charge === null) x.credits = r.remaining;
    settle(x, r.key, cost, r.admission!);
  }

  /** The request's key checked and, given a cost, the request admitted, in one call (Gate.enter). */
  function checkKey(x: Exchange, period: string, cost: number | null): Promise<KeyAdmission> {
    return opts.gate.enter(authorizationOf(x), new Date(x.now), period, cost);
  }

  /**
   * The refusal of a request whose key was to be checked with its charge: the key is checked first, charging
   * nothing, so a bad key is 401 before any 400, as when the key is checked before the validation steps.
   */
  async function keyFirst(x: Exchange, refusal: unknown): Promise<ApiError> {
    x.keyLater = false;
    try {
      const r = await checkKey(x, quotaPeriod(clock.now()), null);
      admitKey(x, x.def!, r);
      x.credits = r.remaining;
    } catch (e) {
      return failure(e);
    }
    return failure(refusal);
  }

  /** What an admission means for the request: 429, 402, or its lookups charged. */
  function settle(x: Exchange, key: KeyRecord, cost: number, { wait, charge }: Admission): void {
    const now = x.now;
    if (charge === null) {
      throw new ApiError(429, 'rate_limited', `More than ${key.rate} costing request(s) in one second.`, {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) },
      });
    }
    x.credits = charge.remaining;
    if (!charge.ok) throw quotaError(key.quota, charge.remaining, cost, now);
    x.charged = cost;
  }

  function admitKey(x: Exchange, def: RouteDef, auth: AuthResult): asserts auth is { ok: true; key: KeyRecord } {
    if (!auth.ok) throw authError(auth.code);
    x.key = auth.key;
    x.costing = def.costing;
    // On every answer to this key from here on, errors included, so a client can warn before the key expires.
    if (auth.key.expires_at !== null) keyExpiryHeaders(auth.key, x.now, x.headers);
    x.headers['cache-control'] = 'private, no-cache';
  }

  function stamp(x: Exchange, release: Release | null): void {
    x.release = release;
    if (release) x.headers['x-register-release-stamp'] = release.stamp;
  }

  async function answerOf(request: AppRequest): Promise<Answer> {
    const t0 = observe ? performance.now() : 0;
    const headers: Record<string, string> = { 'content-type': JSON_TYPE };
    corsHeaders(headers);
    const x: Exchange = {
      request, head: request.method === 'HEAD', headers, pathname: '', query: EMPTY_QUERY, segments: [], ns: null, release: null, unavailable: null,
      def: null, api: true, params: {}, now: 0, key: null, keyLater: false, costing: false, prepared: null, credits: null, charged: 0, period: '', reply: null, answered: null,
    };
    let answer: Answer;
    try {
      for (const step of STEPS) {
        const pending = step(x);
        if (pending) await pending;
        if (x.answered) break;
      }
      answer = x.answered ?? undeliverable(x, finish(x.reply!, x.headers, meterOf(x), x.head));
    } catch (e) {
      answer = await refused(x, x.keyLater ? await keyFirst(x, e) : failure(e));
    }
    answer.keyId = x.key?.id ?? null;
    answer.route = x.def?.path ?? null;
    if (observe) observe(request, answer, (performance.now() - t0) / 1000);
    return answer;
  }

  /** The answer to a refusal or failure, with the headers learnt so far; what it still held charged is refunded. */
  async function refused(x: Exchange, err: ApiError): Promise<Answer> {
    if (err.status >= 500 && x.charged > 0) {
      const back = x.charged;
      x.charged = 0;
      x.credits = await giveBack(x.key!, x.period, back, x.credits);
    }
    if (x.costing && x.key && x.credits === null) x.credits = await safeRemaining(opts.store, x.key, clock);
    // A tombstone stub is the release's answer, cached like a 200 (ApiError.stub); any other error is not kept.
    if (err.status >= 400 && err.stub === undefined) x.headers['cache-control'] = 'no-store';
    const answer = undeliverable(x, finish(errorReply(err), x.headers, meterOf(x), x.head));
    answer.error = err.code;
    return answer;
  }

  /** `a`, able to refund what this request still holds charged, should it never reach the client. */
  function undeliverable(x: Exchange, a: Answer): Answer {
    if (x.charged > 0 && x.key) {
      const [k, p, cost] = [x.key, x.period, x.charged];
      let given = false;
      a.giveBack = async () => {
        if (given) return;
        given = true;
        await giveBack(k, p, cost, null);
      };
    }
    return a;
  }

  return {
    fetch: async (request) => toResponse(await answerOf(request), codedAhead),
    answer: answerOf,
    routes: opts.routes,
  };
}

const EMPTY_QUERY = new URLSearchParams();

/**
 * The request's credentials: its Authorization header, or on a route that allows it (route.ts `queryKey`) and when
 * no header is sent, the `key` query parameter, read as the bearer token it stands for.
 */
function authorizationOf(x: Exchange): string | null {
  const header = x.request.headers.get('authorization');
  if (header !== null || !x.def?.queryKey) return header;
  const key = x.query.get('key');
  return key === null ? null : `Bearer ${key}`;
}

function meterOf(x: Exchange): Meter | null {
  return x.costing && x.key ? { key: x.key, now: x.now, credits: x.credits } : null;
}


/**
 * The one writer of a Web Response from an answer (App.fetch: route specs, the Worker, any Web-standard host): its
 * status, headers and bytes as the Node adapter writes them; a HEAD answer states its GET's headers without the body.
 * `codedAhead` (the edge): the platform in front codes the body to what the client accepts (Cloudflare's front end,
 * and miniflare's entry worker, which does as it does, hand the Worker `Accept-Encoding: br, gzip` whatever the client
 * sent), so the app answers identity, names Accept-Encoding in Vary on every answer with a body or standing for one,
 * as Node does, and states the identity length; a client that sends no Accept-Encoding gets Node's bytes and headers
 * exactly (docs/edge.md, "Compression").
 */
function toResponse(a: Answer, codedAhead = false): Response {
  let body = a.body;
  if (codedAhead) {
    const out = a.headers;
    // Text as its bytes, so the platform adds no type of its own to a body sent without one.
    if (typeof body === 'string') body = utf8.encode(body);
    const stated = body ?? a.omitted ?? null;
    if (a.status !== 204) out.vary = out.vary ? `${out.vary}, Accept-Encoding` : 'Accept-Encoding';
    if (stated !== null) out['content-length'] = String(bodyLength(stated));
    else if (a.status !== 304 && a.status !== 204 && out['content-length'] === undefined) out['content-length'] = '0';
  }
  return new Response((Array.isArray(body) ? new Blob(body as BlobPart[]) : body) as BodyInit | null, { status: a.status, headers: a.headers });
}

/** The byte length of a body. */
export function bodyLength(body: Exclude<Body, null>): number {
  if (typeof body === 'string') return utf8.encode(body).length;
  if (!Array.isArray(body)) return body.length;
  let n = 0;
  for (const piece of body) n += piece.length;
  return n;
}

const utf8 = new TextEncoder();

/** The answer from a reply: the base headers, the route's own, and for a costing request its credit and rate headers. */
function finish(reply: Reply, base: Record<string, string>, meter: Meter | null, head: boolean): Answer {
  const headers = reply.headers ? { ...base, ...reply.headers } : base;
  if (meter) {
    if (meter.credits !== null) headers['x-register-credits-remaining'] = String(meter.credits);
    const retry = reply.status === 429 && headers['retry-after'] !== undefined ? Number(headers['retry-after']) : null;
    rateLimitHeaders(meter.key, meter.credits, meter.now, retry, headers);
  }
  if (reply.status === 304 || reply.body === null) {
    delete headers['content-type'];
    return { status: reply.status, headers, body: null };
  }
  const answer = { status: reply.status, headers, body: reply.body };
  return head ? headOf(answer) : answer;
}

/**
 * `a` as the answer to a HEAD: what GET would answer, headers included (the body's type and length), without the
 * body, which is kept aside as `omitted` for an adapter that codes bodies.
 */
function headOf(a: Answer): Answer {
  if (a.body === null) return a;
  a.headers['content-length'] = String(bodyLength(a.body));
  a.omitted = a.body;
  a.body = null;
  return a;
}

async function safeRemaining(store: StateStore, key: KeyRecord, clock: Clock): Promise<number | null> {
  try {
    return await store.remaining(key.id, quotaPeriod(clock.now()), key.quota);
  } catch {
    return null;
  }
}

/**
 * The 402 of a request that needs `cost` lookups when `remaining` are left of `quota`: used up, or not enough for a
 * batch; `detail` is when the allowance resets (an ISO date-time), for a client to wait until.
 */
function quotaError(quota: number, remaining: number, cost: number, now: number): ApiError {
  const detail = new Date(quotaPeriodEnd(now)).toISOString();
  const message =
    remaining <= 0
      ? `The monthly allowance of ${quota} lookups is used up; nothing was charged. It resets at ${detail}.`
      : `This request needs ${cost} lookups but only ${remaining} of the monthly allowance of ${quota} remain; nothing was charged. It resets at ${detail}.`;
  return new ApiError(402, 'quota_exceeded', message, { detail });
}

function authError(code: AuthErrorCode): ApiError {
  const messages = {
    missing_key: 'Send Authorization: Bearer <API key>.',
    invalid_key: 'The API key is not valid.',
    revoked_key: 'The API key was revoked.',
    key_expired: 'The API key has expired.',
  };
  // RFC 6750 §3: a request without credentials gets the bare challenge (no error code); a bad token, invalid_token.
  const challenge = code === 'missing_key' ? `Bearer realm="${REALM}"` : `Bearer realm="${REALM}", error="invalid_token"`;
  return new ApiError(401, code, messages[code], { headers: { 'www-authenticate': challenge } });
}

/** The route for `method` at `segs`, its parameters, the methods the path answers and its scope (of its first route). */
function match(routes: CompiledRoute[], segs: string[], method: string): { route: RouteDef | null; params: Record<string, string>; allowed: string[]; scope: Scope | null } {
  const allowed: string[] = [];
  let scope: Scope | null = null;
  let found: RouteDef | null = null;
  let foundParams: Record<string, string> = {};
  for (const r of routes) {
    if (r.segments.length !== segs.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      const s = r.segments[i];
      if (typeof s === 'string') ok = s === segs[i];
      else if (segs[i] === '') ok = false; // `/entities/` is no entity path: an unknown path, 404
      else {
        let v: string;
        try {
          v = decodeURIComponent(segs[i]);
        } catch {
          v = BAD_PARAM;
        }
        if (v.length > MAX_PATH_PARAMETER_CHARS || v.includes('\u0000')) v = BAD_PARAM;
        params[s.param] = v;
      }
    }
    if (!ok) continue;
    scope ??= r.def.scope ?? 'api';
    if (!allowed.includes(r.def.method)) allowed.push(r.def.method);
    if (!found && r.def.method === method) {
      found = r.def;
      foundParams = params;
    }
  }
  return { route: found, params: foundParams, allowed, scope };
}
