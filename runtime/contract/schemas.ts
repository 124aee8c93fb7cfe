// Every request and response body of the API as a TypeBox schema: the document's components/schemas and the types.
//
// Properties of every object are listed in the order the fields appear in response bodies: the contract fixes key
// order, and the test validator enforces it from this order (TypeBox keeps declared order).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CHANGE_EVENT_TYPES } from '../../common/dist-layout.ts';
import { API_SCHEMA, ENTITY_TYPES, INCLUDES, NAMESPACES, PROVIDER_ROLES, REGISTER_ID, STAMP, TIERS } from '../../common/ids.ts';
import { MATCH_STATES, RESULT_FORMS, SCORE_BASES } from '../../common/scoreline.ts';
import { MAX_CANDIDATES_PER_TOKEN } from '../../common/normalise.ts';
import { MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES, MAX_CHECK_ROWS, MAX_CONTRIBUTION_RECORD_CHARS } from '../../common/request-limits.ts';
import { KNOWN_ERROR_CODES, UNANSWERED_CODES, type ErrorCode as Code } from './error-codes.ts';
import { arrayOf, closed, component, count, mapOf, oneOfValues, orNull, ref, str, strOrNull } from './schema-kit.ts';

const { Optional, Literal } = Type;

/** Items of one batch, and resolve items among them (each cap its own 400 code). */
/** Finding IDs one acknowledgement may name, and the length of its `actor` and `note`. */
const MAX_ACK_IDS = 1000;
const MAX_ACK_TEXT = 2000;

const ENTITY_ENVELOPE_NOTE =
  'A merged (losing) ID answers with the final survivor, chains followed, plus `requested_id` and `redirected_to`.';

export const RegisterId = component(
  'RegisterId',
  Type.String({
    pattern: REGISTER_ID.source,
    description:
      'A register ID: `r`, a type-hint letter, 14 lowercase hex digits. Never reused; a published ID never silently ' +
      'vanishes (merged IDs redirect, removed IDs leave a tombstone). The type comes from `entity_type`, never from ' +
      'the prefix. IDs of the earlier v0 service are a different scheme and are rejected as `invalid_id`.',
  }),
);
export const Stamp = component(
  'Stamp',
  Type.String({ pattern: STAMP.source, description: 'A release stamp: compact UTC timestamp, 8 digits, `T`, 6 digits, `Z` (e.g. `20261005T180536Z`).' }),
);
export const EntityType = component('EntityType', oneOfValues(ENTITY_TYPES));
const ProviderRole = component(
  'ProviderRole',
  oneOfValues(PROVIDER_ROLES, {
    description:
      '`canonical_bridge`: a normal public ID link. `bridge_only`: useful for interoperability but not mint-tier ' +
      'corroboration. `overlay_only`: knowledge-base overlay convenience data, never a canonical bridge.',
  }),
);
export const IncludeName = component(
  'IncludeName',
  oneOfValues(INCLUDES, { description: 'An expansion name. The overlay is requested as `overlay`, not by the knowledge-base name.' }),
);
export const ChangeEventType = component('ChangeEventType', oneOfValues(CHANGE_EVENT_TYPES));
const ErrorCode = component(
  'ErrorCode',
  oneOfValues([...new Set(KNOWN_ERROR_CODES)], { description: 'Every machine code the API writes. Each response below narrows it to the codes that status can carry.' }),
);

const ErrorBody = component(
  'Error',
  closed('The error body of every 4xx/5xx response: `{error, message?, detail?}`, keys in that order.', {
    error: ref(ErrorCode),
    message: Optional(str('Human-readable explanation.')),
    detail: Optional(str('The offending value or the limit, e.g. the ID that was retired or the batch cap.')),
  }),
);

/** An Error body whose `error` is one of `codes` (a response narrows the code list to what its status carries). */
export const errorOf = (codes: readonly Code[]) =>
  ref(ErrorBody, { type: 'object', properties: { error: codes.length === 1 ? { const: codes[0] } : { enum: [...codes] } } });

/** An Error body of one code whose message and detail are always there, `detail` of its own schema. */
const fixedError = <D extends TSchema>(description: string, code: Code, detail: D) =>
  closed(description, { error: Literal(code), message: str(), detail });

export const QuotaExceededError = component(
  'QuotaExceededError',
  fixedError(
    'HTTP 402: the monthly allowance cannot pay for this request. `message` says whether it is used up or holds ' +
      'fewer credits than the request (a batch: one per valid item) needs; `detail` is when it resets.',
    'quota_exceeded',
    Type.String({ format: 'date-time', description: 'When the allowance resets: 00:00:00 UTC on the 1st of the next month.' }),
  ),
);
export const GoneError = component(
  'GoneError',
  fixedError(
    'A tombstoned register ID (redirect reason `de_corroborated`, no survivor, or an ID the previous release ' +
      'published that this one lacks with no redirect): `error` is `gone`, `message` says ' +
      'the ID was retired and is never reused, `detail` names the ID. Charged as one lookup.',
    'gone',
    ref(RegisterId),
  ),
);

const CanonicalAlias = component(
  'CanonicalAlias',
  closed('A typed alias. Aliases are returned rank-ordered, unranked last.', {
    name: str(),
    language: Optional(strOrNull('Language tag; currently always null, so filtering by `lang` matches nothing.')),
    type: Optional(strOrNull('Alias kind, e.g. `full`, `short`, `secondary`.')),
    rank: Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'Display rank, 1 = primary; null = unranked.' })),
  }),
);

