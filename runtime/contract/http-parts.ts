// The HTTP parts operations share: response headers, shared responses, and the builders routes write theirs with.
import type { TSchema } from '@sinclair/typebox';
import { MAX_HEADER_BYTES, MAX_HEADER_FIELDS, MAX_URL_CHARS } from '../../common/request-limits.ts';
import type { Parameter } from './parameters.ts';
import { ERROR_CODES_401, PROTOCOL_REFUSAL_CODES, type ErrorCode } from './error-codes.ts';
import { errorOf, GoneError, QuotaExceededError, Stamp } from './schemas.ts';
import { ref, type JsonObject } from './schema-kit.ts';

/** Schemas sit in the document as TypeBox objects; JSON.stringify drops their symbol keys. */
export type DocNode = JsonObject | TSchema | { [key: string]: DocNode } | DocNode[] | string | number | boolean | null;
type Node = Record<string, DocNode>;

// CORS, as every API answer states it (runtime/response-headers.ts writes these values).
/**
 * Headers a browser script may read from an answer. Keys are bearer tokens sent in Authorization, never cookies,
 * so every origin may call the API (`*`, no credentials mode), and nothing depends on Origin: no `Vary: Origin`.
 */
export const CORS_EXPOSED = [
  'X-Register-Release-Stamp',
  'X-Register-Credits-Remaining',
  'X-Register-Key-Expires',
  'X-Register-Key-Days-Remaining',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'ETag',
].join(', ');
/** Request headers a cross-origin script may send: the key, a JSON body's type, and a revalidation's ETag. */
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, If-None-Match';
/** How long a browser may reuse a preflight's answer, seconds (Chromium caps it at 7,200). */
export const CORS_MAX_AGE = 7200;

export const headerRef = (name: string): Node => ({ $ref: `#/components/headers/${name}` });
export const responseRef = (name: string): Node => ({ $ref: `#/components/responses/${name}` });
export const jsonContent = (schema: DocNode): Node => ({ 'application/json': { schema } });

// Header sets. Every API answer carries the CORS headers, `Vary: Accept-Encoding` and, once a key is authenticated
// and it expires, the key-expiry pair; the release stamp is on every response once a release is loaded (errors
// included); the credits and rate-limit headers are on every response of a costing endpoint for an authenticated key
// (402 and 429 included). Bodies of 1 KiB or more may be coded (Content-Encoding) as Accept-Encoding allows.
const API_HEADERS: Node = {
  'Access-Control-Allow-Origin': headerRef('AccessControlAllowOrigin'),
  'Access-Control-Expose-Headers': headerRef('AccessControlExposeHeaders'),
  Vary: headerRef('Vary'),
  'Cache-Control': headerRef('CacheControl'),
  'Content-Encoding': headerRef('ContentEncoding'),
  'X-Register-Key-Expires': headerRef('KeyExpires'),
  'X-Register-Key-Days-Remaining': headerRef('KeyDaysRemaining'),
};
const STAMP_HEADERS: Node = { ...API_HEADERS, 'X-Register-Release-Stamp': headerRef('ReleaseStamp') };
export const STAMP_IF_LOADED: Node = { ...API_HEADERS, 'X-Register-Release-Stamp': headerRef('ReleaseStampIfLoaded') };
export const COST_HEADERS: Node = {
  ...STAMP_HEADERS,
  'X-Register-Credits-Remaining': headerRef('CreditsRemaining'),
  'RateLimit-Policy': headerRef('RateLimitPolicy'),
  RateLimit: headerRef('RateLimit'),
};
const CHANGELOG_HEADERS: Node = { ...STAMP_HEADERS, ETag: headerRef('ETag') };
/** A per-stamp lookup's 200 and 304: the cost headers and its strong ETag. */
export const TAGGED_COST_HEADERS: Node = { ...COST_HEADERS, ETag: headerRef('ETag') };
/** A precomputed document's 200: its ETag was fixed when it was compiled. */
export const DOCUMENT_HEADERS: Node = { ...STAMP_HEADERS, ETag: headerRef('ETag') };
/** The operational endpoints (outside /api): no CORS, no key. */
export const OPS_STAMP_HEADERS: Node = { 'X-Register-Release-Stamp': headerRef('ReleaseStamp') };
export const OPS_STAMP_IF_LOADED: Node = { 'X-Register-Release-Stamp': headerRef('ReleaseStampIfLoaded') };

