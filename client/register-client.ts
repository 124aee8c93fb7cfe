// A typed client of the register's read API that knows the contract's rules: 429 retried after Retry-After (bounded),
// merged IDs' redirects surfaced, HTTP redirects refused, 409 candidates as data, batches split within the caps,
// paged feeds as async iterators, and the stamp, credits and key-expiry headers on every result. Web-standard fetch
// only, so it runs in Node 20 and browsers.
import { MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES, MAX_CHECK_ROWS } from '../common/request-limits.ts';
import { parseRecords } from '../common/csv-records.ts';
import type { components, operations } from './openapi-types.ts';

type Schemas = components['schemas'];
/** The JSON body of an operation's response with this status, as the OpenAPI document states it. */
type BodyOf<Op extends keyof operations, Status extends number> = operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer B } }> ? B : never;
/** The query parameters of an operation, as the OpenAPI document states them. */
type QueryOf<Op extends keyof operations> = operations[Op]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

export type Entity = Schemas['Entity'];
/** The Error body; `error` may also be a code newer than these types (a server may be ahead of its client). */
export type ErrorBody = Omit<Schemas['Error'], 'error'> & { error: Schemas['Error']['error'] | (string & {}) };
export type BatchItem = Schemas['BatchItem'];
export type BatchResult = Schemas['BatchResult'];
export type ChangeEvent = Schemas['ChangeEvent'];
export type MatchRow = Schemas['MatchRow'];
export type MatchQuery = QueryOf<'listMatches'>;
export type IncludeName = Schemas['IncludeName'];
/** One contribution row as JSON (`provider`, `external_id`, … as docs/contributions.md lists), and what the check says of it. */
export type CheckRow = Schemas['CheckRequest']['rows'][number];
export type CheckResult = Schemas['CheckResult'];
/** A contribution CSV: its text, or its bytes as a stream (a File's `stream()`, a fetch body, a Node file stream). */
export type CsvSource = string | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Rows one POST /contributions/check may hold (the server's own constant). */
export const CHECK_MAX_ROWS = MAX_CHECK_ROWS;
/**
 * Characters of CSV a chunk is kept under, so 1,000 long rows still fit the server's 256 KiB body cap: a chunk is
 * sent once it holds CHECK_MAX_ROWS rows or this much text, whichever comes first.
 */
const CHECK_CHUNK_CHARS = 192 * 1024;

/** The contract's batch caps: items per request, and resolve items among them (the server's own constants). */
export const BATCH_MAX_ITEMS = MAX_BATCH_ITEMS;
export const BATCH_MAX_RESOLVE = MAX_BATCH_RESOLVES;

/** Options of createRegisterClient. */
export interface RegisterClientOptions {
  /** The namespace's base URL, e.g. `http://127.0.0.1:8787/api/v1` (a relative `/api/v1` works in a browser). */
  baseUrl: string;
  /** The API key, sent only as `Authorization: Bearer`, never in a URL. Default none (only `GET /` answers). */
  key?: string | null;
  /** How many times a 429 is retried after its Retry-After before it is returned. Default 3. */
  maxRetries?: number;
  /** A 429 asking to wait longer than this many seconds is returned at once instead. Default 30. */
  maxRetryAfterSeconds?: number;
  /** The fetch to use. Default the global one. */
  fetch?: typeof fetch;
  /** Waits between retries; tests inject one that records and does not depend on the clock. Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
}

/** What every answer carries besides its body: the response headers the contract defines. */
export interface ResultMeta {
  status: number;
  /** `X-Register-Release-Stamp`: the release that answered. */
  stamp: string | null;
  /** `X-Register-Credits-Remaining` after this request (costing endpoints), else null. */
  creditsRemaining: number | null;
  /** `X-Register-Key-Expires` of a key that expires, else null. */
  keyExpires: string | null;
  /** `X-Register-Key-Days-Remaining` of a key that expires, else null. */
  keyDaysRemaining: number | null;
  /** The strong ETag of a changelog answer, else null. */
  etag: string | null;
  /** 429s waited out before this answer. */
  retries: number;
}

/** A successful answer: its body and its headers. */
export interface Result<T> {
  data: T;
  meta: ResultMeta;
}

/** A merged ID's answer names the ID asked for and its survivor, so a caller can store the survivor. */
export interface Redirect {
  requested_id: string;
  redirected_to: string;
}

/** An entity answer with its redirect (null when the ID asked for is the one answered). */
export interface EntityResult<T> extends Result<T> {
  redirect: Redirect | null;
}

/** A resolve answer: one entity, none, or (409) several candidates, all as data. */
export type ResolveOutcome =
  | { kind: 'found'; entity: Entity; redirect: Redirect | null; meta: ResultMeta }
  | { kind: 'none'; meta: ResultMeta }
  | { kind: 'ambiguous'; candidates: Entity[]; error: ErrorBody; meta: ResultMeta };

/** An answer the contract calls an error (4xx other than a resolve's 409, 5xx): its Error body and headers. */
export class RegisterApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: ErrorBody;
  readonly meta: ResultMeta;
  constructor(method: string, path: string, body: ErrorBody, meta: ResultMeta) {
    super(`${method} ${path}: ${meta.status} ${body.error}${body.message ? `: ${body.message}` : ''}`);
    this.name = 'RegisterApiError';
    this.status = meta.status;
    this.code = body.error;
    this.body = body;
    this.meta = meta;
  }
}

/**
 * A redirect answered instead of the register's answer, which the client does not follow (see call). `status` is 0
 * and `location` null in a browser, which hides both from a script.
 */
export class RegisterRedirectError extends Error {
  readonly status: number;
  readonly location: string | null;
  constructor(method: string, path: string, status: number, location: string | null) {
    super(`${method} ${path}: redirected${status ? ` (${status})` : ''}${location ? ` to ${location}` : ''}; the register answers in place, so the client follows no redirect`);
    this.name = 'RegisterRedirectError';
    this.status = status;
    this.location = location;
  }
}

/** A batch split into requests: every item's result in request order, and each request's headers. */
export interface BatchAllResult {
  results: BatchResult[];
  /** One per request sent, in order; the last one's creditsRemaining is the balance after the whole batch. */
  requests: ResultMeta[];
}

type Query = Record<string, string | number | boolean | readonly (string | number)[] | null | undefined>;
type EntityQuery = { include?: readonly IncludeName[]; lang?: string };

/**
 * Cuts `items` into consecutive runs, in order, each within `maxItems` and holding at most `maxResolve` resolve
 * items: greedy, so a run closes only when the next item would break a cap.
 */
export function splitBatch<T extends { type: string }>(items: readonly T[], maxItems = BATCH_MAX_ITEMS, maxResolve = BATCH_MAX_RESOLVE): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let resolves = 0;
  for (const item of items) {
    const isResolve = item.type === 'resolve';
    if (run.length === maxItems || (isResolve && resolves === maxResolve)) {
      runs.push(run);
      run = [];
      resolves = 0;
    }
    run.push(item);
    if (isResolve) resolves++;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

export function createRegisterClient(opts: RegisterClientOptions) {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const maxRetries = opts.maxRetries ?? 3;
  const maxWait = opts.maxRetryAfterSeconds ?? 30;
  const doFetch = opts.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  /** One call: retried while it answers 429 with a Retry-After within bounds; any status comes back with its body. */
  async function call(method: 'GET' | 'POST', path: string, query?: Query, body?: unknown): Promise<{ status: number; json: unknown; meta: ResultMeta }> {
    const url = base + path + queryString(query);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    // A CsvBody travels as its text; anything else as JSON.
    const csv = body instanceof CsvBody;
    if (body !== undefined) headers['content-type'] = csv ? 'text/csv' : 'application/json';
    const payload = body === undefined ? undefined : csv ? body.text : JSON.stringify(body);
    for (let retries = 0; ; retries++) {
      // Redirects are not followed: the API answers in place (a merged ID names its survivor in the body), so one
      // comes from something in front of it, and following it would send the key, and a batch's body, to wherever
      // it points and return that host's answer as the register's.
      const res = await doFetch(url, { method, headers, body: payload, redirect: 'manual' });
      if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400 && res.status !== 304)) {
        void res.body?.cancel();
        throw new RegisterRedirectError(method, path, res.status, res.headers.get('location'));
      }
      const text = await res.text();
      const meta = metaOf(res, retries);
      if (res.status === 429 && retries < maxRetries) {
        const wait = retryAfterSeconds(res.headers.get('retry-after'));
        if (wait !== null && wait <= maxWait) {
          await sleep(wait * 1000);
          continue;
        }
      }
      let json: unknown = null;
      if (text !== '') {
        try {
          json = JSON.parse(text);
        } catch {
          throw new Error(`${method} ${path}: ${res.status} answered a body that is not JSON: ${text.slice(0, 120)}`);
        }
      }
      return { status: res.status, json, meta };
    }
  }

  /** The body of a 2xx answer, or a RegisterApiError carrying the Error body. */
  async function ok<T>(method: 'GET' | 'POST', path: string, query?: Query, body?: unknown): Promise<Result<T>> {
    const r = await call(method, path, query, body);
    if (r.status >= 200 && r.status < 300) return { data: r.json as T, meta: r.meta };
    throw apiError(method, path, r);
  }

  function apiError(method: string, path: string, r: { status: number; json: unknown; meta: ResultMeta }): RegisterApiError {
    const body = isErrorBody(r.json) ? r.json : { error: 'unexpected_response', message: `status ${r.status} without an Error body` };
    return new RegisterApiError(method, path, body, r.meta);
  }

  async function entityCall<T extends { requested_id?: string; redirected_to?: string }>(path: string, query: Query): Promise<EntityResult<T>> {
    const r = await ok<T>('GET', path, query);
    return { ...r, redirect: redirectOf(r.data) };
  }

  const id = (reepId: string) => {
    // No register ID is a dot segment; a URL would resolve one into another path (`/entities/..` is `/`).
    if (isDotSegment(reepId)) throw new RangeError(`${JSON.stringify(reepId)} is not a register ID`);
    return encodeURIComponent(reepId);
  };
  const entityQuery = (q: EntityQuery = {}): Query => ({ include: q.include?.length ? q.include.join(',') : undefined, lang: q.lang });

  /** Pages of a cursor-paged feed, one request each, until `next_cursor` is null. */
  async function* cursorPages<T extends { next_cursor: string | null }>(path: string, query: Query): AsyncGenerator<Result<T>> {
    let cursor: string | undefined;
    for (;;) {
      const page = await ok<T>('GET', path, { ...query, cursor });
      yield page;
      if (page.data.next_cursor === null) return;
      cursor = page.data.next_cursor;
    }
  }

  /** A resolve as the one item of `POST /batch`, answered as GET /resolve would be (see resolve). */
  async function resolveInBatch(provider: string, externalId: string, q: EntityQuery & { namespace?: string; type?: Schemas['EntityType'] }): Promise<ResolveOutcome> {
    const item: BatchItem = { type: 'resolve', provider, external_id: externalId, ...(q.namespace ? { namespace: q.namespace } : {}), ...(q.type ? { entity_type: q.type } : {}) };
    const batch = await client.batch([item], q);
    const { status, body } = batch.data.results[0] as { status: number; body: unknown };
    const meta = { ...batch.meta, status };
    if (status === 409 && isErrorBody(body)) {
      const ambiguous = body as BodyOf<'resolve', 409>;
      return { kind: 'ambiguous', candidates: ambiguous.results, error: ambiguous, meta };
    }
    if (status !== 200) throw apiError('POST', '/batch', { status, json: body, meta });
    const entity = (body as BodyOf<'resolve', 200>).results[0];
    if (!entity) return { kind: 'none', meta };
    return { kind: 'found', entity, redirect: redirectOf(entity), meta };
  }

  const client = {
    /** `GET /`: the service index (no key needed). */
    index: () => ok<BodyOf<'getIndex', 200>>('GET', '/'),
    meta: () => ok<BodyOf<'getMeta', 200>>('GET', '/meta'),
    providers: () => ok<BodyOf<'listProviders', 200>>('GET', '/providers'),
    coverage: () => ok<BodyOf<'getCoverage', 200>>('GET', '/coverage'),
    noticeSummary: () => ok<BodyOf<'getProviderNoticeSummary', 200>>('GET', '/provider-notices/summary'),
    key: () => ok<BodyOf<'getKey', 200>>('GET', '/key'),
    openapi: () => ok<BodyOf<'getOpenApi', 200>>('GET', '/openapi.json'),

    search: (q: string, query: Omit<QueryOf<'search'>, 'q'> = {}) => ok<BodyOf<'search', 200>>('GET', '/search', { ...query, q }),

    /** One entity; a merged ID answers its survivor with `redirect` set. A tombstone is a RegisterApiError `gone` (410). */
    entity: (reepId: string, q?: EntityQuery) => entityCall<BodyOf<'getEntity', 200>>(`/entities/${id(reepId)}`, entityQuery(q)),
    bridges: (reepId: string) => entityCall<BodyOf<'getEntityBridges', 200>>(`/entities/${id(reepId)}/bridges`, {}),
    overlay: (reepId: string) => entityCall<BodyOf<'getEntityOverlay', 200>>(`/entities/${id(reepId)}/overlay`, {}),
    relationships: (reepId: string, query: QueryOf<'getEntityRelationships'> = {}) =>
      entityCall<BodyOf<'getEntityRelationships', 200>>(`/entities/${id(reepId)}/relationships`, query as Query),

    /** A provider's ID: found, none, or ambiguous (409) with every candidate, never thrown. */
    async resolve(provider: string, externalId: string, q: EntityQuery & { namespace?: string; type?: Schemas['EntityType'] } = {}): Promise<ResolveOutcome> {
      // `.` and `..` cannot travel as path segments: every WHATWG URL parser (fetch's, a browser's) resolves them,
      // percent-encoded (`%2E%2E`) too, so the request would go to another path with the key. They are asked as the
      // one item of a batch instead: the same lookup, answer and charge.
      if (isDotSegment(provider) || isDotSegment(externalId)) return resolveInBatch(provider, externalId, q);
      const path = `/resolve/${encodeURIComponent(provider)}/${encodeURIComponent(externalId)}`;
      const r = await call('GET', path, { ...entityQuery(q), namespace: q.namespace || undefined, type: q.type });
      if (r.status === 409 && isErrorBody(r.json)) {
        const body = r.json as BodyOf<'resolve', 409>;
        return { kind: 'ambiguous', candidates: body.results, error: body, meta: r.meta };
      }
      if (r.status !== 200) throw apiError('GET', path, r);
      const body = r.json as BodyOf<'resolve', 200>;
      const entity = body.results[0];
      if (!entity) return { kind: 'none', meta: r.meta };
      return { kind: 'found', entity, redirect: redirectOf(entity), meta: r.meta };
    },

    /** One `POST /batch` as given (within BATCH_MAX_ITEMS and BATCH_MAX_RESOLVE, or the server refuses it). */
    batch: (requests: BatchItem[], shared: EntityQuery = {}) =>
      ok<BodyOf<'batch', 200>>('POST', '/batch', undefined, { requests, ...(shared.include?.length ? { include: shared.include.join(',') } : {}), ...(shared.lang ? { lang: shared.lang } : {}) }),

    /**
     * Any number of lookups, sent as consecutive batches within the caps, in order: each request charges exactly the
     * items it carries. A refused request (402, 429 past its retries) stops the run with its RegisterApiError; the
     * requests before it were answered and charged.
     */
    async batchAll(requests: readonly BatchItem[], shared: EntityQuery = {}): Promise<BatchAllResult> {
      const out: BatchAllResult = { results: [], requests: [] };
      for (const run of splitBatch(requests)) {
        const r = await client.batch(run, shared);
        out.results.push(...r.data.results);
        out.requests.push(r.meta);
      }
      return out;
    },

    /** One `POST /contributions/check` of JSON rows (at most CHECK_MAX_ROWS), numbered from `firstRow`. */
    checkRows: (rows: CheckRow[], firstRow = 1) => ok<BodyOf<'checkContributions', 200>>('POST', '/contributions/check', undefined, { rows, first_row: firstRow }),

    /**
     * Every row of a contribution CSV checked, in order, as an async iterator of results: the file is read as it is
     * iterated and sent as CSV in chunks of at most `chunkRows` rows (`first_row` numbering them across chunks), each
     * charged for its rows that are not `invalid`; results keep the file's own `line` numbers. A refused chunk stops
     * the run with its RegisterApiError; the chunks before it were answered (and charged).
     */
    async *checkCsv(source: CsvSource, chunkRows = CHECK_MAX_ROWS): AsyncGenerator<CheckResult> {
      let firstRow = 1;
      for await (const chunk of csvChunks(source, chunkRows)) {
        const text = `${chunk.header}\n${chunk.records.join('\n')}\n`;
        const r = await ok<BodyOf<'checkContributions', 200>>('POST', '/contributions/check', { first_row: firstRow }, new CsvBody(text));
        // The server numbers lines within the chunk; each record's line in the file is known here.
        for (const result of r.data.results) yield { ...result, line: chunk.lines[result.row - firstRow] };
        firstRow += chunk.records.length;
      }
    },

    /** The same for rows as JSON objects, from any (async) iterable: results in order, chunks of at most `chunkRows`. */
    async *checkAll(rows: Iterable<CheckRow> | AsyncIterable<CheckRow>, chunkRows = CHECK_MAX_ROWS): AsyncGenerator<CheckResult> {
      let firstRow = 1;
      let held: CheckRow[] = [];
      const send = async () => {
        const r = await client.checkRows(held, firstRow);
        firstRow += held.length;
        held = [];
        return r.data.results;
      };
      for await (const row of rows) {
        held.push(row);
        if (held.length === chunkRows) yield* await send();
      }
      if (held.length) yield* await send();
    },

    changesSummary: (query: QueryOf<'getChangesSummary'> = {}) => ok<BodyOf<'getChangesSummary', 200>>('GET', '/changes/summary', query as Query),
    changes: (query: QueryOf<'listChanges'> = {}) => ok<BodyOf<'listChanges', 200>>('GET', '/changes', query as Query),
    releases: () => ok<BodyOf<'listReleases', 200>>('GET', '/changes/releases'),
    /** Every page of `/changes` for a window and filters, in order. */
    changePages: (query: Omit<QueryOf<'listChanges'>, 'cursor'> = {}) => cursorPages<BodyOf<'listChanges', 200>>('/changes', query as Query),

    notices: (query: QueryOf<'listNotices'> = {}) => ok<BodyOf<'listNotices', 200>>('GET', '/notices', query as Query),
    ackNotices: (body: NonNullable<operations['ackNotices']['requestBody']>['content']['application/json']) => ok<BodyOf<'ackNotices', 200>>('POST', '/notices/ack', undefined, body),
    /** Every page of the caller's notice batch (offset paging), in order; each delivery marks its findings seen. */
    async *noticePages(query: Omit<QueryOf<'listNotices'>, 'offset'> = {}): AsyncGenerator<Result<BodyOf<'listNotices', 200>>> {
      let offset = 0;
      for (;;) {
        const page = await client.notices({ ...query, offset });
        yield page;
        if (page.data.next_offset === null) return;
        offset = page.data.next_offset;
      }
    },

    /**
     * One page of published matches (`GET /matches`, one lookup). Anchors repeat (`team: [a, b]` ORs them); a value is
     * a register ID or `provider:namespace:id`. Continue with `next_cursor` as `cursor` and the same other parameters.
     */
    matches: (query: QueryOf<'listMatches'>) => ok<BodyOf<'listMatches', 200>>('GET', '/matches', query as Query),
    /** Every page of `/matches` for one set of filters, in order, following `next_cursor`; each page is one lookup. */
    matchPages: (query: Omit<QueryOf<'listMatches'>, 'cursor'>) => cursorPages<BodyOf<'listMatches', 200>>('/matches', query as Query),
  };
  return client;
}

