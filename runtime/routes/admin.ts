// The admin routes, `/_admin/…` at the server root: a deployment's keys (list, add, revoke: `register keys …
// --edge URL` calls them) and what the platform measures (a key's calls, the dist's reads). Routes of the one table,
// answered by the one router, but left out of the published document (scope `admin`): they serve the operator who
// holds the admin token, compared in constant time; no other route accepts that token, and without one of at least
// MIN_ADMIN_TOKEN characters they answer 503 admin_disabled. A new key's entry comes with its secret's hash, made
// where the key was drawn: the secret never travels. Nothing here logs a header.
import { Type } from '@sinclair/typebox';
import { sameBytes, sha256 } from '#platform/crypto';
import { ApiError } from '../api-error.ts';
import { bodyChecker } from '../contract/request-check.ts';
import type { KeyEntry, KeyRepository } from '../interfaces.ts';
import { KEY_ID } from '../keys/key-entry.ts';
import { readJsonBody } from '../read-body.ts';
import { defineRoute, type Reply, type RequestContext, type RouteDef } from '../route.ts';

/** The shortest admin token accepted: anything shorter leaves the admin routes closed. */
export const MIN_ADMIN_TOKEN = 32;
const MAX_ADMIN_BODY = 16 * 1024;

/** What the admin routes act on: the deployment's keys (the edge: its key objects and their directory; Node: its key repository). */
export interface AdminKeys {
  /** Every key as stored (never a secret), and a version that changes whenever one is added or revoked. */
  list(): Promise<{ entries: unknown[]; version: string }>;
  /** Adds a key; false when its id is taken. */
  insert(entry: KeyEntry): Promise<boolean>;
  /** Marks key `id` revoked; its entry, or null when there is no such key. */
  revoke(id: string): Promise<KeyEntry | null>;
  /** The calls the key's own object answered since it was loaded (the edge's billed requests); absent where nothing counts them. */
  stats?(id: string): Promise<{ id: string; calls: number } | null>;
}

/** Options of adminRoutes. */
export interface AdminOptions {
  /** The admin token; null, absent or shorter than MIN_ADMIN_TOKEN: the routes answer 503 admin_disabled. */
  token: string | null | undefined;
  /** How an operator sets the token on this platform, for that 503. */
  tokenHint: string;
  keys: AdminKeys;
  /** The dist reads of this process or isolate so far (its source's counters), or null. */
  sourceStats(): unknown;
}

/** A key entry as `register keys add` sends it: what every platform relies on (id, hash, plan), the rest kept as sent. */
const AdminKeyEntry = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{8}$' }),
  name: Type.String(),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  plan: Type.Object({ quota: Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }), rate: Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }) }),
  meta: Type.Object({}),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  revoked: Type.Literal(false),
  created_at: Type.String(),
});
const checkEntry = bodyChecker(AdminKeyEntry);

const noStore = (status: number, value: unknown): Reply => ({ status, body: JSON.stringify(value), headers: { 'cache-control': 'no-store' } });

/** The operation each admin route carries for the route table's shape; the document leaves scope `admin` out. */
const operation = (operationId: string, summary: string) => ({ operationId, tag: 'admin', summary, description: summary, cost: 0, responses: {} });

export function adminRoutes(opts: AdminOptions): RouteDef[] {
  const token = typeof opts.token === 'string' && opts.token.length >= MIN_ADMIN_TOKEN ? sha256(opts.token) : null;
  /** Refuses a request without the admin token: before its body is read, so a stranger's body costs nothing. */
  const allowed = (c: RequestContext): void => {
    if (token === null) throw new ApiError(503, 'admin_disabled', `The admin routes are closed: ${opts.tokenHint} (at least ${MIN_ADMIN_TOKEN} characters).`);
    const m = /^bearer (\S+)$/i.exec(c.request.headers.get('authorization') ?? '');
    // Hashed first, so the comparison takes the same time whatever the length of what was sent.
    if (!m || !sameBytes(sha256(m[1]), token)) {
      throw new ApiError(401, 'invalid_token', 'The admin routes need Authorization: Bearer <admin token>.', { headers: { 'www-authenticate': 'Bearer realm="identity-register-admin"' } });
    }
  };
  /** The key a path names; an id that cannot be a key's is no key (404). */
  const keyId = (c: RequestContext): string => {
    const id = c.params.id;
    if (!KEY_ID.test(id)) throw new ApiError(404, 'not_found', 'No such key.');
    return id;
  };
  const route = (method: 'GET' | 'POST', path: string, summary: string, prepare: (c: RequestContext) => Promise<() => Promise<Reply>> | (() => Promise<Reply>)): RouteDef =>
    defineRoute({
      method, path, scope: 'admin', auth: false, noRelease: true,
      operation: operation(`admin${method}${path.replaceAll(/[^a-z]+/gi, '_')}`, summary),
      async prepare(c) {
        allowed(c);
        return { run: await prepare(c) };
      },
    });
  return [
    route('GET', '/_admin/keys', "The deployment's keys and their version", () => async () => noStore(200, await opts.keys.list())),
    route('POST', '/_admin/keys', 'Add a key (its entry, with the hash of its secret)', async (c) => {
      const entry = checkEntry(await readJsonBody(c.request, MAX_ADMIN_BODY)) as KeyEntry;
      return async () => ((await opts.keys.insert(entry)) ? noStore(201, { inserted: true }) : noStore(409, { inserted: false }));
    }),
    route('POST', '/_admin/keys/{id}/revoke', 'Revoke a key', (c) => {
      const id = keyId(c);
      return async () => {
        const entry = await opts.keys.revoke(id);
        if (!entry) throw new ApiError(404, 'not_found', `No key ${id}.`);
        return noStore(200, entry);
      };
    }),
    route('GET', '/_admin/keys/{id}/stats', "The calls a key's own object answered", (c) => {
      const id = keyId(c);
      const stats = opts.keys.stats?.bind(opts.keys);
      if (!stats) throw new ApiError(404, 'not_found', 'This server keeps no per-key call counts: only the edge, where each key has its own object.');
      return async () => {
        const found = await stats(id);
        if (!found) throw new ApiError(404, 'not_found', `No key ${id}.`);
        return noStore(200, found);
      };
    }),
    route('GET', '/_admin/source', "This process's or isolate's dist reads", () => async () => noStore(200, opts.sourceStats())),
  ];
}

/** The admin routes' keys over a key repository (Node: the keys file, or the state store's key table). */
export function repositoryAdminKeys(repository: KeyRepository): AdminKeys {
  return {
    list: async () => ({ entries: await repository.entries(), version: await repository.version() }),
    insert: (entry) => repository.insert(entry),
    revoke: (id) => repository.revoke(id),
  };
}
