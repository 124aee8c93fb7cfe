// common/signing.ts: keys, deterministic signatures, and every reason a signature is refused. In-process: the
// subject is the pure module (the CLI and server paths are tested in test/cli/signing.test.ts).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  generateSigningKey, parsePublicKey, parseSigningKey, signBytes, stampInstant, trustedKeys, verifyBytes, keyIdOf, fromBase64,
  SIGNS_INDEX, SIGNS_MANIFEST,
} from '../../common/signing.ts';
import { readTrust, readSigningKey, writeNewSigningKey } from '../../common/signing-files.ts';

const NOW = new Date('2026-11-02T00:00:00Z');
const STAMP = '20261101T000000Z';

describe('common/signing', async () => {
  const a = await generateSigningKey();
  const b = await generateSigningKey();
  const keyA = await parseSigningKey(a.privateKeyFile);
  const keyB = await parseSigningKey(b.privateKeyFile);
  const trustA = trustedKeys([await parsePublicKey(a.publicKeyText)]);
  const bytes = new TextEncoder().encode('{"stamp":"20261101T000000Z","files":{}}');
  const opts = { signs: SIGNS_MANIFEST, stamp: STAMP, trusted: trustA, now: NOW };

  it('key ID is the first 16 hex digits of the sha256 of the raw public key', async () => {
    const raw = fromBase64(a.publicKeyText.slice('ed25519:'.length));
    expect(raw.length).toBe(32);
    expect(a.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(await keyIdOf(raw)).toBe(a.keyId);
    expect(keyA.keyId).toBe(a.keyId);
  });

  it('signs deterministically, with signed_at from the stamp and a validity', async () => {
    const one = await signBytes(bytes, keyA, { signs: SIGNS_MANIFEST, stamp: STAMP, validDays: 30 });
    expect(await signBytes(bytes, keyA, { signs: SIGNS_MANIFEST, stamp: STAMP, validDays: 30 })).toBe(one);
    const doc = JSON.parse(one);
    expect(doc).toMatchObject({ signs: 'public/manifest.json', stamp: STAMP, key_id: a.keyId, signed_at: '2026-11-01T00:00:00Z', valid_until: '2026-12-01T00:00:00Z' });
    expect(stampInstant('20261005T180536Z')).toBe('2026-10-05T18:05:36Z');
    expect(() => stampInstant('2026-10-05')).toThrow(/YYYYMMDDTHHMMSSZ/);
  });

  it('accepts a good signature and refuses each fault with its reason', async () => {
    const sig = await signBytes(bytes, keyA, { signs: SIGNS_MANIFEST, stamp: STAMP });
    expect(await verifyBytes(sig, bytes, opts)).toMatchObject({ ok: true, keyId: a.keyId });
    const reason = async (s: string | null, b: Uint8Array | string = bytes, o = opts) => {
      const r = await verifyBytes(s, b, o);
      return r.ok ? 'ok' : r.reason;
    };
    expect(await reason(null)).toBe('missing');
    expect(await reason('{"format":"x"}')).toBe('malformed');
    expect(await reason(sig, bytes, { ...opts, signs: SIGNS_INDEX })).toBe('malformed');
    expect(await reason(await signBytes(bytes, keyB, { signs: SIGNS_MANIFEST, stamp: STAMP }))).toBe('untrusted_key');
    const forged = JSON.parse(sig);
    forged.valid_until = '2099-01-01T00:00:00Z';
    expect(await reason(JSON.stringify(forged))).toBe('bad_signature');
    const changed = bytes.slice();
    changed[3] ^= 1;
    expect(await reason(sig, changed)).toBe('other_bytes');
    expect(await reason(sig, bytes, { ...opts, stamp: '20261201T000000Z' })).toBe('stamp_mismatch');
    expect(await reason(sig, bytes, { ...opts, now: new Date('2027-06-01T00:00:00Z') })).toBe('expired');
    expect(await reason(sig, bytes, { ...opts, notBefore: '2026-11-15T00:00:00Z' } as typeof opts)).toBe('rollback');
    expect(await reason(sig, bytes, { ...opts, notBefore: '2026-11-01T00:00:00Z' } as typeof opts)).toBe('ok');
  });

  it('trusts several keys at once (rotation)', async () => {
    const both = trustedKeys([await parsePublicKey(a.publicKeyText), await parsePublicKey(b.publicKeyText)]);
    for (const k of [keyA, keyB]) {
      const sig = await signBytes(bytes, k, { signs: SIGNS_MANIFEST, stamp: STAMP });
      expect((await verifyBytes(sig, bytes, { ...opts, trusted: both })).ok).toBe(true);
    }
  });

  it('refuses a key file whose halves do not belong together, and a malformed public key', async () => {
    const mixed = JSON.parse(a.privateKeyFile);
    mixed.public_key = b.publicKeyText;
    delete mixed.key_id;
    await expect(parseSigningKey(JSON.stringify(mixed))).rejects.toThrow(/does not match/);
    await expect(parsePublicKey('ed25519:abc')).rejects.toThrow(/not an Ed25519 public key/);
  });

  describe('key files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signing-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('writes the private key readable by its owner only and FILE.pub; --trust takes the file or the key', async () => {
      const out = join(dir, 'release.key');
      const { keyId, publicKeyPath } = await writeNewSigningKey(out);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      expect(publicKeyPath).toBe(`${out}.pub`);
      expect((await readSigningKey(out)).keyId).toBe(keyId);
      const pubText = readFileSync(publicKeyPath, 'utf8');
      expect([...(await readTrust([publicKeyPath])).keys()]).toEqual([keyId]);
      expect([...(await readTrust([pubText.trim()])).keys()]).toEqual([keyId]);
      await expect(writeNewSigningKey(out)).rejects.toThrow(/EEXIST/);
      await expect(readTrust([join(dir, 'nope.pub')])).rejects.toThrow(/--trust .*nope\.pub: neither a public key/);
    });
  });
});
