// The edge under TRUST (serve --trust at the edge): the Worker, in workerd through miniflare, reads the dist from a
// static host (DIST_ORIGIN) and keeps its rollback mark in the TrustMarkObject Durable Object, persisted with the
// local edge's state. Restarted after the host was put back to an older, still validly signed index.json: refused
// (503), not served. The same proof as test/runtime/release/trust-restart.test.ts on Node.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDist } from '../../compiler/sign-cli.ts';
import { writeIndex } from '../../compiler/compile.ts';
import { INDEX_FILE, INDEX_SIG_FILE } from '../../common/dist-layout.ts';
import { generateSigningKey, parseSigningKey } from '../../common/signing.ts';
import { startLocalEdge } from '../../edge/local-edge.ts';
import { client } from '../helpers/api-client.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';
import { makeHandWorld, STAMPS, type World } from '../fixtures/hand-world.ts';
import { workerCode } from './edge-support.ts';

const [, V1, NEXT] = STAMPS;
let world: World;
let trust: string;
let pub: string;
let host: ServedDir;
let newer: { index: Buffer; sig: Buffer };
let older: { index: Buffer; sig: Buffer };

const put = (pair: { index: Buffer; sig: Buffer }) => {
  writeFileSync(join(pub, INDEX_FILE), pair.index);
  writeFileSync(join(pub, INDEX_SIG_FILE), pair.sig);
};

beforeAll(async () => {
  world = await makeHandWorld();
  const made = await generateSigningKey();
  const key = await parseSigningKey(made.privateKeyFile);
  trust = made.publicKeyText;
  await signDist(world.dist, STAMPS, key, { signedAt: '2026-10-15T00:00:00Z', validDays: 180 });
  const past = join(world.root, 'past');
  cpSync(world.dist, past, { recursive: true });
  rmSync(join(past, NEXT), { recursive: true });
  await writeIndex(past);
  await signDist(past, [V1], key, { signedAt: '2026-10-08T00:00:00Z', validDays: 180 });
  newer = { index: readFileSync(join(world.dist, INDEX_FILE)), sig: readFileSync(join(world.dist, INDEX_SIG_FILE)) };
  older = { index: readFileSync(join(past, INDEX_FILE)), sig: readFileSync(join(past, INDEX_SIG_FILE)) };
  pub = join(world.root, 'public');
  mkdirSync(pub);
  for (const s of STAMPS) cpSync(join(world.dist, s, 'public'), join(pub, s, 'public'), { recursive: true });
  put(newer);
  host = await serveDir(pub);
});

afterAll(async () => {
  await host?.close();
  rmSync(world.root, { recursive: true, force: true });
});

/** The local edge over the host with TRUST, its state in `persist`; `check` runs while it serves. */
async function withEdge(persist: string, check: (call: ReturnType<typeof client>) => Promise<void>): Promise<void> {
  const edge = await startLocalEdge({ port: 0, persist, origin: host.baseUrl, trust, code: await workerCode() });
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
      put(newer);
      await withEdge(persist, async (call) => {
        const next = await call('/api/next/');
        expect(next.status).toBe(200);
        expect(next.headers.get('x-register-release-stamp')).toBe(NEXT);
        expect(next.json.signing_key_id).toMatch(/^[0-9a-f]{16}$/);
      });
      put(older);
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
      put(newer);
      rmSync(persist, { recursive: true, force: true });
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