const nullableCount = (description?: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], description ? { description } : {});

/** The scoreline's fields, which a /matches row states the same way. */
const SCORELINE_FIELDS = {
  home_score: nullableCount(),
  away_score: nullableCount(),
  result_form: oneOfValues([...RESULT_FORMS, null], { description: 'How the result was reached.' }),
  shootout_home: nullableCount('Kicks scored in a shoot-out.'),
  shootout_away: nullableCount(),
  score_basis: oneOfValues([...SCORE_BASES, null], { description: 'What the score rests on.' }),
  home_id: orNull(ref(RegisterId), 'Register ID of the home side.'),
  away_id: orNull(ref(RegisterId), 'Register ID of the away side.'),
  played_on: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'Date the match was played.' }),
};

const Scoreline = component(
  'Scoreline',
  closed(
    'A match\'s scoreline, on every match entity whatever `include` says (other types have none). Every field is ' +
      'present, null where the release holds no published value (an empty cell, or one outside these types and ' +
      'enums, which the compile drops and counts). Scores are goals after play, shoot-out kicks excluded.',
    SCORELINE_FIELDS,
  ),
);
const MatchRef = component(
  'MatchRef',
  closed('A team, competition, season or stage a match row names.', { reep_id: ref(RegisterId), label: strOrNull('Its label; null when the release holds none.') }),
);
const MatchGeneration = component(
  'MatchGeneration',
  Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Names the compiled match index a page was answered from (64 lowercase hex digits).' }),
);
const MatchRow = component(
  'MatchRow',
  closed('One published match, fields in this order. Null means the register holds no published value; nothing is inferred.', {
    reep_id: ref(RegisterId),
    generation: ref(MatchGeneration),
    played_on: Type.Union([Type.String({ format: 'date' }), Type.Null()], { description: 'Date the match was played; null when undated.' }),
    state: oneOfValues([...MATCH_STATES, null], { description: 'The published match state; null when the match has none.' }),
    home: orNull(ref(MatchRef)),
    away: orNull(ref(MatchRef)),
    competition: orNull(ref(MatchRef)),
    season: orNull(ref(MatchRef)),
    stage: orNull(ref(MatchRef)),
    home_score: SCORELINE_FIELDS.home_score,
    away_score: SCORELINE_FIELDS.away_score,
    result_form: SCORELINE_FIELDS.result_form,
    shootout_home: SCORELINE_FIELDS.shootout_home,
    shootout_away: SCORELINE_FIELDS.shootout_away,
    score_basis: SCORELINE_FIELDS.score_basis,
    leg: oneOfValues(['1', '2', null], { description: 'Leg of a two-legged tie.' }),
    aggregate_of: strOrNull('The tie this leg aggregates with, as published.'),
    bridges: arrayOf(
      closed('A public bridge of the match (never overlay or private IDs).', { provider: str('Provider key.'), namespace: str(), external_id: str() }),
      'Public bridges, filtered by `providers`.',
    ),
  }),
);
export const MatchesPage = component(
  'MatchesPage',
  closed('One page of matches, at most 100 rows and 262,144 bytes of body (cursor included).', {
    matches: arrayOf(ref(MatchRow)),
    count: count('Rows on this page (may be fewer than `limit`: continue with `next_cursor`).'),
    generation: ref(MatchGeneration),
    unresolved: arrayOf(str(), 'Anchor or opponent values, as written, that resolve to nothing in this release; the page is then empty.'),
    next_cursor: strOrNull('Continue with this; null on the last page. Signed, valid 24 hours, bound to these filters and this generation.'),
  }),
);
const Bridge = component(
  'Bridge',
  closed("A provider's own ID linked to the entity.", {
    provider: str('Provider key.'),
    namespace: Optional(str('Provider ID partition; empty when the provider does not partition its IDs.')),
    external_id: str("The provider's own ID."),
    entity_type: ref(EntityType),
    role: Optional(ref(ProviderRole)),
  }),
);
const KbOverlayId = component(
  'KbOverlayId',
  closed('An inherited-ID hint relayed by the knowledge base.', {
    provider: str(),
    property: str('Knowledge-base property that carries the ID.'),
    external_id: str(),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  }),
);
const KbOverlayAlias = component(
  'KbOverlayAlias',
  closed('A lower-confidence alias from the knowledge base.', {
    name: str(),
    language: Optional(strOrNull()),
    source: Literal('kb'),
    confidence: Optional(Type.Union([Type.Number(), Type.Null()])),
  }),
);
const KbOverlay = component(
  'KbOverlay',
  closed('The knowledge-base layer. Lower confidence; never a canonical bridge. Always exposed under the neutral key `kb`.', {
    source: Literal('kb'),
    source_tier: Literal('kb-originated'),
    qid: Type.String({ pattern: '^Q[1-9][0-9]*$', description: 'Knowledge-base item identifier.' }),
    link_confidence: Type.Union([Type.Number(), Type.Null()]),
    dob_check: strOrNull(),
    ids: arrayOf(ref(KbOverlayId)),
    aliases: arrayOf(ref(KbOverlayAlias)),
  }),
);
const Overlay = component('Overlay', closed('Lower-confidence overlay layers, keyed by source.', { kb: Optional(ref(KbOverlay)) }));
const RelationshipSummary = component(
  'RelationshipSummary',
  closed('One relationship family of the entity, summarised (structural relationships only).', {
    family: str('Relationship family, e.g. `participates_in`.'),
    count: count('Relationships in this family.'),
    roles: mapOf(Type.Integer({ minimum: 0 }), 'Role name to count.'),
    source_providers: arrayOf(str()),
    expansion: oneOfValues(['summary_only', 'summary_only_high_cardinality']),
  }),
);

