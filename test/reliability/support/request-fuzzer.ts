// Request fuzzing driven by the OpenAPI document: fast-check arbitraries that build valid and hostile requests for
// every documented path and method (and wrong ones), and the oracle that judges one exchange. Shared by
// test/reliability/fuzz.test.ts and scripts/soak.ts, which runs the same generator for much longer.
import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../../runtime/contract/document.ts';
import { openapiDocument as documentOfRoutes } from '../../../runtime/openapi-json.ts';
import { findOperation, resolveDocumentRef, validateResponse } from '../../helpers/openapi-validator.ts';

const openapiDocument = documentOfRoutes();

/** Real values of the world under test, so that many requests get past validation and reach the lookups. */
export interface FuzzTargets {
  /** Bearer keys by name; `null` in a request means no Authorization header. */
  keys: Record<string, string>;
  /** How often each key is picked relative to the others (default 1). */
  keyWeights?: Record<string, number>;
  /** Register IDs the world knows (live, merged, tombstoned) and some it never published. */
  ids: string[];
  stamps: string[];
  providers: string[];
  /** Provider IDs as stored (unencoded; may hold `/`). */
  externalIds: string[];
  /** Real (provider, namespace, external ID) triples, so resolve requests hit mappings (including an ambiguous one). */
  bridges: { provider: string; namespace: string; externalId: string }[];
  namespaces: string[];
  findingIds: string[];
  batchIds: number[];
  searchTerms: string[];
  families: string[];
  /** /matches anchors by parameter (team, competition, season, opponent): IDs of the right kind. */
  anchors: Record<string, string[]>;
}

export interface FuzzRequest {
  method: string;
  /** Path and query exactly as sent (ASCII only), starting with `/`. */
  target: string;
  headers: Record<string, string>;
  body?: string;
  /** The document's path template this request was made from, for reports. */
  template: string;
  /** Which of FuzzTargets.keys authenticated it, or null (none or a forged header). */
  keyName: string | null;
}

export interface Exchange {
  request: FuzzRequest;
  status: number;
  headers: Headers;
  body: string;
  /** The key's credits before and after, from the state store (null when no known key was sent). */
  creditsBefore: number | null;
  creditsAfter: number | null;
}

/**
 * A class of answers the runtime gives but the document (or the test validator) does not describe: known, reported
 * gaps. A matching answer is still checked for everything else (no 5xx, an Error body, no charge, honest credits).
 */
export interface KnownGap {
  id: string;
  why: string;
  matches(x: Exchange, body: { error?: string } | undefined): boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Small pieces.

const HEX = '0123456789abcdef';
const OTHER_METHODS = ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND'];
// Large constants are built once: fast-check only picks them.
const OVERSIZE_BODY = `{"requests":[${Array.from({ length: 12_000 }, () => '{"type":"entity","id":"rt00000000000a01"}').join(',')}]}`; // ~480 KB
const HUGE_VALUE = 'x'.repeat(5000);

/** encodeURIComponent that never throws: lone surrogates become U+FFFD first. */
function encodeSegment(s: string): string {
  return encodeURIComponent(s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
}

const hexId = (prefix: string) => fc.string({ unit: fc.constantFrom(...HEX), minLength: 14, maxLength: 14 }).map((h) => prefix + h);

/** Path segments meant to break routers and decoders: traversal, NUL, bad or overlong UTF-8, bad escapes, length. */
const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '..', '.', '%2e%2e', '%2E', '%00', 'a%00b', '%', '%zz', '%4', '%C0%AF', '%C0%80', '%E0%80%AF', '%ED%A0%80', '%FF%FE', '%2F',
    '..%2F..%2Fetc%2Fpasswd', '%252F', '%2e%2e%2f', '%5C..%5C', 'con', 'index.json', '%20', '+', '~', '!$&\'()*+,;=:@',
  ),
  fc.string({ unit: 'grapheme', maxLength: 24 }).map(encodeSegment),
  fc.string({ unit: 'binary', maxLength: 24 }).map(encodeSegment),
  fc.integer({ min: 400, max: 2400 }).map((n) => 'a'.repeat(n)),
  fc.integer({ min: 100, max: 900 }).map((n) => '%41'.repeat(n)),
);

