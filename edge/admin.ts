// The admin route, `/_admin/keys`, the only way to manage a deployment's keys (`register keys … --edge URL`): list,
// add (the CLI sends the entry with the secret's hash, made where the key was drawn: the secret never travels),
// revoke, and a key's stats (`GET /_admin/keys/<id>/stats`: the calls its object answered since it was loaded, what
// the Durable Object requests per lookup are measured by), and the answering isolate's dist reads (`GET
// /_admin/source`: R2 operations, Cache API hits and stores, what R2 reads per lookup are measured by). It answers
// only to the admin token (the ADMIN_TOKEN secret), compared in constant time; no other route accepts that token,
// and nothing here logs a header.
import { sameBytes, sha256 } from '#platform/crypto';
import { ApiError } from '../runtime/api-error.ts';
import type { KeyEntry } from '../runtime/interfaces.ts';
import { KEY_ID } from '../runtime/keys/key-entry.ts';
import type { EdgeEnv } from './bindings.ts';

export const ADMIN_PREFIX = '/_admin/';
/** The shortest admin token accepted: anything shorter leaves the route closed. */
export const MIN_ADMIN_TOKEN = 32;

const HASH = /^[0-9a-f]{64}$/;
const MAX_ADMIN_BODY = 16 * 1024;

const json = (status: number, value: unknown): Response =>
  new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });

const failure = (e: ApiError): Response =>
  new Response(e.bodyText(), { status: e.status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...e.headers } });

function allowed(request: Request, env: EdgeEnv): void {
  const token = env.ADMIN_TOKEN;
  if (typeof token !== 'string' || token.length < MIN_ADMIN_TOKEN) throw new ApiError(503, 'admin_disabled', `The admin route is closed: set the ADMIN_TOKEN secret (at least ${MIN_ADMIN_TOKEN} characters).`);
  const m = /^bearer (\S+)$/i.exec(request.headers.get('authorization') ?? '');
  // Hashed first, so the comparison takes the same time whatever the length of what was sent.
  if (!m || !sameBytes(sha256(m[1]), sha256(token))) {
    throw new ApiError(401, 'invalid_token', 'The admin route needs Authorization: Bearer <admin token>.', { headers: { 'www-authenticate': 'Bearer realm="identity-register-admin"' } });
  }
}

/** A key entry as the CLI sends it: checked for what the edge relies on (id, hash, plan); the rest kept as sent. */
function entryOf(v: unknown): KeyEntry {
  const e = v as KeyEntry;
  const ok =
    typeof e === 'object' && e !== null && typeof e.id === 'string' && KEY_ID.test(e.id) && typeof e.hash === 'string' && HASH.test(e.hash) && typeof e.name === 'string' &&
    typeof e.plan === 'object' && e.plan !== null && Number.isSafeInteger(e.plan.quota) && Number.isSafeInteger(e.plan.rate) && typeof e.meta === 'object' && e.meta !== null &&
    (e.expires_at === null || typeof e.expires_at === 'string') && e.revoked === false && typeof e.created_at === 'string';
  if (!ok) throw new ApiError(400, 'invalid_body', 'Send a key entry: id (8 hex digits), name, hash (sha256 hex), plan {quota, rate}, meta, expires_at, revoked false, created_at.');
  return e;
}

/** `sourceStats`: the answering isolate's dist reads so far, or null before its first API request. */
export async function adminAnswer(request: Request, env: EdgeEnv, sourceStats: () => unknown): Promise<Response> {
  try {
    allowed(request, env);
    const path = new URL(request.url).pathname.slice(ADMIN_PREFIX.length);
    const directory = env.DIRECTORY.get(env.DIRECTORY.idFromName('keys'));
    if (path === 'keys' && request.method === 'GET') return json(200, await directory.list());
    if (path === 'source' && request.method === 'GET') return json(200, sourceStats());
    if (path === 'keys' && request.method === 'POST') {
      const text = await request.text();
      if (text.length > MAX_ADMIN_BODY) throw new ApiError(413, 'payload_too_large', `An admin request body is at most ${MAX_ADMIN_BODY} bytes.`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ApiError(400, 'invalid_body', 'The body is not JSON.');
      }
      const entry = entryOf(parsed);
      if (!(await directory.insert(entry))) return json(409, { inserted: false });
      // The key's own object is what authentication reads: the key works from the moment this answers.
      await env.KEYS.get(env.KEYS.idFromName(entry.id)).create(entry);
      return json(201, { inserted: true });
    }
    const revoke = /^keys\/([0-9a-f]{8})\/revoke$/.exec(path);
    if (revoke && request.method === 'POST') {
      const entry = await env.KEYS.get(env.KEYS.idFromName(revoke[1])).revoke();
      if (!entry) throw new ApiError(404, 'not_found', `No key ${revoke[1]}.`);
      await directory.update(entry);
      return json(200, entry);
    }
    const stats = /^keys\/([0-9a-f]{8})\/stats$/.exec(path);
    if (stats && request.method === 'GET') {
      const found = await env.KEYS.get(env.KEYS.idFromName(stats[1])).stats();
      if (!found) throw new ApiError(404, 'not_found', `No key ${stats[1]}.`);
      return json(200, found);
    }
    throw new ApiError(404, 'not_found', 'No such admin path.');
  } catch (e) {
    if (e instanceof ApiError) return failure(e);
    console.error(`[edge] admin route failed: ${(e as Error)?.stack ?? String(e)}`);
    return failure(new ApiError(500, 'internal_error', 'The admin route failed.'));
  }
}