/** Both or neither: a redirected answer names the ID asked for and the survivor. */
const REDIRECT_PAIR = { dependentRequired: { requested_id: ['redirected_to'], redirected_to: ['requested_id'] } };

export const Entity = component(
  'Entity',
  closed(
    'The entity envelope. Base identity is always present; expansions appear only when asked for with `include` ' +
      '(order and repetition of names do not matter). `overlay` is present only when overlay data exists. ' +
      'Every match carries `match` (its scoreline, after `overlay`), whatever `include` says; no other type has it. ' +
      ENTITY_ENVELOPE_NOTE,
    {
      reep_id: ref(RegisterId),
      entity_type: ref(EntityType),
      name_en: str('Canonical English label.'),
      lifecycle_state: Type.String({ minLength: 1, description: "The release's `status` (`active` in practice)." }),
      canonical_reep_id: Optional(orNull(ref(RegisterId))),
      aliases: Optional(arrayOf(ref(CanonicalAlias), 'Typed aliases, rank-ordered, unranked last; filtered by `lang`.')),
      names: Optional(arrayOf(str(), 'Plain names derived from `aliases`.')),
      attributes: Optional(mapOf(arrayOf(str()), 'Sourced identity facts: key to provider-sourced strings (empty cells omitted).')),
      bridges: Optional(arrayOf(ref(Bridge))),
      relationships: Optional(arrayOf(ref(RelationshipSummary))),
      overlay: Optional(ref(Overlay, { type: 'object', minProperties: 1 })),
      match: Optional(ref(Scoreline)),
      requested_id: Optional(ref(RegisterId, { description: 'Only on redirect: the ID the client asked for.' })),
      redirected_to: Optional(ref(RegisterId, { description: 'Only on redirect: the canonical survivor.' })),
    },
    {
      ...REDIRECT_PAIR,
      // A match has its scoreline and nothing else has one.
      if: { properties: { entity_type: { const: 'match' } } },
      then: { required: ['match'] },
      else: { not: { required: ['match'] } },
    },
  ),
);
export const AmbiguousResolveError = component(
  'AmbiguousResolveError',
  closed('HTTP 409 of resolve: the provider ID maps to more than one entity. The Error fields, then every candidate.', {
    error: Literal('ambiguous_provider_id'),
    message: Optional(str()),
    detail: Optional(str()),
    results: arrayOf(ref(Entity), 'All candidate entities, each expanded as `include` asked.'),
    count: Type.Integer({ minimum: 2, description: 'Number of candidates (always more than one).' }),
  }),
);
export const ResolveResult = component(
  'ResolveResult',
  closed('Entities a provider ID maps to. Empty (`count` 0) means no mapping exists: every key resolves against the complete provider set.', {
    results: arrayOf(ref(Entity)),
    count: count('Number of results.'),
  }),
);

const ReleaseSummary = component(
  'ReleaseSummary',
  closed('The release a namespace serves.', {
    schema_version: str(),
    generated_at: Type.String({ format: 'date-time' }),
    stamp: ref(Stamp),
    tier: oneOfValues(TIERS),
    publishable: Type.Boolean({ description: '`/api/v1` serves the newest publishable release; `/api/next` the newest of all.' }),
    index_generated_at: Type.String({ format: 'date-time' }),
  }),
);
const ProviderRollup = component(
  'ProviderRollup',
  closed('Per-provider bridge counts of the served release.', {
    name: str('Provider key.'),
    bridge_count: count('Bridges of this provider.'),
    overlay_count: count('Overlay hints naming this provider.'),
    entity_types: mapOf(Type.Integer({ minimum: 0 }), 'Entity type to bridge count.', ref(EntityType)),
    role: ref(ProviderRole),
  }),
);
const freeForm = () => Type.Object({}, { description: 'Free-form.' });
const ProviderNoticeFinding = component(
  'ProviderNoticeFinding',
  closed(
    "One provider-notifiable finding about the provider's data. `seen`/`acknowledged` show the state as it was " +
      'before this delivery (so `seen: false` means new to the caller).',
    {
      finding_id: str(),
      provider: str(),
      kind: str('e.g. a score-outlier kind.'),
      title: str(),
      provider_ref: strOrNull(),
      source: freeForm(),
      observed: strOrNull(),
      expected: strOrNull(),
      severity: str('e.g. `medium`.'),
      suggested_action: strOrNull(),
      payload: freeForm(),
      payload_hash: str(),
      first_seen_at: strOrNull(),
      last_seen_at: strOrNull(),
      seen: Type.Boolean(),
      seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      acknowledged: Type.Boolean(),
      acknowledged_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The first acknowledgement is kept.' }),
    },
  ),
);

