// Checks the OpenAPI document is sound (refs, schemas, parameters, contract statuses) and that the response
// validator accepts contract-conforming responses and rejects the bugs it exists to catch.

import { describe, expect, it } from 'vitest';
import { type JsonObject, type JsonValue } from '../../runtime/contract/document.ts';
import { METRICS_TYPE } from '../../runtime/ops/ops-routes.ts';
import { openapiDocument as documentOfRoutes, openapiJsonText } from '../../runtime/openapi-json.ts';
import { CORS_EXPOSED } from '../../runtime/contract/http-parts.ts';
import {
  assertErrorBody,
  compileSchema,
  findOperation,
  lookupPointer,
  resolveDocumentRef,
  validateComponent,
  validateResponse,
  type ResponseSample,
} from '../helpers/openapi-validator.ts';

const openapiDocument = documentOfRoutes();

// ---------------------------------------------------------------------------------------------------------------
// Fixtures: hand-written bodies as the contract describes them, keys in contract order.

const STAMP = '20261005T180536Z';
const PRIOR = '20260901T120000Z';
const MATCH_ID = 'rm00c0ffee00beef';
const PLAYER_ID = 'rp0123456789abcd';
const OLD_PLAYER_ID = 'rp00000000000042';
const TEAM_A = 'rt1111111111aaaa';
const TEAM_B = 'rt2222222222bbbb';

const jsonHeaders = (extra: Record<string, string> = {}): Record<string, string> => ({
  'Content-Type': 'application/json; charset=utf-8',
  'X-Register-Release-Stamp': STAMP,
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': CORS_EXPOSED,
  ETag: '"sample-tag"',
  ...extra,
});
const costHeaders = (remaining = 998, extra: Record<string, string> = {}): Record<string, string> =>
  jsonHeaders({
    'X-Register-Credits-Remaining': String(remaining),
    'RateLimit-Policy': '"burst";q=2;w=1, "monthly";q=1000;w=2592000',
    RateLimit: `"monthly";r=${remaining};t=86400`,
    ...extra,
  });

const matchEntity = (): Record<string, unknown> => ({
  reep_id: MATCH_ID,
  entity_type: 'match',
  name_en: 'Chelsea v Arsenal',
  lifecycle_state: 'active',
  canonical_reep_id: null,
  aliases: [
    { name: 'Chelsea – Arsenal', language: null, type: 'full', rank: 1 },
    { name: 'CHE-ARS', language: null, type: 'short', rank: null },
  ],
  names: ['Chelsea – Arsenal', 'CHE-ARS'],
  attributes: { gender: ['male'], country: ['ENG'] },
  bridges: [
    { provider: 'transfermarkt', namespace: 'spielbericht', external_id: '4242', entity_type: 'match', role: 'canonical_bridge' },
    { provider: 'fbref', namespace: '', external_id: 'a1b2c3', entity_type: 'match', role: 'bridge_only' },
  ],
  relationships: [
    { family: 'participates_in', count: 2, roles: { home: 1, away: 1 }, source_providers: ['opta'], expansion: 'summary_only' },
  ],
  overlay: {
    kb: {
      source: 'kb',
      source_tier: 'kb-originated',
      qid: 'Q123456',
      link_confidence: 0.9,
      dob_check: null,
      ids: [{ provider: 'fbref', property: 'P5750', external_id: 'a1b2c3', confidence: 0.75 }],
      aliases: [{ name: 'Chelsea vs Arsenal', language: 'en', source: 'kb', confidence: null }],
    },
  },  match: {
    home_score: 2,
    away_score: 1,
    result_form: 'regular',
    shootout_home: null,
    shootout_away: null,
    score_basis: 'corroborated',
    home_id: TEAM_A,
    away_id: TEAM_B,
    played_on: '2024-05-01',
  },
});

const playerEntity = (): Record<string, unknown> => ({
  reep_id: PLAYER_ID,
  entity_type: 'player',
  name_en: 'Cole Palmer',
  lifecycle_state: 'active',
});

const redirectedPlayer = (): Record<string, unknown> => ({
  ...playerEntity(),
  requested_id: OLD_PLAYER_ID,
  redirected_to: PLAYER_ID,
});

const finding = (id: string, seen: boolean): Record<string, unknown> => ({
  finding_id: id,
  provider: 'acme',
  kind: 'score_outlier',
  title: 'Implausible score',
  provider_ref: 'match/99',
  source: { table: 'matches' },
  observed: '31-0',
  expected: null,
  severity: 'medium',
  suggested_action: 'check the score',
  payload: { home_score: 31 },
  payload_hash: 'sha256:ab12',
  first_seen_at: '2026-10-01T00:00:00Z',
  last_seen_at: '2026-10-05T00:00:00Z',
  seen,
  seen_at: seen ? '2026-10-06T10:00:00Z' : null,
  acknowledged: false,
  acknowledged_at: null,
});

const windowFields = (): Record<string, unknown> => ({
  since: PRIOR,
  from: PRIOR,
  to: STAMP,
  until: STAMP,
  chain: [STAMP],
  releases: [{ stamp: STAMP, counts: { entity_added: 1, redirect_changed: 1, provider_updated: 1 } }],
  counts: { entity_added: 1, redirect_changed: 1, provider_updated: 1 },
});