export const ok = (description: string, schema: DocNode, headers: Node = STAMP_HEADERS): Node => ({
  description,
  headers,
  content: jsonContent(schema),
});
/** An error response narrowed to `codes`, each once (a list assembled from a route's parameters repeats some). */
export const errorResponse = (description: string, codes: readonly ErrorCode[], headers: Node = STAMP_HEADERS): Node => ({
  description,
  headers,
  content: jsonContent(errorOf([...new Set(codes)])),
});

// ---------------------------------------------------------------------------------------------------------------
// Headers and shared responses.

export const headers: Record<string, Node> = {
  ReleaseStamp: {
    description: 'The release this response was answered from. On every response once a release is loaded, errors included.',
    required: true,
    schema: ref(Stamp),
  },
  ReleaseStampIfLoaded: {
    description: 'The release this response was answered from; absent only when no release is loaded.',
    required: false,
    schema: ref(Stamp),
  },
  CreditsRemaining: {
    description: 'Lookups left in the current quota period after this request. On every response of a costing endpoint for an authenticated key.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  RetryAfter: {
    description: 'Whole seconds until a rate slot frees, at least 1.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  ETag: {
    description:
      'Strong entity tag of the answer. Documents (`/`, `/meta`, `/providers`, `/coverage`, the notice summary): the ' +
      'sha256 the compiler recorded for the file. Lookups (entities and their views, resolve, search): derived from ' +
      'the release\'s public manifest (which lists every file\'s sha256), the API version, the route, its path ' +
      'parameters and the sorted query pairs, which is all such a body depends on, so any server over the same dist ' +
      'gives the same tag. A coded answer\'s tag ends in `.br"` or `.gz"` (another representation); If-None-Match ' +
      'matches either form. Answers that depend on the key (`/key`, notices, batch) have none.',
    required: true,
    schema: { type: 'string', pattern: '^"[!#-~]+"$' },
  },
  WWWAuthenticate: {
    description:
      'The bearer challenge (RFC 6750 §3): `Bearer realm="identity-register"` when no key was sent (no error ' +
      'code), with `, error="invalid_token"` for a key that is malformed, unknown, revoked or expired.',
    required: true,
    schema: { type: 'string', pattern: '^Bearer realm="identity-register"(, error="invalid_token")?$' },
  },
  AccessControlAllowOrigin: {
    description: 'CORS: `*`. Keys are bearer tokens in Authorization, never cookies, so any origin may call the API.',
    required: true,
    schema: { const: '*' },
  },
  AccessControlExposeHeaders: {
    description: 'CORS: the response headers a browser script may read.',
    required: true,
    schema: { const: CORS_EXPOSED },
  },
  AccessControlAllowMethods: {
    description: 'Preflight: the methods of the path (HEAD with GET).',
    required: true,
    schema: { type: 'string', pattern: '^[A-Z]+(, [A-Z]+)*$' },
  },
  AccessControlAllowHeaders: {
    description: 'Preflight: the request headers a script may send.',
    required: true,
    schema: { const: CORS_ALLOWED_HEADERS },
  },
  AccessControlMaxAge: {
    description: 'Preflight: seconds a browser may reuse this answer.',
    required: true,
    schema: { type: 'integer', const: CORS_MAX_AGE },
  },
  Vary: {
    description: '`Accept-Encoding` on every answer that has (or, for HEAD and 304, stands for) a body. Nothing varies by Origin.',
    required: false,
    schema: { type: 'string', pattern: 'Accept-Encoding' },
  },
  CacheControl: {
    description:
      '`private, no-cache` on answers that need a key (a shared cache must not keep them; a browser revalidates with ' +
      'If-None-Match), `private, no-store` on `/key`, `no-cache` on public ones, `no-store` on errors.',
    required: false,
    schema: { type: 'string', enum: ['private, no-cache', 'private, no-store', 'no-cache', 'no-store'] },
  },
  ContentEncoding: {
    description:
      'The body is coded: `br` (brotli, quality 1) or `gzip` (level 1), fixed levels so the same body always codes ' +
      'to the same bytes, when Accept-Encoding allows and the body is 1 KiB or more (smaller bodies fit one TCP ' +
      'segment anyway). Never on HEAD, 204 or 304.',
    required: false,
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
  KeyExpires: {
    description: 'When the calling key stops working; on every authenticated answer of a key that expires.',
    required: false,
    schema: { type: 'string', format: 'date-time' },
  },
  KeyDaysRemaining: {
    description: 'Whole days before the calling key expires (0 on its last day); with X-Register-Key-Expires.',
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitPolicy: {
    description:
      'The key\'s quota policies in the IETF httpapi RateLimit header draft (draft-ietf-httpapi-ratelimit-headers, ' +
      '-09 onwards) form, a Structured Field list: `"burst";q=<rate>;w=1` (costing requests per rolling second, a ' +
      'batch is one request) and `"monthly";q=<allowance>;w=<seconds in the current calendar month>` (lookups, a ' +
      'batch costs one per valid item; resets 00:00:00 UTC on the 1st).',
    required: true,
    schema: { type: 'string', pattern: '^"burst";q=[0-9]+;w=1, "monthly";q=[0-9]+;w=[0-9]+$' },
  },
  RateLimit: {
    description:
      'The service limits now, in the same draft\'s form: `"monthly";r=<lookups left>;t=<seconds until the reset>`, ' +
      'preceded on a 429 by `"burst";r=0;t=<seconds until a slot frees>` (the burst window is stated only when it is ' +
      'known to be spent: reading it from the state store would record a hit).',
    required: true,
    schema: { type: 'string', pattern: '^("burst";r=0;t=[0-9]+, )?"monthly";r=[0-9]+;t=[0-9]+$' },
  },
  Allow: {
    description: 'The methods the path supports.',
    required: true,
    schema: { type: 'string', pattern: '^[A-Z]+(, ?[A-Z]+)*$' },
  },
};

export const responses: Record<string, Node> = {
  Unauthorized: errorResponse('Missing, invalid, revoked or expired key. v0 keys and gateway headers are not accepted.', ERROR_CODES_401, {
    ...STAMP_HEADERS,
    'WWW-Authenticate': headerRef('WWWAuthenticate'),
  }),
  ProviderScopeRequired: errorResponse('The key has no `meta.provider` scope.', ['provider_scope_required']),
  QuotaExceeded: {
    description:
      'The monthly allowance cannot pay for the request: used up, or (a batch) fewer credits left than it needs, ' +
      'which the message says. Nothing is charged; a batch is refused whole. `detail` is when the allowance resets.',
    headers: COST_HEADERS,
    content: jsonContent(ref(QuotaExceededError)),
  },
  RateLimited: errorResponse(
    'More than the plan rate of costing requests in a rolling second (a batch is one request). Not charged.',
    ['rate_limited'],
    { ...COST_HEADERS, 'Retry-After': headerRef('RetryAfter') },
  ),
  EntityNotFound: errorResponse('The ID matches the pattern but was never published. Charged as one lookup.', ['not_found'], COST_HEADERS),
  EntityGone: {
    description: 'The ID was retired (tombstone): it still answers, with 410, and is never reused. Charged as one lookup.',
    headers: COST_HEADERS,
    content: jsonContent(ref(GoneError)),
  },
  PayloadTooLarge: errorResponse('The request body is too large.', ['payload_too_large']),
  IndexUnavailable: errorResponse(
    'No release index is loaded (`index_unavailable`); or a compiled artefact this answer needs is damaged, ' +
      'truncated or missing (`artefact_corrupt`: the server refuses to answer from bytes it cannot trust); or a ' +
      "mirror's origin cannot be reached, timed out or answered 5xx (`upstream_unavailable`); or the state store " +
      'cannot record the request (`state_unavailable`). A 503 costs nothing: a lookup charged before the failure ' +
      'is refunded, and `X-Register-Credits-Remaining` shows the credits after it.',
    ['index_unavailable', 'artefact_corrupt', 'upstream_unavailable', 'state_unavailable'],
    STAMP_IF_LOADED,
  ),
  ProtocolRefusal: errorResponse(
    'A request refused before it reaches a route, on any path: not valid HTTP, or an HTTP/1.1 request without ' +
      '`Host` (400 `bad_request`); headers or body too slow (408 `request_timeout`); an `Expect` other than ' +
      `\`100-continue\` (417 \`expectation_failed\`); headers over ${MAX_HEADER_BYTES / 1024} KB or more than ${MAX_HEADER_FIELDS} header fields (431 ` +
      '`headers_too_large`); `CONNECT` (405 `method_not_allowed`, with `Allow`). Always with an Error body and ' +
      '`Connection: close`.',
    [...PROTOCOL_REFUSAL_CODES, 'method_not_allowed'],
    {},
  ),
  UriTooLong: errorResponse(`The request URL is longer than ${MAX_URL_CHARS.toLocaleString('en')} characters. Not charged.`, ['uri_too_long'], STAMP_IF_LOADED),
  NotModified: {
    description: '`If-None-Match` matched the current ETag: no body, no cost.',
    headers: CHANGELOG_HEADERS,
  },
  LookupNotModified: {
    description:
      '`If-None-Match` matched the ETag this lookup\'s 200 would carry: no body. Charged like the 200 (the lookup ' +
      'is made, and a 304 is never given for an answer that would not have been that 200).',
    headers: TAGGED_COST_HEADERS,
  },
  DocumentNotModified: {
    description: '`If-None-Match` matched the document\'s ETag: no body, no cost.',
    headers: { ...STAMP_HEADERS, ETag: headerRef('ETag') },
  },
  Preflight: {
    description:
      'A CORS preflight (OPTIONS with Access-Control-Request-Method) of a documented path: answered without a key ' +
      'and at no cost. An unknown path answers 404.',
    headers: {
      'Access-Control-Allow-Origin': headerRef('AccessControlAllowOrigin'),
      'Access-Control-Allow-Methods': headerRef('AccessControlAllowMethods'),
      'Access-Control-Allow-Headers': headerRef('AccessControlAllowHeaders'),
      'Access-Control-Max-Age': headerRef('AccessControlMaxAge'),
    },
  },
  MethodNotAllowed: errorResponse(
    'The path exists but not with this method (any documented path).',
    ['method_not_allowed'],
    { ...STAMP_HEADERS, Allow: headerRef('Allow') },
  ),
  UnknownPath: errorResponse('No such path (any undocumented path).', ['not_found']),
};

/** The statuses every costing endpoint shares, in the order of checks: 401, 400, 429, 402, then the lookup. */
export const costingErrors = (badRequestCodes: readonly ErrorCode[]): Record<string, Node> => ({
  '400': errorResponse('Malformed request. Not charged.', badRequestCodes, COST_HEADERS),
  '401': responseRef('Unauthorized'),
  '402': responseRef('QuotaExceeded'),
  '429': responseRef('RateLimited'),
  '503': responseRef('IndexUnavailable'),
});

export const changelogResponses = (schema: TSchema, badRequestCodes: readonly ErrorCode[] | null): Record<string, Node> => {
  const r: Record<string, Node> = {
    '200': ok('The changelog answer.', ref(schema), CHANGELOG_HEADERS),
    '304': responseRef('NotModified'),
  };
  if (badRequestCodes) r['400'] = errorResponse('Unknown stamp, inverted range or bad parameter.', badRequestCodes);
  r['401'] = responseRef('Unauthorized');
  r['503'] = responseRef('IndexUnavailable');
  return r;
};

/** What a route states of its operation in the document (runtime/route.ts defineRoute). */
export interface RouteOperation {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** Lookups charged: a number, or `per_item` for the batch. A costing route (rate limit, quota) costs more than 0. */
  cost: number | 'per_item';
  parameters?: readonly Parameter[];
  /** The JSON request body's schema (a component). */
  requestBody?: TSchema;
  /**
   * A request body of several media types instead (POST /reconcile: a form or JSON; POST /contributions/check: JSON
   * or CSV), in the document's order: a component's schema is referenced, any other written in place.
   */
  requestMedia?: Record<string, TSchema>;
  responses: Record<string, Node>;
}
