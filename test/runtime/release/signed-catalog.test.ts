// The catalog under `serve --trust` by an injected clock: what it served stops being served the moment its signature
// passes valid_until (503, logged once), and is served again once re-signed, without a restart. In-process: the
// clock is the subject (test/cli/signing.test.ts has the same refusals over HTTP, on the real clock).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDist } from '../../../compiler/sign-cli.ts';
import { readTrust } from '../../../common/signing-files.ts';
import { generateSigningKey, parseSigningKey, trustedKeys, parsePublicKey, type SigningKey, type TrustedKeys } from '../../../common/signing.ts';
import { ReleaseCatalog } from '../../../runtime/release/catalog.ts';
import { UntrustedError } from '../../../runtime/read-errors.ts';
import { createFsSource } from '../../../runtime/source/fs-source.ts';
import { makeHandWorld, STAMPS, type World } from '../../fixtures/hand-world.ts';

const [, V1, NEXT] = STAMPS;
let world: World;
let key: SigningKey;
let trust: TrustedKeys;

beforeAll(async () => {
  world = await makeHandWorld();
  const made = await generateSigningKey();
  key = await parseSigningKey(made.privateKeyFile);
  trust = trustedKeys([await parsePublicKey(made.publicKeyText)]);
  // Each stamp signed at its own instant, valid 30 days; index.json last, at NEXT's: valid to 2026-11-14.
  for (const s of STAMPS) await signDist(world.dist, [s], key, { validDays: 30, signedAt: `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T00:00:00Z` });
});
afterAll(() => rmSync(world.root, { recursive: true, force: true }));

describe('a trusting catalog and the clock', () => {
  it('serves until valid_until, refuses after it (logged once), and serves again once re-signed', async () => {
    let now = Date.parse('2026-11-01T00:00:00Z');
    const logged: string[] = [];
    const source = createFsSource({ root: world.dist });
    const catalog = new ReleaseCatalog({ source, clock: { now: () => now }, trust, log: (r) => void logged.push(r.line) });
    try {
      expect((await catalog.forNamespace('next'))?.signingKeyId).toBe(key.keyId);
      expect((await catalog.forNamespace('v1'))?.stamp).toBe(V1);

      // V1 (signed 2026-10-08, valid to 2026-11-07) expires first: v1 refused, next still served.
      now = Date.parse('2026-11-08T00:00:00Z');
      await expect(Promise.resolve(catalog.forNamespace('v1'))).rejects.toThrow(UntrustedError);
      await expect(Promise.resolve(catalog.forNamespace('v1'))).rejects.toThrow(/expired at 2026-11-07T00:00:00Z/);
      expect((await catalog.forNamespace('next'))?.stamp).toBe(NEXT);

      // index.json's signature expires: nothing is served.
      now = Date.parse('2026-11-15T00:00:00Z');
      await expect(Promise.resolve(catalog.forNamespace('next'))).rejects.toThrow(/index\.json\.sig: expired at 2026-11-14T00:00:00Z/);
      now += 2000;
      await expect(Promise.resolve(catalog.forNamespace('next'))).rejects.toThrow(UntrustedError);
      expect(logged.filter((l) => l.includes('expired at 2026-11-14'))).toHaveLength(1);

      // Re-signed (same bytes, a later signed_at): served again without a restart.
      await signDist(world.dist, STAMPS, key, { validDays: 30, signedAt: '2026-11-15T00:00:00Z' });
      now += 2000;
      expect((await catalog.forNamespace('next'))?.stamp).toBe(NEXT);
      expect((await catalog.forNamespace('v1'))?.signingKeyId).toBe(key.keyId);
    } finally {
      await source.close();
    }
  });

  it('trusts nothing without a key it knows: --trust with another key refuses the index', async () => {
    const other = await readTrust([(await generateSigningKey()).publicKeyText]);
    const source = createFsSource({ root: world.dist });
    const catalog = new ReleaseCatalog({ source, clock: { now: () => Date.parse('2026-11-16T00:00:00Z') }, trust: other, log: () => {} });
    try {
      await expect(catalog.current()).rejects.toThrow(/index\.json\.sig: signed by key [0-9a-f]{16}, which is not trusted/);
    } finally {
      await source.close();
    }
  });
});