/** Query values that no parameter accepts, or that stress the parser: huge, negative, fractional, unicode, bad escapes. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '-1', '0', '1e3', '1.5', '0x10', '%201', '99999999999999999999', 'NaN', 'null', 'true', '[]', '%', '%zz', '%00', '20261301T000000Z', '99999999T999999Z'),
  fc.constant(HUGE_VALUE),
  fc.integer({ min: 1000, max: 3500 }).map((n) => '9'.repeat(n)),
  fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeSegment),
  fc.string({ unit: 'binary', maxLength: 30 }).map(encodeSegment),
  fc.integer().map(String),
);

function schemaOf(param: JsonObject): JsonObject {
  return resolveDocumentRef((param.schema ?? {}) as JsonValue);
}

/** A valid value of one query parameter, from its schema, or from the world where the schema is just "string". */
function validQueryValue(name: string, schema: JsonObject, t: FuzzTargets): fc.Arbitrary<string> {
  const pools: Record<string, fc.Arbitrary<string>> = {
    q: fc.oneof(fc.constantFrom(...t.searchTerms), fc.stringMatching(/^[a-z]{3,10}( [a-z]{1,8}){0,5}$/)).map(encodeSegment),
    lang: fc.constantFrom('en', 'de', 'pl', ''),
    family: fc.oneof(fc.constantFrom(...t.families), fc.stringMatching(/^[a-z_]{1,20}$/)).map(encodeSegment),
    namespace: fc.constantFrom(...t.namespaces).map(encodeSegment),
    provider: fc.constantFrom(...t.providers).map(encodeSegment),
    cursor: fc.base64String({ minLength: 4, maxLength: 40 }).map(encodeSegment),
  };
  // /matches anchors and opponent: a register ID or a provider reference (each repetition of the parameter is one).
  const reference = fc.oneof(
    fc.constantFrom(...t.ids),
    fc.tuple(fc.constantFrom(...t.providers), fc.constantFrom(...t.namespaces), fc.constantFrom(...t.externalIds)).map(([p, n, x]) => encodeSegment(`${p}:${n}:${x}`)),
  );
  for (const anchor of ['team', 'competition', 'season', 'opponent']) {
    pools[anchor] = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(t.anchors[anchor] ?? t.ids)) }, { weight: 1, arbitrary: reference });
  }
  pools.from = fc.constantFrom('1900-01-01', '2024-01-01', '2024-10-01');
  pools.to = fc.constantFrom('2024-10-01', '2024-12-31', '2030-01-01');
  pools.state = fc.constantFrom('played', 'played,scheduled', 'none', 'postponed,none');
  for (const list of ['providers', 'require', 'missing']) pools[list] = fc.subarray(t.providers, { minLength: 1 }).map((xs) => xs.join(','));
  if (schema.type === 'array' && pools[name] && !resolveDocumentRef(schema.items as JsonValue).enum) return pools[name];
  if (schema.type === 'array') {
    const items = resolveDocumentRef(schema.items as JsonValue);
    return fc.subarray([...(items.enum as string[])]).chain((xs) => fc.shuffledSubarray([...xs, ...xs])).map((xs) => xs.join(','));
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as string[]));
  if (schema.type === 'integer') {
    const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
    const max = typeof schema.maximum === 'number' ? schema.maximum : min + 10_000;
    return fc.integer({ min, max }).map(String);
  }
  if (typeof schema.pattern === 'string' && schema.pattern.includes('T\\d{6}Z')) return fc.constantFrom(...t.stamps);
  return pools[name] ?? fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }).map(encodeSegment);
}