const SearchHit = component(
  'SearchHit',
  closed('One search result.', {
    reep_id: ref(RegisterId),
    entity_type: ref(EntityType),
    label: str(),
    bridge_count: count('Public bridges of the entity.'),
    relevance: Type.Integer({ description: 'Higher is better; ties break by bridge count, then register ID.' }),
  }),
);
export const SearchResponse = component(
  'SearchResponse',
  closed('Bounded discovery over canonical labels, canonical aliases and labelled overlay aliases.', {
    query: str('The query as given.'),
    normalised_query: str('The query after normalisation (NFKD, marks removed, case folded, Latin letters folded).'),
    sort: oneOfValues(['relevance', 'bridges']),
    type: orNull(ref(EntityType)),
    results: arrayOf(ref(SearchHit)),
    count: count('Number of results.'),
    limit: Type.Integer({ minimum: 1, maximum: 20 }),
    bounded: Literal(true),
    max_candidates_per_token: Literal(MAX_CANDIDATES_PER_TOKEN),
  }),
);

// The reconciliation service (routes/reconcile.ts): the W3C Entity Reconciliation Community Group's Service API
// 0.2, whose own JSON schemas the tests also validate these bodies against (test/fixtures/reconciliation-api-0.2/).

const ReconcileType = component(
  'ReconcileType',
  closed('A type of the reconciliation service: an entity type of the register.', { id: ref(EntityType), name: str('The type as people read it.') }),
);
export const ReconcileManifest = component(
  'ReconcileManifest',
  closed(
    'The service manifest (Reconciliation Service API 0.2, "Service Manifest"). URLs are absolute, made from the ' +
      'URL the manifest was asked at.',
    {
      versions: Type.Array(Literal('0.2'), { minItems: 1, maxItems: 1 }),
      name: str('The register, the namespace and the release stamp this service answers from.'),
      identifierSpace: str('Prefix of every candidate `id`: this namespace\'s `/entities/` path, so a prefix plus a register ID is that entity\'s URL.'),
      schemaSpace: str('The Entity schema of this OpenAPI document.'),
      defaultTypes: arrayOf(ref(ReconcileType), 'The entity types, in the register\'s order.'),
      view: closed('The explorer\'s page of an entity.', { url: str('`{{id}}` stands for the register ID.') }),
      batchSize: Type.Integer({ minimum: 1, description: 'Most queries one request may hold.' }),
      authentication: closed(
        'The key as an API key in the `key` query parameter (a Swagger 2.0 security scheme, as 0.2 asks); ' +
          '`Authorization: Bearer` works as well. The manifest itself needs no key.',
        { type: Literal('apiKey'), name: Literal('key'), in: Literal('query'), description: str() },
      ),
      documentation: str('How to use this service from OpenRefine.'),
    },
  ),
);
export const ReconcileQuery = component(
  'ReconcileQuery',
  closed(
    'One reconciliation query (0.2): `query`, `properties` or both. `type` narrows the candidates to that entity ' +
      'type (several types: no narrowing); `type_strict` is accepted and ignored, as the spec leaves it undefined.',
    {
      query: Optional(str('A name, or a register ID.')),
      type: Optional(Type.Union([Type.String(), Type.Array(Type.String())], { 'x-error': 'unknown_entity_type' })),
      limit: Optional(Type.Integer({ minimum: 1, description: 'Most candidates; larger is read as the most the service gives.' })),
      properties: Optional(
        Type.Array(
          closed('A condition: a property (a provider, `<provider>:<namespace>`, or `country`) and its value or values.', {
            pid: str(),
            v: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Object({ id: Type.String() }), Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Object({ id: Type.String() })]))]),
          }),
        ),
      ),
      type_strict: Optional(oneOfValues(['any', 'should', 'all'])),
    },
    { 'x-error': 'invalid_query' },
  ),
);
export const ReconcileQueryBatch = component('ReconcileQueryBatch', mapOf(ref(ReconcileQuery), 'A reconciliation query batch (0.2): queries by ID.'));
const ReconcileCandidate = component(
  'ReconcileCandidate',
  closed('A candidate entity (0.2 "Reconciliation Candidate").', {
    id: ref(RegisterId),
    name: str('The canonical label.'),
    type: arrayOf(ref(ReconcileType)),
    score: Type.Number({ minimum: 0, maximum: 1, description: 'Higher is better; 1 for a provider-ID or register-ID hit.' }),
    match: Type.Boolean(),
    features: arrayOf(
      closed('A matching feature, 0..1.', {
        id: oneOfValues(['exact', 'normalised', 'alias', 'token_overlap', 'initials', 'type', 'country', 'provider_id', 'register_id']),
        value: Type.Number({ minimum: 0, maximum: 1 }),
      }),
    ),
  }),
);
export const ReconcileResults = component(
  'ReconcileResults',
  mapOf(
    closed('The candidates of one query, best first; a query that cannot be asked has none and its `error` (not charged).', {
      result: arrayOf(ref(ReconcileCandidate)),
      error: Optional(errorOf(['invalid_query', 'unknown_entity_type', 'unknown_provider', 'invalid_id'])),
    }),
    'A reconciliation result batch (0.2): one entry per query, under its ID.',
  ),
);
export const ReconcileForm = component(
  'ReconcileForm',
  closed('The form 0.2 posts.', { queries: str('A reconciliation query batch as JSON: query IDs to ReconcileQuery.') }),
);

