// common/signing.ts: keys, deterministic signatures, and every reason a signature is refused. In-process: the
// subject is the pure module (the CLI and server paths are tested in test/cli/signing.test.ts).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  generateSigningKey, parsePublicKey, parseSigningKey, signBytes, trustedKeys, verifyBytes, keyIdOf, fromBase64, signingInstant, checkLifetime,
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
  const AT = '2026-11-01T00:00:00Z';

  it('key ID is the first 16 hex digits of the sha256 of the raw public key', async () => {
    const raw = fromBase64(a.publicKeyText.slice('ed25519:'.length));
    expect(raw.length).toBe(32);
    expect(a.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(await keyIdOf(raw)).toBe(a.keyId);
    expect(keyA.keyId).toBe(a.keyId);
  });

  it('signs deterministically for a given signed_at, with a validity', async () => {
    const at = { signs: SIGNS_MANIFEST, stamp: STAMP, validDays: 30, signedAt: '2026-11-01T00:00:00Z' };
    const one = await signBytes(bytes, keyA, at);
    expect(await signBytes(bytes, keyA, at)).toBe(one);
    const doc = JSON.parse(one);
    expect(doc).toMatchObject({ signs: 'public/manifest.json', stamp: STAMP, key_id: a.keyId, signed_at: '2026-11-01T00:00:00Z', valid_until: '2026-12-01T00:00:00Z' });
  });

  it('signs at the signing moment by default: a release stamped long ago is signed valid from now', async () => {
    const before = Date.now();
    const sig = await signBytes(bytes, keyA, { signs: SIGNS_MANIFEST, stamp: '20200101T000000Z', validDays: 30 });
    const doc = JSON.parse(sig);
    // Whole seconds: signed_at is the moment of signing, truncated.
    expect(Date.parse(doc.signed_at)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(doc.signed_at)).toBeLessThanOrEqual(Date.now());
    expect((await verifyBytes(sig, bytes, { ...opts, stamp: '20200101T000000Z', now: new Date() })).ok).toBe(true);
  });

  it('takes signed_at from --signed-at, else SOURCE_DATE_EPOCH, else now; refuses a malformed SOURCE_DATE_EPOCH', () => {
    const now = new Date('2026-12-04T10:11:12.345Z');
    expect(signingInstant({ now })).toBe('2026-12-04T10:11:12Z');
    expect(signingInstant({ now, sourceDateEpoch: '1793491200' })).toBe('2026-11-01T00:00:00Z');
    expect(signingInstant({ now, sourceDateEpoch: '' })).toBe('2026-12-04T10:11:12Z'); // set but empty: unset
    expect(signingInstant({ now, sourceDateEpoch: '1793491200', signedAt: '2026-11-20T00:00:00+01:00' })).toBe('2026-11-19T23:00:00Z');
    for (const bad of ['1793491200.5', '-1', ' 1793491200', '2026-11-01', 'now']) {
      expect(() => signingInstant({ now, sourceDateEpoch: bad })).toThrow(/SOURCE_DATE_EPOCH=.* is not a whole number of seconds/);
    }
  });

  it('refuses a lifetime that is already over or ends within a day, naming the dates', () => {
    const now = new Date('2026-12-04T00:00:00Z');
    expect(() => checkLifetime('2026-01-01T00:00:00Z', 180, now)).toThrow(/expires at 2026-06-30T00:00:00Z: already expired at 2026-12-04T00:00:00Z/);
    expect(() => checkLifetime('2026-11-04T12:00:00Z', 30, now)).toThrow(/expires at 2026-12-04T12:00:00Z: expiring within a day/);
    expect(() => checkLifetime('2026-11-05T00:00:00Z', 30, now)).not.toThrow(); // exactly a day left
    expect(() => checkLifetime('2026-12-04T00:00:00Z', 1, now)).not.toThrow();
  });

  it('accepts a good signature and refuses each fault with its reason', async () => {
    const sig = await signBytes(bytes, keyA, { signs: SIGNS_MANIFEST, stamp: STAMP, signedAt: AT });
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
    // Rollback is not a signature's own fault: common/trust.ts judges it (test/common/trust.test.ts).
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