export type RegisterClient = ReturnType<typeof createRegisterClient>;

/** A request body sent as `text/csv`. */
class CsvBody {
  constructor(readonly text: string) {}
}

/** The bytes of a stream as they come (a ReadableStream read with its reader: not every browser iterates one). */
export async function* bytesOf(source: Exclude<CsvSource, string>): AsyncGenerator<Uint8Array> {
  if (typeof (source as ReadableStream).getReader !== 'function') return yield* source as AsyncIterable<Uint8Array>;
  const reader = (source as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** A contribution CSV cut into chunks of whole records: the header's text, and each chunk's records with the file lines they start on. */
async function* csvChunks(source: CsvSource, maxRows: number): AsyncGenerator<{ header: string; records: string[]; lines: number[] }> {
  const decoder = new TextDecoder();
  let header: string | null = null;
  let line = 1;
  let records: string[] = [];
  let lines: number[] = [];
  let size = 0;
  let carry = '';
  const ready: { header: string; records: string[]; lines: number[] }[] = [];
  const emit = (fields: string[], raw: string) => {
    const at = line;
    line += 1 + (raw.match(/\n/g)?.length ?? 0);
    // As the server's reader has it: the header is the first line that is not empty, and after it a record of
    // empty fields (a blank line, a line of commas) is no row.
    if (header === null) {
      if (raw !== '') header = raw;
      return;
    }
    if (fields.every((f) => f === '')) return;
    records.push(raw);
    lines.push(at);
    size += raw.length + 1;
    if (records.length === maxRows || size >= CHECK_CHUNK_CHARS) {
      ready.push({ header, records, lines });
      records = [];
      lines = [];
      size = 0;
    }
  };
  if (typeof source === 'string') carry = source;
  else
    for await (const bytes of bytesOf(source)) {
      const text = carry + decoder.decode(bytes, { stream: true });
      carry = text.slice(parseRecords(text, false, emit));
      yield* ready.splice(0);
    }
  parseRecords(carry + decoder.decode(), true, emit);
  yield* ready.splice(0);
  if (records.length) yield { header: header!, records, lines };
}

/** `?a=1&b=x` from the defined values; an array repeats its parameter (`team=a&team=b`). */
function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(name, String(v));
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function metaOf(res: Response, retries: number): ResultMeta {
  const int = (name: string) => {
    const v = res.headers.get(name);
    return v !== null && /^-?[0-9]+$/.test(v) ? Number(v) : null;
  };
  return {
    status: res.status,
    stamp: res.headers.get('x-register-release-stamp'),
    creditsRemaining: int('x-register-credits-remaining'),
    keyExpires: res.headers.get('x-register-key-expires'),
    keyDaysRemaining: int('x-register-key-days-remaining'),
    etag: res.headers.get('etag'),
    retries,
  };
}

/** Retry-After as whole seconds (the contract sends delta-seconds); an HTTP date or garbage is not honoured. */
function retryAfterSeconds(value: string | null): number | null {
  if (value === null || !/^[0-9]+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** `.` or `..`, which a URL parser resolves as a path segment, plain or percent-encoded. */
function isDotSegment(segment: string): boolean {
  return segment === '.' || segment === '..';
}

function isErrorBody(v: unknown): v is ErrorBody {
  return typeof v === 'object' && v !== null && typeof (v as { error?: unknown }).error === 'string';
}

function redirectOf(body: { requested_id?: string; redirected_to?: string }): Redirect | null {
  return body.requested_id !== undefined && body.redirected_to !== undefined ? { requested_id: body.requested_id, redirected_to: body.redirected_to } : null;
}
