// `serve --trust` over an HTTP origin, restarted: the rollback mark it kept in its --state folder outlives the
// process, so an origin put back to an older, still validly signed index.json is refused after the restart (503,
// the rollback logged), not served. Over a socket (startRuntime), the origin a static host (serve-dir.ts); answers
// validated against the OpenAPI document (api-client.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePublicKey, trustedKeys, type TrustedKeys } from '../../../common/signing.ts';
import { TRUST_MARK_FILE } from '../../../common/trust-mark-file.ts';
import { addKey } from '../../../runtime/keys/key-file.ts';
import { startRuntime } from '../../../runtime/server.ts';
import { client } from '../../helpers/api-client.ts';
import { STAMPS } from '../../fixtures/hand-world.ts';
import { makeRollbackOrigin, type RollbackOrigin } from '../../fixtures/rollback-origin.ts';

const [, V1, NEXT] = STAMPS;
let origin: RollbackOrigin;
let trust: TrustedKeys;
let keysFile: string;

beforeAll(async () => {
  origin = await makeRollbackOrigin();
  trust = trustedKeys([await parsePublicKey(origin.publicKeyText)]);
  keysFile = join(origin.world.root, 'keys.json');
  await addKey({ file: keysFile, name: 'restart', quota: 1000, rate: 1000 });
});

afterAll(async () => {
  await origin?.close();
});

/** `serve --trust` over the origin with the state folder `state`; its log lines gathered. */
async function serve(state: string) {
  const lines: string[] = [];
  const rt = await startRuntime({ dist: origin.host.baseUrl, keys: keysFile, state, port: 0, trust, log: (l) => lines.push(l), problems: (r) => lines.push(r.line), pages: null });
  return { rt, call: client(rt.url), lines };
}

describe('serve --trust restarted over an HTTP origin', () => {
  it('refuses, after a restart, an older still-valid index the origin was put back to: 503 and the rollback logged', async () => {
    const state = mkdtempSync(join(tmpdir(), 'ir-trust-state-'));
    try {
      origin.put(origin.newer);
      const first = await serve(state);
      try {
        const next = await first.call('/api/next/');
        expect(next.status).toBe(200);
        expect(next.headers.get('x-register-release-stamp')).toBe(NEXT);
        expect(first.lines.join('\n')).toContain(`rollback mark started at ${join(state, TRUST_MARK_FILE)}`);
      } finally {
        await first.rt.close();
      }
      // Kept in the state folder, as the mark of what was accepted.
      expect(JSON.parse(readFileSync(join(state, TRUST_MARK_FILE), 'utf8'))).toMatchObject({ index_signed_at: '2026-10-15T00:00:00Z', v1: V1, next: NEXT });

      origin.put(origin.older);
      const second = await serve(state);
      try {
        for (const ns of ['next', 'v1']) {
          const r = await second.call(`/api/${ns}/`);
          expect(r.status).toBe(503);
          expect(r.json.error).toBe('artefact_corrupt');
        }
        expect(second.lines.join('\n')).toMatch(/index\.json\.sig: signed at 2026-10-08T00:00:00Z, older than 2026-10-15T00:00:00Z already accepted \(rollback refused\)/);
      } finally {
        await second.rt.close();
      }

      // The same older index over a fresh state is served: the refusal above is the kept mark's doing.
      const fresh = mkdtempSync(join(tmpdir(), 'ir-trust-fresh-'));
      const control = await serve(fresh);
      try {
        const r = await control.call('/api/next/');
        expect(r.status).toBe(200);
        expect(r.headers.get('x-register-release-stamp')).toBe(V1);
      } finally {
        await control.rt.close();
        rmSync(fresh, { recursive: true, force: true });
      }

      // A damaged mark is never read as an empty one: the server refuses to start, naming it.
      const markFile = join(state, TRUST_MARK_FILE);
      writeFileSync(markFile, readFileSync(markFile).subarray(0, 20));
      await expect(serve(state)).rejects.toThrow(new RegExp(`${TRUST_MARK_FILE}: not a trust mark .*never read as empty`));
    } finally {
      origin.put(origin.newer);
      rmSync(state, { recursive: true, force: true });
    }
  });

  it('refuses to start when the mark has no writable place: --state redis://… over an HTTP origin', async () => {
    await expect(startRuntime({ dist: origin.host.baseUrl, keys: keysFile, state: 'redis://127.0.0.1:1/0', port: 0, trust, log: () => {}, pages: null }))
      .rejects.toThrow(/--trust over an HTTP origin keeps its rollback mark in the --state folder, and --state .* is no folder/);
  });
});