/** A value of one path parameter: mostly real, sometimes random, sometimes hostile. Already encoded. */
function pathValue(name: string, t: FuzzTargets): fc.Arbitrary<string> {
  if (name === 'reep_id') {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...t.ids) },
      { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), fc.constant(null)).chain(([l]) => hexId(`r${l}`)) },
      { weight: 1, arbitrary: fc.constantFrom('RT00000000000A01', 'rt00000000000a0', 'rt00000000000a011', 'xt00000000000a01', 'rt0000000000ga01', 'r100000000000a01') },
      { weight: 2, arbitrary: hostileSegment },
    );
  }
  if (name === 'provider') {
    return fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...t.providers) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z_]{1,12}$/) }, { weight: 2, arbitrary: hostileSegment });
  }
  if (name === 'external_id') {
    return fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...t.externalIds).map(encodeSegment) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 }).map(encodeSegment) },
      { weight: 2, arbitrary: hostileSegment },
    );
  }
  return fc.oneof(fc.string({ minLength: 1, maxLength: 12 }).map(encodeSegment), hostileSegment);
}

/** The query string of one operation: each documented parameter absent, valid or hostile; sometimes repeated or unknown. */
function queryFor(params: JsonObject[], t: FuzzTargets): fc.Arbitrary<string> {
  const parts = params.map((p) => {
    const name = p.name as string;
    const valid = validQueryValue(name, schemaOf(p), t);
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant<string[]>([]) },
      { weight: 5, arbitrary: valid.map((v) => [`${name}=${v}`]) },
      { weight: 1, arbitrary: hostileValue.map((v) => [`${name}=${v}`]) },
      { weight: 1, arbitrary: fc.tuple(valid, valid).map(([a, b]) => [`${name}=${a}`, `${name}=${b}`]) },
      { weight: 1, arbitrary: fc.constant([name]) },
    );
  });
  const extra = fc.oneof(
    { weight: 12, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[a-z_]{1,10}$/), hostileValue).map(([k, v]) => [`${k}=${v}`]) },
    { weight: 1, arbitrary: fc.constantFrom(['&&&'], ['=x'], ['%zz=1'], ['a=1&a=2&a=3'], [`k=${HUGE_VALUE}`]) },
  );
  return fc.tuple(fc.tuple(...parts), extra).map(([ps, ex]) => {
    const all = [...ps.flat(), ...ex];
    return all.length ? `?${all.join('&')}` : '';
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies.

function batchItem(t: FuzzTargets): fc.Arbitrary<unknown> {
  const rawId = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...t.ids) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: hexId('rq') });
  const entityType = fc.constantFrom('team', 'player', 'match', 'competition', 'season', 'planet', '');
  return fc.oneof(
    { weight: 6, arbitrary: rawId.map((id) => ({ type: 'entity', id })) },
    {
      weight: 4,
      arbitrary: fc.record(
        { type: fc.constant('resolve'), provider: fc.constantFrom(...t.providers, 'nobody'), external_id: fc.constantFrom(...t.externalIds, 'zz'), namespace: fc.constantFrom(...t.namespaces), entity_type: entityType },
        { requiredKeys: ['type', 'provider', 'external_id'] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ type: fc.constant('resolve'), provider: fc.constantFrom(...t.providers), id: fc.constantFrom(...t.externalIds) }) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.constantFrom({ type: 'other' }, { type: 'entity' }, { type: 'entity', id: 5 }, { type: 'entity', id: t.ids[0], extra: 1 }, { type: 'resolve', provider: 7, external_id: 'x' }, { type: 'resolve' }, null, [], 'entity'),
      ),
    },
  );
}

function includeValue(): fc.Arbitrary<unknown> {
  const names = ['aliases', 'attributes', 'bridges', 'relationships', 'overlay'];
  return fc.oneof(
    fc.subarray(names),
    fc.subarray(names).map((xs) => xs.join(',')),
    fc.constantFrom('kb', 'everything', ['aliases', 3], 7, null, ['aliases,bridges'], ''),
  );
}

