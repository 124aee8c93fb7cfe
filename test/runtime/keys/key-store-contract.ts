// The KeyRepository contract: every key driver (the keys file, SQLite, Redis) runs this same suite, through the
// operations the CLI uses (addKey, listKeys, revokeKey) and the key store a server authenticates with.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthResult, KeyEntry, KeyRepository, KeyStore, MaybePromise } from '../../../runtime/interfaces.ts';
import { addKey, listKeys, revokeKey } from '../../../runtime/keys/key-file.ts';
import { openRepositoryKeyStore } from '../../../runtime/keys/key-store.ts';
import { expectBySecondCheck } from '../../helpers/key-checks.ts';

/** One driver's stored keys, opened for one test. */
export interface OpenedKeys {
  repository: KeyRepository;
  /** Another handle on the same stored keys, as another process or instance would open it. */
  sibling(): Promise<OpenedKeys>;
  /**
   * Overwrites the stored entry `id` with `entry` unchecked, as a hand edit or a bad write would, and counts it a
   * change. None: the driver has no copy a server loads and keeps (the edge, whose key objects are read per
   * request), and the damaged-entry case, which is about that copy, does not apply.
   */
  damage?(id: string, entry: unknown): Promise<void>;
  /**
   * What a server authenticates with on these keys (default: openRepositoryKeyStore over the repository): a key
   * store, or where each check is a call away (the edge), an authenticator whose every call is a check.
   */
  serve?(pollMs: number): Promise<ServedKeys>;
  close(): Promise<void>;
}

/** A server's key check: answered at once (a key store) or a call away (the edge), and its count of checks. */
type ServedKeys = Pick<KeyStore, 'checks' | 'close'> & { authenticate(authorization: string | null, now: Date): MaybePromise<AuthResult> };

const NOW = new Date('2026-11-15T12:00:00Z');
const POLL_MS = 25;

