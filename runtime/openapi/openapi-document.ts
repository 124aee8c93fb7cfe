// The read API's OpenAPI 3.1 description: API-SPEC.md plus every CONTRACT-DECISIONS.md choice, as plain data.
//
// This module is data only (no validator, no runtime dependency) so the server can serve it and tests can check
// responses against the very same object. Properties of every object schema are listed in the order the fields
// appear in response bodies: the contract fixes key order, and the test validator enforces it from this order.

import { CHANGE_EVENT_TYPES } from '../../common/dist-layout.ts';
import { MATCH_STATES, RESULT_FORMS, SCORE_BASES } from '../../common/scoreline.ts';
import {
  API_NAME,
  API_SCHEMA,
  API_VERSION,
  ENTITY_TYPES,
  INCLUDES,
  NAMESPACES,
  PROVIDER_ROLES,
  REGISTER_ID,
  STAMP,
  TIERS,
} from '../../common/ids.ts';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED, CORS_MAX_AGE } from '../response-headers.ts';

/** Any JSON value; the document must survive JSON.stringify unchanged, so nothing else is allowed in it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type HttpMethod = 'get' | 'post' | 'options';
/** Operations by method; `servers` only on the operational paths, which live at the root rather than under /api. */
export type PathItem = Partial<Record<HttpMethod, JsonObject>> & { servers?: JsonObject[] };

export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
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

/** Event types of the changelog, in the order counts objects list them (one list, shared with the compiler). */
export { CHANGE_EVENT_TYPES };

// ---------------------------------------------------------------------------------------------------------------
// Small builders: they keep the hundreds of schema lines below readable and uniform.

const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const paramRef = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });

const str = (description?: string): JsonObject => (description ? { type: 'string', description } : { type: 'string' });
const strOrNull = (description?: string): JsonObject =>
  description ? { type: ['string', 'null'], description } : { type: ['string', 'null'] };
const count = (description: string): JsonObject => ({ type: 'integer', minimum: 0, description });
const arrayOf = (items: JsonObject, description?: string): JsonObject =>
  description ? { type: 'array', items, description } : { type: 'array', items };
const orNull = (schema: JsonObject, description?: string): JsonObject =>
  description ? { anyOf: [schema, { type: 'null' }], description } : { anyOf: [schema, { type: 'null' }] };
/** An object whose keys are data (entity types, sections, families) and whose values all share one schema. */
const mapOf = (values: JsonObject, description: string, keys?: JsonObject): JsonObject =>
  keys
    ? { type: 'object', description, propertyNames: keys, additionalProperties: values }
    : { type: 'object', description, additionalProperties: values };

/**
 * A closed object: the listed properties in body order, nothing else. Used for every response object whose
 * fields the contract enumerates, because an extra or misspelt field is a contract bug.
 */
const closed = (description: string, required: string[], properties: Record<string, JsonObject>, extra: JsonObject = {}): JsonObject => ({
  type: 'object',
  description,
  required,
  properties,
  additionalProperties: false,
  ...extra,
});
/** A closed object whose fields are all required: the contract's tables without a "Required" column. */
const allRequired = (description: string, properties: Record<string, JsonObject>, extra: JsonObject = {}): JsonObject =>
  closed(description, Object.keys(properties), properties, extra);

/** An Error body of one code whose message and detail are always there, `detail` of its own schema. */
const fixedError = (description: string, code: string, detail: JsonObject): JsonObject =>
  closed(description, ['error', 'message', 'detail'], { error: { const: code }, message: str(), detail });

/** An Error body whose `error` is one of `codes`. */
const errorOf = (codes: readonly string[], base = 'Error'): JsonObject => ({
  $ref: `#/components/schemas/${base}`,
  type: 'object',
  properties: { error: codes.length === 1 ? { const: codes[0] } : { enum: [...codes] } },
});

const jsonContent = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });

// Header sets. Every API answer carries the CORS headers, `Vary: Accept-Encoding` and, once a key is authenticated
// and it expires, the key-expiry pair; the release stamp is on every response once a release is loaded (errors
// included); the credits and rate-limit headers are on every response of a costing endpoint for an authenticated key
// (402 and 429 included). Bodies of 1 KiB or more may be coded (Content-Encoding) as Accept-Encoding allows.
const API_HEADERS: JsonObject = {
  'Access-Control-Allow-Origin': headerRef('AccessControlAllowOrigin'),
  'Access-Control-Expose-Headers': headerRef('AccessControlExposeHeaders'),
  Vary: headerRef('Vary'),
  'Cache-Control': headerRef('CacheControl'),
  'Content-Encoding': headerRef('ContentEncoding'),
  'X-Register-Key-Expires': headerRef('KeyExpires'),
  'X-Register-Key-Days-Remaining': headerRef('KeyDaysRemaining'),
};
const STAMP_HEADERS: JsonObject = { ...API_HEADERS, 'X-Register-Release-Stamp': headerRef('ReleaseStamp') };
const STAMP_IF_LOADED: JsonObject = { ...API_HEADERS, 'X-Register-Release-Stamp': headerRef('ReleaseStampIfLoaded') };
const COST_HEADERS: JsonObject = {
  ...STAMP_HEADERS,
  'X-Register-Credits-Remaining': headerRef('CreditsRemaining'),
  'RateLimit-Policy': headerRef('RateLimitPolicy'),
  RateLimit: headerRef('RateLimit'),
};
const CHANGELOG_HEADERS: JsonObject = { ...STAMP_HEADERS, ETag: headerRef('ETag') };
/** A per-stamp lookup's 200 and 304: the cost headers and its strong ETag. */
const TAGGED_COST_HEADERS: JsonObject = { ...COST_HEADERS, ETag: headerRef('ETag') };
/** A precomputed document's 200: its ETag was fixed when it was compiled. */
const DOCUMENT_HEADERS: JsonObject = { ...STAMP_HEADERS, ETag: headerRef('ETag') };
/** The operational endpoints (outside /api): no CORS, no key. */
const OPS_STAMP_HEADERS: JsonObject = { 'X-Register-Release-Stamp': headerRef('ReleaseStamp') };
const OPS_STAMP_IF_LOADED: JsonObject = { 'X-Register-Release-Stamp': headerRef('ReleaseStampIfLoaded') };

const ok = (description: string, schema: JsonObject, headers: JsonObject = STAMP_HEADERS): JsonObject => ({
  description,
  headers,
  content: jsonContent(schema),
});
const errorResponse = (description: string, codes: readonly string[], headers: JsonObject = STAMP_HEADERS): JsonObject => ({
  description,
  headers,
  content: jsonContent(errorOf(codes)),
});

// ---------------------------------------------------------------------------------------------------------------
// Vocabularies.

const ERROR_CODES_401 = ['missing_key', 'invalid_key', 'revoked_key', 'key_expired'] as const;
/** Refusals written before a request reaches a route (components/responses/ProtocolRefusal). */
const PROTOCOL_REFUSAL_CODES = ['bad_request', 'request_timeout', 'headers_too_large', 'expectation_failed'] as const;
/** Why a lookup that was due could not be answered: 503, and nothing charged. */
const UNANSWERED_CODES = ['artefact_corrupt', 'upstream_unavailable', 'internal_error'] as const;
/** The 400 codes of GET /matches (CONTRACT-DECISIONS.md, "GET /matches"). */
const MATCHES_BAD_REQUEST_CODES = [
  'anchor_required', 'invalid_anchor', 'invalid_id', 'single_team_required', 'invalid_date', 'invalid_date_range', 'invalid_state',
  'invalid_filter', 'invalid_sort', 'invalid_limit', 'stale_cursor', 'unknown_parameter', 'repeated_parameter', 'invalid_parameter',
] as const;
const KNOWN_ERROR_CODES = [
  'invalid_id',
  'unknown_include',
  'invalid_parameter',
  'invalid_query',
  'invalid_body',
  'empty_batch',
  'batch_too_large',
  'resolve_batch_too_large',
  'unknown_provider',
  'unknown_entity_type',
  'unknown_stamp',
  'invalid_range',
  'stale_cursor',
  'unknown_batch',
  'unknown_finding',
  ...ERROR_CODES_401,
  'quota_exceeded',
  'provider_scope_required',
  'not_found',
  'method_not_allowed',
  'ambiguous_provider_id',
  'gone',
  'payload_too_large',
  'rate_limited',
  'index_unavailable',
  'artefact_corrupt',
  'upstream_unavailable',
  'state_unavailable',
  'summary_unavailable',
  'ack_storage_unavailable',
  'internal_error',
  'uri_too_long',
  'not_ready',
  'pages_unavailable',
  ...MATCHES_BAD_REQUEST_CODES,
  'wrong_entity_type',
  'match_response_too_large',
  ...PROTOCOL_REFUSAL_CODES,
] as const;