/** Bodies every POST shares: malformed text, deep nesting, wrong JSON types, too large. */
const hostileBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '{', '[', '{"requests":[', '{"finding_ids":["opta-1"', 'nul', 'undefined', '\ufeff{"requests":[]}', '{"a":1}{"b":2}', '1e999', '"\\ud800"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}'),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.integer({ min: 1, max: 120_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 1, max: 40_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  fc.integer({ min: 1, max: 40_000 }).map((n) => `{"requests":[${'['.repeat(n)}${']'.repeat(n)}]}`),
  fc.constant(OVERSIZE_BODY),
);

function batchBody(t: FuzzTargets): fc.Arbitrary<string> {
  const item = batchItem(t);
  const shared = { include: includeValue(), lang: fc.oneof(fc.constantFrom('en', ''), fc.constant(5 as unknown as string)) };
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ requests: fc.array(item, { minLength: 1, maxLength: 25 }), ...shared }, { requiredKeys: ['requests'] }).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.array(item, { minLength: 95, maxLength: 130 }).map((requests) => JSON.stringify({ requests })) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 15, max: 30 }).map((n) => JSON.stringify({ requests: Array.from({ length: n }, (_, i) => ({ type: 'resolve', provider: t.providers[i % t.providers.length], external_id: t.externalIds[i % t.externalIds.length] })) })),
    },
    { weight: 1, arbitrary: fc.constantFrom('{"requests":[]}', '{"requests":"x"}', '{"requests":null}', '{"requests":[],"extra":1}', '[]', 'null') },
    { weight: 3, arbitrary: hostileBody },
  );
}

/** A contributions check body: JSON rows of real and made-up provider IDs, the refusals, and hostile text. */
function checkBody(t: FuzzTargets): fc.Arbitrary<string> {
  const row = fc.record(
    {
      provider: fc.constantFrom(...t.providers, 'nobody'),
      external_id: fc.constantFrom(...t.externalIds, 'zz', ''),
      name: fc.oneof(fc.constantFrom(...t.searchTerms), fc.string({ maxLength: 20 })),
      type: fc.constantFrom('player', 'team', 'competition', 'nothing'),
      namespace: fc.constantFrom(...t.namespaces),
    },
    { requiredKeys: [] },
  );
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ rows: fc.array(row, { minLength: 1, maxLength: 20 }), first_row: fc.integer({ min: 1, max: 5000 }) }, { requiredKeys: ['rows'] }).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.constantFrom('{"rows":[]}', '{"rows":"x"}', '{"rows":null}', '{"rows":[{}],"first_row":0}', '[]', 'null') },
    { weight: 3, arbitrary: hostileBody },
  );
}

function ackBody(t: FuzzTargets): fc.Arbitrary<string> {
  // A body the opta key may send as is: its own findings, plain actor and note.
  const own = t.findingIds.filter((id) => id.startsWith('opta-'));
  const wellFormed = fc
    .record({ finding_ids: fc.subarray(own, { minLength: 1 }), actor: fc.string({ maxLength: 20 }), note: fc.string({ maxLength: 40 }) }, { requiredKeys: ['finding_ids'] })
    .map((b) => JSON.stringify(b));
  const ids = fc.oneof({ weight: 6, arbitrary: fc.subarray(t.findingIds) }, { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 10 }), { maxLength: 5 }) }, { weight: 1, arbitrary: fc.constant(Array.from({ length: 1001 }, (_, i) => `opta-${i}`)) });
  const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constant('n'.repeat(2001)), fc.constant(null), fc.constant(17 as unknown as string));
  return fc.oneof(
    { weight: 6, arbitrary: wellFormed },
    {
      weight: 6,
      arbitrary: fc
        .record({ batch_id: fc.oneof(fc.constantFrom(...t.batchIds), fc.integer(), fc.constant(1.5)), finding_ids: ids, actor: text, note: text }, { requiredKeys: [] })
        .map((b) => JSON.stringify(b)),
    },
    { weight: 1, arbitrary: fc.constantFrom('{}', '{"finding_ids":"opta-1"}', '{"finding_ids":[1,2]}', '{"batch_id":"7"}', '{"finding_ids":[],"zzz":1}', '{"finding_ids":[]}') },
    { weight: 3, arbitrary: hostileBody },
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Whole requests.

interface OperationShape {
  template: string;
  method: string;
  pathParams: string[];
  queryParams: JsonObject[];
  headerParams: JsonObject[];
  hasBody: boolean;
}

/** Every operation of the document, with its parameters resolved. */
export function documentOperations(): OperationShape[] {
  const out: OperationShape[] = [];
  for (const [template, item] of Object.entries(openapiDocument.paths)) {
    if (item.servers) continue; // the operational endpoints are not the API's, and take no parameters
    for (const [method, op] of Object.entries(item) as [string, JsonObject][]) {
      const params = ((op.parameters ?? []) as JsonValue[]).map((p) => resolveDocumentRef(p));
      out.push({
        template,
        method: method.toUpperCase(),
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name as string),
        queryParams: params.filter((p) => p.in === 'query'),
        headerParams: params.filter((p) => p.in === 'header'),
        hasBody: op.requestBody !== undefined,
      });
    }
  }
  return out;
}