const changesPage = (): Record<string, unknown> => ({
  ...windowFields(),
  type: null,
  provider: null,
  events: [
    { type: 'entity_added', reep_id: PLAYER_ID, entity_type: 'player', label: 'Cole Palmer' },
    { type: 'entity_status_changed', reep_id: TEAM_A, from: 'active', to: 'dormant' },
    { type: 'label_updated', reep_id: TEAM_B, from: 'Arsenal FC', to: 'Arsenal' },
    { type: 'entity_removed', reep_id: 'rp00000000000099' },
    { type: 'redirect_changed', reep_id: OLD_PLAYER_ID, redirected_to: PLAYER_ID },
    {
      type: 'provider_updated',
      reep_id: PLAYER_ID,
      provider: 'transfermarkt',
      added: [{ namespace: 'spieler', external_id: '568177' }],
      removed: [],
    },
  ],
  matched: 6,
  next_cursor: null,
});

const sample = (method: string, path: string, status: number, body: unknown, headers: Record<string, string>): ResponseSample => ({
  method,
  path,
  status,
  headers,
  body: body === '' ? '' : JSON.stringify(body),
});

/** The message validateResponse throws for `s`, or a failure if it accepts it. */
function rejection(s: ResponseSample): string {
  try {
    validateResponse(s);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`expected ${s.method} ${s.path} → ${s.status} to be rejected`);
}

// ---------------------------------------------------------------------------------------------------------------
// Document walking helpers for the structural checks.

