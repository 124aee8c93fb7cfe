// Bearer parsing and checks of the key store, and its pick-up of keys-file edits without a restart; the keys file
// as a key repository (the shared contract, served by the file key store a server uses).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RegisterError } from '../../../common/errors.ts';
import type { KeyStore } from '../../../runtime/interfaces.ts';
import { hashSecret } from '../../../runtime/keys/key-entry.ts';
import { fileKeyRepository } from '../../../runtime/keys/file-key-repository.ts';
import { addKey, revokeKey } from '../../../runtime/keys/key-file.ts';
import { openKeyStore } from '../../../runtime/keys/key-store.ts';
import { afterChecks, expectBySecondCheck } from '../../helpers/key-checks.ts';
import { keyRepositoryContract, type OpenedKeys } from './key-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'key-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshFile = (): string => join(root, `keys${++n}.json`);

const NOW = new Date('2026-11-15T12:00:00Z');
const stores: KeyStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));
const open = (file: string, log: (m: string) => void = () => {}): KeyStore => {
  const s = openKeyStore({ file, pollMs: 25, log });
  stores.push(s);
  return s;
};

describe('key store: the Authorization header', () => {
  const file = freshFile();
  let key = '';
  let store: KeyStore;
  it('accepts a valid key, with the scheme in any case', async () => {
    ({ key } = await addKey({ file, name: 'Acme', provider: 'acme', quota: 50, rate: 3, now: NOW }));
    store = openKeyStore({ file, log: () => {} });
    stores.push(store);
    const r = store.authenticate(`Bearer ${key}`, NOW);
    expect(r).toEqual({ ok: true, key: { id: key.slice(3, 11), name: 'Acme', quota: 50, rate: 3, provider: 'acme', plan: null, organisation: null, access_model: null, expires_at: null, revoked: false } });
    expect(store.authenticate(`bearer ${key}`, NOW).ok).toBe(true);
    expect(store.authenticate(`BEARER ${key}`, NOW).ok).toBe(true);
  });

  it('says missing_key only when there is no header', () => {
    expect(store.authenticate(null, NOW)).toEqual({ ok: false, code: 'missing_key' });
    expect(store.authenticate('', NOW)).toEqual({ ok: false, code: 'missing_key' });
  });

  it('says invalid_key for anything malformed or padded', () => {
    const id = key.slice(3, 11);
    const secret = key.slice(12);
    for (const h of [
      'Bearer',
      'Bearer ',
      `Bearer  ${key}`,
      ` Bearer ${key}`,
      `Bearer ${key} `,
      `Bearer\t${key}`,
      `Bearer ${key} extra`,
      `Basic ${key}`,
      `Token ${key}`,
      key,
      `Bearer rk_${id}_${secret}x`,
      `Bearer rk_${id}_${secret.slice(1)}`,
      `Bearer rk_${id.toUpperCase()}_${secret}`,
      `Bearer rk_${id}${secret}`,
      `Bearer rk-${id}-${secret}`,
      `Bearer ${key.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))}`, // wrong secret
      `Bearer rk_00000000_${secret}`, // unknown id
      `Bearer ${secret}`,
      // An all-digit random ID upper-cases to itself, making that variant the valid header: leave it out then.
    ].filter((h) => h !== `Bearer ${key}`)) {
      expect(store.authenticate(h, NOW), h.replace(secret, '<secret>')).toEqual({ ok: false, code: 'invalid_key' });
    }
  });
});

