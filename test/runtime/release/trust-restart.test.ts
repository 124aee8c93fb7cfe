// `serve --trust` over an HTTP origin, restarted: the rollback mark it kept in its --state folder outlives the
// process, so an origin put back to an older, still validly signed index.json is refused after the restart (503,
// the rollback logged), not served. Over a socket (startRuntime), the origin a static host (serve-dir.ts); answers
// validated against the OpenAPI document (api-client.ts).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDist } from '../../../compiler/sign-cli.ts';
import { writeIndex } from '../../../compiler/compile.ts';
import { INDEX_FILE, INDEX_SIG_FILE } from '../../../common/dist-layout.ts';
import { generateSigningKey, parsePublicKey, parseSigningKey, trustedKeys, type SigningKey, type TrustedKeys } from '../../../common/signing.ts';
import { TRUST_MARK_FILE } from '../../../common/trust-mark-file.ts';
import { addKey } from '../../../runtime/keys/key-file.ts';
import { startRuntime } from '../../../runtime/server.ts';
import { client } from '../../helpers/api-client.ts';
import { serveDir, type ServedDir } from '../../helpers/serve-dir.ts';
import { makeHandWorld, STAMPS, type World } from '../../fixtures/hand-world.ts';

const [, V1, NEXT] = STAMPS;
let world: World;
let key: SigningKey;
let trust: TrustedKeys;
let keysFile: string;
/** The origin's public part, on a static host; its index.json is swapped between the two below. */
let pub: string;
let host: ServedDir;
let newer: { index: Buffer; sig: Buffer };
let older: { index: Buffer; sig: Buffer };

/** What publish-public.sh uploads: index.json (and its signature) and every stamp's public part. */
function publish(dist: string, to: string): void {
  for (const s of STAMPS) cpSync(join(dist, s, 'public'), join(to, s, 'public'), { recursive: true });
  for (const f of [INDEX_FILE, INDEX_SIG_FILE]) cpSync(join(dist, f), join(to, f));
}

const put = (pair: { index: Buffer; sig: Buffer }) => {
  writeFileSync(join(pub, INDEX_FILE), pair.index);
  writeFileSync(join(pub, INDEX_SIG_FILE), pair.sig);
};

beforeAll(async () => {
  world = await makeHandWorld();
  const made = await generateSigningKey();
  key = await parseSigningKey(made.privateKeyFile);
  trust = trustedKeys([await parsePublicKey(made.publicKeyText)]);
  keysFile = join(world.root, 'keys.json');
  await addKey({ file: keysFile, name: 'restart', quota: 1000, rate: 1000 });
  // Newer: every stamp, index.json signed when NEXT was published. Older: as it was before NEXT, signed then, and
  // still valid (180 days from 2026-10-08).
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
  publish(world.dist, pub);
  host = await serveDir(pub);
});

afterAll(async () => {
  await host?.close();
  rmSync(world.root, { recursive: true, force: true });
});

/** `serve --trust` over the origin with the state folder `state`; its log lines gathered. */
async function serve(state: string) {
  const lines: string[] = [];
  const rt = await startRuntime({ dist: host.baseUrl, keys: keysFile, state, port: 0, trust, log: (l) => lines.push(l), problems: (r) => lines.push(r.line), pages: null });
  return { rt, call: client(rt.url), lines };
}

describe('serve --trust restarted over an HTTP origin', () => {
  it('refuses, after a restart, an older still-valid index the origin was put back to: 503 and the rollback logged', async () => {
    const state = mkdtempSync(join(tmpdir(), 'ir-trust-state-'));
    try {
      put(newer);
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

      put(older);
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
      put(newer);
      rmSync(state, { recursive: true, force: true });
    }
  });

  it('refuses to start when the mark has no writable place: --state redis://… over an HTTP origin', async () => {
    await expect(startRuntime({ dist: host.baseUrl, keys: keysFile, state: 'redis://127.0.0.1:1/0', port: 0, trust, log: () => {}, pages: null }))
      .rejects.toThrow(/--trust over an HTTP origin keeps its rollback mark in the --state folder, and --state .* is no folder/);
  });
});