// ---------------------------------------------------------------------------------------------------------------
// Schemas.

const ENTITY_ENVELOPE_NOTE =
  'A merged (losing) ID answers with the final survivor, chains followed, plus `requested_id` and `redirected_to`.';

/** The scoreline's fields, which a /matches row states the same way. */
const SCORELINE_FIELDS = {
  home_score: { type: ['integer', 'null'], minimum: 0 },
  away_score: { type: ['integer', 'null'], minimum: 0 },
  result_form: { type: ['string', 'null'], enum: [...RESULT_FORMS, null], description: 'How the result was reached.' },
  shootout_home: { type: ['integer', 'null'], minimum: 0, description: 'Kicks scored in a shoot-out.' },
  shootout_away: { type: ['integer', 'null'], minimum: 0 },
  score_basis: { type: ['string', 'null'], enum: [...SCORE_BASES, null], description: 'What the score rests on.' },
  home_id: orNull(schemaRef('RegisterId'), 'Register ID of the home side.'),
  away_id: orNull(schemaRef('RegisterId'), 'Register ID of the away side.'),
  played_on: { type: ['string', 'null'], format: 'date', description: 'Date the match was played.' },
} satisfies Record<string, JsonObject>;

const schemas: Record<string, JsonObject> = {
  RegisterId: {
    type: 'string',
    pattern: REGISTER_ID.source,
    description:
      'A register ID: `r`, a type-hint letter, 14 lowercase hex digits. Never reused; a published ID never silently ' +
      'vanishes (merged IDs redirect, removed IDs leave a tombstone). The type comes from `entity_type`, never from ' +
      'the prefix. IDs of the earlier v0 service are a different scheme and are rejected as `invalid_id`.',
  },
  Stamp: {
    type: 'string',
    pattern: STAMP.source,
    description: 'A release stamp: compact UTC timestamp, 8 digits, `T`, 6 digits, `Z` (e.g. `20261005T180536Z`).',
  },
  EntityType: { type: 'string', enum: [...ENTITY_TYPES] },
  ProviderRole: {
    type: 'string',
    enum: [...PROVIDER_ROLES],
    description:
      '`canonical_bridge`: a normal public ID link. `bridge_only`: useful for interoperability but not mint-tier ' +
      'corroboration. `overlay_only`: knowledge-base overlay convenience data, never a canonical bridge.',
  },
  IncludeName: {
    type: 'string',
    enum: [...INCLUDES],
    description: 'An expansion name. The overlay is requested as `overlay`, not by the knowledge-base name.',
  },
  ChangeEventType: { type: 'string', enum: [...CHANGE_EVENT_TYPES] },
  ErrorCode: {
    type: 'string',
    enum: [...new Set(KNOWN_ERROR_CODES)],
    description: 'Every machine code the API writes. Each response below narrows it to the codes that status can carry.',
  },

  Error: closed(
    'The error body of every 4xx/5xx response: `{error, message?, detail?}`, keys in that order.',
    ['error'],
    {
      error: schemaRef('ErrorCode'),
      message: str('Human-readable explanation.'),
      detail: str('The offending value or the limit, e.g. the ID that was retired or the batch cap.'),
    },
  ),
  QuotaExceededError: fixedError(
    'HTTP 402: the monthly allowance cannot pay for this request. `message` says whether it is used up or holds ' +
      'fewer credits than the request (a batch: one per valid item) needs; `detail` is when it resets.',
    'quota_exceeded',
    { type: 'string', format: 'date-time', description: 'When the allowance resets: 00:00:00 UTC on the 1st of the next month.' },
  ),
  GoneError: fixedError(
    'A tombstoned register ID (redirect reason `de_corroborated`, no survivor, or an ID the previous release ' +
      'published that this one lacks with no redirect): `error` is `gone`, `message` says ' +
      'the ID was retired and is never reused, `detail` names the ID. Charged as one lookup.',
    'gone',
    schemaRef('RegisterId'),
  ),
  AmbiguousResolveError: closed(
    'HTTP 409 of resolve: the provider ID maps to more than one entity. The Error fields, then every candidate.',
    ['error', 'results', 'count'],
    {
      error: { const: 'ambiguous_provider_id' },
      message: str(),
      detail: str(),
      results: arrayOf(schemaRef('Entity'), 'All candidate entities, each expanded as `include` asked.'),
      count: { type: 'integer', minimum: 2, description: 'Number of candidates (always more than one).' },
    },
  ),

  CanonicalAlias: closed(
    'A typed alias. Aliases are returned rank-ordered, unranked last.',
    ['name'],
    {
      name: str(),
      language: strOrNull('Language tag; currently always null, so filtering by `lang` matches nothing.'),
      type: strOrNull('Alias kind, e.g. `full`, `short`, `secondary`.'),
      rank: { type: ['integer', 'null'], minimum: 1, description: 'Display rank, 1 = primary; null = unranked.' },
    },
  ),
  Scoreline: allRequired(
    'A match\'s scoreline, on every match entity whatever `include` says (other types have none). Every field is ' +
      'present, null where the release holds no published value (an empty cell, or one outside these types and ' +
      'enums, which the compile drops and counts). Scores are goals after play, shoot-out kicks excluded.',
    SCORELINE_FIELDS,
  ),
  MatchRef: allRequired('A team, competition, season or stage a match row names.', {
    reep_id: schemaRef('RegisterId'),
    label: strOrNull('Its label; null when the release holds none.'),
  }),
  MatchRow: allRequired(
    'One published match, fields in this order. Null means the register holds no published value; nothing is inferred.',
    {
      reep_id: schemaRef('RegisterId'),
      generation: schemaRef('MatchGeneration'),
      played_on: { type: ['string', 'null'], format: 'date', description: 'Date the match was played; null when undated.' },
      state: { type: ['string', 'null'], enum: [...MATCH_STATES, null], description: 'The published match state; null when the match has none.' },
      home: orNull(schemaRef('MatchRef')),
      away: orNull(schemaRef('MatchRef')),
      competition: orNull(schemaRef('MatchRef')),
      season: orNull(schemaRef('MatchRef')),
      stage: orNull(schemaRef('MatchRef')),
      home_score: SCORELINE_FIELDS.home_score,
      away_score: SCORELINE_FIELDS.away_score,
      result_form: SCORELINE_FIELDS.result_form,
      shootout_home: SCORELINE_FIELDS.shootout_home,
      shootout_away: SCORELINE_FIELDS.shootout_away,
      score_basis: SCORELINE_FIELDS.score_basis,
      leg: { type: ['string', 'null'], enum: ['1', '2', null], description: 'Leg of a two-legged tie.' },
      aggregate_of: strOrNull('The tie this leg aggregates with, as published.'),
      bridges: arrayOf(
        allRequired('A public bridge of the match (never overlay or private IDs).', { provider: str('Provider key.'), namespace: str(), external_id: str() }),
        'Public bridges, filtered by `providers`.',
      ),
    },
  ),
  MatchGeneration: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Names the compiled match index a page was answered from (64 lowercase hex digits).' },
  MatchesPage: allRequired('One page of matches, at most 100 rows and 262,144 bytes of body (cursor included).', {
    matches: arrayOf(schemaRef('MatchRow')),
    count: count('Rows on this page (may be fewer than `limit`: continue with `next_cursor`).'),
    generation: schemaRef('MatchGeneration'),
    unresolved: arrayOf(str(), 'Anchor or opponent values, as written, that resolve to nothing in this release; the page is then empty.'),
    next_cursor: strOrNull('Continue with this; null on the last page. Signed, valid 24 hours, bound to these filters and this generation.'),
  }),
  Bridge: closed(
    "A provider's own ID linked to the entity.",
    ['provider', 'external_id', 'entity_type'],
    {
      provider: str('Provider key.'),
      namespace: str('Provider ID partition; empty when the provider does not partition its IDs.'),
      external_id: str("The provider's own ID."),
      entity_type: schemaRef('EntityType'),
      role: schemaRef('ProviderRole'),
    },
  ),
  KbOverlayId: allRequired('An inherited-ID hint relayed by the knowledge base.', {
    provider: str(),
    property: str('Knowledge-base property that carries the ID.'),
    external_id: str(),
    confidence: { type: 'number', minimum: 0, maximum: 1 },
  }),
  KbOverlayAlias: closed('A lower-confidence alias from the knowledge base.', ['name', 'source'], {
    name: str(),
    language: strOrNull(),
    source: { const: 'kb' },
    confidence: { type: ['number', 'null'] },
  }),
  KbOverlay: allRequired(
    'The knowledge-base layer. Lower confidence; never a canonical bridge. Always exposed under the neutral key `kb`.',
    {
      source: { const: 'kb' },
      source_tier: { const: 'kb-originated' },
      qid: { type: 'string', pattern: '^Q[1-9][0-9]*$', description: 'Knowledge-base item identifier.' },
      link_confidence: { type: ['number', 'null'] },
      dob_check: strOrNull(),
      ids: arrayOf(schemaRef('KbOverlayId')),
      aliases: arrayOf(schemaRef('KbOverlayAlias')),
    },
  ),
  Overlay: closed('Lower-confidence overlay layers, keyed by source.', [], { kb: schemaRef('KbOverlay') }),
  RelationshipSummary: allRequired(
    'One relationship family of the entity, summarised (structural relationships only).',
    {
      family: str('Relationship family, e.g. `participates_in`.'),
      count: count('Relationships in this family.'),
      roles: mapOf({ type: 'integer', minimum: 0 }, 'Role name to count.'),
      source_providers: arrayOf(str()),
      expansion: { type: 'string', enum: ['summary_only', 'summary_only_high_cardinality'] },
    },
  ),

  Entity: closed(
    'The entity envelope. Base identity is always present; expansions appear only when asked for with `include` ' +
      '(order and repetition of names do not matter). `overlay` is present only when overlay data exists. ' +
      'Every match carries `match` (its scoreline, after `overlay`), whatever `include` says; no other type has it. ' +
      ENTITY_ENVELOPE_NOTE,
    ['reep_id', 'entity_type', 'name_en', 'lifecycle_state'],
    {
      reep_id: schemaRef('RegisterId'),
      entity_type: schemaRef('EntityType'),
      name_en: str('Canonical English label.'),
      lifecycle_state: { type: 'string', minLength: 1, description: "The release's `status` (`active` in practice)." },
      canonical_reep_id: orNull(schemaRef('RegisterId')),
      aliases: arrayOf(schemaRef('CanonicalAlias'), 'Typed aliases, rank-ordered, unranked last; filtered by `lang`.'),
      names: arrayOf(str(), 'Plain names derived from `aliases`.'),
      attributes: mapOf(arrayOf(str()), 'Sourced identity facts: key to provider-sourced strings (empty cells omitted).'),
      bridges: arrayOf(schemaRef('Bridge')),
      relationships: arrayOf(schemaRef('RelationshipSummary')),
      overlay: { $ref: '#/components/schemas/Overlay', type: 'object', minProperties: 1 },
      match: schemaRef('Scoreline'),
      requested_id: { $ref: '#/components/schemas/RegisterId', description: 'Only on redirect: the ID the client asked for.' },
      redirected_to: { $ref: '#/components/schemas/RegisterId', description: 'Only on redirect: the canonical survivor.' },
    },
    {
      dependentRequired: { requested_id: ['redirected_to'], redirected_to: ['requested_id'] },
      // A match has its scoreline and nothing else has one.
      if: { properties: { entity_type: { const: 'match' } } },
      then: { required: ['match'] },
      else: { not: { required: ['match'] } },
    },
  ),
  ResolveResult: allRequired(
    'Entities a provider ID maps to. Empty (`count` 0) means no mapping exists: every key resolves against the ' +
      'complete provider set.',
    { results: arrayOf(schemaRef('Entity')), count: count('Number of results.') },
  ),

  ReleaseSummary: allRequired('The release a namespace serves.', {
    schema_version: str(),
    generated_at: { type: 'string', format: 'date-time' },
    stamp: schemaRef('Stamp'),
    tier: { type: 'string', enum: [...TIERS] },
    publishable: { type: 'boolean', description: '`/api/v1` serves the newest publishable release; `/api/next` the newest of all.' },
    index_generated_at: { type: 'string', format: 'date-time' },
  }),
  ProviderRollup: allRequired('Per-provider bridge counts of the served release.', {
    name: str('Provider key.'),
    bridge_count: count('Bridges of this provider.'),
    overlay_count: count('Overlay hints naming this provider.'),
    entity_types: mapOf({ type: 'integer', minimum: 0 }, 'Entity type to bridge count.', schemaRef('EntityType')),
    role: schemaRef('ProviderRole'),
  }),
  ProviderNoticeFinding: allRequired(
    "One provider-notifiable finding about the provider's data. `seen`/`acknowledged` show the state as it was " +
      'before this delivery (so `seen: false` means new to the caller).',
    {
      finding_id: str(),
      provider: str(),
      kind: str('e.g. a score-outlier kind.'),
      title: str(),
      provider_ref: strOrNull(),
      source: { type: 'object', description: 'Free-form.' },
      observed: strOrNull(),
      expected: strOrNull(),
      severity: str('e.g. `medium`.'),
      suggested_action: strOrNull(),
      payload: { type: 'object', description: 'Free-form.' },
      payload_hash: str(),
      first_seen_at: strOrNull(),
      last_seen_at: strOrNull(),
      seen: { type: 'boolean' },
      seen_at: { type: ['string', 'null'], format: 'date-time' },
      acknowledged: { type: 'boolean' },
      acknowledged_at: { type: ['string', 'null'], format: 'date-time', description: 'The first acknowledgement is kept.' },
    },
  ),

  SearchHit: allRequired('One search result.', {
    reep_id: schemaRef('RegisterId'),
    entity_type: schemaRef('EntityType'),
    label: str(),
    bridge_count: count('Public bridges of the entity.'),
    relevance: { type: 'integer', description: 'Higher is better; ties break by bridge count, then register ID.' },
  }),
  SearchResponse: allRequired('Bounded discovery over canonical labels, canonical aliases and labelled overlay aliases.', {
    query: str('The query as given.'),
    normalised_query: str('The query after normalisation (NFKD, marks removed, case folded, Latin letters folded).'),
    sort: { type: 'string', enum: ['relevance', 'bridges'] },
    type: orNull(schemaRef('EntityType')),
    results: arrayOf(schemaRef('SearchHit')),
    count: count('Number of results.'),
    limit: { type: 'integer', minimum: 1, maximum: 20 },
    bounded: { const: true },
    max_candidates_per_token: { const: 500 },
  }),

  BatchItem: {
    type: 'object',
    description: 'One lookup of a batch. A structurally invalid item gets its own 400 result and costs nothing.',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: ['entity', 'resolve'] },
      id: str('For `entity`: the register ID. Also accepted as the external ID of a `resolve` item.'),
      provider: str(),
      external_id: str(),
      namespace: { type: 'string', default: '' },
      entity_type: schemaRef('EntityType'),
    },
  },
  BatchRequest: {
    type: 'object',
    description:
      'At most 100 items, of which at most 20 `resolve` items; both caps are enforced independently. `include` and ' +
      '`lang` are shared by every item.',
    required: ['requests'],
    properties: {
      requests: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: schemaRef('BatchItem'),
        contains: { type: 'object', properties: { type: { const: 'resolve' } }, required: ['type'] },
        minContains: 0,
        maxContains: 20,
      },
      include: {
        anyOf: [arrayOf(schemaRef('IncludeName')), { type: 'string', description: 'Comma-separated include names.' }],
      },
      lang: str('Shared language filter for aliases.'),
    },
  },
  BatchResult: {
    type: 'object',
    description:
      'What the item would have returned alone: its HTTP status and body. A miss, a bad ID or a tombstone in one ' +
      'item never fails the batch. An item that cannot be answered (a compiled file failed its integrity check, ' +
      "the mirror's origin is down) is 503 with an Error body and costs nothing; the other items are answered and " +
      'charged as usual.',
    required: ['status', 'body'],
    properties: {
      status: { type: 'integer', enum: [200, 400, 404, 409, 410, 503] },
      body: { type: 'object' },
    },
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { status: { const: 200 } } },
        then: { properties: { body: { oneOf: [schemaRef('Entity'), schemaRef('ResolveResult')] } } },
      },
      {
        if: { properties: { status: { const: 400 } } },
        then: {
          properties: {
            body: errorOf(['invalid_id', 'invalid_body', 'invalid_parameter', 'unknown_provider', 'unknown_entity_type']),
          },
        },
      },
      {
        if: { properties: { status: { const: 404 } } },
        then: { properties: { body: errorOf(['not_found']) } },
      },
      {
        if: { properties: { status: { const: 409 } } },
        then: { properties: { body: schemaRef('AmbiguousResolveError') } },
      },
      {
        if: { properties: { status: { const: 410 } } },
        then: { properties: { body: schemaRef('GoneError') } },
      },
      {
        if: { properties: { status: { const: 503 } } },
        then: { properties: { body: errorOf(UNANSWERED_CODES) } },
      },
    ],
  },
  BatchResponse: allRequired('One result per item, in request order.', {
    results: arrayOf(schemaRef('BatchResult')),
    count: count('Number of results (= number of items).'),
  }),

  IndexResponse: allRequired('Service identity and the served release.', {
    name: str(),
    version: str(),
    namespace: { type: 'string', enum: [...NAMESPACES] },
    release: schemaRef('ReleaseSummary'),
    endpoints: mapOf(str(), 'Endpoint name to path.'),
  }),
  MetaResponse: allRequired('API and release metadata.', {
    api_version: str(),
    namespace: { type: 'string', enum: [...NAMESPACES] },
    api_schema: { const: API_SCHEMA },
    index_generated_at: { type: 'string', format: 'date-time' },
    release: schemaRef('ReleaseSummary'),
    counts: mapOf(
      { type: 'integer', minimum: 0 },
      "The served release's own resolvable population; can differ slightly from the public census headline.",
    ),
  }),
  ProvidersResponse: allRequired('Provider rollups of the served release.', {
    providers: arrayOf(schemaRef('ProviderRollup')),
    provider_roles: mapOf(schemaRef('ProviderRole'), 'Provider key to role.'),
    count: count('Number of providers.'),
  }),
  ProviderNoticeSummaryResponse: allRequired('Redacted aggregate notice counts: no titles, refs or payloads.', {
    summary: { type: 'object', description: 'Aggregate counts.' },
    redaction: mapOf({ type: 'boolean' }, 'What was redacted.'),
  }),
  CoverageResponse: allRequired(
    "Coverage counts from the release's coverage.csv (values as published, strings), or computed from the release " +
      '(integers) when the file is absent.',
    {
      stamp: schemaRef('Stamp'),
      sections: mapOf(mapOf({ type: ['string', 'integer'] }, 'Key to value.'), 'Section to its key/value pairs.'),
    },
  ),
  KeyResponse: allRequired(
    'The calling key in the published shape (`key`, `extend`), never its secret or hash.',
    {
      key: closed(
        'The published fields first, null where not set; then this server\'s own (`id` … `credits_reset_at`).',
        ['plan', 'access_model', 'organisation', 'provider', 'expires_at', 'days_remaining', 'expiring_soon', 'credits_remaining', 'rate_limit_remaining'],
        {
          plan: strOrNull('The plan\'s name (`register keys add --plan`), or null.'),
          access_model: strOrNull('How the key was granted (`--access-model`), or null.'),
          organisation: strOrNull('Who the key was issued to (`--organisation`), or null.'),
          provider: strOrNull('`meta.provider` of a provider-scoped key, else null.'),
          expires_at: { type: ['string', 'null'], format: 'date-time', description: 'When the key stops working; null: never.' },
          days_remaining: { type: ['integer', 'null'], minimum: 0, description: 'Whole days before `expires_at` (0 on the last day); null: never expires.' },
          expiring_soon: { type: 'boolean', description: 'True from 7 days before `expires_at`.' },
          credits_remaining: { type: ['integer', 'null'], minimum: 0, description: 'Lookups left in the current month.' },
          rate_limit_remaining: {
            type: 'null',
            description:
              'Always null here: the state stores record a hit whenever they read a key\'s rolling one-second window, ' +
              'so it is not read for a free request. `RateLimit-Policy` on costing answers states the rate.',
          },
          id: str('The key\'s public id (the 8 hex digits after `rk_`).'),
          name: str('The name the key was issued under.'),
          quota: count('Monthly lookup allowance.'),
          rate: { type: 'integer', minimum: 1, description: 'Costing requests per rolling second.' },
          credits_reset_at: { type: 'string', format: 'date-time', description: 'When the monthly allowance resets: 00:00:00 UTC on the 1st of the next month.' },
        },
      ),
      extend: orNull(
        allRequired('How to extend a key that expires (a deployment setting: `serve --extend-how`, `--extend-contact`).', {
          how: str(),
          contact: strOrNull('Whom to ask, or null when the deployment names no one.'),
        }),
        'null for a key that never expires.',
      ),
    },
  ),

  EntityBridgesResponse: closed(
    'Bridges of an entity. ' + ENTITY_ENVELOPE_NOTE,
    ['reep_id', 'bridges', 'count'],
    {
      reep_id: schemaRef('RegisterId'),
      bridges: arrayOf(schemaRef('Bridge')),
      count: count('Number of bridges.'),
      requested_id: schemaRef('RegisterId'),
      redirected_to: schemaRef('RegisterId'),
    },
    { dependentRequired: { requested_id: ['redirected_to'], redirected_to: ['requested_id'] } },
  ),
  EntityOverlayResponse: closed(
    'Overlay of an entity (`{}` with count 0 when there is none). ' + ENTITY_ENVELOPE_NOTE,
    ['reep_id', 'overlay', 'count'],
    {
      reep_id: schemaRef('RegisterId'),
      overlay: schemaRef('Overlay'),
      count: count('Number of overlay layers present in `overlay`.'),
      requested_id: schemaRef('RegisterId'),
      redirected_to: schemaRef('RegisterId'),
    },
    { dependentRequired: { requested_id: ['redirected_to'], redirected_to: ['requested_id'] } },
  ),
  EntityRelationshipsResponse: closed(
    'Grouped relationship summary. Player, coach and referee entities return an empty list by design. ' +
      ENTITY_ENVELOPE_NOTE,
    ['reep_id', 'relationships'],
    {
      reep_id: schemaRef('RegisterId'),
      relationships: arrayOf(schemaRef('RelationshipSummary')),
      requested_id: schemaRef('RegisterId'),
      redirected_to: schemaRef('RegisterId'),
    },
    { dependentRequired: { requested_id: ['redirected_to'], redirected_to: ['requested_id'] } },
  ),

  NoticesPage: allRequired("A page of the provider's current notice batch (empty when there are no active notices).", {
    provider: str(),
    batch_id: { type: ['integer', 'null'] },
    generated_at: strOrNull(),
    findings: arrayOf(schemaRef('ProviderNoticeFinding')),
    count: count('Findings on this page.'),
    total: count('Findings in the batch.'),
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    offset: count('Offset of this page.'),
    next_offset: { type: ['integer', 'null'], minimum: 0, description: 'Offset of the next page, or null on the last.' },
  }),
  AckRequest: {
    type: 'object',
    description: 'Names the whole current batch (`batch_id`) and/or a subset of it (`finding_ids`).',
    properties: {
      batch_id: { type: 'integer', description: "Must be the caller's current batch, else 400 `unknown_batch`." },
      finding_ids: arrayOf(str(), "Each must be in the caller's current feed, else 400 `unknown_finding`."),
      actor: str('Who acknowledged.'),
      note: str('Free text stored with the acknowledgement.'),
    },
    anyOf: [{ required: ['batch_id'] }, { required: ['finding_ids'] }],
  },
  AckResponse: allRequired('What was acknowledged (durably, fsynced, before this response was sent).', {
    provider: str(),
    batch_id: { type: ['integer', 'null'] },
    acknowledged: count('Findings acknowledged by this request.'),
    finding_ids: arrayOf(str()),
  }),

  EventCounts: mapOf({ type: 'integer', minimum: 0 }, 'Event type to number of events.', schemaRef('ChangeEventType')),
  BridgeRef: allRequired('A provider bridge key within one provider.', {
    namespace: str('Provider ID partition; empty when the provider does not partition.'),
    external_id: str(),
  }),
  EntityAddedEvent: allRequired('A new entity.', {
    type: { const: 'entity_added' },
    reep_id: schemaRef('RegisterId'),
    entity_type: schemaRef('EntityType'),
    label: str(),
  }),
  EntityStatusChangedEvent: allRequired('The entity lifecycle state changed.', {
    type: { const: 'entity_status_changed' },
    reep_id: schemaRef('RegisterId'),
    from: str('Previous status.'),
    to: str('New status.'),
  }),
  LabelUpdatedEvent: allRequired('The canonical label changed.', {
    type: { const: 'label_updated' },
    reep_id: schemaRef('RegisterId'),
    from: str('Previous label.'),
    to: str('New label.'),
  }),
  EntityRemovedEvent: allRequired('The entity was tombstoned (its ID now answers 410 `gone`), by a redirect row or because the release no longer holds it.', {
    type: { const: 'entity_removed' },
    reep_id: schemaRef('RegisterId'),
  }),
  RedirectChangedEvent: allRequired('The ID now redirects to this survivor (a new merge, or another final survivor than before).', {
    type: { const: 'redirect_changed' },
    reep_id: schemaRef('RegisterId'),
    redirected_to: schemaRef('RegisterId'),
  }),
  FixtureUpdatedEvent: allRequired("A match's sides, date, leg, aggregate or state changed; the values as they now are.", {
    type: { const: 'fixture_updated' },
    reep_id: schemaRef('RegisterId'),
    home_id: orNull(schemaRef('RegisterId')),
    away_id: orNull(schemaRef('RegisterId')),
    played_on: { type: ['string', 'null'], format: 'date' },
    leg: { type: ['string', 'null'], enum: ['1', '2', null] },
    aggregate_of: orNull(schemaRef('RegisterId'), 'The first leg this match completes, if any.'),
    state: { type: ['string', 'null'], enum: [...MATCH_STATES, null] },
  }),
  ScoreUpdatedEvent: allRequired("A match's scoreline changed; `match` is the new one.", {
    type: { const: 'score_updated' },
    reep_id: schemaRef('RegisterId'),
    match: schemaRef('Scoreline'),
  }),
  ProviderUpdatedEvent: allRequired("One provider's bridges of the entity were added or removed.", {
    type: { const: 'provider_updated' },
    reep_id: schemaRef('RegisterId'),
    provider: str(),
    added: arrayOf(schemaRef('BridgeRef')),
    removed: arrayOf(schemaRef('BridgeRef')),
  }),
  ChangeEvent: {
    type: 'object',
    description: 'One changelog event. Every event has `type` and `reep_id`, in that order, then its own fields.',
    oneOf: [
      schemaRef('EntityAddedEvent'),
      schemaRef('EntityStatusChangedEvent'),
      schemaRef('LabelUpdatedEvent'),
      schemaRef('EntityRemovedEvent'),
      schemaRef('RedirectChangedEvent'),
      schemaRef('ProviderUpdatedEvent'),
      schemaRef('FixtureUpdatedEvent'),
      schemaRef('ScoreUpdatedEvent'),
    ],
    discriminator: { propertyName: 'type' },
  },
  ChangeRelease: allRequired('A published release and the size of its changelog against its predecessor.', {
    stamp: schemaRef('Stamp'),
    prior: orNull(schemaRef('Stamp'), 'The predecessor, or null for the first release.'),
    generated_at: { type: 'string', format: 'date-time' },
    counts: schemaRef('EventCounts'),
  }),
  ChangeReleasesResponse: allRequired('Published releases of this namespace, newest first.', {
    latest: orNull(schemaRef('Stamp'), 'The newest release of the namespace.'),
    releases: arrayOf(schemaRef('ChangeRelease')),
  }),
  ChangeWindowRelease: allRequired('One release walked by the window, with its own event counts.', {
    stamp: schemaRef('Stamp'),
    counts: schemaRef('EventCounts'),
  }),
  ChangesSummaryResponse: allRequired(
    'Event counts for a window of releases: the cheap poll.',
    changeWindowFields(),
  ),
  ChangesPage: allRequired('A page of change events of a window, optionally filtered by type or provider.', {
    ...changeWindowFields(),
    type: orNull(schemaRef('ChangeEventType'), 'The `type` filter, or null.'),
    provider: strOrNull('The `provider` filter, or null.'),
    events: arrayOf(schemaRef('ChangeEvent')),
    matched: count('Events of the window matching the filters, over all pages.'),
    next_cursor: strOrNull('Opaque cursor of the next page, or null on the last page.'),
  }),
  OpenApiDocumentBody: {
    type: 'object',
    description: 'This document, canonical JSON.',
    required: ['openapi', 'info', 'paths', 'components'],
    properties: {
      openapi: { const: '3.1.0' },
      jsonSchemaDialect: { type: 'string' },
      info: { type: 'object' },
      servers: { type: 'array' },
      security: { type: 'array' },
      tags: { type: 'array' },
      paths: { type: 'object' },
      components: { type: 'object' },
    },
  },
};

