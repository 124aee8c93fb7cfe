// The OpenAPI 3.1 document, assembled from the one source: each route's own operation (runtime/routes/), the
// component schemas and parameters (schemas.ts, parameters.ts), the shared headers and responses (http-parts.ts),
// and the paths outside /api (the operational endpoints and the pages for people), which are not routes.
import { Type } from '@sinclair/typebox';
import { API_NAME, API_SCHEMA, API_VERSION } from '../../common/ids.ts';
import type { RouteDef } from '../route.ts';
import {
  errorResponse, headers, jsonContent, ok, OPS_STAMP_HEADERS, OPS_STAMP_IF_LOADED, responseRef, responses, type DocNode,
} from './http-parts.ts';
import { componentParameters, parameterName, type Parameter } from './parameters.ts';
import { closed, componentSchemas, ref, type JsonObject, type JsonValue } from './schema-kit.ts';
import { Stamp } from './schemas.ts';

export type { JsonObject, JsonValue };
export type HttpMethod = 'get' | 'post' | 'options';
/** Operations by method; `servers` only on the paths that live at the root rather than under /api. */
export type PathItem = Partial<Record<HttpMethod, JsonObject>> & { servers?: JsonObject[] };

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: JsonObject;
  servers: JsonObject[];
  security: JsonObject[];
  tags: JsonObject[];
  paths: Record<string, PathItem>;
  /**
   * The pages the server shows people at its root, outside /api (runtime/pages/): the explorer at `/`, the API
   * reference at `/docs`, their assets. Path Items like `paths`, kept apart because `/` there is the API index.
   */
  'x-pages': Record<string, PathItem>;
  components: {
    securitySchemes: Record<string, JsonObject>;
    schemas: Record<string, JsonObject>;
    parameters: Record<string, JsonObject>;
    headers: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
  };
}

/** A part of the document while it is assembled: JSON, with TypeBox schemas in it. */
type Loose = Record<string, DocNode>;
type RootItem = { servers: JsonObject[]; get: Loose };

// ---------------------------------------------------------------------------------------------------------------
// Paths outside /api: the operational endpoints (runtime/ops/ops-app.ts) and the pages (runtime/pages/).

/** The operational endpoints are served from the root, not the API namespaces. */
const OPS_SERVERS: JsonObject[] = [{ url: '/', description: 'The server root: operational endpoints, outside /api.' }];
/** The Prometheus text format's content type, as prom-client writes it. */
export const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function opsOperation(operationId: string, summary: string, description: string, responses: Loose): Loose {
  return { operationId, tags: ['operations'], summary, description: `Public (no key), no cost. ${description}`, 'x-lookup-cost': 0, security: [], responses };
}

