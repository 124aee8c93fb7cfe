// The router core: a Web-standard `fetch(Request) → Response`. It matches the route, then applies the contract's
// order of checks (auth 401 → validation 400 → rate 429 → quota 402 → charged lookup) and writes every error
// body from an ApiError. It is the one place where a failure becomes an answer (and a log line), and where a
// charge whose request then failed (5xx) is given back. Nothing here touches node:http; runtime/node-adapter.ts does.
import { NAMESPACES, type Namespace } from '../common/ids.ts';
import { ApiError } from './api-error.ts';
import { isPromise, systemClock, StateUnavailableError, type Clock, type KeyRecord, type KeyStore, type StateStore } from './interfaces.ts';
import type { ReleaseCatalog } from './release/catalog.ts';
import type { Body, RequestContext, Reply, RouteDef, Services } from './route.ts';
import { admit } from './state/admit.ts';
import { quotaPeriod, quotaPeriodEnd } from './state/quota-period.ts';
import { requestTarget } from './request-target.ts';
import { ArtefactError, UpstreamError, UntrustedError } from './read-errors.ts';
import { keyExpiryHeaders } from './keys/key-expiry.ts';
import { corsHeaders, derivedEtag, preflightHeaders, rateLimitHeaders } from './response-headers.ts';
import { matchesEtag } from './routes/changes.ts';
import { stderrProblemLog, type ProblemLog } from './problem-log.ts';
import type { AuthErrorCode } from './contract/error-codes.ts';
import { MAX_PATH_PARAMETER_CHARS, MAX_URL_CHARS } from '../common/request-limits.ts';

/** Options of createApp. */
export interface AppOptions {
  catalog: ReleaseCatalog;
  keys: KeyStore;
  store: StateStore;
  routes: RouteDef[];
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
}

export interface App {
  /** The Web-standard entry: any runtime that speaks Request and Response can serve the API through it. */
  fetch(request: Request): Promise<Response>;
  /**
   * The same answer before it is wrapped in a Response, for adapters that write bytes themselves (node-adapter.ts):
   * building an undici Response (and its body stream) per request was ~10% of an entity lookup's CPU.
   */
  answer(request: Request): Promise<Answer>;
  readonly routes: RouteDef[];
}

/** A finished answer: status, headers (lower-case names) and the exact body bytes or text, maybe in pieces (null: no body). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Body;
  /** For the access log and metrics, never sent: the authenticated key's ID and the matched route template. */
  keyId?: string | null;
  route?: string | null;
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

