// The edge under TRUST (serve --trust at the edge): the Worker, in workerd through miniflare, reads the dist from a
// static host (DIST_ORIGIN) and keeps its rollback mark in the TrustMarkObject Durable Object, persisted with the
// local edge's state. Restarted after the host was put back to an older, still validly signed index.json: refused
// (503), not served. The same proof as test/runtime/release/trust-restart.test.ts on Node.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalEdge } from '../../edge/local-edge.ts';
import { client } from '../helpers/api-client.ts';
import { STAMPS } from '../fixtures/hand-world.ts';
import { makeRollbackOrigin, type RollbackOrigin } from '../fixtures/rollback-origin.ts';
import { workerCode } from './edge-support.ts';

const [, V1, NEXT] = STAMPS;
let origin: RollbackOrigin;

beforeAll(async () => {
  origin = await makeRollbackOrigin();
});

afterAll(async () => {
  await origin?.close();
});

/** The local edge over the host with TRUST, its state in `persist`; `check` runs while it serves. */
async function withEdge(persist: string, check: (call: ReturnType<typeof client>) => Promise<void>): Promise<void> {
  const edge = await startLocalEdge({ port: 0, persist, origin: origin.host.baseUrl, trust: origin.publicKeyText, code: await workerCode() });
  try {
    await check(client(edge.url!));
  } finally {
    await edge.close();
  }
}

describe('the edge with TRUST, restarted over a static host put back to an older index', () => {
  it('serves the signed index, and after a restart refuses the older one (503) with the mark its Durable Object kept', async () => {
    const persist = mkdtempSync(join(tmpdir(), 'ir-edge-trust-'));
    const fresh = mkdtempSync(join(tmpdir(), 'ir-edge-trust-fresh-'));
    try {
      origin.put(origin.newer);
      await withEdge(persist, async (call) => {
        const next = await call('/api/next/');
        expect(next.status).toBe(200);
        expect(next.headers.get('x-register-release-stamp')).toBe(NEXT);
        expect(next.json.signing_key_id).toMatch(/^[0-9a-f]{16}$/);
      });
      origin.put(origin.older);
      await withEdge(persist, async (call) => {
        for (const ns of ['next', 'v1']) {
          const r = await call(`/api/${ns}/`);
          expect(r.status).toBe(503);
          expect(r.json.error).toBe('artefact_corrupt');
        }
      });
      // Over fresh state the same older index is served: the refusal is the kept mark's.
      await withEdge(fresh, async (call) => {
        const r = await call('/api/next/');
        expect(r.status).toBe(200);
        expect(r.headers.get('x-register-release-stamp')).toBe(V1);
      });
    } finally {
      origin.put(origin.newer);
      rmSync(persist, { recursive: true, force: true });
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