describe('key store: record checks', () => {
  it('refuses revoked and expired keys, but only to a caller holding the secret', async () => {
    const file = freshFile();
    const revoked = await addKey({ file, name: 'Old', now: NOW });
    await revokeKey(revoked.record.id, { file });
    const expiring = await addKey({ file, name: 'Trial', expires: '2026-11-20', now: NOW });
    expect(expiring.record.expires_at).toBe('2026-11-20T23:59:59.999Z');
    const s = open(file);
    expect(s.authenticate(`Bearer ${revoked.key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
    const wrong = revoked.key.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(s.authenticate(`Bearer ${wrong}`, NOW)).toEqual({ ok: false, code: 'invalid_key' });
    expect(s.authenticate(`Bearer ${expiring.key}`, new Date('2026-11-20T23:59:59.999Z')).ok).toBe(true);
    expect(s.authenticate(`Bearer ${expiring.key}`, new Date('2026-11-21T00:00:00Z'))).toEqual({ ok: false, code: 'key_expired' });
  });

  it('accepts legacy meta.allowed* and gives them no meaning', () => {
    const file = freshFile();
    const secret = 'A'.repeat(32);
    writeFileSync(
      file,
      JSON.stringify({
        keys: [
          {
            id: 'abcdef01',
            name: 'Legacy partner',
            hash: hashSecret(secret),
            plan: { quota: 10, rate: 1 },
            meta: { allowedProviders: ['opta'], allowedCountries: ['DE'], allowedCompetitions: ['bundesliga'] },
            expires_at: null,
            revoked: false,
            created_at: '2025-01-01T00:00:00Z',
          },
        ],
      }),
    );
    const r = open(file).authenticate(`Bearer rk_abcdef01_${secret}`, NOW);
    expect(r).toEqual({ ok: true, key: { id: 'abcdef01', name: 'Legacy partner', quota: 10, rate: 1, provider: null, plan: null, organisation: null, access_model: null, expires_at: null, revoked: false } });
  });

  it('refuses to open on a missing or invalid file, naming it', () => {
    expect(() => openKeyStore({ file: join(root, 'nope.json') })).toThrow(/nope\.json: keys file not found/);
    const bad = freshFile();
    writeFileSync(bad, JSON.stringify({ keys: [{ id: 'abcdef01', name: 'x', hash: 'deadbeef', plan: { quota: 1, rate: 1 } }] }));
    expect(() => openKeyStore({ file: bad })).toThrow(RegisterError);
    expect(() => openKeyStore({ file: bad })).toThrow(/key 1 \(abcdef01\): hash must be/);
  });
});

describe('key store: reloading', () => {

  it('refuses a key by the second check after its revocation (checks every 250 ms: within a second), without restart', async () => {
    const file = freshFile();
    const { record, key } = await addKey({ file, name: 'Acme', now: NOW });
    const s = openKeyStore({ file, log: () => {} }); // the default poll (250 ms)
    stores.push(s);
    expect(s.authenticate(`Bearer ${key}`, NOW).ok).toBe(true);
    await revokeKey(record.id, { file });
    await expectBySecondCheck(() => s.checks(), () => !s.authenticate(`Bearer ${key}`, NOW).ok);
    expect(s.authenticate(`Bearer ${key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
  });

  it("refuses a token it accepted before once the key's secret is replaced, and accepts the new one", async () => {
    // Accepted tokens skip the hash on repeat calls; a reload must take that shortcut away with the old keys.
    const file = freshFile();
    const { record, key } = await addKey({ file, name: 'Acme', now: NOW });
    const s = open(file);
    expect(s.authenticate(`Bearer ${key}`, NOW).ok).toBe(true);
    expect(s.authenticate(`Bearer ${key}`, NOW).ok).toBe(true);
    const secret = 'S'.repeat(32);
    const data = JSON.parse(readFileSync(file, 'utf8')) as { keys: { id: string; hash: string }[] };
    data.keys.find((k) => k.id === record.id)!.hash = hashSecret(secret);
    writeFileSync(file, JSON.stringify(data));
    const rotated = `rk_${record.id}_${secret}`;
    await expectBySecondCheck(() => s.checks(), () => s.authenticate(`Bearer ${rotated}`, NOW).ok);
    expect(s.authenticate(`Bearer ${key}`, NOW)).toEqual({ ok: false, code: 'invalid_key' });
  });

  it('sees a key added after it opened', async () => {
    const file = freshFile();
    await addKey({ file, name: 'First', now: NOW });
    const s = open(file);
    const { key } = await addKey({ file, name: 'Second', now: NOW });
    await expectBySecondCheck(() => s.checks(), () => s.authenticate(`Bearer ${key}`, NOW).ok);
  });

  it('keeps the last good version through a half-written file and logs it once, without key material', async () => {
    const file = freshFile();
    const { key } = await addKey({ file, name: 'Acme', now: NOW });
    const logs: string[] = [];
    const s = open(file, (m) => logs.push(m));
    writeFileSync(file, '{"keys":[{"id":"abcd'); // an editor caught mid-write
    await afterChecks(() => s.checks());
    writeFileSync(file, '{"keys":[{"id":"abcdef'); // still broken, differently
    await afterChecks(() => s.checks());
    expect(s.authenticate(`Bearer ${key}`, NOW).ok).toBe(true);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/not valid JSON; keeping the last good version/);
    expect(logs.join('\n')).not.toContain(key.slice(12));

    writeFileSync(file, JSON.stringify({ keys: [] })); // fixed: the new version applies
    await expectBySecondCheck(() => s.checks(), () => !s.authenticate(`Bearer ${key}`, NOW).ok);
    expect(logs[1]).toMatch(/reloaded \(0 keys\)/);
  });
});

describe('key store: a reload with invalid entries fails safe, entry by entry', () => {
  type Entry = { id: string; hash: string; revoked: boolean; plan: unknown };

  it('applies a revocation made in the same edit that broke another entry, keeps the other keys as they were, and says so loudly', async () => {
    const file = freshFile();
    const a = await addKey({ file, name: 'A', now: NOW });
    const b = await addKey({ file, name: 'B', now: NOW });
    const c = await addKey({ file, name: 'C', now: NOW });
    const logs: string[] = [];
    const s = open(file, (m) => logs.push(m));
    const data = JSON.parse(readFileSync(file, 'utf8')) as { keys: Entry[] };
    data.keys[0].revoked = true; // A revoked...
    data.keys[1].plan = { quota: 'lots', rate: 1 }; // ...while B's record is broken by the same edit
    writeFileSync(file, JSON.stringify(data));
    await expectBySecondCheck(() => s.checks(), () => !s.authenticate(`Bearer ${a.key}`, NOW).ok);
    expect(s.authenticate(`Bearer ${a.key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
    expect(s.authenticate(`Bearer ${b.key}`, NOW).ok).toBe(true); // B keeps its last good state
    expect(s.authenticate(`Bearer ${c.key}`, NOW).ok).toBe(true);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/REFUSED 1 invalid entry: key 2 \([0-9a-f]{8}\): plan.quota must be a non-negative integer/);
    expect(logs[0]).toMatch(/Revocations in them still apply/);
    for (const k of [a, b, c]) expect(logs[0]).not.toContain(k.key.slice(12));
  });

  it('refuses a key whose record is unreadable but whose revocation is legible (revocation fails closed)', async () => {
    const file = freshFile();
    const a = await addKey({ file, name: 'A', now: NOW });
    const s = open(file);
    const data = JSON.parse(readFileSync(file, 'utf8')) as { keys: Entry[] };
    data.keys[0].hash = 'not a hash';
    data.keys[0].revoked = true;
    writeFileSync(file, JSON.stringify(data));
    await expectBySecondCheck(() => s.checks(), () => !s.authenticate(`Bearer ${a.key}`, NOW).ok);
    expect(s.authenticate(`Bearer ${a.key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
  });

  it('drops a key whose entry lost its id (nothing says which key it was), and serves none it never saw valid', async () => {
    const file = freshFile();
    const a = await addKey({ file, name: 'A', now: NOW });
    const s = open(file);
    const data = JSON.parse(readFileSync(file, 'utf8')) as { keys: (Entry & { name?: unknown })[] };
    data.keys[0].id = 'XYZ';
    const secret = 'Q'.repeat(32);
    data.keys.push({ id: 'abcdef99', hash: hashSecret(secret), revoked: false, plan: { quota: 1, rate: 0 }, name: 'new but broken' });
    writeFileSync(file, JSON.stringify(data));
    await expectBySecondCheck(() => s.checks(), () => !s.authenticate(`Bearer ${a.key}`, NOW).ok);
    expect(s.authenticate(`Bearer ${a.key}`, NOW)).toEqual({ ok: false, code: 'invalid_key' });
    expect(s.authenticate(`Bearer rk_abcdef99_${secret}`, NOW)).toEqual({ ok: false, code: 'invalid_key' });
  });
});

const fileKeys = (file: string): OpenedKeys => ({
  repository: fileKeyRepository(file),
  sibling: async () => fileKeys(file),
  damage: async (id, entry) => {
    const data = JSON.parse(readFileSync(file, 'utf8')) as { keys: { id: string }[] };
    data.keys = data.keys.map((k) => (k.id === id ? (entry as { id: string }) : k));
    writeFileSync(file, JSON.stringify(data));
  },
  serve: async (pollMs) => openKeyStore({ file, pollMs, log: () => {} }),
  close: async () => {},
});
keyRepositoryContract('keys file', async () => fileKeys(freshFile()));