function authHeader(t: FuzzTargets): fc.Arbitrary<{ keyName: string | null; value: string | null }> {
  const names = Object.keys(t.keys);
  const forged = fc.oneof(
    fc.constant(null),
    fc.constantFrom('Bearer', 'Bearer ', 'bearer', 'Basic dXNlcjpwYXNz', `Bearer rk_00000000_${'A'.repeat(32)}`, 'Bearer rk_zz', 'Bearer  x', `Bearer ${'k'.repeat(3000)}`),
    fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => `Bearer ${s}`),
  );
  return fc.oneof(
    ...names.map((keyName) => ({ weight: t.keyWeights?.[keyName] ?? 1, arbitrary: fc.constant({ keyName: keyName as string | null, value: `Bearer ${t.keys[keyName]}` as string | null }) })),
    // A real key with a different scheme spelling or trailing junk must still not slip through.
    { weight: 1, arbitrary: fc.constantFrom(...names).map((keyName) => ({ keyName, value: `bearer ${t.keys[keyName]}` })) },
    { weight: 1, arbitrary: fc.constantFrom(...names).map((keyName) => ({ keyName: null, value: `Bearer ${t.keys[keyName]}x` })) },
    { weight: 2, arbitrary: forged.map((value) => ({ keyName: null, value })) },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | null>('application/json') },
  { weight: 3, arbitrary: fc.constantFrom<string | null>('application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=latin1') },
  { weight: 2, arbitrary: fc.constantFrom<string | null>(null, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', '', 'application/json-seq') },
);

/** One request made from `op`: method (sometimes wrong), namespace (sometimes wrong), path, query, headers, body. */
function requestFor(op: OperationShape, t: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const method = fc.oneof({ weight: 8, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS, op.method === 'GET' ? 'POST' : 'GET') });
  const ns = fc.oneof({ weight: 12, arbitrary: fc.constantFrom('v1', 'next') }, { weight: 1, arbitrary: fc.constantFrom('v2', 'V1', '', 'v1%2F', '..', 'v0') });
  const independent = fc.record({ segs: fc.tuple(...op.pathParams.map((p) => pathValue(p, t))), query: queryFor(op.queryParams, t) });
  const isResolve = op.pathParams.includes('provider') && op.pathParams.includes('external_id');
  // Independent values rarely line up into a real mapping; a coherent triple (its namespace first in the query)
  // reaches the 200s with results and the 409.
  const coherent = fc
    .record({ b: fc.constantFrom(...t.bridges), query: queryFor(op.queryParams.filter((p) => p.name !== 'namespace'), t) })
    .map(({ b, query }) => ({ segs: [encodeSegment(b.provider), encodeSegment(b.externalId)], query: `?namespace=${encodeSegment(b.namespace)}${query.replace(/^\?/, '&')}` }));
  const pathAndQuery = isResolve ? fc.oneof({ weight: 1, arbitrary: independent }, { weight: 3, arbitrary: coherent }) : independent;
  const mutation = fc.oneof(
    { weight: 20, arbitrary: fc.constant('none') },
    { weight: 1, arbitrary: fc.constantFrom('trailing-slash', 'double-slash', 'extra-segment', 'dot-dot', 'dot') },
  );
  const ifNoneMatch = op.headerParams.some((p) => p.name === 'If-None-Match') ? fc.option(fc.constantFrom('"x"', '*', 'W/"abc"', '"' + 'e'.repeat(200) + '"'), { nil: null }) : fc.constant(null);
  // A CORS preflight names the method it asks about; now and then one that does not, which is no preflight (405).
  const preflight = op.method === 'OPTIONS' ? fc.option(fc.constantFrom('GET', 'POST', 'DELETE', 'get'), { nil: null, freq: 6 }) : fc.constant(null);
  const body =
    op.template === '/batch' ? batchBody(t) : op.template === '/notices/ack' ? ackBody(t) : op.template === '/contributions/check' ? checkBody(t) : fc.oneof(batchBody(t), ackBody(t));
  return fc
    .record({ method, ns, pathAndQuery, mutation, auth: authHeader(t), contentType, body, ifNoneMatch, preflight })
    .map((r) => {
      let i = 0;
      let path = op.template === '/' ? '/' : op.template.replace(/\{[^}]+\}/g, () => r.pathAndQuery.segs[i++]);
      const query = r.pathAndQuery.query;
      if (r.mutation === 'trailing-slash') path += '/';
      else if (r.mutation === 'double-slash') path = `/${path}`;
      else if (r.mutation === 'extra-segment') path += '/extra';
      else if (r.mutation === 'dot-dot') path = `/..${path}`;
      else if (r.mutation === 'dot') path = `/.${path}`;
      const headers: Record<string, string> = {};
      if (r.auth.value !== null) headers.authorization = r.auth.value;
      if (r.ifNoneMatch) headers['if-none-match'] = r.ifNoneMatch;
      if (r.preflight && r.method === 'OPTIONS') headers['access-control-request-method'] = r.preflight;
      // Bodies go with methods that may carry one (a GET with a body is not something fetch can even send).
      const withBody = !['GET', 'HEAD'].includes(r.method) && (op.hasBody || r.method !== 'OPTIONS');
      if (withBody && r.contentType !== null) headers['content-type'] = r.contentType;
      return {
        method: r.method,
        target: `/api/${r.ns}${path === '/' ? '' : path}${query}`,
        headers,
        body: withBody ? r.body : undefined,
        template: op.template,
        keyName: r.auth.keyName,
      };
    });
}

