// The OpenAPI 3.1 document, assembled from the one source: each route's own operation (the API's in runtime/routes/,
// the operational endpoints' in runtime/ops/, the pages' in runtime/pages/), the component schemas and parameters
// (schemas.ts, parameters.ts), and the shared headers and responses (http-parts.ts).
import { API_NAME, API_SCHEMA, API_VERSION } from '../../common/ids.ts';
import { headers, jsonContent, responseRef, responses, type DocNode, type RouteOperation } from './http-parts.ts';
import { componentParameters, parameterName, type Parameter } from './parameters.ts';
import { componentSchemas, isComponent, ref, type JsonObject, type JsonValue } from './schema-kit.ts';

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

/** A route as the document states it (runtime/route.ts RouteDef is one). */
export interface DocumentedRoute {
  method: string;
  path: string;
  auth: boolean;
  /** `api` (default): under the namespaces; `operations` and `pages`: at the server root; `admin`: not published. */
  scope?: 'api' | 'operations' | 'pages' | 'admin';
  /** The key may also come as the `key` query parameter (runtime/route.ts). */
  queryKey?: boolean;
  operation: RouteOperation;
}

/** The paths at the server root state their server: the root, not the API namespaces. */
const ROOT_SERVERS: Record<'operations' | 'pages', JsonObject[]> = {
  operations: [{ url: '/', description: 'The server root: operational endpoints, outside /api.' }],
  pages: [{ url: '/', description: 'The server root: pages for people, outside /api.' }],
};

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
  costs nothing: a charge taken before the failure is refunded. A batch item that cannot be answered is 503 in
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
function operationOf(route: DocumentedRoute): JsonObject {
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
  if (spec.requestMedia) {
    const content = Object.entries(spec.requestMedia).map(([type, schema]) => [type, { schema: isComponent(schema) ? ref(schema) : schema }]);
    op.requestBody = { required: true, content: Object.fromEntries(content) };
  }
  // A route that also takes its key as a query parameter (route.ts `queryKey`) states that second scheme.
  if (route.auth && route.queryKey) op.security = [{ bearerAuth: [] }, { queryKey: [] }];
  // Any API operation answers 414 to an overlong URL, before anything else is read.
  op.responses = (route.scope ?? 'api') === 'api' ? { ...spec.responses, '414': responseRef('UriTooLong') } : spec.responses;
  return op as JsonObject;
}

/** Every API path answers a CORS preflight; an OPTIONS that is not one (no Access-Control-Request-Method) is 405. */
function preflightOf(main: DocumentedRoute): JsonObject {
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
 * The document for a route table: the API's paths in route order, then the operational ones; the pages under
 * `x-pages`; components as declared. Plain JSON (the TypeBox objects' symbol keys dropped), frozen: the server
 * serves it and tests validate against it.
 */
export function buildDocument(routes: readonly DocumentedRoute[]): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  const rootPaths: Record<string, PathItem> = {};
  const pages: Record<string, PathItem> = {};
  for (const route of routes) {
    const scope = route.scope ?? 'api';
    // The admin routes are the operator's (runtime/routes/admin.ts), no part of the published API.
    if (scope === 'admin') continue;
    const method = route.method.toLowerCase() as 'get' | 'post';
    if (scope === 'api') (paths[route.path] ??= {})[method] = operationOf(route);
    else ((scope === 'pages' ? pages : rootPaths)[route.path] ??= { servers: ROOT_SERVERS[scope] })[method] = operationOf(route);
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
    paths: { ...paths, ...rootPaths },
    'x-pages': pages,
    components: {
      securitySchemes: {
        queryKey: {
          type: 'apiKey',
          in: 'query',
          name: 'key',
          description: 'The key as the `key` query parameter, on /reconcile only (OpenRefine sends no headers). Logged nowhere.',
        },
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