// Request bodies. `x-error` names the 400 code a failed check answers (runtime/contract/request-check.ts); a node
// without one answers its nearest annotated ancestor's code.

export const BatchItem = component(
  'BatchItem',
  closed(
    'One lookup of a batch. A structurally invalid item gets its own 400 result and costs nothing. `entity` needs ' +
      '`id`; `resolve` needs `provider` and `external_id` (or `id`).',
    {
      type: oneOfValues(['entity', 'resolve']),
      id: Optional(str('For `entity`: the register ID. Also accepted as the external ID of a `resolve` item.')),
      provider: Optional(str()),
      external_id: Optional(str()),
      namespace: Optional(Type.String({ default: '' })),
      entity_type: Optional(ref(EntityType, { 'x-error': 'unknown_entity_type' })),
    },
    { 'x-error': 'invalid_body' },
  ),
);
export const BatchRequest = component(
  'BatchRequest',
  closed(
    `At most ${MAX_BATCH_ITEMS} items, of which at most ${MAX_BATCH_RESOLVES} \`resolve\` items; both caps are enforced independently. ` +
      '`include` and `lang` are shared by every item.',
    {
      requests: Type.Array(ref(BatchItem), {
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        contains: Type.Object({ type: Literal('resolve') }),
        minContains: 0,
        maxContains: MAX_BATCH_RESOLVES,
        // Each cap has its own code; the caps' `detail` names the limit.
        'x-error': { minItems: 'empty_batch', maxItems: 'batch_too_large', maxContains: 'resolve_batch_too_large' },
      }),
      include: Optional(
        Type.Union([arrayOf(ref(IncludeName)), Type.String({ description: 'Comma-separated include names.' })], { 'x-error': 'unknown_include' }),
      ),
      lang: Optional(str('Shared language filter for aliases.')),
    },
    { 'x-error': 'invalid_body' },
  ),
);
const BatchResult = component(
  'BatchResult',
  closed(
    'What the item would have returned alone: its HTTP status and body. A miss, a bad ID or a tombstone in one ' +
      'item never fails the batch. An item that cannot be answered (a compiled file failed its integrity check, ' +
      "the mirror's origin is down) is 503 with an Error body and costs nothing; the other items are answered and " +
      'charged as usual.',
    { status: oneOfValues([200, 400, 404, 409, 410, 503]), body: Type.Object({}) },
    {
      allOf: [
        { if: { properties: { status: { const: 200 } } }, then: { properties: { body: { oneOf: [ref(Entity), ref(ResolveResult)] } } } },
        {
          if: { properties: { status: { const: 400 } } },
          then: { properties: { body: errorOf(['invalid_id', 'invalid_body', 'invalid_parameter', 'unknown_provider', 'unknown_entity_type']) } },
        },
        { if: { properties: { status: { const: 404 } } }, then: { properties: { body: errorOf(['not_found']) } } },
        { if: { properties: { status: { const: 409 } } }, then: { properties: { body: ref(AmbiguousResolveError) } } },
        { if: { properties: { status: { const: 410 } } }, then: { properties: { body: ref(GoneError) } } },
        { if: { properties: { status: { const: 503 } } }, then: { properties: { body: errorOf(UNANSWERED_CODES) } } },
      ],
    },
  ),
);
export const BatchResponse = component(
  'BatchResponse',
  closed('One result per item, in request order.', { results: arrayOf(ref(BatchResult)), count: count('Number of results (= number of items).') }),
);

