// Each fact of the contract is declared once and the rest follows from it: error codes (one union, which the types
// hold every throw to), a route's cost (its operation), the 400 codes of /matches (its parameters' schemas and
// reader), and the limits shared by runtime, document and client (common/), which no prose restates.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BATCH_MAX_ITEMS, BATCH_MAX_RESOLVE } from '../../client/register-client.ts';
import { MAX_PREFIX, MAX_QUERY_CHARS, MIN_QUERY_CHARS } from '../../common/normalise.ts';
import { MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES, MAX_HEADER_BYTES, MAX_HEADER_FIELDS, MAX_PATH_PARAMETER_CHARS, MAX_URL_CHARS } from '../../common/request-limits.ts';
import { ApiError } from '../../runtime/api-error.ts';
import { ERROR_CODES_401, KNOWN_ERROR_CODES } from '../../runtime/contract/error-codes.ts';
import { openapiDocument } from '../../runtime/openapi-json.ts';
import { allRoutes } from '../../runtime/routes/index.ts';
import { defineRoute } from '../../runtime/route.ts';
import { serveHandWorld } from '../fixtures/served-world.ts';

type Json = Record<string, any>;
const doc = openapiDocument() as unknown as Json;
const deref = (node: Json): Json => {
  let n = node;
  while (n?.$ref) n = n.$ref.split('/').slice(1).reduce((o: Json, k: string) => o[k.replaceAll('~1', '/')], doc);
  return n;
};
const codesOf = (response: Json): string[] => {
  const schema = deref(response).content['application/json'].schema;
  const error = schema.properties?.error;
  return error?.enum ?? (error?.const ? [error.const] : []);
};
const xErrors = (schema: Json): string[] => {
  const x = deref(schema)['x-error'] ?? schema['x-error'];
  return x === undefined ? [] : typeof x === 'string' ? [x] : Array.isArray(x) ? x : Object.values(x);
};