/** The window fields shared, in this order, by the changes summary and the changes page. */
function changeWindowFields(): Record<string, JsonObject> {
  return {
    since: orNull(schemaRef('Stamp'), 'The `since` parameter as given, or null.'),
    from: orNull(schemaRef('Stamp'), 'Where the window starts (changes after it): `from`, or `since`, which is another way to write it; null for none.'),
    to: { $ref: '#/components/schemas/Stamp', description: 'Where the window ends: the `to` parameter, else the latest release. Never null.' },
    until: { $ref: '#/components/schemas/Stamp', description: 'The newest release of the window (`to`, else the latest).' },
    chain: arrayOf(schemaRef('Stamp'), 'The release stamps walked, oldest first.'),
    releases: arrayOf(schemaRef('ChangeWindowRelease'), 'Per release of `chain`, oldest first.'),
    counts: schemaRef('EventCounts'),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters.

const parameters: Record<string, JsonObject> = {
  ReepId: {
    name: 'reep_id',
    in: 'path',
    required: true,
    description: 'A register ID. Not matching the pattern: 400 `invalid_id` (no cost). Never published: 404 `not_found`.',
    schema: schemaRef('RegisterId'),
  },
  Provider: { name: 'provider', in: 'path', required: true, description: 'Provider key.', schema: { type: 'string', minLength: 1 } },
  ExternalId: {
    name: 'external_id',
    in: 'path',
    required: true,
    description: "The provider's own ID, URL-encoded (a `/` inside the ID is sent as `%2F`).",
    schema: { type: 'string', minLength: 1 },
  },
  Include: {
    name: 'include',
    in: 'query',
    required: false,
    description:
      'Comma-separated expansions. Order and repetition do not matter (same bytes). An unknown name is 400 ' +
      '`unknown_include`. Without include, entity and resolve responses are core-only.',
    style: 'form',
    explode: false,
    schema: arrayOf(schemaRef('IncludeName')),
  },
  Lang: {
    name: 'lang',
    in: 'query',
    required: false,
    description: 'Language tag; when `include` has `aliases`, keeps only aliases of that language.',
    schema: { type: 'string' },
  },
  Namespace: {
    name: 'namespace',
    in: 'query',
    required: false,
    description: 'Provider ID partition; empty when the provider does not partition.',
    schema: { type: 'string', default: '' },
  },
  EntityTypeFilter: {
    name: 'type',
    in: 'query',
    required: false,
    description: 'Entity type filter; an unknown type is 400 `unknown_entity_type`.',
    schema: schemaRef('EntityType'),
  },
  SearchQuery: {
    name: 'q',
    in: 'query',
    required: true,
    description: 'At least 3 normalised characters and at most 5 tokens, else 400 `invalid_query`. The last token also matches as a prefix (3+ characters).',
    schema: { type: 'string', minLength: 3 },
  },
  SearchSort: {
    name: 'sort',
    in: 'query',
    required: false,
    description: '`bridges` orders by public bridge coverage, not popularity.',
    schema: { type: 'string', enum: ['relevance', 'bridges'], default: 'relevance' },
  },
  SearchLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Out of range: 400 `invalid_parameter`.',
    schema: { type: 'integer', minimum: 1, maximum: 20, default: 20 },
  },
  RelationshipFamily: {
    name: 'family',
    in: 'query',
    required: false,
    description: 'Restrict to one relationship family.',
    schema: { type: 'string' },
  },
  RelationshipLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Maximum relationship families returned. Out of range: 400 `invalid_parameter`.',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
  },
  NoticesLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Out of range: 400 `invalid_parameter`.',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
  },
  NoticesOffset: {
    name: 'offset',
    in: 'query',
    required: false,
    description: 'Negative: 400 `invalid_parameter`.',
    schema: { type: 'integer', minimum: 0, default: 0 },
  },
  Since: {
    name: 'since',
    in: 'query',
    required: false,
    description: 'Another way to write `from`: changes after this release (the body says both `since` and `from`). Unknown stamp: 400 `unknown_stamp`.',
    schema: schemaRef('Stamp'),
  },
  From: {
    name: 'from',
    in: 'query',
    required: false,
    description: 'Lower release of an explicit window (changes after it). Unknown stamp: 400 `unknown_stamp`.',
    schema: schemaRef('Stamp'),
  },
  To: {
    name: 'to',
    in: 'query',
    required: false,
    description: 'Upper release of the window (inclusive). `from` newer than `to`: 400 `invalid_range`.',
    schema: schemaRef('Stamp'),
  },
  EventTypeFilter: {
    name: 'type',
    in: 'query',
    required: false,
    description: 'Only events of this type.',
    schema: schemaRef('ChangeEventType'),
  },
  ProviderFilter: {
    name: 'provider',
    in: 'query',
    required: false,
    description: 'Only `provider_updated` events touching this provider.',
    schema: { type: 'string', minLength: 1 },
  },
  ChangesLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Events per page. Out of range: 400 `invalid_parameter`.',
    schema: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
  },
  Cursor: {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'Opaque `next_cursor` of the previous page. Reused with other filters: 400 `stale_cursor`.',
    schema: { type: 'string', minLength: 1 },
  },
  AccessControlRequestMethod: {
    name: 'Access-Control-Request-Method',
    in: 'header',
    required: true,
    description: 'What makes an OPTIONS a CORS preflight (browsers send it); without it the answer is 405.',
    schema: { type: 'string', minLength: 1 },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'An ETag from an earlier response; a match answers 304 with no body and no cost.',
    schema: { type: 'string' },
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Headers and shared responses.

const headers: Record<string, JsonObject> = {
  ReleaseStamp: {
    description: 'The release this response was answered from. On every response once a release is loaded, errors included.',
    required: true,
    schema: schemaRef('Stamp'),
  },
  ReleaseStampIfLoaded: {
    description: 'The release this response was answered from; absent only when no release is loaded.',
    required: false,
    schema: schemaRef('Stamp'),
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

const responses: Record<string, JsonObject> = {
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
    content: jsonContent(schemaRef('QuotaExceededError')),
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
    content: jsonContent(schemaRef('GoneError')),
  },
  PayloadTooLarge: errorResponse('The request body is too large.', ['payload_too_large']),
  IndexUnavailable: errorResponse(
    'No release index is loaded (`index_unavailable`); or a compiled artefact this answer needs is damaged, ' +
      'truncated or missing (`artefact_corrupt`: the server refuses to answer from bytes it cannot trust); or a ' +
      "mirror's origin cannot be reached, timed out or answered 5xx (`upstream_unavailable`); or the state store " +
      'cannot record the request (`state_unavailable`). A 503 costs nothing: a lookup charged before the failure ' +
      'is given back, and `X-Register-Credits-Remaining` shows the credits after it.',
    ['index_unavailable', 'artefact_corrupt', 'upstream_unavailable', 'state_unavailable'],
    STAMP_IF_LOADED,
  ),
  ProtocolRefusal: errorResponse(
    'A request refused before it reaches a route, on any path: not valid HTTP, or an HTTP/1.1 request without ' +
      '`Host` (400 `bad_request`); headers or body too slow (408 `request_timeout`); an `Expect` other than ' +
      '`100-continue` (417 `expectation_failed`); headers too large (431 `headers_too_large`); `CONNECT` (405 ' +
      '`method_not_allowed`, with `Allow`). Always with an Error body and `Connection: close`.',
    [...PROTOCOL_REFUSAL_CODES, 'method_not_allowed'],
    {},
  ),
  UriTooLong: errorResponse('The request URL is longer than 4,096 characters. Not charged.', ['uri_too_long'], STAMP_IF_LOADED),
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

// ---------------------------------------------------------------------------------------------------------------
// Operations.

interface OperationSpec {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** Lookups charged: a number, or `per_item` for the batch. */
  cost: number | 'per_item';
  /** false for the two public endpoints. */
  auth?: boolean;
  parameters?: JsonObject[];
  requestBody?: JsonObject;
  responses: Record<string, JsonObject>;
}

function operation(spec: OperationSpec): JsonObject {
  const op: JsonObject = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    'x-lookup-cost': spec.cost,
  };
  if (spec.auth === false) op.security = [];
  if (spec.parameters) op.parameters = spec.parameters;
  if (spec.requestBody) op.requestBody = spec.requestBody;
  // Any operation answers 414 to an overlong URL, before anything else is read.
  op.responses = { ...spec.responses, '414': responseRef('UriTooLong') };
  return op;
}

/** The statuses every costing endpoint shares, in the order of checks: 401, 400, 429, 402, then the lookup. */
const costingErrors = (badRequestCodes: readonly string[]): Record<string, JsonObject> => ({
  '400': errorResponse('Malformed request. Not charged.', badRequestCodes, COST_HEADERS),
  '401': responseRef('Unauthorized'),
  '402': responseRef('QuotaExceeded'),
  '429': responseRef('RateLimited'),
  '503': responseRef('IndexUnavailable'),
});

const entityLookupErrors = (badRequestCodes: readonly string[]): Record<string, JsonObject> => ({
  ...costingErrors(badRequestCodes),
  '404': responseRef('EntityNotFound'),
  '410': responseRef('EntityGone'),
});

const CHANGE_WINDOW_PARAMS = [paramRef('Since'), paramRef('From'), paramRef('To')];
const changelogResponses = (schema: string, badRequestCodes: readonly string[] | null): Record<string, JsonObject> => {
  const r: Record<string, JsonObject> = {
    '200': ok('The changelog answer.', schemaRef(schema), CHANGELOG_HEADERS),
    '304': responseRef('NotModified'),
  };
  if (badRequestCodes) r['400'] = errorResponse('Unknown stamp, inverted range or bad parameter.', badRequestCodes);
  r['401'] = responseRef('Unauthorized');
  r['503'] = responseRef('IndexUnavailable');
  return r;
};

/** The operational endpoints are served from the root, not the API namespaces. */
const OPS_SERVERS: JsonObject[] = [{ url: '/', description: 'The server root: operational endpoints, outside /api.' }];
/** The Prometheus text format's content type, as prom-client writes it. */
export const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function opsOperation(operationId: string, summary: string, description: string, responses: Record<string, JsonObject>): JsonObject {
  return { operationId, tags: ['operations'], summary, description: `Public (no key), no cost. ${description}`, 'x-lookup-cost': 0, security: [], responses };
}

const paths: Record<string, PathItem> = {
  '/': {
    get: operation({
      operationId: 'getIndex',
      tag: 'metadata',
      summary: 'Service identity and the served release',
      description: 'Public (no key). Reports the namespace (`v1` or `next`) and the release it serves.',
      cost: 0,
      auth: false,
      responses: {
        '200': ok('Service index.', schemaRef('IndexResponse'), DOCUMENT_HEADERS),
        '304': responseRef('DocumentNotModified'),
        '503': responseRef('IndexUnavailable'),
      },
    }),
  },
  '/meta': {
    get: operation({
      operationId: 'getMeta',
      tag: 'metadata',
      summary: 'API and release metadata',
      description: 'No lookup cost.',
      cost: 0,
      responses: {
        '200': ok('Metadata.', schemaRef('MetaResponse'), DOCUMENT_HEADERS),
        '304': responseRef('DocumentNotModified'),
        '401': responseRef('Unauthorized'),
        '503': responseRef('IndexUnavailable'),
      },
    }),
  },
  '/providers': {
    get: operation({
      operationId: 'listProviders',
      tag: 'metadata',
      summary: 'Provider rollups',
      description: 'No lookup cost. Every valid key reads the same complete provider crosswalk.',
      cost: 0,
      responses: {
        '200': ok('Provider rollups.', schemaRef('ProvidersResponse'), DOCUMENT_HEADERS),
        '304': responseRef('DocumentNotModified'),
        '401': responseRef('Unauthorized'),
        '503': responseRef('IndexUnavailable'),
      },
    }),
  },
  '/provider-notices/summary': {
    get: operation({
      operationId: 'getProviderNoticeSummary',
      tag: 'metadata',
      summary: 'Redacted provider-notice counts',
      description: 'No lookup cost. Aggregate counts only: no titles, refs or payloads.',
      cost: 0,
      responses: {
        '200': ok('Redacted summary.', schemaRef('ProviderNoticeSummaryResponse'), DOCUMENT_HEADERS),
        '304': responseRef('DocumentNotModified'),
        '401': responseRef('Unauthorized'),
        '503': errorResponse(
          'The summary artefact (or the release) is not generated, or a compiled file it needs failed its check or cannot be fetched.',
          ['summary_unavailable', 'index_unavailable', 'artefact_corrupt', 'upstream_unavailable'],
          STAMP_IF_LOADED,
        ),
      },
    }),
  },
  '/coverage': {
    get: operation({
      operationId: 'getCoverage',
      tag: 'metadata',
      summary: 'Coverage counts of the served release',
      description: 'No lookup cost. From coverage.csv, or counts computed from the release when the file is absent.',
      cost: 0,
      responses: {
        '200': ok('Coverage.', schemaRef('CoverageResponse'), DOCUMENT_HEADERS),
        '304': responseRef('DocumentNotModified'),
        '401': responseRef('Unauthorized'),
        '503': responseRef('IndexUnavailable'),
      },
    }),
  },
  '/search': {
    get: operation({
      operationId: 'search',
      tag: 'lookup',
      summary: 'Search entities by canonical label or safe alias',
      description:
        'One lookup. Normalisation: Unicode NFKD, combining marks removed, case folded, Latin letters that NFKD ' +
        'leaves whole folded to their base (ł→l, ø→o, đ→d, ß→ss, æ→ae, œ→oe); every run of non-letters/digits ' +
        'separates tokens; nothing else is lost. At most 500 candidates per normalised token (best by bridge ' +
        'count, then register ID). Ties of `relevance` break by bridge count, then register ID.',
      cost: 1,
      parameters: [paramRef('SearchQuery'), paramRef('EntityTypeFilter'), paramRef('SearchSort'), paramRef('SearchLimit')],
      responses: {
        '200': ok('Search results.', schemaRef('SearchResponse'), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...costingErrors(['invalid_query', 'invalid_parameter', 'unknown_entity_type']),
      },
    }),
  },
  '/resolve/{provider}/{external_id}': {
    get: operation({
      operationId: 'resolve',
      tag: 'lookup',
      summary: "Resolve a provider's own ID to register entities",
      description:
        'One lookup. Empty results mean no mapping exists. Redirected IDs resolve to their survivor with ' +
        '`requested_id` and `redirected_to`. More than one entity: 409 with every candidate (charged).',
      cost: 1,
      parameters: [
        paramRef('Provider'),
        paramRef('ExternalId'),
        paramRef('Namespace'),
        paramRef('EntityTypeFilter'),
        paramRef('Include'),
        paramRef('Lang'),
      ],
      responses: {
        '200': ok('The entities the provider ID maps to.', schemaRef('ResolveResult'), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...costingErrors(['invalid_id', 'unknown_provider', 'unknown_include', 'unknown_entity_type', 'invalid_parameter']),
        '409': {
          description: 'The provider ID maps to more than one entity. Charged as one lookup.',
          headers: COST_HEADERS,
          content: jsonContent(schemaRef('AmbiguousResolveError')),
        },
      },
    }),
  },
  '/matches': {
    get: operation({
      operationId: 'listMatches',
      tag: 'lookup',
      summary: 'Published matches of teams, competitions or seasons, by date',
      description:
        'One lookup per page. Anchors (`team`, `competition`, `season`, each repeated for up to 5 values) are register ' +
        'IDs or `provider:namespace:id` references resolved in the same release (merges followed); values of one anchor ' +
        'are ORed, different anchors intersect. A reference that resolves to nothing is listed in `unresolved` and the ' +
        'page is empty. Without `season`, `from` or `to`, the window is the 30 calendar days ending on the release\'s own ' +
        'date. Sorted by date (`desc` by default), ties by `reep_id` ascending; undated matches are left out whenever a ' +
        'date bound applies, and otherwise sort last. A page examines at most 1,000 list entries, so a selective filter ' +
        'may give a short page with a `next_cursor`. Byte-identical pages for the same request and stamp within a clock ' +
        'hour (the cursor records the hour it was issued in).',
      cost: 1,
      parameters: [
        ...(['team', 'competition', 'season'] as const).map((name) => ({
          name,
          in: 'query',
          required: false,
          description: `A ${name}: register ID or \`provider:namespace:id\`; repeat for up to 5 values (a comma does not separate values). At least one anchor is required.`,
          schema: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 5 },
          style: 'form',
          explode: true,
        })),
        { name: 'opponent', in: 'query', required: false, description: 'Only matches against this team (needs exactly one `team`).', schema: { type: 'string', minLength: 1 } },
        { name: 'venue', in: 'query', required: false, description: 'The `team` at home, away, or either (needs exactly one `team`).', schema: { type: 'string', enum: ['home', 'away', 'any'], default: 'any' } },
        { name: 'from', in: 'query', required: false, description: 'First date, inclusive.', schema: { type: 'string', format: 'date' } },
        { name: 'to', in: 'query', required: false, description: 'Last date, inclusive.', schema: { type: 'string', format: 'date' } },
        { name: 'state', in: 'query', required: false, description: `Comma list of ${[...MATCH_STATES, 'none'].join(', ')}; default all.`, schema: { type: 'string' } },
        { name: 'providers', in: 'query', required: false, description: 'Comma list of providers whose bridges are returned (default all).', schema: { type: 'string' } },
        { name: 'require', in: 'query', required: false, description: 'Comma list of providers that must each bridge the match.', schema: { type: 'string' } },
        { name: 'missing', in: 'query', required: false, description: 'Comma list of providers none of which may bridge the match.', schema: { type: 'string' } },
        { name: 'sort', in: 'query', required: false, description: 'By date; ties by `reep_id` ascending either way.', schema: { type: 'string', enum: ['desc', 'asc'], default: 'desc' } },
        { name: 'limit', in: 'query', required: false, description: 'Rows per page.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
        {
          name: 'cursor',
          in: 'query',
          required: false,
          description: '`next_cursor` of the previous page. Changed filters, another generation, expired (24 hours) or altered: 400 `stale_cursor`.',
          schema: { type: 'string', minLength: 1 },
        },
      ],
      responses: {
        '200': ok('A page of matches.', schemaRef('MatchesPage'), COST_HEADERS),
        ...costingErrors(MATCHES_BAD_REQUEST_CODES),
        '409': errorResponse('A provider reference names more than one entity. Charged as one lookup.', ['ambiguous_provider_id'], COST_HEADERS),
        '422': errorResponse('An anchor names an entity of another kind (a player as `team`). Charged as one lookup.', ['wrong_entity_type'], COST_HEADERS),
        '503': errorResponse(
          'As every costing endpoint (components/responses/IndexUnavailable: nothing charged), and `match_response_too_large`: ' +
            'a single row is larger than the page cap. `index_unavailable` also when the release has no match index or the ' +
            'server has no cursor secret configured.',
          ['index_unavailable', 'artefact_corrupt', 'upstream_unavailable', 'state_unavailable', 'match_response_too_large'],
          STAMP_IF_LOADED,
        ),
      },
    }),
  },
  '/batch': {
    post: operation({
      operationId: 'batch',
      tag: 'lookup',
      summary: 'Many entity and resolve lookups in one request',
      description:
        'One lookup per structurally valid entity or resolve item; the rate limiter counts the batch as one ' +
        'request. More than 100 items: 400 `batch_too_large`; more than 20 resolve items: 400 ' +
        '`resolve_batch_too_large` (both name the limit); empty `requests`: 400 `empty_batch`; malformed body: 400 ' +
        '`invalid_body`; bad shared include: 400 `unknown_include`. No quota is consumed on these rejections. If the ' +
        'key has fewer credits than the batch needs, the whole batch is 402 and nothing is charged. An item that ' +
        'cannot be answered is `{status: 503, body: Error}` in place and is given back: `X-Register-Credits-Remaining` ' +
        'counts only the items answered. Memory: an entity is at most 256 KiB as compiled, so one batch holds at ' +
        'most about 100 × 0.5 MiB of answer while it is composed (docs/integrity.md states the budget the test ' +
        'holds it to).',
      cost: 'per_item',
      requestBody: { required: true, content: jsonContent(schemaRef('BatchRequest')) },
      responses: {
        '200': ok('One result per item, in request order.', schemaRef('BatchResponse'), COST_HEADERS),
        ...costingErrors(['invalid_body', 'empty_batch', 'batch_too_large', 'resolve_batch_too_large', 'unknown_include', 'invalid_parameter']),
        '413': responseRef('PayloadTooLarge'),
      },
    }),
  },
  '/entities/{reep_id}': {
    get: operation({
      operationId: 'getEntity',
      tag: 'lookup',
      summary: 'An entity by register ID',
      description:
        'One lookup. A merged ID answers 200 with the final survivor plus `requested_id` and `redirected_to`; a ' +
        'tombstoned ID answers 410 `gone`; an unpublished ID 404 `not_found` (both charged).',
      cost: 1,
      parameters: [paramRef('ReepId'), paramRef('Include'), paramRef('Lang')],
      responses: {
        '200': ok('The entity.', schemaRef('Entity'), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...entityLookupErrors(['invalid_id', 'unknown_include', 'invalid_parameter']),
      },
    }),
  },
  '/entities/{reep_id}/bridges': {
    get: operation({
      operationId: 'getEntityBridges',
      tag: 'lookup',
      summary: 'Provider bridges of an entity',
      description: 'One lookup. Redirects, tombstones and unknown IDs behave as on `/entities/{reep_id}`.',
      cost: 1,
      parameters: [paramRef('ReepId')],
      responses: {
        '200': ok('The bridges.', schemaRef('EntityBridgesResponse'), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...entityLookupErrors(['invalid_id', 'invalid_parameter']),
      },
    }),
  },
  '/entities/{reep_id}/overlay': {
    get: operation({
      operationId: 'getEntityOverlay',
      tag: 'lookup',
      summary: 'Knowledge-base overlay of an entity',
      description: 'One lookup. Redirects, tombstones and unknown IDs behave as on `/entities/{reep_id}`.',
      cost: 1,
      parameters: [paramRef('ReepId')],
      responses: {
        '200': ok('The overlay.', schemaRef('EntityOverlayResponse'), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...entityLookupErrors(['invalid_id', 'invalid_parameter']),
      },
    }),
  },
  '/entities/{reep_id}/relationships': {
    get: operation({
      operationId: 'getEntityRelationships',
      tag: 'lookup',
      summary: 'Grouped relationship summary of an entity',
      description:
        'One lookup. Only structural relationships are summarised (competition, season, stage, match, and which ' +
        'teams participate in which competition-seasons). Redirects, tombstones and unknown IDs behave as on ' +
        '`/entities/{reep_id}`.',
      cost: 1,
      parameters: [paramRef('ReepId'), paramRef('RelationshipFamily'), paramRef('RelationshipLimit')],
      responses: {
        '200': ok('The relationship summary.', schemaRef('EntityRelationshipsResponse'), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...entityLookupErrors(['invalid_id', 'invalid_parameter']),
      },
    }),
  },
  '/notices': {
    get: operation({
      operationId: 'listNotices',
      tag: 'notices',
      summary: "The provider's own notice feed",
      description:
        "No lookup cost; provider-scoped key (`meta.provider`) required. Returns a page of the provider's current " +
        'batch, each finding showing its state before this delivery; the delivery then marks them seen.',
      cost: 0,
      parameters: [paramRef('NoticesLimit'), paramRef('NoticesOffset')],
      responses: {
        '200': ok('A page of findings.', schemaRef('NoticesPage')),
        '400': errorResponse('`limit` or `offset` out of range.', ['invalid_parameter']),
        '401': responseRef('Unauthorized'),
        '403': responseRef('ProviderScopeRequired'),
        '503': responseRef('IndexUnavailable'),
      },
    }),
  },
  '/notices/ack': {
    post: operation({
      operationId: 'ackNotices',
      tag: 'notices',
      summary: "Acknowledge findings of the provider's current batch",
      description:
        'No lookup cost; provider-scoped key required. Every ID must be in the caller\'s own current feed, else 400 ' +
        '`unknown_batch` / `unknown_finding`, without saying whether it exists for anyone else. Durable (fsynced) ' +
        'before the 200; acknowledging twice is harmless and keeps the first `acknowledged_at`.',
      cost: 0,
      requestBody: { required: true, content: jsonContent(schemaRef('AckRequest')) },
      responses: {
        '200': ok('What was acknowledged.', schemaRef('AckResponse')),
        '400': errorResponse('Malformed body, or a batch or finding not in the caller\'s current feed.', ['invalid_body', 'unknown_batch', 'unknown_finding']),
        '401': responseRef('Unauthorized'),
        '403': responseRef('ProviderScopeRequired'),
        '413': responseRef('PayloadTooLarge'),
        '503': errorResponse(
          'The deployment has no writable state store (e.g. a read-only mirror), no release is loaded, or the ' +
            'notice batch (or a file vouching for it) failed its check.',
          ['ack_storage_unavailable', 'index_unavailable', 'artefact_corrupt', 'upstream_unavailable'],
          STAMP_IF_LOADED,
        ),
      },
    }),
  },
  '/changes/summary': {
    get: operation({
      operationId: 'getChangesSummary',
      tag: 'changelog',
      summary: 'Event counts for a window of releases (the cheap poll)',
      description:
        'No cost. The window is `since` (changes after it, up to the latest) or `from`/`to` (any two published ' +
        'releases). Strong ETag; a matching `If-None-Match` gets 304.',
      cost: 0,
      parameters: [...CHANGE_WINDOW_PARAMS, paramRef('IfNoneMatch')],
      responses: changelogResponses('ChangesSummaryResponse', ['unknown_stamp', 'invalid_range', 'invalid_parameter']),
    }),
  },
  '/changes': {
    get: operation({
      operationId: 'listChanges',
      tag: 'changelog',
      summary: 'Pages of change events',
      description:
        'No cost. Same window as `/changes/summary`, filtered by `type` and `provider`, paged by an opaque cursor. ' +
        'Strong ETag; a matching `If-None-Match` gets 304.',
      cost: 0,
      parameters: [
        ...CHANGE_WINDOW_PARAMS,
        paramRef('EventTypeFilter'),
        paramRef('ProviderFilter'),
        paramRef('ChangesLimit'),
        paramRef('Cursor'),
        paramRef('IfNoneMatch'),
      ],
      responses: changelogResponses('ChangesPage', ['unknown_stamp', 'invalid_range', 'invalid_parameter', 'stale_cursor']),
    }),
  },
  '/changes/releases': {
    get: operation({
      operationId: 'listReleases',
      tag: 'changelog',
      summary: 'Published releases, newest first',
      description: 'No cost. Strong ETag; a matching `If-None-Match` gets 304.',
      cost: 0,
      parameters: [paramRef('IfNoneMatch')],
      responses: changelogResponses('ChangeReleasesResponse', null),
    }),
  },
  '/key': {
    get: operation({
      operationId: 'getKey',
      tag: 'keys',
      summary: 'The calling key, its plan and remaining credits',
      description: 'No lookup cost. Answers even before a release is loaded, so the stamp header may be absent.',
      cost: 0,
      responses: {
        '200': ok('The calling key.', schemaRef('KeyResponse'), STAMP_IF_LOADED),
        '401': errorResponse('Missing, invalid, revoked or expired key.', ERROR_CODES_401, {
          ...STAMP_IF_LOADED,
          'WWW-Authenticate': headerRef('WWWAuthenticate'),
        }),
      },
    }),
  },
  '/openapi.json': {
    get: operation({
      operationId: 'getOpenApi',
      tag: 'metadata',
      summary: 'This OpenAPI document',
      description: 'Public (no key), no cost; served from memory, so it answers even before a release is loaded.',
      cost: 0,
      auth: false,
      responses: { '200': ok('The OpenAPI document.', schemaRef('OpenApiDocumentBody'), STAMP_IF_LOADED) },
    }),
  },
  // Operational endpoints (runtime/ops/ops-app.ts): at the root, no key, no cost, never under a namespace.
  '/healthz': {
    servers: OPS_SERVERS,
    get: opsOperation('getHealth', 'The process is up', 'Answers 200 while the process serves; nothing else is checked.', {
      '200': { description: 'The process is up.', content: jsonContent(allRequired('Liveness.', { status: { const: 'ok' } })) },
    }),
  },
  '/readyz': {
    servers: OPS_SERVERS,
    get: opsOperation('getReady', 'Ready to serve the API', 'A release is loaded and the state store answers; 503 `not_ready` names which is missing.', {
      '200': ok('Ready.', allRequired('Readiness.', { status: { const: 'ready' }, release: schemaRef('Stamp') }), OPS_STAMP_HEADERS),
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

// Every API path answers a CORS preflight; an OPTIONS that is not one (no Access-Control-Request-Method) is 405.
for (const item of Object.values(paths)) {
  if (item.servers) continue;
  const main = (item.get ?? item.post)!;
  const pathParams = ((main.parameters ?? []) as JsonObject[]).filter((p) => ['ReepId', 'Provider', 'ExternalId'].some((n) => p.$ref === `#/components/parameters/${n}`));
  item.options = {
    operationId: `preflight${String(main.operationId).replace(/^./, (c) => c.toUpperCase())}`,
    parameters: [...pathParams, paramRef('AccessControlRequestMethod')],
    tags: ['cors'],
    summary: 'CORS preflight',
    description: 'No key, no cost. Send Access-Control-Request-Method (browsers do); without it the answer is 405.',
    'x-lookup-cost': 0,
    security: [],
    responses: { '204': responseRef('Preflight'), '405': responseRef('MethodNotAllowed') },
  };
}

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

function pageHeaders(cache: string): JsonObject {
  const fixed = (description: string, value: string): JsonObject => ({ description, required: true, schema: { const: value } });
  return {
    'Cache-Control': fixed('Pages revalidate; hashed assets never change.', cache),
    'Content-Security-Policy': fixed('Nothing is loaded from outside this server.', PAGE_CSP),
    'X-Content-Type-Options': fixed('Types are never sniffed.', 'nosniff'),
  };
}

const PAGES_UNAVAILABLE = errorResponse('The pages were not built (`npm run build` builds them into build/pages/).', ['pages_unavailable'], {});

function pageOperation(operationId: string, summary: string, description: string, types: string[], cache: string, extra: JsonObject = {}): JsonObject {
  const content: JsonObject = {};
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

const pages: Record<string, PathItem> = {
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
(pages['/assets/{file}'].get!.responses as JsonObject)['404'] = errorResponse('No built asset has this name.', ['not_found'], {});

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
  Accept-Encoding allows, with \`Vary: Accept-Encoding\`; never for HEAD or 304.
- **Refusals before routing** (not valid HTTP, no \`Host\` on HTTP/1.1, a bad \`Expect\`, \`CONNECT\`, slow or
  oversized headers) carry an Error body too (components/responses/ProtocolRefusal).
- **x-lookup-cost** on each operation: lookups charged per request (\`per_item\` for the batch).`;

export const openapiDocument: OpenApiDocument = deepFreeze({
  openapi: '3.1.0',
  jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
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
  paths,
  'x-pages': pages,
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
    schemas,
    parameters,
    headers,
    responses,
  },
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const HTTP_METHODS: readonly HttpMethod[] = ['get', 'post'];

/** Every documented (method, path template) pair of the API, in document order; the router's route table must match it. */
export const OPENAPI_ROUTES: ReadonlyArray<{ method: string; path: string }> = Object.freeze(
  Object.entries(openapiDocument.paths).filter(([, item]) => !item.servers).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => item[m] !== undefined).map((m) => Object.freeze({ method: m.toUpperCase(), path })),
  ),
);
