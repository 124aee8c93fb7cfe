// Keys kept in the state store (`register keys … --state URL`, `serve --keys state`), over SQLite and a real
// redis-server: the CLI adds, lists and revokes there, only hashes are stored, and a server reading the same store
// refuses a revoked key within a second. Both drivers run the shared key-repository contract.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepositoryKeyStore } from '../../../runtime/keys/key-store.ts';
import { keysCommand } from '../../../runtime/keys/keys-cli.ts';
import { redisKeyRepository } from '../../../runtime/keys/redis-key-repository.ts';
import { keyRepositoryFor } from '../../../runtime/keys/state-key-repository.ts';
import { openStateStore } from '../../../runtime/state/open-state-store.ts';
import { openRedisStore } from '../../../runtime/state/redis-store.ts';
import type { SqliteStateStore } from '../../../runtime/state/sqlite-store.ts';
import { freePort, startRedis, type RedisServer } from '../../helpers/redis-server.ts';
import { runToExit } from '../../helpers/run-command.ts';
import { expectBySecondCheck } from '../../helpers/key-checks.ts';
import { keyRepositoryContract, type OpenedKeys } from './key-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'state-keys-'));
const BIN = fileURLToPath(new URL('../../../bin/register.mjs', import.meta.url));
let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.dispose();
  rmSync(root, { recursive: true, force: true });
});

async function run(argv: string[]): Promise<{ out: string; err: string }> {
  let out = '';
  let err = '';
  await keysCommand(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { out, err };
}
const NOW = new Date();

for (const [name, state] of [
  ['sqlite', () => `sqlite:${join(root, 'keys-test.db')}`],
  ['redis', () => redis.url],
] as const) {
  describe(`keys in the state store: ${name}`, () => {
    it('adds, lists and revokes through the CLI; a server on the same store refuses the revoked key by its second key check (within a second)', async () => {
      const url = state();
      const added = await run(['add', '--name', 'Partner', '--quota', '50', '--rate', '5', '--state', url]);
      const key = added.out.trim().split('\n').at(-1)!;
      expect(key).toMatch(/^rk_[0-9a-f]{8}_[A-Za-z0-9_-]{32}$/);
      const id = key.slice(3, 11);
      expect(added.err).toMatch(new RegExp(`added key ${id} "Partner"`));
      expect((await run(['list', '--state', url])).out).toMatch(new RegExp(`${id}\\s+Partner\\s+-\\s+50\\s+5\\s+-\\s+-\\s+active`));

      const opened = await openStateStore(url, { log: () => {} });
      const keys = await openRepositoryKeyStore({ repository: keyRepositoryFor(opened, url), pollMs: 100, log: () => {} });
      try {
        expect(keys.authenticate(`Bearer ${key}`, NOW)).toMatchObject({ ok: true, key: { id, quota: 50, rate: 5 } });
        expect((await run(['revoke', id, '--state', url])).out).toMatch(`revoked ${id} "Partner"`);
        await expectBySecondCheck(() => keys.checks(), () => !keys.authenticate(`Bearer ${key}`, NOW).ok, 'the revocation');
        expect(keys.authenticate(`Bearer ${key}`, NOW)).toEqual({ ok: false, code: 'revoked_key' });
        expect((await run(['list', '--state', url])).out).toMatch(new RegExp(`${id}.*revoked`));
        // Only the hash is stored.
        const stored = JSON.stringify(await keyRepositoryFor(opened, url).entries());
        expect(stored).not.toContain(key.slice(12));
        expect(stored).toMatch(/"hash":"[0-9a-f]{64}"/);
      } finally {
        keys.close();
        await opened.store.close();
      }
    });

    it('keeps --plan, --organisation and --access-model, and a server reading the store reports them', async () => {
      const url = state();
      const added = await run(['add', '--name', 'Org key', '--plan', 'preview', '--organisation', 'Acme Analytics Ltd', '--access-model', 'partner_preview', '--state', url]);
      const key = added.out.trim().split('\n').at(-1)!;
      const id = key.slice(3, 11);
      expect(added.err).toContain('plan preview, organisation "Acme Analytics Ltd", access model partner_preview');
      expect((await run(['list', '--state', url])).out).toMatch(new RegExp(`${id}\\s+Org key\\s+preview\\s+1000\\s+2`));
      const opened = await openStateStore(url, { log: () => {} });
      const keys = await openRepositoryKeyStore({ repository: keyRepositoryFor(opened, url), pollMs: 100, log: () => {} });
      try {
        const entry = (await keyRepositoryFor(opened, url).entries()).find((e) => (e as { id: string }).id === id);
        expect(entry).toMatchObject({ plan: { quota: 1000, rate: 2, name: 'preview' }, meta: { organisation: 'Acme Analytics Ltd', access_model: 'partner_preview' } });
        expect(keys.authenticate(`Bearer ${key}`, NOW)).toMatchObject({ ok: true, key: { id, plan: 'preview', organisation: 'Acme Analytics Ltd', access_model: 'partner_preview' } });
      } finally {
        keys.close();
        await opened.store.close();
      }
    });
  });
}

describe('keys in the state store: refusals', () => {
  it('refuses a Redis with another password, or none answering, in one line naming it without the password, exit 1', async () => {
    const guarded = await startRedis(['--requirepass', 'right-password']);
    try {
      const unreachable = `redis://127.0.0.1:${await freePort()}/0`;
      const cli = (state: string) => runToExit(process.execPath, [BIN, 'keys', 'add', '--name', 'x', '--state', state], { cwd: root });
      // At once: the unreachable one waits out the command's bound on reaching Redis (a refused password does not).
      const [wrong, none, down] = await Promise.all([
        cli(`redis://:wrong-password@127.0.0.1:${guarded.port}/0`),
        cli(guarded.url),
        cli(unreachable),
      ]);
      for (const [run, label, why] of [[wrong, guarded.url, 'authentication failed (WRONGPASS'], [none, guarded.url, 'authentication failed (NOAUTH'], [down, unreachable, 'unreachable (ECONNREFUSED)']] as const) {
        expect(run.status).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr.split('\n')).toEqual([expect.stringMatching(/^\[state\] /), '']);
        expect(run.stderr).toContain(`[state] ${label}: ${why}`);
        expect(run.stderr).not.toContain('wrong-password');
      }
    } finally {
      await guarded.dispose();
    }
  });

  it('refuses --keys with --state, and memory: (nothing would outlive the command)', async () => {
    await expect(run(['list', '--state', 'memory:'])).rejects.toThrow(/memory: keeps nothing between processes/);
    await expect(run(['list', '--state', 'memory:', '--keys', 'k.json'])).rejects.toThrow(/not both/);
    expect(() => readFileSync(join(root, 'k.json'))).toThrow();
  });
});