/** Requests over every documented operation of the API, valid and hostile. */
export function fuzzRequests(t: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  // Every path answers a preflight; those are one request in five or so, so the lookups keep most of the runs.
  return fc.oneof(...documentOperations().map((op) => ({ weight: op.method === 'OPTIONS' ? 1 : 4, arbitrary: requestFor(op, t) })));
}

// ---------------------------------------------------------------------------------------------------------------
// The oracle.

// 422 is /matches' anchor of the wrong kind, charged like a miss (the document says so).
const CHARGED_OUTCOMES = [200, 404, 409, 410, 422];
const IN_API = /^\/api\/(v1|next)(\/|$)/;

/** The pathname a server sees for `target` (the URL parser resolves `.` and `..` and drops the fragment). */
function seenPath(target: string): string {
  return new URL(target, 'http://127.0.0.1').pathname;
}

/** Lookups `x` should have charged, from the document's `x-lookup-cost` and the outcome. */
function expectedCharge(x: Pick<Exchange, 'request' | 'status' | 'body'>): number {
  const method = x.request.method === 'HEAD' ? 'GET' : x.request.method;
  const path = seenPath(x.request.target);
  if (!IN_API.test(path)) return 0;
  const op = findOperation(method, path)?.operation;
  const cost = op?.['x-lookup-cost'];
  if (!CHARGED_OUTCOMES.includes(x.status)) return 0;
  // An unknown path also answers 404; only a documented costing operation charges for it.
  // (A HEAD answer has no body; there the documented operation alone decides, as `op` is null for unknown paths.)
  if (x.status === 404 && x.request.method !== 'HEAD' && !/"error":"not_found"/.test(x.body)) return 0;
  if (cost === 'per_item') {
    if (x.status !== 200) return 0;
    // A batch item refused in place is its 400; a contribution row that cannot be checked is `invalid`.
    const parsed = JSON.parse(x.body) as { results: { status: number | string }[] };
    return parsed.results.filter((r) => r.status !== 400 && r.status !== 'invalid').length;
  }
  return typeof cost === 'number' ? cost : 0;
}

