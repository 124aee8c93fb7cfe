// The machine codes of the contract's Error bodies: declared here once. ApiError.code is typed by ErrorCode, so a
// throw with a code the document does not list fails to compile; the responses narrow the list per status.

/** The 401 codes: the key is missing, malformed or unknown, revoked, or expired. */
export const ERROR_CODES_401 = ['missing_key', 'invalid_key', 'revoked_key', 'key_expired'] as const;
export type AuthErrorCode = (typeof ERROR_CODES_401)[number];
/** Refusals written before a request reaches a route (components/responses/ProtocolRefusal). */
export const PROTOCOL_REFUSAL_CODES = ['bad_request', 'request_timeout', 'headers_too_large', 'expectation_failed'] as const;
/** Why a lookup that was due could not be answered: 503, and nothing charged. */
export const UNANSWERED_CODES = ['artefact_corrupt', 'upstream_unavailable', 'internal_error'] as const;
export const KNOWN_ERROR_CODES = [
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
  // GET /matches (CONTRACT-DECISIONS.md, "GET /matches"); its 400 list follows from its parameters.
  'anchor_required', 'invalid_anchor', 'single_team_required', 'invalid_date', 'invalid_date_range', 'invalid_state',
  'invalid_filter', 'invalid_sort', 'invalid_limit', 'unknown_parameter', 'repeated_parameter',
  'wrong_entity_type',
  'match_response_too_large',
  // POST /contributions/check (docs/contributions.md): refusals of the whole request, never charged.
  'empty_check', 'check_too_large', 'invalid_csv', 'unsupported_media_type',
  ...PROTOCOL_REFUSAL_CODES,
] as const;
/** The edge deployment's admin route (edge/admin.ts): no part of the published API, so not in its document. */
const ADMIN_ERROR_CODES = ['admin_disabled', 'invalid_token'] as const;
/** Every code an Error body may carry. */
export type ErrorCode = (typeof KNOWN_ERROR_CODES)[number] | (typeof ADMIN_ERROR_CODES)[number];