function walk(node: JsonValue, at: string, visit: (node: JsonObject, at: string) => void): void {
  if (Array.isArray(node)) node.forEach((child, i) => walk(child, `${at}/${i}`, visit));
  else if (node && typeof node === 'object') {
    visit(node, at);
    for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`, visit);
  }
}

interface OperationEntry {
  key: string;
  method: string;
  path: string;
  operation: JsonObject;
}

// The API's operations; the operational endpoints at the root (/healthz, /readyz, /metrics) are checked on their own.
// CORS preflights (OPTIONS) are checked on their own too.
const operations: OperationEntry[] = Object.entries(openapiDocument.paths).filter(([, item]) => !item.servers).flatMap(([path, item]) =>
  Object.entries(item).filter(([method]) => method !== 'options').map(([method, operation]) => ({
    key: `${method.toUpperCase()} ${path}`,
    method,
    path,
    operation: operation as JsonObject,
  })),
);

const responsesOf = (op: JsonObject): Record<string, JsonObject> =>
  Object.fromEntries(Object.entries(op.responses as JsonObject).map(([status, r]) => [status, resolveDocumentRef(r)]));

const parametersOf = (op: JsonObject): JsonObject[] => ((op.parameters as JsonValue[] | undefined) ?? []).map(resolveDocumentRef);

/** The error codes a response's schema allows (from `const`/`enum` on `error`), or null for a non-error body. */
function errorCodesOf(response: JsonObject): string[] | null {
  const schema = ((response.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)?.schema as JsonObject | undefined;
  if (!schema) return null;
  const props = (schema.properties ?? resolveDocumentRef(schema).properties) as JsonObject | undefined;
  const error = props?.error as JsonObject | undefined;
  if (!error) return null;
  if (typeof error.const === 'string') return [error.const];
  if (Array.isArray(error.enum)) return error.enum as string[];
  return null;
}

// ---------------------------------------------------------------------------------------------------------------

describe('OpenAPI document: structure', () => {
  it("is an OpenAPI 3.1 document in 3.1's default dialect (JSON Schema 2020-12 with OpenAPI's keywords) with both namespaces and bearer auth", () => {
    expect(openapiDocument.openapi).toBe('3.1.0');
    // Left out, so the default applies: a plain 2020-12 dialect would not know `discriminator`, and Swagger UI warns.
    expect(openapiDocument).not.toHaveProperty('jsonSchemaDialect');
    expect(typeof openapiDocument.info.title).toBe('string');
    expect(typeof openapiDocument.info.version).toBe('string');
    expect(openapiDocument.servers.map((s) => s.url)).toEqual(['/api/v1', '/api/next']);
    expect(openapiDocument.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(openapiDocument.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents exactly the routes of the contract', () => {
    const documented = Object.entries(openapiDocument.paths)
      .filter(([, item]) => !item.servers)
      .flatMap(([path, item]) => (['get', 'post'] as const).filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual([
      'GET /',
      'GET /meta',
      'GET /providers',
      'GET /provider-notices/summary',
      'GET /coverage',
      'GET /search',
      'GET /resolve/{provider}/{external_id}',
      'GET /matches',
      'POST /batch',
      'POST /contributions/check',
      'GET /entities/{reep_id}',
      'GET /entities/{reep_id}/bridges',
      'GET /entities/{reep_id}/overlay',
      'GET /entities/{reep_id}/relationships',
      'GET /notices',
      'POST /notices/ack',
      'GET /changes/summary',
      'GET /changes',
      'GET /changes/releases',
      'GET /key',
      'GET /openapi.json',
      'GET /reconcile',
      'POST /reconcile',
    ].sort());
  });

  it('serialises to canonical JSON that round-trips unchanged', () => {
    expect(openapiJsonText()).toBe(JSON.stringify(openapiDocument));
    expect(JSON.parse(openapiJsonText())).toEqual(openapiDocument);
    expect(openapiJsonText()).not.toMatch(/\n/);
  });

  it('resolves every $ref', () => {
    const refs: string[] = [];
    walk(openapiDocument as unknown as JsonValue, '#', (node, at) => {
      if (typeof node.$ref === 'string') {
        refs.push(node.$ref);
        expect(() => lookupPointer(node.$ref as string), `${at}: ${node.$ref}`).not.toThrow();
      }
    });
    expect(refs.length).toBeGreaterThan(100);
  });

  it('compiles every component schema and every schema used by a parameter, header, request or response', () => {
    for (const name of Object.keys(openapiDocument.components.schemas)) {
      expect(() => compileSchema({ $ref: `#/components/schemas/${name}` }), name).not.toThrow();
    }
    let used = 0;
    walk(openapiDocument.paths as unknown as JsonValue, '#/paths', (node, at) => {
      if (node.schema && !at.includes('/schema')) {
        expect(() => compileSchema(node.schema as JsonValue), at).not.toThrow();
        used++;
      }
    });
    for (const [name, header] of Object.entries(openapiDocument.components.headers)) {
      expect(() => compileSchema(header.schema as JsonValue), name).not.toThrow();
    }
    for (const [name, parameter] of Object.entries(openapiDocument.components.parameters)) {
      expect(() => compileSchema(parameter.schema as JsonValue), name).not.toThrow();
    }
    expect(used).toBeGreaterThan(20);
  });

  it('gives every operation a unique operationId, a summary and described responses with JSON content only', () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { key, operation } of operations) {
      expect(typeof operation.summary, key).toBe('string');
      expect(['number', 'string'], `${key} x-lookup-cost`).toContain(typeof operation['x-lookup-cost']);
      for (const [status, response] of Object.entries(responsesOf(operation))) {
        expect(status, key).toMatch(/^[1-5][0-9][0-9]$/);
        expect(typeof response.description, `${key} ${status}`).toBe('string');
        if (response.content) expect(Object.keys(response.content as JsonObject), `${key} ${status}`).toEqual(['application/json']);
        else expect(['204', '304'], `${key}: only a preflight's 204 and a 304 have no body`).toContain(status);
      }
    }
  });

  it('declares every path parameter of every template, and nothing else in the path', () => {
    for (const { key, path, operation } of operations) {
      const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = parametersOf(operation).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort(), key).toEqual(inTemplate);
      for (const p of declared) expect(p.required, `${key} ${String(p.name)}`).toBe(true);
      for (const p of parametersOf(operation)) {
        expect(['path', 'query', 'header'], `${key} ${String(p.name)}`).toContain(p.in);
        expect(p.schema, `${key} ${String(p.name)}`).toBeTruthy();
      }
    }
  });

  it('states the query limits of the contract', () => {
    const param = (path: string, name: string): JsonObject => {
      const op = openapiDocument.paths[path].get as JsonObject;
      const p = parametersOf(op).find((x) => x.name === name);
      if (!p) throw new Error(`${path} has no ${name}`);
      return resolveDocumentRef(p.schema as JsonValue);
    };
    expect(param('/search', 'q')).toMatchObject({ type: 'string', minLength: 3 });
    expect(param('/search', 'limit')).toMatchObject({ minimum: 1, maximum: 20, default: 20 });
    expect(param('/notices', 'limit')).toMatchObject({ minimum: 1, maximum: 100, default: 25 });
    expect(param('/notices', 'offset')).toMatchObject({ minimum: 0, default: 0 });
    expect(param('/entities/{reep_id}/relationships', 'limit')).toMatchObject({ minimum: 1, maximum: 100, default: 25 });
    expect(param('/changes', 'limit')).toMatchObject({ minimum: 1, maximum: 1000, default: 500 });
    expect(param('/entities/{reep_id}', 'reep_id').pattern).toBe('^r[a-z][0-9a-f]{14}$');
  });

  // The statuses API-SPEC.md and CONTRACT-DECISIONS.md name for each operation; the document may add more
  // (e.g. 503 while no release is loaded) but never fewer.
  const CONTRACT_STATUSES: Record<string, number[]> = {
    'GET /': [200, 503],
    'GET /meta': [200, 401],
    'GET /providers': [200, 401],
    'GET /provider-notices/summary': [200, 401, 503],
    'GET /coverage': [200, 401],
    'GET /key': [200, 401],
    'GET /openapi.json': [200],
    'GET /search': [200, 400, 401, 402, 429, 503],
    'GET /resolve/{provider}/{external_id}': [200, 400, 401, 402, 409, 429],
    'GET /matches': [200, 400, 401, 402, 409, 422, 429, 503],
    'POST /batch': [200, 400, 401, 402, 413, 429],
    'POST /contributions/check': [200, 400, 401, 402, 413, 415, 429, 503],
    'GET /entities/{reep_id}': [200, 400, 401, 402, 404, 410, 429],
    'GET /entities/{reep_id}/bridges': [200, 400, 401, 402, 404, 410, 429],
    'GET /entities/{reep_id}/overlay': [200, 400, 401, 402, 404, 410, 429],
    'GET /entities/{reep_id}/relationships': [200, 400, 401, 402, 404, 410, 429],
    'GET /notices': [200, 400, 401, 403],
    'POST /notices/ack': [200, 400, 401, 403, 503],
    'GET /changes/summary': [200, 304, 400, 401],
    'GET /changes': [200, 304, 400, 401],
    'GET /changes/releases': [200, 304, 401],
    'GET /reconcile': [200, 400, 401, 402, 413, 429, 503],
    'POST /reconcile': [200, 400, 401, 402, 413, 429, 503],
  };

  it('documents the operational endpoints at the root, public and free, /metrics in the Prometheus text format', () => {
    const ops = Object.entries(openapiDocument.paths).filter(([, item]) => item.servers);
    expect(ops.map(([path]) => path)).toEqual(['/healthz', '/readyz', '/metrics']);
    for (const [path, item] of ops) {
      expect(item.servers!.map((s) => s.url), path).toEqual(['/']);
      expect(Object.keys(item).sort(), path).toEqual(['get', 'servers']);
      expect(item.get!.security, path).toEqual([]);
      expect(item.get!['x-lookup-cost'], path).toBe(0);
    }
    expect(Object.keys((openapiDocument.paths['/metrics'].get!.responses as JsonObject)['200'] as JsonObject)).toContain('content');
    expect(Object.keys(((openapiDocument.paths['/metrics'].get!.responses as JsonObject)['200'] as JsonObject).content as JsonObject)).toEqual([METRICS_TYPE]);
  });

  it('documents every status the contract names for each operation', () => {
    expect(Object.keys(CONTRACT_STATUSES).sort()).toEqual(operations.map((o) => o.key).sort());
    for (const { key, operation } of operations) {
      const documented = Object.keys(operation.responses as JsonObject).map(Number);
      for (const status of CONTRACT_STATUSES[key]) expect(documented, `${key} lacks ${status}`).toContain(status);
    }
  });

  it('documents 401 on every keyed operation and none on the public ones', () => {
    for (const { key, operation } of operations) {
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
      expect(isPublic, key).toBe(key === 'GET /' || key === 'GET /openapi.json');
      expect(Object.keys(operation.responses as JsonObject).includes('401'), key).toBe(!isPublic);
    }
  });

  it('requires the credits header on every authenticated response of a costing operation', () => {
    for (const { key, operation } of operations) {
      if (operation['x-lookup-cost'] === 0) continue;
      for (const [status, response] of Object.entries(responsesOf(operation))) {
        if (['401', '413', '414', '503'].includes(status)) continue;
        const header = resolveDocumentRef((response.headers as JsonObject)['X-Register-Credits-Remaining']);
        // GET /reconcile's 200 is also its manifest, which the reconciliation spec serves without a key and free.
        if (key === 'GET /reconcile' && status === '200') {
          expect(header.required, key).toBe(false);
          continue;
        }
        expect(header.required, `${key} ${status}`).toBe(true);
      }
    }
  });

  it('narrows every error response to codes the contract knows, with the status-specific codes', () => {
    const known = new Set(resolveDocumentRef(openapiDocument.components.schemas.ErrorCode).enum as string[]);
    const byStatus: Record<string, string[]> = {
      '401': ['missing_key', 'invalid_key', 'revoked_key', 'key_expired'],
      '402': ['quota_exceeded'],
      '403': ['provider_scope_required'],
      '404': ['not_found'],
      '409': ['ambiguous_provider_id'],
      '410': ['gone'],
      '413': ['payload_too_large'],
      '429': ['rate_limited'],
    };
    for (const { key, operation } of operations) {
      for (const [status, response] of Object.entries(responsesOf(operation))) {
        if (Number(status) < 400) continue;
        const codes = errorCodesOf(response) ?? [(resolveDocumentRef((response.content as JsonObject)['application/json'] as JsonObject).schema as JsonObject)?.$ref as string];
        for (const code of codes) {
          if (code.startsWith('#/')) continue; // GoneError and AmbiguousResolveError fix their code with const
          expect(known.has(code), `${key} ${status}: ${code}`).toBe(true);
        }
        if (byStatus[status] && errorCodesOf(response)) expect(errorCodesOf(response), `${key} ${status}`).toEqual(byStatus[status]);
      }
    }
    expect(errorCodesOf(resolveDocumentRef(openapiDocument.paths['/batch'].post!.responses as JsonObject)['400'] as JsonObject)).toEqual(
      expect.arrayContaining(['batch_too_large', 'resolve_batch_too_large', 'empty_batch', 'invalid_body']),
    );
  });

  it('describes the request bodies of POST /batch and POST /notices/ack', () => {
    const items = (n: number, type: string) => Array.from({ length: n }, (_, i) => ({ type, id: `rp${String(i).padStart(14, '0')}` }));
    expect(() => validateComponent('BatchRequest', { requests: items(2, 'entity'), include: 'aliases,bridges' })).not.toThrow();
    expect(() => validateComponent('BatchRequest', { requests: [...items(80, 'entity'), ...items(20, 'resolve')], include: ['overlay'] })).not.toThrow();
    expect(() => validateComponent('BatchRequest', { requests: [] })).toThrow(/minItems|fewer than 1/);
    expect(() => validateComponent('BatchRequest', { requests: items(101, 'entity') })).toThrow(/more than 100/);
    expect(() => validateComponent('BatchRequest', { requests: items(21, 'resolve') })).toThrow(/more than 20/);
    expect(() => validateComponent('AckRequest', { batch_id: 7 })).not.toThrow();
    expect(() => validateComponent('AckRequest', { finding_ids: ['f1'], actor: 'ops', note: 'fixed' })).not.toThrow();
    expect(() => validateComponent('AckRequest', { actor: 'ops' })).toThrow();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('response validator: accepts contract-conforming responses', () => {
  it('an entity with every expansion, including a match scoreline', () => {
    const parsed = validateResponse(
      sample('GET', `/entities/${MATCH_ID}?include=aliases,attributes,bridges,relationships,overlay`, 200, matchEntity(), costHeaders()),
    );
    expect(parsed).toEqual(matchEntity());
  });

  it('a core-only entity and a redirected one, with a Headers object and the namespace prefix', () => {
    validateResponse(sample('GET', `/entities/${PLAYER_ID}`, 200, playerEntity(), costHeaders()));
    validateResponse({
      method: 'GET',
      path: `/api/next/entities/${OLD_PLAYER_ID}`,
      status: 200,
      headers: new Headers(costHeaders(12)),
      body: new TextEncoder().encode(JSON.stringify(redirectedPlayer())),
    });
  });

  it('the entity sub-resources, redirected', () => {
    const bridges = matchEntity().bridges;
    validateResponse(
      sample('GET', `/entities/${OLD_PLAYER_ID}/bridges`, 200, { reep_id: PLAYER_ID, bridges, count: 2, requested_id: OLD_PLAYER_ID, redirected_to: PLAYER_ID }, costHeaders()),
    );
    validateResponse(sample('GET', `/entities/${MATCH_ID}/overlay`, 200, { reep_id: MATCH_ID, overlay: matchEntity().overlay, count: 1 }, costHeaders()));
    validateResponse(sample('GET', `/entities/${PLAYER_ID}/overlay`, 200, { reep_id: PLAYER_ID, overlay: {}, count: 0 }, costHeaders()));
    validateResponse(sample('GET', `/entities/${PLAYER_ID}/relationships?limit=5`, 200, { reep_id: PLAYER_ID, relationships: [] }, costHeaders()));
  });

  it('a resolve result and a 409 with every candidate, for an external ID holding an encoded slash', () => {
    const path = '/resolve/transfermarkt/palmer-cole%2Fh8agbDt7?namespace=spieler&include=bridges';
    expect(findOperation('GET', path)).toMatchObject({
      template: '/resolve/{provider}/{external_id}',
      params: { provider: 'transfermarkt', external_id: 'palmer-cole%2Fh8agbDt7' },
    });
    validateResponse(sample('GET', path, 200, { results: [redirectedPlayer()], count: 1 }, costHeaders()));
    validateResponse(sample('GET', path, 200, { results: [], count: 0 }, costHeaders()));
    const ambiguous = {
      error: 'ambiguous_provider_id',
      message: 'transfermarkt spieler palmer-cole/h8agbDt7 maps to 2 entities',
      results: [playerEntity(), { ...playerEntity(), reep_id: 'rp0123456789abce' }],
      count: 2,
    };
    validateResponse(sample('GET', path, 409, ambiguous, costHeaders()));
    expect(assertErrorBody(JSON.stringify(ambiguous), 'ambiguous_provider_id').count).toBe(2);
  });

  it('410 gone, 404 not_found and 400 invalid_id on an entity', () => {
    const gone = { error: 'gone', message: 'This register ID was retired and is never reused.', detail: 'rp00000000000099' };
    validateResponse(sample('GET', '/entities/rp00000000000099', 410, gone, costHeaders()));
    assertErrorBody(JSON.stringify(gone), 'gone');
    validateResponse(sample('GET', '/entities/rp00000000000098', 404, { error: 'not_found', message: 'No entity rp00000000000098.' }, costHeaders()));
    validateResponse(sample('GET', '/entities/reep_t0871097b', 400, { error: 'invalid_id', message: 'Not a register ID.', detail: 'reep_t0871097b' }, costHeaders(1000)));
  });

  it('a batch with every kind of item outcome', () => {
    const body = {
      results: [
        { status: 200, body: matchEntity() },
        { status: 200, body: { results: [playerEntity()], count: 1 } },
        { status: 404, body: { error: 'not_found', message: 'No entity.' } },
        { status: 400, body: { error: 'invalid_id', message: 'Not a register ID.', detail: 'x' } },
        { status: 410, body: { error: 'gone', message: 'Retired, never reused.', detail: 'rp00000000000099' } },
        { status: 409, body: { error: 'ambiguous_provider_id', message: 'Two.', results: [playerEntity(), playerEntity()], count: 2 } },
      ],
      count: 6,
    };
    validateResponse(sample('POST', '/batch', 200, body, costHeaders(994)));
    validateResponse(
      sample('POST', '/batch', 400, { error: 'resolve_batch_too_large', message: 'At most 20 resolve items.', detail: '20' }, costHeaders()),
    );
  });

  it('a notices page, an acknowledgement and the provider-scope refusal', () => {
    const page = {
      provider: 'acme',
      batch_id: 7,
      generated_at: '2026-10-05T18:05:36Z',
      findings: [finding('f1', false), finding('f2', true)],
      count: 2,
      total: 3,
      limit: 2,
      offset: 0,
      next_offset: 2,
    };
    validateResponse(sample('GET', '/notices?limit=2', 200, page, jsonHeaders()));
    validateResponse(sample('POST', '/notices/ack', 200, { provider: 'acme', batch_id: 7, acknowledged: 1, finding_ids: ['f1'] }, jsonHeaders()));
    validateResponse(sample('GET', '/notices', 403, { error: 'provider_scope_required', message: 'Provider key required.' }, jsonHeaders()));
    validateResponse(sample('POST', '/notices/ack', 503, { error: 'ack_storage_unavailable', message: 'Read-only mirror.' }, jsonHeaders()));
  });

  it('a changes page, the summary, the release list and a 304', () => {
    const etag = { ETag: '"c-20261005T180536Z-0001"' };
    validateResponse(sample('GET', `/changes?since=${PRIOR}`, 200, changesPage(), jsonHeaders(etag)));
    validateResponse(sample('GET', `/changes/summary?since=${PRIOR}`, 200, windowFields(), jsonHeaders(etag)));
    validateResponse(
      sample(
        'GET',
        '/changes/releases',
        200,
        {
          latest: STAMP,
          releases: [
            { stamp: STAMP, prior: PRIOR, generated_at: '2026-10-05T18:05:36Z', counts: { entity_added: 1 } },
            { stamp: PRIOR, prior: null, generated_at: '2026-09-01T12:00:00Z', counts: {} },
          ],
        },
        jsonHeaders(etag),
      ),
    );
    expect(validateResponse({ method: 'GET', path: '/changes', status: 304, headers: jsonHeaders(etag), body: '' })).toBeUndefined();
    validateResponse(sample('GET', '/changes?cursor=abc&type=label_updated', 400, { error: 'stale_cursor', message: 'Cursor from other filters.' }, jsonHeaders()));
  });

  it('metadata, search, coverage and key bodies', () => {
    const release = {
      schema_version: 'bridge-register-v1',
      generated_at: '2026-10-05T18:05:36Z',
      stamp: STAMP,
      tier: 'public_bridge_v1',
      publishable: true,
      index_generated_at: '2026-10-06T08:00:00Z',
    };
    validateResponse({
      method: 'GET',
      path: '/',
      status: 200,
      headers: jsonHeaders(),
      body: JSON.stringify({ name: 'identity-register', version: '1.0.0', namespace: 'v1', release, endpoints: { meta: '/meta' } }),
    });
    validateResponse(
      sample(
        'GET',
        '/meta',
        200,
        {
          api_version: '1.0.0',
          namespace: 'next',
          api_schema: 'public-bridge-register-v2',
          index_generated_at: '2026-10-06T08:00:00Z',
          release,
          counts: { player: 2, match: 1 },
        },
        jsonHeaders(),
      ),
    );
    validateResponse(
      sample(
        'GET',
        '/providers',
        200,
        {
          providers: [{ name: 'transfermarkt', bridge_count: 10, overlay_count: 2, entity_types: { player: 8, team: 2 }, role: 'canonical_bridge' }],
          provider_roles: { transfermarkt: 'canonical_bridge' },
          count: 1,
        },
        jsonHeaders(),
      ),
    );
    validateResponse(sample('GET', '/provider-notices/summary', 200, { summary: { total: 3 }, redaction: { titles: true } }, jsonHeaders()));
    validateResponse(sample('GET', '/coverage', 200, { stamp: STAMP, sections: { entities: { player: '438178', team: 28911 } } }, jsonHeaders()));
    validateResponse(
      sample(
        'GET',
        '/search?q=cole%20palm',
        200,
        {
          query: 'cole palm',
          normalised_query: 'cole palm',
          sort: 'relevance',
          type: null,
          results: [{ reep_id: PLAYER_ID, entity_type: 'player', label: 'Cole Palmer', bridge_count: 9, relevance: 300 }],
          count: 1,
          limit: 20,
          bounded: true,
          max_candidates_per_token: 500,
        },
        costHeaders(),
      ),
    );
    validateResponse(
      sample(
        'GET',
        '/key',
        200,
        {
          key: {
            plan: 'preview', access_model: 'partner_preview', organisation: 'Acme', provider: null, expires_at: '2026-12-31T23:59:59.999Z',
            days_remaining: 66, expiring_soon: false, credits_remaining: 998, rate_limit_remaining: null,
            id: 'abcd0123', name: 'Partner', quota: 1000, rate: 2, credits_reset_at: '2026-11-01T00:00:00.000Z',
          },
          extend: { how: 'Ask us.' },
        },
        jsonHeaders({ 'X-Register-Key-Expires': '2026-12-31T23:59:59.999Z', 'X-Register-Key-Days-Remaining': '66' }),
      ),
    );
    // The published `contact` is a string: a null one is refused, so a server sending it fails every /key test.
    const keyOf = (extend: unknown) => ({
      key: {
        plan: null, access_model: null, organisation: null, provider: null, expires_at: '2026-12-31T23:59:59.999Z',
        days_remaining: 66, expiring_soon: false, credits_remaining: 998, rate_limit_remaining: null,
      },
      extend,
    });
    expect(rejection(sample('GET', '/key', 200, keyOf({ how: 'Ask us.', contact: null }), jsonHeaders()))).toMatch(/contact.*must be string/);
    expect(rejection(sample('GET', '/key', 200, { key: { plan: null }, extend: null }, jsonHeaders()))).toMatch(/must have required property/);
    validateResponse({ method: 'GET', path: '/openapi.json', status: 200, headers: jsonHeaders(), body: openapiJsonText() });
  });

  it('401, 402 and 429 with their headers, an unknown path and a wrong method', () => {
    validateResponse(sample('GET', '/meta', 401, { error: 'missing_key', message: 'Send a bearer key.' }, jsonHeaders({ 'WWW-Authenticate': 'Bearer realm="identity-register"' })));
    validateResponse(sample('GET', '/search?q=abc', 402, { error: 'quota_exceeded', message: 'Monthly quota used.', detail: '2026-11-01T00:00:00.000Z' }, costHeaders(0)));
    expect(rejection(sample('GET', '/search?q=abc', 402, { error: 'quota_exceeded', message: 'Monthly quota used.' }, costHeaders(0)))).toMatch(/detail/);
    validateResponse(sample('GET', '/search?q=abc', 429, { error: 'rate_limited', message: 'Slow down.' }, costHeaders(5, { 'Retry-After': '1' })));
    validateResponse(sample('GET', '/players/rp0123456789abcd', 404, { error: 'not_found', message: 'No such path.' }, jsonHeaders()));
    validateResponse(sample('DELETE', '/meta', 405, { error: 'method_not_allowed', message: 'GET only.' }, jsonHeaders({ Allow: 'GET' })));
    validateResponse(sample('GET', '/', 503, { error: 'index_unavailable', message: 'No release loaded.' }, { ...jsonHeaders(), 'X-Register-Release-Stamp': undefined } as unknown as Record<string, string>));
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('response validator: rejects contract bugs', () => {
  const entityPath = `/entities/${MATCH_ID}?include=aliases,attributes,bridges,relationships,overlay`;
  const entityWith = (mutate: (e: Record<string, unknown>) => void): ResponseSample => {
    const e = matchEntity();
    mutate(e);
    return sample('GET', entityPath, 200, e, costHeaders());
  };

  it('a missing required field', () => {
    expect(rejection(entityWith((e) => delete e.name_en))).toMatch(/must have required property 'name_en'/);
    const page = changesPage();
    (page.events as Record<string, unknown>[])[4] = { type: 'redirect_changed', reep_id: OLD_PLAYER_ID };
    expect(rejection(sample('GET', '/changes', 200, page, jsonHeaders({ ETag: '"x"' })))).toMatch(/redirected_to/);
  });

  it('a value outside an enum', () => {
    expect(rejection(entityWith((e) => (e.entity_type = 'club')))).toMatch(/entity_type must be equal to one of the allowed values/);
    expect(rejection(entityWith((e) => ((e.bridges as Record<string, unknown>[])[0].role = 'primary')))).toMatch(/\/bridges\/0\/role/);
    const page = changesPage();
    (page.events as Record<string, unknown>[])[0].type = 'entity_created';
    expect(rejection(sample('GET', '/changes', 200, page, jsonHeaders({ ETag: '"x"' })))).toMatch(/\/events\/0/);
  });

  it('an extra property on the Entity or one of its parts', () => {
    expect(rejection(entityWith((e) => (e.label = 'Chelsea v Arsenal')))).toMatch(/must NOT have additional properties \("label"\)/);
    expect(rejection(entityWith((e) => ((e.overlay as { kb: Record<string, unknown> }).kb.wikidata = true)))).toMatch(/\/overlay\/kb.*"wikidata"/);
    expect(rejection(entityWith((e) => (e.overlay = { wikidata: {} })))).toMatch(/"wikidata"/);
  });

  it('a float where an integer is required, and a non-canonical `1.0`', () => {
    expect(rejection(entityWith((e) => ((e.relationships as Record<string, unknown>[])[0].count = 2.5)))).toMatch(/count must be integer/);
    expect(rejection(entityWith((e) => ((e.match as Record<string, unknown>).home_score = 1.5)))).toMatch(/home_score must be integer/);
    const text = JSON.stringify({ results: [], count: 0 }).replace('"count":0', '"count":0.0');
    expect(rejection({ method: 'GET', path: '/resolve/acme/1', status: 200, headers: costHeaders(), body: text })).toMatch(/not canonical JSON/);
  });

  it('a register ID that breaks the pattern', () => {
    expect(rejection(entityWith((e) => (e.reep_id = 'rp0123456789ABCD')))).toMatch(/reep_id must match pattern/);
    expect(rejection(entityWith((e) => (e.canonical_reep_id = 'reep_t0871097b')))).toMatch(/canonical_reep_id/);
    expect(rejection(entityWith((e) => ((e.match as Record<string, unknown>).home_id = 'r1')))).toMatch(/home_id/);
  });

  it('keys out of contract order, and insignificant whitespace', () => {
    const { name_en, ...rest } = matchEntity();
    expect(rejection(sample('GET', entityPath, 200, { ...rest, name_en }, costHeaders()))).toMatch(
      /key "name_en" must come before "match" \(contract order: reep_id, entity_type, name_en,/,
    );
    const pretty = JSON.stringify(playerEntity(), null, 2);
    expect(rejection({ method: 'GET', path: `/entities/${PLAYER_ID}`, status: 200, headers: costHeaders(), body: pretty })).toMatch(/not canonical JSON/);
  });

  it('contract rules the schema encodes beyond types', () => {
    expect(rejection(sample('GET', `/entities/${PLAYER_ID}`, 200, { ...playerEntity(), match: matchEntity().match }, costHeaders()))).toMatch(/entity_type/);
    expect(rejection(sample('GET', `/entities/${PLAYER_ID}`, 200, { ...playerEntity(), requested_id: OLD_PLAYER_ID }, costHeaders()))).toMatch(/redirected_to/);
    expect(rejection(entityWith((e) => (e.overlay = {})))).toMatch(/overlay must NOT have fewer than 1 properties/);
    const batch = { results: [{ status: 200, body: { error: 'not_found' } }], count: 1 };
    expect(rejection(sample('POST', '/batch', 200, batch, costHeaders()))).toMatch(/\/results\/0\/body/);
    const wrongCode = { error: 'not_found', message: 'x' };
    expect(rejection(sample('GET', '/search?q=abc', 429, wrongCode, costHeaders(5, { 'Retry-After': '1' })))).toMatch(/error must be equal to constant/);
    expect(rejection(sample('GET', '/search', 200, { query: 'ab' }, costHeaders()))).toMatch(/must have required property/);
  });

  it('missing or malformed documented headers, and the wrong content type', () => {
    expect(rejection(sample('GET', `/entities/${PLAYER_ID}`, 200, playerEntity(), jsonHeaders()))).toMatch(/X-Register-Credits-Remaining is missing/);
    expect(rejection(sample('GET', `/entities/${PLAYER_ID}`, 200, playerEntity(), costHeaders(-1)))).toMatch(/X-Register-Credits-Remaining/);
    const noStamp = costHeaders();
    delete noStamp['X-Register-Release-Stamp'];
    expect(rejection(sample('GET', `/entities/${PLAYER_ID}`, 200, playerEntity(), noStamp))).toMatch(/X-Register-Release-Stamp is missing/);
    expect(rejection(sample('GET', '/search?q=abc', 429, { error: 'rate_limited' }, costHeaders(5)))).toMatch(/Retry-After is missing/);
    expect(rejection(sample('GET', '/search?q=abc', 429, { error: 'rate_limited' }, costHeaders(5, { 'Retry-After': '0.5' })))).toMatch(/Retry-After/);
    expect(rejection(sample('GET', '/meta', 401, { error: 'invalid_key' }, jsonHeaders()))).toMatch(/WWW-Authenticate is missing/);
    expect(rejection(sample('GET', '/changes', 200, changesPage(), jsonHeaders({ ETag: 'W/"weak"' })))).toMatch(/ETag/);
    expect(rejection(sample('GET', `/entities/${PLAYER_ID}`, 200, playerEntity(), costHeaders(1, { 'Content-Type': 'application/json' })))).toMatch(/Content-Type/);
    expect(rejection({ method: 'GET', path: '/changes', status: 304, headers: jsonHeaders({ ETag: '"x"' }), body: '{}' })).toMatch(/no body/);
  });

  it('undocumented paths, methods and statuses', () => {
    expect(rejection(sample('GET', '/players/rp0123456789abcd', 200, {}, jsonHeaders()))).toMatch(/path \/players\/rp0123456789abcd is not documented/);
    expect(rejection(sample('POST', '/meta', 200, {}, jsonHeaders()))).toMatch(/POST is not documented for \/meta/);
    expect(rejection(sample('GET', '/meta', 404, { error: 'not_found' }, jsonHeaders()))).toMatch(/status 404 is not documented for GET \/meta/);
    expect(rejection(sample('GET', '/entities/rp0123456789abcd/bridges/extra', 200, {}, jsonHeaders()))).toMatch(/not documented/);
  });

  it('assertErrorBody checks the shape and the code', () => {
    expect(assertErrorBody('{"error":"not_found","message":"No entity."}', 'not_found').message).toBe('No entity.');
    expect(() => assertErrorBody('{"error":"not_found"}', 'gone')).toThrow();
    expect(() => assertErrorBody('{"error":"invalid_id","message":"x"}', 'not_found')).toThrow(/expected error code "not_found", got "invalid_id"/);
    expect(() => assertErrorBody('{"error":"not_found","hint":"x"}', 'not_found')).toThrow(/hint/);
    expect(() => assertErrorBody('<html>', 'not_found')).toThrow(/non-JSON/);
  });
});