export function keyRepositoryContract(name: string, openKeys: () => Promise<OpenedKeys>, options: { damages?: boolean } = {}): void {
  const damages = options.damages ?? true;
  describe(`KeyRepository contract: ${name}`, () => {
    let keys: OpenedKeys;
    const opened: OpenedKeys[] = [];
    const stores: ServedKeys[] = [];
    const serve = async (on: OpenedKeys): Promise<ServedKeys> => {
      const s = on.serve ? await on.serve(POLL_MS) : await openRepositoryKeyStore({ repository: on.repository, pollMs: POLL_MS, log: () => {} });
      stores.push(s);
      return s;
    };
    const sibling = async (): Promise<OpenedKeys> => {
      const s = await keys.sibling();
      opened.push(s);
      return s;
    };
    beforeEach(async () => {
      keys = await openKeys();
      opened.push(keys);
    });
    afterEach(async () => {
      stores.splice(0).forEach((s) => s.close());
      for (const k of opened.splice(0).reverse()) await k.close();
    });

    it('adds a key, lists it without its hash, stores only the hash, and a server finds it by its secret', async () => {
      const { record, key } = await addKey({ repository: keys.repository, name: 'Acme', quota: 50, rate: 3, provider: 'acme', plan: 'preview', organisation: 'Acme Ltd', accessModel: 'partner_preview', now: NOW });
      const id = key.slice(3, 11);
      expect(record).toEqual({ id, name: 'Acme', quota: 50, rate: 3, provider: 'acme', plan: 'preview', organisation: 'Acme Ltd', access_model: 'partner_preview', expires_at: null, revoked: false, created_at: NOW.toISOString() });
      expect(await listKeys({ repository: keys.repository })).toEqual([record]);
      const stored = JSON.stringify(await keys.repository.entries());
      expect(stored).not.toContain(key.slice(12));
      expect(stored).toMatch(/"hash":"[0-9a-f]{64}"/);

      const server = await serve(keys);
      const { created_at: _, ...served } = record;
      expect(await server.authenticate(`Bearer ${key}`, NOW)).toEqual({ ok: true, key: served });
      expect(await server.authenticate(`Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, NOW)).toEqual({ ok: false, code: 'invalid_key' });
      expect(await server.authenticate(`Bearer rk_${id === '00000000' ? '11111111' : '00000000'}_${key.slice(12)}`, NOW)).toEqual({ ok: false, code: 'invalid_key' });
    });

    it('refuses an id already taken, keeping the first entry', async () => {
      const first = await addKey({ repository: keys.repository, name: 'First', now: NOW });
      const second = await addKey({ repository: keys.repository, name: 'Second', now: NOW });
      const entry = ((await keys.repository.entries()) as KeyEntry[]).find((e) => e.id === first.record.id)!;
      const version = await keys.repository.version();
      expect(await keys.repository.insert({ ...entry, name: 'Usurper' })).toBe(false);
      expect(await keys.repository.version()).toBe(version);
      // Listed in the order stored: the file's and SQLite's order of insertion, a Redis hash's own order.
      const listed = await listKeys({ repository: keys.repository });
      expect(listed.map((k) => `${k.id} ${k.name}`).sort()).toEqual([`${first.record.id} First`, `${second.record.id} Second`].sort());
    });

    it('revokes: the listing says so, a server on another handle refuses the key by its second check, and revoking again changes nothing', async () => {
      const { key, record } = await addKey({ repository: keys.repository, name: 'Partner', now: NOW });
      const other = await sibling();
      const server = await serve(other);
      expect((await server.authenticate(`Bearer ${key}`, NOW)).ok).toBe(true);
      expect(await revokeKey(record.id, { repository: keys.repository })).toMatchObject({ id: record.id, revoked: true });
      await expectBySecondCheck(() => server.checks(), async () => !(await server.authenticate(`Bearer ${key}`, NOW)).ok, 'the revocation');
      expect(await server.authenticate(`Bearer ${key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
      expect(await listKeys({ repository: other.repository })).toEqual([{ ...record, revoked: true }]);

      const version = await keys.repository.version();
      expect(await revokeKey(record.id, { repository: keys.repository })).toMatchObject({ revoked: true });
      expect(await keys.repository.version()).toBe(version);
      await expect(revokeKey(record.id === 'abcdef01' ? 'abcdef02' : 'abcdef01', { repository: keys.repository })).rejects.toThrow(/no key with id abcdef0[12]/);
      expect(await keys.repository.revoke('abcdef0f')).toBeNull();
    });

    it('changes its version with each key added or revoked, and a server on another handle serves a new key by its second check', async () => {
      await addKey({ repository: keys.repository, name: 'Early', now: NOW }); // a keys file must exist for a server to start
      const server = await serve(keys);
      const other = await sibling();
      const v0 = await keys.repository.version();
      const { key, record } = await addKey({ repository: other.repository, name: 'Late', now: NOW });
      const v1 = await keys.repository.version();
      expect(v1).not.toBe(v0);
      await expectBySecondCheck(() => server.checks(), async () => (await server.authenticate(`Bearer ${key}`, NOW)).ok, 'the new key');
      await revokeKey(record.id, { repository: other.repository });
      expect(await keys.repository.version()).not.toBe(v1);
    });

    it('expires a key after its expiry date (through the last day, UTC), and says so only to its holder', async () => {
      const { key, record } = await addKey({ repository: keys.repository, name: 'Trial', expires: '2026-12-01', now: NOW });
      expect(record.expires_at).toBe('2026-12-01T23:59:59.999Z');
      expect((await listKeys({ repository: keys.repository }))[0].expires_at).toBe('2026-12-01T23:59:59.999Z');
      const server = await serve(keys);
      expect((await server.authenticate(`Bearer ${key}`, new Date('2026-12-01T23:59:59.000Z'))).ok).toBe(true);
      expect(await server.authenticate(`Bearer ${key}`, new Date('2026-12-02T00:00:00.000Z'))).toEqual({ ok: false, code: 'key_expired' });
      expect(await server.authenticate(`Bearer ${key.slice(0, 12)}${'x'.repeat(32)}`, new Date('2026-12-02T00:00:00.000Z'))).toEqual({ ok: false, code: 'invalid_key' });
      await expect(addKey({ repository: keys.repository, name: 'Late', expires: '2026-11-01', now: NOW })).rejects.toThrow(/already past/);
    });

    it.skipIf(!damages)('fails closed on a damaged entry: listing and a fresh start refuse it by name, a running server applies its legible revocation and keeps the other keys as last seen', async () => {
      const a = await addKey({ repository: keys.repository, name: 'A', now: NOW });
      const b = await addKey({ repository: keys.repository, name: 'B', now: NOW });
      const c = await addKey({ repository: keys.repository, name: 'C', now: NOW });
      const server = await serve(keys);
      const entries = (await keys.repository.entries()) as KeyEntry[];
      const entry = (id: string) => entries.find((e) => e.id === id)!;
      // A: its hash broken but its revocation legible. B: its quota broken. C untouched.
      await keys.damage!(a.record.id, { ...entry(a.record.id), hash: 'not-a-hash', revoked: true });
      await keys.damage!(b.record.id, { ...entry(b.record.id), plan: { quota: -1, rate: 1 } });

      await expectBySecondCheck(() => server.checks(), async () => !(await server.authenticate(`Bearer ${a.key}`, NOW)).ok, 'the revocation in a damaged entry');
      expect(await server.authenticate(`Bearer ${a.key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
      expect(await server.authenticate(`Bearer ${b.key}`, NOW)).toMatchObject({ ok: true, key: { id: b.record.id, quota: 1000 } });
      expect((await server.authenticate(`Bearer ${c.key}`, NOW)).ok).toBe(true);

      // Only the first problem is named; which entry comes first is the store's order.
      const problem = new RegExp(`key \\d \\((${a.record.id}\\): hash must be|${b.record.id}\\): plan\\.quota must be)`);
      await expect(listKeys({ repository: keys.repository })).rejects.toThrow(problem);
      await expect(serve(keys)).rejects.toThrow(problem);
      // The message names the entry and what is wrong, never its contents.
      await expect(listKeys({ repository: keys.repository })).rejects.not.toThrow(/not-a-hash/);
    });
  });
}