/** Added in 2026-11 (issue 40), optional and last, so a client of the earlier shape reads the rest unchanged. */
const SigningKeyId = Type.String({
  pattern: '^[0-9a-f]{16}$',
  description:
    'Key ID (first 16 hex digits of the sha256 of the raw Ed25519 public key) whose signature over the served ' +
    "release's public manifest this server verified (`register serve --trust`). Absent when the server does not " +
    'check signatures. A partner compares it with the key ID the register publishes (docs/guarantees.md).',
});
export const IndexResponse = component(
  'IndexResponse',
  closed('Service identity and the served release.', {
    name: str(),
    version: str(),
    namespace: oneOfValues(NAMESPACES),
    release: ref(ReleaseSummary),
    endpoints: mapOf(str(), 'Endpoint name to path.'),
    signing_key_id: Type.Optional(SigningKeyId),
  }),
);
export const MetaResponse = component(
  'MetaResponse',
  closed('API and release metadata.', {
    api_version: str(),
    namespace: oneOfValues(NAMESPACES),
    api_schema: Literal(API_SCHEMA),
    index_generated_at: Type.String({ format: 'date-time' }),
    release: ref(ReleaseSummary),
    counts: mapOf(Type.Integer({ minimum: 0 }), "The served release's own resolvable population; can differ slightly from the public census headline."),
    signing_key_id: Type.Optional(SigningKeyId),
  }),
);
export const ProvidersResponse = component(
  'ProvidersResponse',
  closed('Provider rollups of the served release.', {
    providers: arrayOf(ref(ProviderRollup)),
    provider_roles: mapOf(ref(ProviderRole), 'Provider key to role.'),
    count: count('Number of providers.'),
  }),
);
export const ProviderNoticeSummaryResponse = component(
  'ProviderNoticeSummaryResponse',
  closed('Redacted aggregate notice counts: no titles, refs or payloads.', {
    summary: Type.Object({}, { description: 'Aggregate counts.' }),
    redaction: mapOf(Type.Boolean(), 'What was redacted.'),
  }),
);
export const CoverageResponse = component(
  'CoverageResponse',
  closed(
    "Coverage counts from the release's coverage.csv (values as published, strings), or computed from the release " +
      '(integers) when the file is absent.',
    {
      stamp: ref(Stamp),
      sections: mapOf(mapOf(Type.Union([Type.String(), Type.Integer()]), 'Key to value.'), 'Section to its key/value pairs.'),
    },
  ),
);
const KeyExtension = closed('How to extend a key that expires (a deployment setting: `serve --extend-how`, `--extend-contact`).', {
  how: str(),
  // Absent, never null, when the deployment names no one: the published shape has `contact` as a string.
  contact: Optional(str('Whom to ask; absent when the deployment names no one.')),
});
export const KeyResponse = component(
  'KeyResponse',
  closed('The calling key in the published shape (`key`, `extend`), never its secret or hash.', {
    key: closed("The published fields first, null where not set; then this server's own (`id` … `credits_reset_at`).", {
      plan: strOrNull("The plan's name (`register keys add --plan`), or null."),
      access_model: strOrNull('How the key was granted (`--access-model`), or null.'),
      organisation: strOrNull('Who the key was issued to (`--organisation`), or null.'),
      provider: strOrNull('`meta.provider` of a provider-scoped key, else null.'),
      expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the key stops working; null: never.' }),
      days_remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Whole days before `expires_at` (0 on the last day); null: never expires.' }),
      expiring_soon: Type.Boolean({ description: 'True from 7 days before `expires_at`.' }),
      credits_remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Lookups left in the current month.' }),
      rate_limit_remaining: Type.Null({
        description:
          "Always null here: the state stores record a hit whenever they read a key's rolling one-second window, " +
          'so it is not read for a free request. `RateLimit-Policy` on costing answers states the rate.',
      }),
      id: Optional(str("The key's public id (the 8 hex digits after `rk_`).")),
      name: Optional(str('The name the key was issued under.')),
      quota: Optional(count('Monthly lookup allowance.')),
      rate: Optional(Type.Integer({ minimum: 1, description: 'Costing requests per rolling second.' })),
      credits_reset_at: Optional(Type.String({ format: 'date-time', description: 'When the monthly allowance resets: 00:00:00 UTC on the 1st of the next month.' })),
    }),
    extend: orNull(KeyExtension, 'null for a key that never expires.'),
  }),
);

/** A view of one entity: its ID, the view's own fields, then the redirect pair of a merged ID. */
const entityView = <P extends Record<string, TSchema>>(name: string, description: string, fields: P) =>
  component(
    name,
    closed(
      `${description} ${ENTITY_ENVELOPE_NOTE}`,
      { reep_id: ref(RegisterId), ...fields, requested_id: Optional(ref(RegisterId)), redirected_to: Optional(ref(RegisterId)) },
      REDIRECT_PAIR,
    ),
  );
export const EntityBridgesResponse = entityView('EntityBridgesResponse', 'Bridges of an entity.', {
  bridges: arrayOf(ref(Bridge)),
  count: count('Number of bridges.'),
});
export const EntityOverlayResponse = entityView('EntityOverlayResponse', 'Overlay of an entity (`{}` with count 0 when there is none).', {
  overlay: ref(Overlay),
  count: count('Number of overlay layers present in `overlay`.'),
});
export const EntityRelationshipsResponse = entityView(
  'EntityRelationshipsResponse',
  'Grouped relationship summary. Player, coach and referee entities return an empty list by design.',
  { relationships: arrayOf(ref(RelationshipSummary)) },
);

export const NoticesPage = component(
  'NoticesPage',
  closed("A page of the provider's current notice batch (empty when there are no active notices).", {
    provider: str(),
    batch_id: Type.Union([Type.Integer(), Type.Null()]),
    generated_at: strOrNull(),
    findings: arrayOf(ref(ProviderNoticeFinding)),
    count: count('Findings on this page.'),
    total: count('Findings in the batch.'),
    limit: Type.Integer({ minimum: 1, maximum: 100 }),
    offset: count('Offset of this page.'),
    next_offset: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Offset of the next page, or null on the last.' }),
  }),
);
const ackText = (description: string) =>
  Optional(Type.Union([Type.String({ maxLength: MAX_ACK_TEXT }), Type.Null()], { description }));
export const AckRequest = component(
  'AckRequest',
  closed(
    'Names the whole current batch (`batch_id`) and/or a subset of it (`finding_ids`).',
    {
      batch_id: Optional(Type.Integer({ description: "Must be the caller's current batch, else 400 `unknown_batch`." })),
      finding_ids: Optional(Type.Array(str(), { maxItems: MAX_ACK_IDS, description: "Each must be in the caller's current feed, else 400 `unknown_finding`." })),
      actor: ackText('Who acknowledged.'),
      note: ackText('Free text stored with the acknowledgement.'),
    },
    { anyOf: [{ required: ['batch_id'] }, { required: ['finding_ids'] }], 'x-error': 'invalid_body' },
  ),
);
export const AckResponse = component(
  'AckResponse',
  closed('What was acknowledged (durably, fsynced, before this response was sent).', {
    provider: str(),
    batch_id: Type.Union([Type.Integer(), Type.Null()]),
    acknowledged: count('Findings acknowledged by this request.'),
    finding_ids: arrayOf(str()),
  }),
);