const ROOT_PATHS: Record<string, RootItem> = {
  // Operational endpoints (runtime/ops/ops-app.ts): at the root, no key, no cost, never under a namespace.
  '/healthz': {
    servers: OPS_SERVERS,
    get: opsOperation('getHealth', 'The process is up', 'Answers 200 while the process serves; nothing else is checked.', {
      '200': { description: 'The process is up.', content: jsonContent(closed('Liveness.', { status: Type.Literal('ok') })) },
    }),
  },
  '/readyz': {
    servers: OPS_SERVERS,
    get: opsOperation('getReady', 'Ready to serve the API', 'A release is loaded and the state store answers; 503 `not_ready` names which is missing.', {
      '200': ok('Ready.', closed('Readiness.', { status: Type.Literal('ready'), release: ref(Stamp) }), OPS_STAMP_HEADERS),
      '503': errorResponse('No release is loaded, or the state store does not answer.', ['not_ready'], OPS_STAMP_IF_LOADED),
    }),
  },
  '/metrics': {
    servers: OPS_SERVERS,
    get: opsOperation('getMetrics', 'Prometheus metrics', 'Requests by route and status, latency, cache hits, server errors by code, credits charged and given back, state-store errors; this process only.', {
      '200': { description: 'Prometheus text exposition format 0.0.4.', content: { [METRICS_TYPE]: { schema: { type: 'string' } } } },
    }),
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Pages for people (runtime/pages/): the explorer, the API reference and their assets, built by scripts/build.mjs.

/** What a page may load: only this server (the bundles, the API); inline styles for the charts and Swagger UI. */
export const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
/** An HTML page names its assets by content hash: it is revalidated on every load, they are cached forever. */
export const PAGE_CACHE = { page: 'no-cache', asset: 'public, max-age=31536000, immutable' } as const;
/** A built asset's name: entry, content hash, extension (`explorer-L2BLNIKT.js`). */
export const ASSET_NAME = /^[a-z][a-z0-9-]*-[A-Z0-9]{8}\.(js|css)$/;
export const PAGE_TYPES = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

const PAGE_SERVERS: JsonObject[] = [{ url: '/', description: 'The server root: pages for people, outside /api.' }];

function pageHeaders(cache: string): Loose {
  const fixed = (description: string, value: string): Loose => ({ description, required: true, schema: { const: value } });
  return {
    'Cache-Control': fixed('Pages revalidate; hashed assets never change.', cache),
    'Content-Security-Policy': fixed('Nothing is loaded from outside this server.', PAGE_CSP),
    'X-Content-Type-Options': fixed('Types are never sniffed.', 'nosniff'),
  };
}

const PAGES_UNAVAILABLE = errorResponse('The pages were not built (`npm run build` builds them into build/pages/).', ['pages_unavailable'], {});

function pageOperation(operationId: string, summary: string, description: string, types: string[], cache: string, extra: Loose = {}): Loose {
  const content: Loose = {};
  for (const t of types) content[t] = { schema: { type: 'string' } };
  return {
    operationId,
    tags: ['pages'],
    summary,
    description: `Public (no key), no cost. ${description}`,
    'x-lookup-cost': 0,
    security: [],
    ...extra,
    responses: { '200': { description: summary, headers: pageHeaders(cache), content }, '503': PAGES_UNAVAILABLE },
  };
}

const PAGES: Record<string, RootItem> = {
  '/': {
    servers: PAGE_SERVERS,
    get: pageOperation(
      'getExplorer',
      'The release explorer',
      'Search, entities with their bridges, resolve, what changed between releases, the release at a glance. The page asks for a key once and keeps it in sessionStorage; the key never goes into a URL.',
      [PAGE_TYPES.html],
      PAGE_CACHE.page,
    ),
  },
  '/docs': {
    servers: PAGE_SERVERS,
    get: pageOperation('getApiReference', 'This document, rendered', 'Swagger UI, served by this server, reading /api/v1/openapi.json.', [PAGE_TYPES.html], PAGE_CACHE.page),
  },
  '/assets/{file}': {
    servers: PAGE_SERVERS,
    get: pageOperation('getPageAsset', 'A script or style sheet of the pages', 'Named by its content hash, so cached forever. Any other name is 404 `not_found`.', [PAGE_TYPES.js, PAGE_TYPES.css], PAGE_CACHE.asset, {
      parameters: [{ name: 'file', in: 'path', required: true, description: 'The asset: entry, content hash, extension.', schema: { type: 'string', pattern: ASSET_NAME.source } }],
    }),
  },
};
(PAGES['/assets/{file}'].get!.responses as Loose)['404'] = errorResponse('No built asset has this name.', ['not_found'], {});

// ---------------------------------------------------------------------------------------------------------------

const DESCRIPTION = `Read-only football identity register. Every response is tied to a published release stamp.

Contract decisions (CONTRACT-DECISIONS.md) this document encodes:

- **Bodies**: JSON, \`Content-Type: application/json; charset=utf-8\`, no insignificant whitespace, numbers never
  written as \`1.0\`, keys in the fixed order the schemas below list them. The same request against the same stamp
  gives the same bytes on every machine, mirror and restart.
- **IDs**: a merged ID answers 200 with the final survivor plus \`requested_id\` and \`redirected_to\` (also on
  bridges, overlay, relationships, resolve and batch); a tombstoned ID (also one the previous release published and
  this one lacks) answers 410 \`gone\` (charged); an unpublished
  ID that matches the pattern 404 \`not_found\` (charged); an ID not matching the pattern 400 \`invalid_id\` (free).
- **include**: order and repetition do not matter; an unknown name is 400 \`unknown_include\`.
- **Order of checks** on a costing endpoint: authentication (401), request validation (400, free), rate limit
  (429, free), quota (402, free), then the lookup (charged; 404, 409 and 410 outcomes are charged too).
- **Rate**: at most \`rate\` costing requests per key in any rolling second (default 2); a batch is one request;
  429 \`rate_limited\` carries \`Retry-After\` (whole seconds, at least 1).
- **Quota**: monthly (default 1,000 lookups), reset at 00:00:00 UTC on the 1st; a batch needing more credits than
  remain is 402 \`quota_exceeded\` whole, nothing charged.
- **Headers**: \`X-Register-Release-Stamp\` on every response once a release is loaded, errors included;
  \`X-Register-Credits-Remaining\` on every response of a costing endpoint for an authenticated key.
- **Namespaces**: servers \`/api/v1\` (newest publishable release) and \`/api/next\` (newest release); they share
  keys, quota and rate state.
- **Errors**: \`{error, message?, detail?}\`. 401 codes \`missing_key\`, \`invalid_key\`, \`revoked_key\`,
  \`key_expired\`. Any undocumented path answers 404 \`not_found\` (components/responses/UnknownPath); a documented
  path with another method answers 405 \`method_not_allowed\` with \`Allow\` (components/responses/MethodNotAllowed).
- **503** \`index_unavailable\` on any release-reading endpoint while no release is loaded; \`artefact_corrupt\`
  when a compiled file the answer needs is damaged, truncated or missing (every file is checked before use: the
  server never answers other bytes); \`upstream_unavailable\` when a mirror's origin cannot be reached. A 5xx
  costs nothing: a charge taken before the failure is given back. A batch item that cannot be answered is 503 in
  place and costs nothing; the others are answered and charged.
- **HEAD** on any GET path answers what the GET would: the same status and headers, \`Content-Length\` included,
  without a body. It performs the lookup, so on a costing path it is rate-limited and charged like the GET (a free
  HEAD would tell anyone whether an ID exists) and carries \`X-Register-Credits-Remaining\`. A HEAD of
  \`/notices\` marks nothing seen.
- **Keys**: \`GET /key\` answers the published shape \`{key: {plan, access_model, organisation, provider,
  expires_at, days_remaining, expiring_soon, credits_remaining, rate_limit_remaining, …}, extend}\`; every
  authenticated answer of a key that expires carries \`X-Register-Key-Expires\` and
  \`X-Register-Key-Days-Remaining\`; an expired key is 401 \`key_expired\`.
- **Rate-limit fields**: costing answers carry \`RateLimit-Policy\` and \`RateLimit\` in the IETF httpapi
  ratelimit-headers draft form (components/headers/RateLimitPolicy, RateLimit).
- **CORS**: every API answer carries \`Access-Control-Allow-Origin: *\` and \`Access-Control-Expose-Headers\`;
  a preflight (OPTIONS with Access-Control-Request-Method) answers 204 without a key, at no cost.
- **Caching**: documents and per-stamp lookups carry a strong \`ETag\`; a matching \`If-None-Match\` answers 304
  without a body. A costing lookup's 304 is charged like its 200. \`Cache-Control: private\` wherever a key is needed.
- **Compression**: bodies of 1 KiB or more are sent \`br\` or \`gzip\` (fixed levels, deterministic bytes) as
  Accept-Encoding allows, with \`Vary: Accept-Encoding\`; never for a 304. A HEAD answer carries its GET's headers
  exactly: the coding, the coded ETag and the coded length.
- **Refusals before routing** (not valid HTTP, no \`Host\` on HTTP/1.1, a bad \`Expect\`, \`CONNECT\`, slow or
  oversized headers) carry an Error body too (components/responses/ProtocolRefusal).
- **x-lookup-cost** on each operation: lookups charged per request (\`per_item\` for the batch).`;

// ---------------------------------------------------------------------------------------------------------------
// Assembly.

const parameterRef = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });

/** A parameter as the document states it: what OpenAPI knows, none of the reader's own fields. */
function parameterObject(p: Parameter): DocNode {
  const out: Record<string, DocNode> = { name: p.name, in: p.in, required: p.required, description: p.description };
  if (p.style) out.style = p.style;
  if (p.explode !== undefined) out.explode = p.explode;
  if (p.allowEmptyValue) out.allowEmptyValue = true;
  out.schema = p.schema;
  return out;
}
const parameterEntry = (p: Parameter): DocNode => {
  const name = parameterName(p);
  return name ? parameterRef(name) : parameterObject(p);
};

/** The operation a route states, as the document writes it. */
function operationOf(route: RouteDef): JsonObject {
  const spec = route.operation;
  const op: Record<string, DocNode> = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    'x-lookup-cost': spec.cost,
  };
  if (!route.auth) op.security = [];
  if (spec.parameters?.length) op.parameters = spec.parameters.map(parameterEntry);
  if (spec.requestBody) op.requestBody = { required: true, content: jsonContent(ref(spec.requestBody)) };
  // Any operation answers 414 to an overlong URL, before anything else is read.
  op.responses = { ...spec.responses, '414': responseRef('UriTooLong') };
  return op as JsonObject;
}

/** Every API path answers a CORS preflight; an OPTIONS that is not one (no Access-Control-Request-Method) is 405. */
function preflightOf(main: RouteDef): JsonObject {
  const pathParams = (main.operation.parameters ?? []).filter((p) => p.in === 'path').map(parameterEntry);
  return {
    operationId: `preflight${main.operation.operationId.replace(/^./, (c) => c.toUpperCase())}`,
    parameters: [...pathParams, parameterRef('AccessControlRequestMethod')],
    tags: ['cors'],
    summary: 'CORS preflight',
    description: 'No key, no cost. Send Access-Control-Request-Method (browsers do); without it the answer is 405.',
    'x-lookup-cost': 0,
    security: [],
    responses: { '204': responseRef('Preflight'), '405': responseRef('MethodNotAllowed') },
  } as JsonObject;
}