describe('the contract, once', () => {
  it('types every error code by the one union: a code the contract does not declare does not compile', () => {
    // @ts-expect-error: not a code of the contract
    const e = new ApiError(400, 'no_such_code', 'x');
    expect(e.code).toBe('no_such_code');
    expect(deref(doc.components.schemas.ErrorCode).enum).toEqual([...new Set(KNOWN_ERROR_CODES)]);
    expect(codesOf(doc.components.responses.Unauthorized)).toEqual([...ERROR_CODES_401]);
  });

  it("lists as /matches's 400 codes exactly those its parameters' schemas and its reader name", () => {
    const op = doc.paths['/matches'].get;
    const listed = codesOf(op.responses['400']);
    const named = new Set(op.parameters.flatMap((p: Json) => xErrors(deref(p).schema)));
    // What no single parameter can judge: a name not declared or given twice, and the checks over several.
    const reader = ['unknown_parameter', 'repeated_parameter', 'anchor_required', 'single_team_required', 'invalid_date_range'];
    // venue's bad value answers the default code of a parameter without its own.
    expect(new Set(listed)).toEqual(new Set([...named, ...reader, 'invalid_parameter']));
    for (const code of ['invalid_anchor', 'invalid_id', 'invalid_date', 'invalid_state', 'invalid_filter', 'invalid_sort', 'invalid_limit', 'stale_cursor']) {
      expect(named.has(code), code).toBe(true);
    }
  });

  it("lists as each body route's 400 codes exactly those a request can meet, each met by one below", async () => {
    const served = await serveHandWorld({ any: { quota: 1000 }, opta: { quota: 1000, provider: 'opta' } });
    try {
      const resolve = (i: number) => ({ type: 'resolve', provider: 'transfermarkt', external_id: String(i) });
      const entity = { type: 'entity', id: 'rp-00000000' };
      const sent: Record<string, [key: 'any' | 'opta', body: string][]> = {
        '/batch': [
          ['any', '{"requests": ['],
          ['any', JSON.stringify({ requests: [] })],
          ['any', JSON.stringify({ requests: Array(MAX_BATCH_ITEMS + 1).fill(entity) })],
          ['any', JSON.stringify({ requests: Array.from({ length: MAX_BATCH_RESOLVES + 1 }, (_, i) => resolve(i)) })],
          ['any', JSON.stringify({ requests: [entity], include: ['no-such-include'] })],
        ],
        '/notices/ack': [
          ['opta', JSON.stringify({ batch_id: 'one' })],
          ['opta', JSON.stringify({ batch_id: 999_999 })],
          ['opta', JSON.stringify({ finding_ids: ['no-such-finding'] })],
        ],
      };
      for (const [path, requests] of Object.entries(sent)) {
        const met = new Set<string>();
        for (const [key, body] of requests) {
          const r = await served.api('v1', served.keys[key])(path, { rawBody: body });
          expect(r.status, `${path} ${body.slice(0, 80)}`).toBe(400);
          met.add(r.json.error);
        }
        expect([...met].sort(), path).toEqual([...codesOf(doc.paths[path].post.responses['400'])].sort());
      }
    } finally {
      await served.rt.close();
    }
  });

  it("charges a route's operation cost, declared once; only a per_item route counts its own", () => {
    const run = () => ({ status: 200, body: null });
    for (const route of allRoutes({ openapiJson: () => new Uint8Array(), maxBodyBytes: 1 })) {
      const cost = route.operation.cost;
      if (cost === 'per_item') expect(route.costOf({ run, cost: 7 })).toBe(7);
      else expect(route.costOf({ run }), route.path).toBe(cost);
    }
    const base = { method: 'GET', path: '/x', auth: true } as const;
    const operation = { operationId: 'x', tag: 'lookup', summary: 'x', description: 'x', responses: {} };
    // @ts-expect-error: a fixed-cost route may not state its cost a second time
    defineRoute({ ...base, operation: { ...operation, cost: 1 }, prepare: () => ({ cost: 1, run }) });
    // @ts-expect-error: a per_item route must count its cost
    defineRoute({ ...base, operation: { ...operation, cost: 'per_item' }, prepare: () => ({ run }) });
  });

  it('publishes and uses the shared limits from common/, and no prose restates their numbers', () => {
    expect(deref(doc.components.responses.UriTooLong).description).toContain(MAX_URL_CHARS.toLocaleString('en'));
    expect(deref(doc.components.responses.ProtocolRefusal).description).toContain(`over ${MAX_HEADER_BYTES / 1024} KB or more than ${MAX_HEADER_FIELDS} header fields`);
    expect(deref(doc.components.parameters.ExternalId).schema.maxLength).toBe(MAX_PATH_PARAMETER_CHARS);
    const q = deref(doc.components.parameters.SearchQuery).schema;
    expect([q.minLength, q.maxLength]).toEqual([MIN_QUERY_CHARS, MAX_QUERY_CHARS]);
    const batch = deref(doc.components.schemas.BatchRequest).properties.requests;
    expect([batch.maxItems, batch.maxContains]).toEqual([MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES]);
    expect([BATCH_MAX_ITEMS, BATCH_MAX_RESOLVE]).toEqual([MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES]);
    const root = join(import.meta.dirname, '../..');
    const prose = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const restated = [
      new RegExp(`\\b(${MAX_URL_CHARS}|${MAX_URL_CHARS.toLocaleString('en')})[- ]characters?`),
      new RegExp(`\\b${MAX_PATH_PARAMETER_CHARS} characters`),
      new RegExp(`\\b${MAX_HEADER_FIELDS} header fields`),
      new RegExp(`\\bto ${MAX_PREFIX} characters`),
      new RegExp(`\\b${MAX_BATCH_ITEMS} items, ${MAX_BATCH_RESOLVES}`),
    ];
    for (const file of prose) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const r of restated) expect(text, `${file} ${r}`).not.toMatch(r);
    }
  });
});