function isErrorShape(v: unknown): boolean {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.error === 'string' && (o.message === undefined || typeof o.message === 'string') && (o.detail === undefined || typeof o.detail === 'string');
}

/**
 * Everything wrong with one exchange: a 5xx (other than an `allowed5xx` code), a response the document does not
 * describe, a 4xx without an Error body, a charge that differs from the rule (a refusal charges nothing), a credits
 * header that is not the truth. `checkHeadBody` is for HTTP, where a HEAD answer must come without a body.
 */
export function checkExchange(x: Exchange, opts: { knownGaps?: KnownGap[]; allowed5xx?: string[]; checkHeadBody?: boolean } = {}): string[] {
  const problems: string[] = [];
  const r = x.request;
  const where = `${r.method} ${r.target.length > 200 ? r.target.slice(0, 200) + '…' : r.target} → ${x.status}`;
  let parsed: { error?: string } | undefined;
  if (x.body !== '') {
    try {
      parsed = JSON.parse(x.body);
    } catch {
      problems.push(`${where}: body is not JSON: ${x.body.slice(0, 120)}`);
    }
  }
  // A HEAD answer has no body to name its code; a 503 there is judged by the GET of the same target, fuzzed too.
  const allowed = (opts.allowed5xx ?? []).includes(parsed?.error ?? '') || (r.method === 'HEAD' && x.body === '' && x.status === 503 && (opts.allowed5xx ?? []).length > 0);
  if (x.status >= 500 && !allowed) problems.push(`${where}: server error ${x.body.slice(0, 200)}`);
  const gap = (opts.knownGaps ?? []).find((g) => g.matches(x, parsed));
  if (r.method === 'HEAD' && opts.checkHeadBody && x.body !== '') problems.push(`${where}: HEAD answered with a body`);
  if (!gap) {
    // A path the URL parser moved out of /api/v1 or /api/next (`/api/../meta`) is outside the API: only the
    // unknown-path 404 is right there, whatever document path its tail happens to look like. A HEAD is checked as
    // the document states it: the GET's status and headers, its body's length, no body.
    const path = seenPath(r.target);
    try {
      validateResponse({ method: r.method, path: IN_API.test(path) ? path : `/outside-the-api${path}`, status: x.status, headers: x.headers, body: x.body });
    } catch (e) {
      problems.push(`${where}: ${(e as Error).message.split('\n').slice(0, 3).join(' | ')}`);
    }
  }
  if (r.method !== 'HEAD' && x.status >= 400 && !isErrorShape(parsed)) problems.push(`${where}: a ${x.status} without an Error body: ${x.body.slice(0, 120)}`);
  if (x.creditsBefore !== null && x.creditsAfter !== null) {
    const charged = x.creditsBefore - x.creditsAfter;
    let want: number;
    try {
      want = expectedCharge(x);
    } catch {
      want = 0;
    }
    if (charged !== want) problems.push(`${where}: charged ${charged} lookup(s), the rule says ${want} (key ${r.keyName}) body ${x.body.slice(0, 100)}`);
    const header = x.headers.get('x-register-credits-remaining');
    if (header !== null && Number(header) !== x.creditsAfter) problems.push(`${where}: X-Register-Credits-Remaining ${header} but ${x.creditsAfter} left`);
  }
  return problems;
}

/** A one-line reproduction of a request, for failure messages. */
export function describeRequest(r: FuzzRequest): string {
  const body = r.body === undefined ? '' : ` body(${r.body.length} chars)=${JSON.stringify(r.body.slice(0, 160))}`;
  return `${r.method} ${r.target.slice(0, 300)} headers=${JSON.stringify({ ...r.headers, authorization: r.keyName ? `<${r.keyName} key>` : r.headers.authorization?.slice(0, 40) })}${body}`;
}