const EventCounts = component('EventCounts', mapOf(Type.Integer({ minimum: 0 }), 'Event type to number of events.', ref(ChangeEventType)));
const BridgeRef = component(
  'BridgeRef',
  closed('A provider bridge key within one provider.', { namespace: str('Provider ID partition; empty when the provider does not partition.'), external_id: str() }),
);
const event = <P extends Record<string, TSchema>>(name: string, type: string, description: string, fields: P) =>
  component(name, closed(description, { type: Literal(type), reep_id: ref(RegisterId), ...fields }));
const EVENTS = [
  event('EntityAddedEvent', 'entity_added', 'A new entity.', { entity_type: ref(EntityType), label: str() }),
  event('EntityStatusChangedEvent', 'entity_status_changed', 'The entity lifecycle state changed.', { from: str('Previous status.'), to: str('New status.') }),
  event('LabelUpdatedEvent', 'label_updated', 'The canonical label changed.', { from: str('Previous label.'), to: str('New label.') }),
  event('EntityRemovedEvent', 'entity_removed', 'The entity was tombstoned (its ID now answers 410 `gone`), by a redirect row or because the release no longer holds it.', {}),
  event('RedirectChangedEvent', 'redirect_changed', 'The ID now redirects to this survivor (a new merge, or another final survivor than before).', { redirected_to: ref(RegisterId) }),
  event('FixtureUpdatedEvent', 'fixture_updated', "A match's sides, date, leg, aggregate or state changed; the values as they now are.", {
    home_id: orNull(ref(RegisterId)),
    away_id: orNull(ref(RegisterId)),
    played_on: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    leg: oneOfValues(['1', '2', null]),
    aggregate_of: orNull(ref(RegisterId), 'The first leg this match completes, if any.'),
    state: oneOfValues([...MATCH_STATES, null]),
  }),
  event('ScoreUpdatedEvent', 'score_updated', "A match's scoreline changed; `match` is the new one.", { match: ref(Scoreline) }),
  event('ProviderUpdatedEvent', 'provider_updated', "One provider's bridges of the entity were added or removed.", {
    provider: str(),
    added: arrayOf(ref(BridgeRef)),
    removed: arrayOf(ref(BridgeRef)),
  }),
];
const ChangeEvent = component(
  'ChangeEvent',
  Type.Unsafe({
    type: 'object',
    description: 'One changelog event. Every event has `type` and `reep_id`, in that order, then its own fields.',
    // ProviderUpdated before the match events, as the document has always listed them.
    oneOf: [0, 1, 2, 3, 4, 7, 5, 6].map((i) => ref(EVENTS[i])),
    discriminator: { propertyName: 'type' },
  }),
);
const ChangeRelease = component(
  'ChangeRelease',
  closed('A published release and the size of its changelog against its predecessor.', {
    stamp: ref(Stamp),
    prior: orNull(ref(Stamp), 'The predecessor, or null for the first release.'),
    generated_at: Type.String({ format: 'date-time' }),
    counts: ref(EventCounts),
  }),
);
export const ChangeReleasesResponse = component(
  'ChangeReleasesResponse',
  closed('Published releases of this namespace, newest first.', {
    latest: orNull(ref(Stamp), 'The newest release of the namespace.'),
    releases: arrayOf(ref(ChangeRelease)),
  }),
);
const ChangeWindowRelease = component(
  'ChangeWindowRelease',
  closed('One release walked by the window, with its own event counts.', { stamp: ref(Stamp), counts: ref(EventCounts) }),
);
/** The window fields shared, in this order, by the changes summary and the changes page. */
const changeWindowFields = () => ({
  since: orNull(ref(Stamp), 'The `since` parameter as given, or null.'),
  from: orNull(ref(Stamp), 'Where the window starts (changes after it): `from`, or `since`, which is another way to write it; null for none.'),
  to: ref(Stamp, { description: 'Where the window ends: the `to` parameter, else the latest release. Never null.' }),
  until: ref(Stamp, { description: 'The newest release of the window (`to`, else the latest).' }),
  chain: arrayOf(ref(Stamp), 'The release stamps walked, oldest first.'),
  releases: arrayOf(ref(ChangeWindowRelease), 'Per release of `chain`, oldest first.'),
  counts: ref(EventCounts),
});
export const ChangesSummaryResponse = component('ChangesSummaryResponse', closed('Event counts for a window of releases: the cheap poll.', changeWindowFields()));
export const ChangesPage = component(
  'ChangesPage',
  closed('A page of change events of a window, optionally filtered by type or provider.', {
    ...changeWindowFields(),
    type: orNull(ref(ChangeEventType), 'The `type` filter, or null.'),
    provider: strOrNull('The `provider` filter, or null.'),
    events: arrayOf(ref(ChangeEvent)),
    matched: count('Events of the window matching the filters, over all pages.'),
    next_cursor: strOrNull('Opaque cursor of the next page, or null on the last page.'),
  }),
);
export const OpenApiDocumentBody = component(
  'OpenApiDocumentBody',
  Type.Object(
    {
      openapi: Literal('3.1.0'),
      jsonSchemaDialect: Optional(Type.String()),
      info: Type.Object({}),
      servers: Optional(Type.Array(Type.Unknown())),
      security: Optional(Type.Array(Type.Unknown())),
      tags: Optional(Type.Array(Type.Unknown())),
      paths: Type.Object({}),
      components: Type.Object({}),
    },
    { description: 'This document, canonical JSON.' },
  ),
);

