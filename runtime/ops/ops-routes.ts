// The operational endpoints, routes of the app at the server root: GET /healthz (the process answers), GET /readyz
// (a release is loaded, the state store takes writes and a mirror's origin answers) and GET /metrics (Prometheus
// text), without a key and at no cost. What they read comes through the app's services (ops/operations.ts).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../api-error.ts';
import { errorResponse, jsonContent, ok, OPS_STAMP_HEADERS, OPS_STAMP_IF_LOADED } from '../contract/http-parts.ts';
import { closed, ref } from '../contract/schema-kit.ts';
import { Stamp } from '../contract/schemas.ts';
import { defineRoute, type RouteDef } from '../route.ts';

/** The Prometheus text format's content type, as prom-client writes it. */
export const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** What a load balancer reads may change from one request to the next: never stored. */
const NO_STORE = { 'cache-control': 'no-store' };

function operation(operationId: string, summary: string, description: string, responses: RouteDef['operation']['responses']): RouteDef['operation'] & { cost: 0 } {
  return { operationId, tag: 'operations', summary, description: `Public (no key), no cost. ${description}`, cost: 0, responses };
}

export const operationRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/healthz',
    scope: 'operations',
    auth: false,
    noRelease: true,
    operation: operation('getHealth', 'The process is up', 'Answers 200 while the process serves; nothing else is checked.', {
      '200': { description: 'The process is up.', content: jsonContent(closed('Liveness.', { status: Type.Literal('ok') })) },
    }),
    prepare: () => ({ run: () => ({ status: 200, body: '{"status":"ok"}', headers: NO_STORE }) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/readyz',
    scope: 'operations',
    auth: false,
    noRelease: true,
    operation: operation('getReady', 'Ready to serve the API', 'A release is loaded and the state store answers; 503 `not_ready` names which is missing.', {
      '200': ok('Ready.', closed('Readiness.', { status: Type.Literal('ready'), release: ref(Stamp) }), OPS_STAMP_HEADERS),
      '503': errorResponse('No release is loaded, or the state store does not answer.', ['not_ready'], OPS_STAMP_IF_LOADED),
    }),
    prepare: (c) => ({
      async run() {
        // Every condition is named when it fails, so a load balancer's log says which.
        const { notReady, stamp } = await c.services.operations.readiness();
        const headers: Record<string, string> = stamp === null ? { ...NO_STORE } : { ...NO_STORE, 'x-register-release-stamp': stamp };
        if (notReady !== null) throw new ApiError(503, 'not_ready', notReady, { headers });
        return { status: 200, body: `{"status":"ready","release":${JSON.stringify(stamp)}}`, headers };
      },
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/metrics',
    scope: 'operations',
    auth: false,
    noRelease: true,
    operation: operation(
      'getMetrics',
      'Prometheus metrics',
      'Requests by route and status, latency, cache hits, server errors by code, credits charged and refunded, state-store errors; this process only.',
      { '200': { description: 'Prometheus text exposition format 0.0.4.', content: { [METRICS_TYPE]: { schema: { type: 'string' } } } } },
    ),
    prepare: (c) => ({
      async run() {
        const { type, text } = await c.services.operations.metrics();
        return { status: 200, body: text, headers: { 'content-type': type, ...NO_STORE } };
      },
    }),
  }),
];
