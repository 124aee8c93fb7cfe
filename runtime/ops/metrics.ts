// Prometheus metrics for GET /metrics (prom-client): requests by route and status, latency, cache hits, server
// errors by code (origin failures among them), credits charged and refunded, state-store errors.
import { Counter, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { StateUnavailableError, type Admission, type ChargeResult, type KeyStore, type StateStore } from '../interfaces.ts';
import type { ReleaseCatalog } from '../release/catalog.ts';

/** What the request path and the state store report. */
export interface RuntimeMetrics {
  readonly registry: Registry;
  /** One answered request: its route template (or `unmatched`), status and time to answer. */
  request(route: string, status: number, seconds: number): void;
  /** A 5xx answer, by its error code (`upstream_unavailable`: the origin failed). */
  serverError(code: string): void;
  charged(credits: number): void;
  refunded(credits: number): void;
  stateError(op: string): void;
}

/** Metrics over one runtime; `catalog()` feeds the cache counters and `keys()` the key checks, at scrape time. */
export function createMetrics(catalogOf: () => ReleaseCatalog | null, keysOf: () => KeyStore | null = () => null): RuntimeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Every answer counts its route and status and its time: plain numbers here, read into the exposition only when
  // /metrics is scraped. prom-client's labelled inc() and observe() hashed their labels on every request.
  const counts = new Map<string, RouteCounts>();
  new Counter({
    name: 'register_http_requests_total',
    help: 'Requests answered, by route template and status.',
    labelNames: ['route', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [route, c] of counts) for (const [status, n] of c.statuses) this.inc({ route, status: String(status) }, n);
    },
  });
  registry.registerMetric(latencyMetric(counts) as unknown as Metric);
  const errors = new Counter({ name: 'register_server_errors_total', help: '5xx answers by error code (upstream_unavailable: the shard origin failed).', labelNames: ['code'], registers: [registry] });
  const charged = new Counter({ name: 'register_credits_charged_total', help: 'Lookup credits charged.', registers: [registry] });
  const refunded = new Counter({ name: 'register_credits_refunded_total', help: 'Credits refunded (their request failed with a 5xx).', registers: [registry] });
  const stateErrors = new Counter({ name: 'register_state_errors_total', help: 'State-store calls that failed (the request answered 503), by call.', labelNames: ['op'], registers: [registry] });
  // The caches count as they go; the counters are read from them when scraped, so a lookup pays one increment.
  const cacheCounter = (name: string, help: string, pick: (c: { hits: number; misses: number }) => number): void => {
    new Counter({
      name,
      help,
      labelNames: ['cache'],
      registers: [registry],
      collect() {
        const catalog = catalogOf();
        if (!catalog) return;
        this.reset();
        this.inc({ cache: 'body' }, pick(catalog.bodies));
        this.inc({ cache: 'shard' }, pick(catalog.shards));
        this.inc({ cache: 'bucket' }, pick(catalog.cache));
      },
    });
  };
  cacheCounter('register_cache_hits_total', 'Cache lookups that found their entry: finished bodies, entity shards, index and search buckets.', (c) => c.hits);
  cacheCounter('register_cache_misses_total', 'Cache lookups that did not.', (c) => c.misses);
  // A count that stops rising means key changes (revocations) have stopped reaching this instance.
  new Counter({
    name: 'register_key_checks_total',
    help: 'Checks of the keys file or key table for changes; a revocation applies by the second check after it.',
    registers: [registry],
    collect() {
      const keys = keysOf();
      if (!keys) return;
      this.reset();
      this.inc(keys.checks());
    },
  });
  return {
    registry,
    request: (route, status, seconds) => {
      let c = counts.get(route);
      if (c === undefined) counts.set(route, (c = { statuses: new Map(), buckets: new Float64Array(LATENCY_BUCKETS.length), sum: 0, count: 0 }));
      c.statuses.set(status, (c.statuses.get(status) ?? 0) + 1);
      let i = 0;
      while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]) i++;
      if (i < LATENCY_BUCKETS.length) c.buckets[i]++;
      c.sum += seconds;
      c.count++;
    },
    serverError: (code) => errors.inc({ code }),
    charged: (n) => charged.inc(n),
    refunded: (n) => refunded.inc(n),
    stateError: (op) => stateErrors.inc({ op }),
  };
}

/** Upper bounds of the latency histogram's buckets, seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** One route's answers: how many per status, and their times (per bucket, not cumulative; their sum and count). */
interface RouteCounts {
  statuses: Map<number, number>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** The latency histogram as prom-client's registry reads a metric (`get()`), made from the counts when scraped. */
function latencyMetric(counts: Map<string, RouteCounts>) {
  const name = 'register_http_request_duration_seconds';
  const help = 'Time from the request (its body read) to its answer, by route template.';
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
      for (const [route, c] of counts) {
        let below = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          below += c.buckets[i];
          values.push({ metricName: `${name}_bucket`, labels: { le, route }, value: below });
        });
        values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', route }, value: c.count });
        values.push({ metricName: `${name}_sum`, labels: { route }, value: c.sum });
        values.push({ metricName: `${name}_count`, labels: { route }, value: c.count });
      }
      return { name, help, type: 'histogram', values, aggregator: 'sum' };
    },
  };
}

/**
 * `store` counting what it charges and refunds, and its failed calls by call. It writes no line per failure: each
 * store writes one line when it stops answering (naming its file or URL and the cause) and one when it answers
 * again, so an outage under load is two lines, not two per request.
 */
export function instrumentStore(store: StateStore, metrics: RuntimeMetrics): StateStore {
  const failed = (op: string) => (e: unknown): never => {
    if (e instanceof StateUnavailableError) metrics.stateError(op);
    throw e;
  };
  return {
    get writable() {
      return store.writable;
    },
    admit: store.admit
      ? (keyId, nowMs, rate, period, cost, quota) =>
          store.admit!(keyId, nowMs, rate, period, cost, quota).then((a: Admission) => {
            if (a.charge?.ok && cost > 0) metrics.charged(cost);
            return a;
          }, failed('admit'))
      : undefined,
    charge: (keyId, period, cost, quota) =>
      store.charge(keyId, period, cost, quota).then((c: ChargeResult) => {
        if (c.ok && cost > 0) metrics.charged(cost);
        return c;
      }, failed('charge')),
    refund: (keyId, period, cost) => store.refund(keyId, period, cost).then(() => metrics.refunded(cost), failed('refund')),
    remaining: (...a) => store.remaining(...a).catch(failed('remaining')),
    hit: (...a) => store.hit(...a).catch(failed('hit')),
    notices: (...a) => store.notices(...a).catch(failed('notices')),
    markSeen: (...a) => store.markSeen(...a).catch(failed('markSeen')),
    acknowledge: (...a) => store.acknowledge(...a).catch(failed('acknowledge')),
    ping: store.ping ? () => store.ping!() : undefined,
    close: () => store.close(),
  };
}
