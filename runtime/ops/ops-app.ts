// What an operator of several instances needs around the API, as a wrapper of the app (so the router itself is
// untouched): GET /healthz (the process answers), GET /readyz (a release is loaded, the state store takes writes and
// a mirror's origin answers) and GET /metrics (Prometheus text) outside /api and without a key; and for every request one access-log line and
// its metrics.
import { randomUUID } from 'node:crypto';
import { ApiError } from '../api-error.ts';
import { bodyLength, headOf, toResponse, type Answer, type App } from '../app.ts';
import type { ShardSource, StateStore } from '../interfaces.ts';
import type { ReleaseCatalog } from '../release/catalog.ts';
import type { Logger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';

/** Options of withOperations. */
export interface OperationsOptions {
  catalog: ReleaseCatalog;
  store: StateStore;
  /** Where the dist is read from; a mirror's origin (its `ping`) must answer for /readyz to say ready. */
  source?: ShardSource;
  metrics: RuntimeMetrics;
  /** Where access-log lines go; null writes none (`serve --access-log off`). */
  accessLog: Logger | null;
  /** /readyz gives up on a state store that has not answered after this long, ms. Default 1000. */
  readyTimeoutMs?: number;
}

/** The operational paths, answered here and never by the API router. */
const OPERATIONS_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

const JSON_TYPE = 'application/json; charset=utf-8';
/** A client's or load balancer's request ID is logged as given when it is this plain; otherwise one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function withOperations(app: App, opts: OperationsOptions): App {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 1000;
  // A load balancer may ask often, and several at once: the origin is asked at most once a second, its answer shared.
  let originCheck: { at: number; outcome: Promise<boolean> } | null = null;
  const originAnswers = (): Promise<boolean> => {
    const ping = opts.source?.ping?.bind(opts.source);
    if (!ping) return Promise.resolve(true);
    if (originCheck === null || Date.now() - originCheck.at >= 1000) {
      originCheck = { at: Date.now(), outcome: withTimeout(ping(), readyTimeoutMs).then(() => true, () => false) };
    }
    return originCheck.outcome;
  };

  async function operation(path: string, method: string): Promise<Answer> {
    if (method !== 'GET' && method !== 'HEAD') {
      return errorAnswer(new ApiError(405, 'method_not_allowed', 'Use GET on this path.', { headers: { allow: 'GET' } }));
    }
    if (path === '/healthz') return json(200, '{"status":"ok"}');
    if (path === '/metrics') {
      const text = await opts.metrics.registry.metrics();
      return { status: 200, headers: { 'content-type': opts.metrics.registry.contentType, 'cache-control': 'no-store' }, body: text };
    }
    // /readyz: every condition, each named when it fails, so a load balancer's log says which.
    const release = await Promise.resolve(opts.catalog.forNamespace('v1')).catch(() => null);
    if (!release) return errorAnswer(new ApiError(503, 'not_ready', 'No compiled release is loaded yet.'));
    try {
      await withTimeout(opts.store.ping?.() ?? Promise.resolve(), readyTimeoutMs);
    } catch {
      return errorAnswer(new ApiError(503, 'not_ready', 'The state store does not answer or cannot write.'), release.stamp);
    }
    if (!(await originAnswers())) return errorAnswer(new ApiError(503, 'not_ready', "The mirror's origin does not answer."), release.stamp);
    return json(200, `{"status":"ready","release":${JSON.stringify(release.stamp)}}`, release.stamp);
  }

  async function answer(request: Request): Promise<Answer> {
    const t0 = performance.now();
    const path = pathOf(request.url);
    const ops = (OPERATIONS_PATHS as readonly string[]).includes(path);
    const a = ops ? await operation(path, request.method) : await app.answer(request);
    if (request.method === 'HEAD' && ops) headOf(a);
    const seconds = (performance.now() - t0) / 1000;
    const route = ops ? path : (a.route ?? 'unmatched');
    opts.metrics.request(route, a.status, seconds);
    let code: string | undefined;
    if (a.status >= 500) {
      code = errorCode(a.body);
      opts.metrics.serverError(code ?? 'unknown');
    }
    if (opts.accessLog) {
      const given = request.headers.get('x-request-id');
      opts.accessLog.info({
        method: request.method,
        path,
        route,
        status: a.status,
        duration_ms: Math.round(seconds * 1e6) / 1000,
        bytes: a.body === null ? 0 : bodyLength(a.body),
        key_id: a.keyId ?? null,
        request_id: given !== null && REQUEST_ID.test(given) ? given : randomUUID(),
        ...(code ? { error: code } : {}),
      });
    }
    return a;
  }

  return {
    answer,
    fetch: async (request) => toResponse(await answer(request)),
    routes: app.routes,
  };
}

function json(status: number, body: string, stamp?: string): Answer {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'cache-control': 'no-store' };
  if (stamp) headers['x-register-release-stamp'] = stamp;
  return { status, headers, body };
}

function errorAnswer(err: ApiError, stamp?: string): Answer {
  const a = json(err.status, err.bodyText(), stamp);
  if (err.headers) Object.assign(a.headers, err.headers);
  return a;
}

/** The path of an absolute request URL, without the query (which may hold what a log must not). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.search(/[?#]/);
  return url.slice(start, end < 0 || end < start ? undefined : end);
}

/** The `error` of an Error body, read only for the rare 5xx. */
function errorCode(body: Answer['body']): string | undefined {
  if (body === null) return undefined;
  try {
    const text = typeof body === 'string' ? body : Array.isArray(body) ? Buffer.concat(body).toString('utf8') : Buffer.from(body).toString('utf8');
    const parsed = JSON.parse(text) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
