// What the operational routes read and what an operator sees of every request, made from the runtime's parts by the
// composition (server.ts): the readiness conditions, the metrics text, and the observer the app calls once per
// answer (its metrics and its access-log line). Web-standard, like the app: the edge can serve the same routes.
import type { Answer, Observer } from '../app.ts';
import { bodyLength } from '../app.ts';
import type { ShardSource, StateStore } from '../interfaces.ts';
import type { ReleaseCatalog } from '../release/catalog.ts';
import { pathAsSent } from '../request-target.ts';
import type { Operations, Readiness } from '../route.ts';
import type { Logger } from './logger.ts';
import { METRICS_TYPE } from './ops-routes.ts';
import type { RuntimeMetrics } from './metrics.ts';

/** Options of operationsOf. */
export interface OperationsOptions {
  catalog: ReleaseCatalog;
  store: StateStore;
  /** Where the dist is read from; a mirror's origin (its `ping`) must answer for /readyz to say ready. */
  source?: ShardSource;
  /**
   * The counters /metrics exposes; null where a process keeps none (the edge: isolates share nothing, and the
   * platform's analytics count requests), and /metrics then answers an empty exposition.
   */
  metrics: RuntimeMetrics | null;
  /** /readyz gives up on a state store that has not answered after this long, ms. Default 1000. */
  readyTimeoutMs?: number;
}

export function operationsOf(opts: OperationsOptions): Operations {
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
  return {
    async readiness(): Promise<Readiness> {
      const release = await Promise.resolve(opts.catalog.forNamespace('v1')).catch(() => null);
      if (!release) return { notReady: 'No compiled release is loaded yet.', stamp: null };
      const stamp = release.stamp;
      try {
        await withTimeout(opts.store.ping?.() ?? Promise.resolve(), readyTimeoutMs);
      } catch {
        return { notReady: 'The state store does not answer or cannot write.', stamp };
      }
      if (!(await originAnswers())) return { notReady: "The mirror's origin does not answer.", stamp };
      return { notReady: null, stamp };
    },
    async metrics() {
      if (opts.metrics === null) return { type: METRICS_TYPE, text: '' };
      return { type: opts.metrics.registry.contentType, text: await opts.metrics.registry.metrics() };
    },
  };
}

/** A client's or load balancer's request ID is logged as given when it is this plain; otherwise one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request ID of this process's own: a random UUID's first 24 hex digits, drawn once, then a count. Shaped like a
 * UUID, unique across processes by the random part; a fresh randomUUID() per request spent its entropy refills on
 * the request path. Drawn at the first request: the edge allows no random values at a module's top level.
 */
const ownIds = { prefix: '', count: 0 };
function madeRequestId(): string {
  if (ownIds.prefix === '') ownIds.prefix = crypto.randomUUID().slice(0, 24);
  return ownIds.prefix + (ownIds.count++ % 0x1000000000000).toString(16).padStart(12, '0');
}

/** The observer that counts every answer in the metrics and, given a logger, writes its access-log line. */
export function observerOf(metrics: RuntimeMetrics, accessLog: Logger | null): Observer {
  return (request, a: Answer, seconds) => {
    const route = a.route ?? 'unmatched';
    metrics.request(route, a.status, seconds);
    const code = a.status >= 500 ? (a.error ?? 'unknown') : undefined;
    if (code) metrics.serverError(code);
    if (!accessLog) return;
    const given = request.headers.get('x-request-id');
    accessLog.access({
      method: request.method,
      path: pathAsSent(request.url),
      route,
      status: a.status,
      duration_ms: Math.round(seconds * 1e6) / 1000,
      bytes: a.body === null ? 0 : bodyLength(a.body),
      key_id: a.keyId ?? null,
      request_id: given !== null && REQUEST_ID.test(given) ? given : madeRequestId(),
      error: code,
    });
  };
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