let stores = 0;
/** SQLite keys as a server opens them: the state store `sqlite:FILE` names, its key table chosen by the scheme. */
const sqliteKeys = async (file: string): Promise<OpenedKeys> => {
  const opened = await openStateStore(`sqlite:${file}`, { log: () => {} });
  const db = (opened.engine as { sqlite: SqliteStateStore }).sqlite.db;
  return {
    repository: keyRepositoryFor(opened, file),
    sibling: () => sqliteKeys(file),
    damage: async (id, entry) => {
      db.prepare('UPDATE api_key SET entry = ? WHERE id = ?').run(JSON.stringify(entry), id);
      db.prepare(`UPDATE meta SET value = value || 'x' WHERE name = 'keys_version'`).run();
    },
    close: () => opened.store.close(),
  };
};
keyRepositoryContract('sqlite', () => sqliteKeys(join(root, `contract-${++stores}.db`)));

/** Redis keys under a prefix of their own, so each case starts empty on the one server. */
const redisKeys = async (prefix: string): Promise<OpenedKeys> => {
  const store = await openRedisStore({ url: redis.url, prefix, log: () => {} });
  return {
    repository: redisKeyRepository({ client: store.client, label: redis.url, prefix }),
    sibling: () => redisKeys(prefix),
    damage: async (id, entry) => {
      await store.client.hset(`${prefix}{keys}`, id, JSON.stringify(entry));
      await store.client.incr(`${prefix}{keys}:v`);
    },
    close: () => store.close(),
  };
};
keyRepositoryContract('redis', () => redisKeys(`c${++stores}:`));
