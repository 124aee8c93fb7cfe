// The headers partners expect from any HTTP API, made in one place for runtime/app.ts: CORS, strong ETags and their
// matching, the IETF httpapi RateLimit fields, and the cache policy. Content coding is the Node adapter's (compress.ts).
import { fromHex, sha256, toBase64url } from '#platform/crypto';
import { API_VERSION } from '../common/ids.ts';
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED, CORS_MAX_AGE } from './contract/http-parts.ts';
import type { KeyRecord } from './interfaces.ts';
import { quotaPeriodEnd } from './state/quota-period.ts';

/** Adds the CORS headers every API answer carries. */
export function corsHeaders(into: Record<string, string>): void {
  into['access-control-allow-origin'] = '*';
  into['access-control-expose-headers'] = CORS_EXPOSED;
}

/** The headers of a preflight's 204 for a path answering `methods` (HEAD goes with GET). */
export function preflightHeaders(methods: string[]): Record<string, string> {
  const all = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': all.join(', '),
    'access-control-allow-headers': CORS_ALLOWED_HEADERS,
    'access-control-max-age': String(CORS_MAX_AGE),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Entity tags.

const tagOf = (digest: Uint8Array): string => `"${toBase64url(digest.subarray(0, 16))}"`;

/** The strong ETag of a precomputed document: from the sha256 the compiler recorded for it in the manifest. */
export function documentEtag(sha256Hex: string): string {
  return tagOf(fromHex(sha256Hex));
}

/** The strong ETag of a precomputed document served with its signing key ID added (GET / and /meta under `--trust`). */
export function signedDocumentEtag(sha256Hex: string, keyId: string): string {
  return tagOf(sha256(`${sha256Hex} signing_key_id ${keyId}`));
}

/**
 * The strong ETag of a per-stamp answer, without reading its body. Sound because such a body is a function of
 * exactly what is hashed: the release's public manifest (it lists the sha256 of every file the answer can be made
 * from, so a stamp compiled again differently gets other tags), the API version (how bodies are composed), the
 * route, its decoded path parameters and the query's name/value pairs (sorted, and `include` as a set: neither
 * order changes a body). Two
 * servers over the same dist give the same tag. Answers that depend on the key (its credits, its notices) are not
 * per-stamp and get no tag; the credit and rate headers are not part of the body.
 */
function derivedEtag(manifestSha256: string, route: string, params: Record<string, string>, query: URLSearchParams): string {
  // `include` names a set: order and repetition change no body (CONTRACT-DECISIONS.md), so they change no tag.
  const pairs = [...query].map(([k, v]): [string, string] => (k === 'include' ? [k, [...new Set(v.split(','))].sort().join(',')] : [k, v])).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const names = Object.keys(params).sort();
  const text = JSON.stringify([manifestSha256, API_VERSION, route, names.map((n) => [n, params[n]]), pairs]);
  return tagOf(sha256(text));
}

/**
 * The strong ETag of an answer that is a function of the release and a request's body (POST /contributions/check):
 * the release's public manifest, the API version, the route, the query pairs that matter and the body's bytes.
 */
export function bodyEtag(manifestSha256: string, route: string, parts: readonly string[], body: Uint8Array): string {
  return tagOf(sha256(JSON.stringify([manifestSha256, API_VERSION, route, parts, toBase64url(sha256(body))])));
}

/** Tags already derived, by release and request target: a popular answer's tag is hashed once per stamp. */
const derived = new Map<string, string>();
/** Past this many, the tags are forgotten and derived again as asked: a bound, not a policy. */
const DERIVED_KEPT = 65_536;

/**
 * derivedEtag of the answer to `target` (the request URL, which decides the route, its parameters and the query) in
 * the release whose answers are kept under `scope` (Release.answerScope, short and unique per opened release).
 */
export function perStampEtag(scope: string, manifestSha256: string, route: string, target: string, params: Record<string, string>, query: URLSearchParams): string {
  const key = scope + target;
  let tag = derived.get(key);
  if (tag === undefined) {
    if (derived.size >= DERIVED_KEPT) derived.clear();
    derived.set(key, (tag = derivedEtag(manifestSha256, route, params, query)));
  }
  return tag;
}

/** RFC 9110 If-None-Match: `*`, or a list compared weakly (W/ prefixes ignored). */
export function matchesEtag(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '') === bare;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Rate-limit fields, as draft-ietf-httpapi-ratelimit-headers (-09 onwards) writes them: Structured Field lists whose
// items are a quoted policy name with parameters. RateLimit-Policy states each quota policy (`q` quota units in a
// window of `w` seconds); RateLimit states the service limit now (`r` units remaining, `t` seconds to the reset).

/** The rolling one-second rate of costing requests (a batch is one request). */
const BURST_POLICY = 'burst';
/** The monthly allowance of lookups (a batch costs one per item), reset 00:00:00 UTC on the 1st. */
const MONTHLY_POLICY = 'monthly';

/**
 * Adds RateLimit-Policy and RateLimit for `key` at `nowMs`. `credits`: lookups left after this request (null when
 * the store could not say: RateLimit is then left out). `retryAfter`: whole seconds until a rate slot frees, given
 * on a 429 only. The burst window's remaining slots are stated only when they are known to be 0 (the 429): the
 * state stores record a hit whenever they read a key's window, and the draft lets an answer leave a policy out.
 */
export function rateLimitHeaders(key: KeyRecord, credits: number | null, nowMs: number, retryAfter: number | null, into: Record<string, string>): void {
  const resetMs = quotaPeriodEnd(nowMs);
  into['ratelimit-policy'] = policyOf(key, resetMs);
  const items: string[] = [];
  if (retryAfter !== null) items.push(`"${BURST_POLICY}";r=0;t=${retryAfter}`);
  if (credits !== null) items.push(`"${MONTHLY_POLICY}";r=${credits};t=${Math.max(0, Math.ceil((resetMs - nowMs) / 1000))}`);
  if (items.length) into.ratelimit = items.join(', ');
}

/** The last policy stated: it changes with the key's limits and once a month, not per request. */
let lastPolicy = { rate: -1, quota: -1, resetMs: -1, text: '' };

function policyOf(key: KeyRecord, resetMs: number): string {
  const p = lastPolicy;
  if (p.rate === key.rate && p.quota === key.quota && p.resetMs === resetMs) return p.text;
  const month = Math.round((resetMs - monthStartBefore(resetMs)) / 1000);
  lastPolicy = { rate: key.rate, quota: key.quota, resetMs, text: `"${BURST_POLICY}";q=${key.rate};w=1, "${MONTHLY_POLICY}";q=${key.quota};w=${month}` };
  return lastPolicy.text;
}

/** 00:00 UTC on the 1st of the month before the one starting at `monthStartMs`: the current period's start. */
function monthStartBefore(monthStartMs: number): number {
  const d = new Date(monthStartMs);
  d.setUTCMonth(d.getUTCMonth() - 1, 1);
  return d.getTime();
}