export function createApp(opts: AppOptions): App {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? stderrProblemLog;

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

  /** Gives back `cost` lookups charged in `period`: nobody pays for a server error. Returns the credits after it. */
  async function giveBack(key: KeyRecord, period: string, cost: number, credits: number | null): Promise<number | null> {
    try {
      await opts.store.refund(key.id, period, cost);
      return credits === null ? null : Math.min(key.quota, credits + cost);
    } catch (e) {
      log({ level: 'error', event: 'refund_failed', line: `[serve] refund_failed: ${cost} lookup(s) of key ${key.id} in ${period} not given back: ${(e as Error)?.message ?? String(e)}` });
      return credits;
    }
  }

  const services: Services = {
    catalog: opts.catalog,
    store: opts.store,
    clock,
    readNotices: opts.readNotices ?? (async () => null),
    failure,
  };
  const compiled: CompiledRoute[] = opts.routes.map((def) => ({
    def,
    segments: def.path.split('/').slice(1).map((s) => (s.startsWith('{') ? { param: s.slice(1, -1) } : s)),
  }));
  async function handle(request: Request): Promise<Answer> {
    const seen: { keyId: string | null; route: string | null } = { keyId: null, route: null };
    const answer = await answerOf(request, seen);
    answer.keyId = seen.keyId;
    answer.route = seen.route;
    return answer;
  }

  /** The answer; `seen` learns the key and the route on the way, for handle(). */
  async function answerOf(request: Request, seen: { keyId: string | null; route: string | null }): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': JSON_TYPE };
    corsHeaders(headers);
    const head = request.method === 'HEAD';
    let now = 0;
    let key: KeyRecord | null = null;
    let costing = false;
    let credits: number | null = null;
    // Lookups charged to `key` in `period` and not given back yet: returned if the answer turns out a 5xx.
    let charged = 0;
    let period = '';
    try {
      const { pathname, query } = requestTarget(request.url);
      const rawSegments = pathname.split('/');
      // ['', 'api', 'v1', ...rest]
      const ns = (NAMESPACES as readonly string[]).includes(rawSegments[2]) && rawSegments[1] === 'api' ? (rawSegments[2] as Namespace) : null;
      // Every answer names the stamp it was made from once a release is loaded, errors included.
      const served = opts.catalog.forNamespace(ns ?? 'v1');
      let unavailable: unknown = null;
      // Nearly always at once: awaiting only a pending release spares each request a microtask hop.
      const release = !isPromise(served)
        ? served
        : await served.catch((e: unknown) => {
            unavailable = e;
            return null;
          });
      if (release) headers['x-register-release-stamp'] = release.stamp;
      if (ns === null) throw new ApiError(404, 'not_found', 'No such path; the API lives under /api/v1 and /api/next.');
      const rest = rawSegments.slice(3);
      if (rest.length === 0) rest.push('');
      // A CORS preflight is answered before auth and costs nothing: the browser sends it without the key.
      if (request.method === 'OPTIONS' && request.headers.get('access-control-request-method') !== null) {
        const { allowed } = match(compiled, rest, '');
        if (allowed.length === 0) throw new ApiError(404, 'not_found', 'No such path.');
        delete headers['content-type'];
        return { status: 204, headers: { ...headers, ...preflightHeaders(allowed) }, body: null };
      }
      // HEAD is GET without the body: the same route, checks, charge and headers (see finish).
      const { route, params, allowed } = match(compiled, rest, head ? 'GET' : request.method);
      if (!route) {
        if (allowed.length) {
          throw new ApiError(405, 'method_not_allowed', `Use ${allowed.join(' or ')} on this path.`, { headers: { allow: allowed.join(', ') } });
        }
        throw new ApiError(404, 'not_found', 'No such path.');
      }
      const def = route;
      seen.route = def.path;
      // After routing, so an unknown path is a 404 whatever its length; before anything reads the parameters.
      if (request.url.length > MAX_URL_CHARS) throw new ApiError(414, 'uri_too_long', `The request URL is longer than ${MAX_URL_CHARS} characters.`);
      // A release that exists but cannot be opened (damaged, or its mirror's origin is down) answers why, 503 either way.
      if (!release && !def.noRelease) throw unavailable ?? new ApiError(503, 'index_unavailable', 'No compiled release is available for this namespace yet.');
      now = clock.now();
      if (def.auth) {
        const auth = opts.keys.authenticate(request.headers.get('authorization'), new Date(now));
        if (!auth.ok) throw authError(auth.code);
        key = auth.key;
        seen.keyId = key.id;
        costing = def.costing;
        // On every answer to this key from here on, errors included, so a client can warn before the key expires.
        keyExpiryHeaders(key, now, headers);
      }
      headers['cache-control'] = def.auth ? 'private, no-cache' : 'no-cache';
      // A malformed path parameter is a 400, but only once the key is known (the order of checks).
      for (const [name, v] of Object.entries(params)) {
        if (v === BAD_PARAM) throw new ApiError(400, 'invalid_parameter', `Path parameter ${name} is not valid: bad percent-encoding, NUL, or over ${MAX_PATH_PARAMETER_CHARS} characters.`);
      }
      const ctx: RequestContext = { request, method: request.method, ns, params, query, release: release!, key, now, services };
      const prepared = await def.prepare(ctx);
      if (costing && key) {
        period = quotaPeriod(now);
        const cost = def.costOf(prepared);
        const { wait, charge } = await admit(opts.store, key.id, now, key.rate, period, cost, key.quota);
        if (charge === null) {
          throw new ApiError(429, 'rate_limited', `More than ${key.rate} costing request(s) in one second.`, {
            headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) },
          });
        }
        credits = charge.remaining;
        if (!charge.ok) throw quotaError(key.quota, charge.remaining, cost, now);
        charged = cost;
      }
      let reply = await prepared.run();
      // A 5xx costs nothing; a batch answered whole gives back its items that could not be answered.
      const back = reply.status >= 500 ? charged : Math.min(charged, reply.refund ?? 0);
      if (back > 0) {
        charged = 0;
        credits = await giveBack(key!, period, back, credits);
      }
      if (reply.status === 200) {
        // A 304 is decided after the lookup, so it is never given for an answer that would not have been this 200;
        // on a costing route it is charged like the 200 (the lookup was made).
        const etag = reply.headers?.etag ?? (def.perStamp ? derivedEtag(release!.manifestSha256, def.path, params, query) : undefined);
        if (etag !== undefined) {
          headers.etag = etag;
          if (matchesEtag(request.headers.get('if-none-match'), etag)) reply = { status: 304, body: null, headers: reply.headers };
        }
      }
      return undeliverable(finish(reply, headers, costing && key ? { key, now, credits } : null, head));
    } catch (e) {
      const err = failure(e);
      if (err.status >= 500 && charged > 0) {
        const back = charged;
        charged = 0;
        credits = await giveBack(key!, period, back, credits);
      }
      if (costing && key && credits === null) credits = await safeRemaining(opts.store, key, clock);
      // A tombstone stub is the release's answer, cached like a 200 (ApiError.stub); any other error is not kept.
      if (err.status >= 400 && err.stub === undefined) headers['cache-control'] = 'no-store';
      return undeliverable(finish({ status: err.status, body: err.body(), headers: err.headers }, headers, costing && key ? { key, now, credits } : null, head));
    }

    /** `a`, able to give back what this request still holds charged, should it never reach the client. */
    function undeliverable(a: Answer): Answer {
      if (charged > 0 && key) {
        const [k, p, cost] = [key, period, charged];
        let given = false;
        a.giveBack = async () => {
          if (given) return;
          given = true;
          await giveBack(k, p, cost, null);
        };
      }
      return a;
    }
  }

  return {
    fetch: async (request) => toResponse(await handle(request)),
    answer: handle,
    routes: opts.routes,
  };
}

/** The answer as a Web Response (app.fetch): headers and bytes as the Node adapter writes them. */
export function toResponse(a: Answer): Response {
  const body = Array.isArray(a.body) ? new Blob(a.body as BlobPart[]) : a.body;
  return new Response(body as BodyInit | null, { status: a.status, headers: a.headers });
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
export function headOf(a: Answer): Answer {
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

function match(routes: CompiledRoute[], segs: string[], method: string): { route: RouteDef | null; params: Record<string, string>; allowed: string[] } {
  const allowed: string[] = [];
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
    if (!allowed.includes(r.def.method)) allowed.push(r.def.method);
    if (!found && r.def.method === method) {
      found = r.def;
      foundParams = params;
    }
  }
  return { route: found, params: foundParams, allowed };
}
