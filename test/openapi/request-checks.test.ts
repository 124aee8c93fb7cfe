// The request checks derived from the contract, through the whole app: each refusal carries the code its schema names
// (`x-error`), the caps name their limit, a batch item is judged in place, and nothing refused is charged.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiDocument } from '../../runtime/openapi-json.ts';
import { MAX_BATCH_ITEMS, MAX_BATCH_RESOLVES } from '../../common/request-limits.ts';
import { client } from '../helpers/api-client.ts';
import { ID, type World } from '../fixtures/hand-world.ts';
import { serveHandWorld } from '../fixtures/served-world.ts';
import type { InProcessRuntime } from '../helpers/in-process.ts';

let world: World;
let rt: InProcessRuntime;
let call: ReturnType<typeof client>;
let opta: ReturnType<typeof client>;

beforeAll(async () => {
  const served = await serveHandWorld({ partner: { quota: 1000, rate: 1000 }, opta: { quota: 1000, rate: 1000, provider: 'opta' } });
  ({ world, rt } = served);
  call = served.api('v1', served.keys.partner);
  opta = served.api('v1', served.keys.opta);
});

afterAll(async () => {
  await rt?.close();
  if (world) rmSync(world.root, { recursive: true, force: true });
});

const credits = (r: { headers: Headers }) => Number(r.headers.get('x-register-credits-remaining'));

describe('parameters checked by their schemas', () => {
  it('answer the code each parameter schema names, with the offending value as detail, at no cost', async () => {
    const before = credits(await call(`/entities/${ID.arsenal}`));
    const cases: [string, string, string | undefined][] = [
      ['/entities/not-an-id', 'invalid_id', 'not-an-id'],
      [`/entities/${ID.arsenal}?include=bridges,nope`, 'unknown_include', undefined],
      [`/entities/${ID.arsenal}?typo=1`, 'invalid_parameter', undefined],
      [`/entities/${ID.arsenal}?lang=en&lang=fr`, 'invalid_parameter', undefined],
      [`/entities/${ID.arsenal}/relationships?limit=0`, 'invalid_parameter', '0'],
      ['/search?q=arsenal&type=planet', 'unknown_entity_type', 'planet'],
      ['/search?q=arsenal&sort=popularity', 'invalid_parameter', 'popularity'],
      ['/search?type=team', 'invalid_query', undefined],
      [`/search?q=${'a'.repeat(513)}`, 'invalid_query', 'a'.repeat(64)],
    ];
    for (const [path, code, detail] of cases) {
      const r = await call(path);
      expect(r.status, path).toBe(400);
      expect(r.json.error, path).toBe(code);
      expect(r.json.detail, path).toBe(detail);
    }
    expect(credits(await call(`/entities/${ID.arsenal}`))).toBe(before - 1);
  });

  it('states each code in the document: the annotation the check reads is the one /docs shows', () => {
    const params = openapiDocument().components.parameters;
    expect((params.ReepId.schema as Record<string, unknown>)['x-error']).toBe('invalid_id');
    expect((params.Include.schema as Record<string, unknown>)['x-error']).toBe('unknown_include');
    expect((params.EntityTypeFilter.schema as Record<string, unknown>)['x-error']).toBe('unknown_entity_type');
  });

  it('reads an empty `type` as none, and a repeated integer by its first value', async () => {
    const plain = await call('/search?q=arsenal');
    expect((await call('/search?q=arsenal&type=')).text).toBe(plain.text);
    expect((await call('/search?q=arsenal&limit=1&limit=50')).json.limit).toBe(1);
  });

  it('a changes window: a malformed stamp is unknown_stamp, like an unpublished one', async () => {
    for (const q of ['since=2026', 'from=20991231T000000Z']) {
      const r = await call(`/changes/summary?${q}`);
      expect(r.json.error, q).toBe('unknown_stamp');
    }
  });
});

describe('bodies checked by their schemas', () => {
  const entity = { type: 'entity', id: ID.arsenal };
  const resolve = { type: 'resolve', provider: 'opta', external_id: 't3' };

  it('the batch caps answer their own codes, each naming its limit; a malformed envelope is invalid_body', async () => {
    const cases: [unknown, string, string | undefined][] = [
      [{ requests: [] }, 'empty_batch', undefined],
      [{ requests: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => entity) }, 'batch_too_large', `limit ${MAX_BATCH_ITEMS}`],
      [{ requests: Array.from({ length: MAX_BATCH_RESOLVES + 1 }, () => resolve) }, 'resolve_batch_too_large', `limit ${MAX_BATCH_RESOLVES}`],
      [{ requests: [entity], include: 7 }, 'unknown_include', undefined],
      [{ requests: [entity], include: ['bridges', 'nope'] }, 'unknown_include', undefined],
      [{ requests: [entity], extra: true }, 'invalid_body', undefined],
      [{ requests: [entity], lang: 5 }, 'invalid_body', undefined],
      [[entity], 'invalid_body', undefined],
    ];
    for (const [body, code, detail] of cases) {
      const r = await call('/batch', { body });
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.json.error).toBe(code);
      expect(r.json.detail).toBe(detail);
    }
    // Exactly at both caps is a batch, answered.
    const full = [...Array.from({ length: MAX_BATCH_RESOLVES }, () => resolve), ...Array.from({ length: MAX_BATCH_ITEMS - MAX_BATCH_RESOLVES }, () => entity)];
    expect((await call('/batch', { body: { requests: full } })).status).toBe(200);
  });

  it('judges each item in place: its schema code, the checks the schema leaves to code, and no charge for it', async () => {
    const r = await call('/batch', {
      body: {
        requests: [
          entity,
          { type: 'entity', id: 'bad' },
          { type: 'entity', id: ID.arsenal, entity_type: 'planet' },
          { type: 'entity', id: ID.arsenal, colour: 'red' },
          { type: 'lookup', id: ID.arsenal },
          { type: 'entity' },
          { type: 'resolve', provider: 'opta' },
          { type: 'resolve', provider: 'opta', external_id: 'x'.repeat(513) },
        ],
      },
    });
    expect(r.status).toBe(200);
    const results = r.json.results as { status: number; body: { error?: string } }[];
    expect(results.map((x) => x.status)).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    expect(results.slice(1).map((x) => x.body.error)).toEqual([
      'invalid_id', 'unknown_entity_type', 'invalid_body', 'invalid_body', 'invalid_body', 'invalid_body', 'invalid_id',
    ]);
    expect(results[4].body).toMatchObject({ message: 'type: must be one of entity, resolve.' });
  });

  it('an acknowledgement: unknown fields, overlong text and neither batch_id nor finding_ids are invalid_body', async () => {
    for (const body of [{ batch_id: 1, colour: 'red' }, { finding_ids: ['f'], note: 'n'.repeat(2001) }, { actor: 'me' }, { finding_ids: 'f' }]) {
      const r = await opta('/notices/ack', { body });
      expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(r.json.error).toBe('invalid_body');
    }
  });
});
