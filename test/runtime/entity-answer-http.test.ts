// Entity answers from their one home (runtime/entity-answer.ts) through the whole app: a retired ID's 410 is the
// compiler's tombstone stub byte for byte, cached like the release's other answers, alone, in a batch and on HEAD;
// a 404 is this request's error and is not kept; a kept 200 is the composed one, whichever route asked first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tombstoneBody } from '../../compiler/stages/entities/entity-shard.ts';
import { client } from '../helpers/api-client.ts';
import { ID } from '../fixtures/hand-world.ts';
import { serveHandWorld } from '../fixtures/served-world.ts';
import type { InProcessRuntime } from '../helpers/in-process.ts';

let rt: InProcessRuntime;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  const served = await serveHandWorld({ answers: { quota: 1000, rate: 1000 } }, { state: 'memory:', pages: null, log: () => {} });
  rt = served.rt;
  call = served.api('v1', served.keys.answers);
});
afterAll(async () => {
  await rt?.close();
});

describe('entity answers over HTTP', () => {
  it('answers a retired ID with its tombstone stub as compiled, kept cacheable like a 200, alone and on HEAD', async () => {
    const stub = tombstoneBody(ID.tomb);
    for (const path of ['', '?include=bridges', '/bridges', '/overlay', '/relationships']) {
      const r = await call(`/entities/${ID.tomb}${path}`);
      expect(r.status, path).toBe(410);
      expect(r.text, path).toBe(stub);
      expect(r.headers.get('cache-control'), path).toBe('private, no-cache');
      expect(r.headers.get('etag'), path).toBeNull();
      const head = await call(`/entities/${ID.tomb}${path}`, { method: 'HEAD' });
      expect(head.status, path).toBe(410);
      expect(head.text, path).toBe('');
      expect(head.headers.get('content-length'), path).toBe(String(Buffer.byteLength(stub)));
      expect(head.headers.get('cache-control'), path).toBe('private, no-cache');
    }
    // An ID never published is this request's error: an Error body made from its fields, never stored.
    const miss = await call(`/entities/${ID.never}`);
    expect(miss.status).toBe(404);
    expect(miss.json).toEqual({ error: 'not_found', message: 'No entity has this register ID.', detail: ID.never });
    expect(miss.headers.get('cache-control')).toBe('no-store');
  });

  it('puts the same stub bytes in a batch item, beside live items answered as their single lookups answer', async () => {
    const single = await call(`/entities/${ID.arsenal}?include=bridges`);
    expect(single.status).toBe(200);
    const r = await call('/batch', { body: { include: 'bridges', requests: [{ type: 'entity', id: ID.arsenal }, { type: 'entity', id: ID.tomb }, { type: 'entity', id: ID.never }] } });
    expect(r.status).toBe(200);
    expect(r.text).toBe(
      `{"results":[{"status":200,"body":${single.text}},{"status":410,"body":${tombstoneBody(ID.tomb)}},` +
        `{"status":404,"body":{"error":"not_found","message":"No entity has this register ID.","detail":"${ID.never}"}}],"count":3}`,
    );
  });

  it('keeps the answer a batch composed, and a single lookup after it answers those bytes (and the other way round)', async () => {
    const batchFirst = await call('/batch', { body: { include: ['aliases', 'overlay'], requests: [{ type: 'entity', id: ID.chelsea }] } });
    const single = await call(`/entities/${ID.chelsea}?include=overlay,aliases`);
    expect(batchFirst.text).toBe(`{"results":[{"status":200,"body":${single.text}}],"count":1}`);
    const singleFirst = await call(`/entities/${ID.palmer}?include=attributes&lang=en`);
    const batch = await call('/batch', { body: { include: 'attributes', lang: 'en', requests: [{ type: 'entity', id: ID.palmer }] } });
    expect(batch.text).toBe(`{"results":[{"status":200,"body":${singleFirst.text}}],"count":1}`);
  });
});