/**
 * The document for a route table: paths in route order, then the root paths; components as declared. Plain JSON
 * (the TypeBox objects' symbol keys dropped), frozen: the server serves it and tests validate against it.
 */
export function buildDocument(routes: readonly RouteDef[]): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase() as 'get' | 'post'] = operationOf(route);
  }
  for (const item of Object.values(paths)) {
    const main = routes.find((r) => r.operation.operationId === (item.get ?? item.post)!.operationId)!;
    item.options = preflightOf(main);
  }
  const doc = {
    openapi: '3.1.0',
    // No jsonSchemaDialect: the 3.1 default (https://spec.openapis.org/oas/3.1/dialect/base, JSON Schema 2020-12
    // plus `discriminator` and the other OpenAPI keywords the schemas use) is the one meant, and Swagger UI warns
    // in red on /docs about any other value.
    info: {
      title: 'Identity Register Read API',
      version: API_VERSION,
      summary: `${API_NAME}: resolve football identities across data providers (${API_SCHEMA}).`,
      description: DESCRIPTION,
    },
    servers: [
      { url: '/api/v1', description: 'Launch namespace: the newest publishable release.' },
      { url: '/api/next', description: 'Staging namespace, identical contract: the newest release of all.' },
    ],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'metadata', description: 'Release and service metadata (no lookup cost).' },
      { name: 'keys', description: 'The calling key.' },
      { name: 'lookup', description: 'Costing lookups.' },
      { name: 'notices', description: 'Provider-scoped notice feed.' },
      { name: 'changelog', description: 'Per-release changelog (no cost, ETag).' },
      { name: 'operations', description: 'Health, readiness and metrics for operators (at the server root, no key).' },
      { name: 'cors', description: 'CORS preflights of the API paths (no key, no cost).' },
      { name: 'pages', description: 'The explorer and this reference, for people (at the server root, no key; under `x-pages`).' },
    ],
    paths: { ...paths, ...ROOT_PATHS },
    'x-pages': PAGES,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'opaque key',
          description:
            'Keys are issued manually, random (128+ bits), shown once; only a hash is stored. Every valid key reads ' +
            'the same data; keys differ only in quota and rate. `meta.provider` unlocks /notices and /notices/ack.',
        },
      },
      schemas: Object.fromEntries(componentSchemas),
      parameters: Object.fromEntries([...componentParameters].map(([name, p]) => [name, parameterObject(p)])),
      headers,
      responses,
    },
  };
  // One round trip through JSON: the symbol keys go, and nothing that is not JSON can stay.
  return deepFreeze(JSON.parse(JSON.stringify(doc)) as OpenApiDocument);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