/** Types of bodies the runtime builds as objects (the others are composed from bytes, or typed by bodyChecker). */
export type KeyResponseBody = Static<typeof KeyResponse>;
export type KeyExtensionBody = Static<typeof KeyExtension>;

export { ref } from './schema-kit.ts';
export type { TSchema as Schema } from '@sinclair/typebox';

// ---------------------------------------------------------------------------------------------------------------
// POST /contributions/check (docs/contributions.md).

export const CHECK_STATUSES = ['already_bridged', 'new_bridge', 'conflict', 'redirected', 'retired', 'ambiguous', 'no_candidate', 'invalid'] as const;
export const CHECK_BANDS = [1, 0.95, 0.9, 0.8] as const;

export const CheckRequest = component(
  'CheckRequest',
  closed(
    `At most ${MAX_CHECK_ROWS} rows, each an object of the contribution file's columns (names matched case-insensitively): ` +
      '`provider`, `external_id`, and optionally `name`, `date_of_birth`, `type`, `nationality`, `namespace`, `reep_id`, ' +
      "`<provider>_id` cross-IDs for providers the release knows; any other key is passed through in `extra`.",
    {
      rows: Type.Array(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()]), { description: 'One row: column name to value.' }), {
        minItems: 1,
        maxItems: MAX_CHECK_ROWS,
        'x-error': { minItems: 'empty_check', maxItems: 'check_too_large' },
      }),
      first_row: Optional(Type.Integer({ minimum: 1, default: 1, description: 'The number of the first row, so the rows of a file sent in chunks are numbered across them.' })),
    },
    { 'x-error': 'invalid_body' },
  ),
);

const CheckCandidate = component(
  'CheckCandidate',
  closed('An entity the row may name, with how well its name agrees (runtime/release/name-match.ts).', {
    reep_id: ref(RegisterId),
    entity_type: ref(EntityType),
    label: str(),
    score: Type.Number({ minimum: 0, maximum: 1, description: 'Rounded to thousandths.' }),
    features: closed('Each feature 0..1.', {
      exact: Type.Number(), normalised: Type.Number(), alias: Type.Number(), token_overlap: Type.Number(),
      initials: Type.Number(), type: Type.Number(), country: Type.Number(),
    }),
  }),
);

const CheckResultRow = component(
  'CheckResult',
  closed('What the release says of one input row (docs/contributions.md lists every status, band and reason).', {
    row: Type.Integer({ minimum: 1, description: 'The row number (data rows from `first_row`; the header is not one).' }),
    line: Optional(Type.Integer({ minimum: 2, description: 'CSV input only: the physical line where the record starts (the header is line 1).' })),
    status: oneOfValues(CHECK_STATUSES),
    reep_id: orNull(ref(RegisterId), 'The entity the status names (a survivor for `redirected`, the retired ID for `retired`); null when none.'),
    band: Type.Unsafe<(typeof CHECK_BANDS)[number] | null>({
      type: ['number', 'null'],
      enum: [...CHECK_BANDS, null],
      description: '1 a direct typed bridge; 0.95 cross-ID plus the normalised full name; 0.9 for review; 0.8 a name candidate only; null: no write.',
    }),
    reasons: arrayOf(str(), 'Reason codes (docs/contributions.md).'),
    provider: str(),
    namespace: str('The namespace the provider ID was looked up in.'),
    external_id: str(),
    candidates: arrayOf(ref(CheckCandidate), 'The entities involved, with their name scores; for a name-only row, the best candidates first.'),
    extra: mapOf(str(), 'The columns the check does not read, passed through as written.'),
  }),
);

const countsOf = (keys: readonly string[], description: string) =>
  closed(description, Object.fromEntries(keys.map((k) => [k, count(`Rows of ${k}.`)])) as Record<string, ReturnType<typeof count>>);

export const CheckResponse = component(
  'CheckResponse',
  closed('One result per row, in order, and their counts.', {
    stamp: ref(Stamp),
    results: arrayOf(ref(CheckResultRow)),
    count: count('Number of results (= number of rows).'),
    summary: closed('Counts per status and per band.', {
      statuses: countsOf(CHECK_STATUSES, 'Rows per status.'),
      bands: countsOf(['1', '0.95', '0.9', '0.8', 'none'], 'Rows per band (`none`: no band).'),
    }),
  }),
);

/** The CSV body (text/csv) of POST /contributions/check, with its limits: written in place, not a component. */
export const CheckCsvBody = Type.Unsafe<string>({
  type: 'string',
  description:
    'A contribution file: a header row naming `provider` and `external_id` (and any of the JSON form\'s columns), then ' +
    `at most ${MAX_CHECK_ROWS} records, UTF-8, each at most ${MAX_CONTRIBUTION_RECORD_CHARS} characters. Number the ` +
    'rows with `?first_row=`.',
});
