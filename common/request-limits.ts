// The limits a request to the API meets, declared once for the runtime that enforces them, the OpenAPI document
// that publishes them (its descriptions and schemas are written from these) and the client that stays within them.

/** Longest request URL, in characters: longer is 414 `uri_too_long`. */
export const MAX_URL_CHARS = 4096;

/** Longest path parameter once percent-decoded (a provider's own ID), in characters. */
export const MAX_PATH_PARAMETER_CHARS = 512;

/** Header fields a request may carry: more is 431 `headers_too_large`, never a field silently dropped. */
export const MAX_HEADER_FIELDS = 100;

/** Bytes of a request's header section (Node's own default, stated): more is 431 `headers_too_large`. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** Items one POST /batch may hold, and resolve items among them. */
export const MAX_BATCH_ITEMS = 100;
export const MAX_BATCH_RESOLVES = 20;

/** Rows one POST /contributions/check may hold (the CLI checks files of any length, and the client sends chunks of it). */
export const MAX_CHECK_ROWS = 1000;

/**
 * Longest record of a contribution file, in characters: a longer one (a runaway quote, 10 MB in one field) stops
 * the read with an error naming its line, before more of it is held in memory.
 */
export const MAX_CONTRIBUTION_RECORD_CHARS = 64 * 1024;
