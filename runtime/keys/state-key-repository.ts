// Keys kept in the state store itself (`register keys … --state URL`, `serve --keys state`), so every instance
// sharing the store sees a new key or a revocation within a poll: a SQLite table, or a Redis hash. As in the keys
// file, only the hash of a key's secret is stored.

import type Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import { RegisterError } from '../../common/errors.ts';
import type { OpenedState } from '../state/open-state-store.ts';
import type { KeyFileEntry, KeyRepository } from './key-file.ts';

/** The key table of the store `opened` names; memory: has none (a key there would die with the command). */
export function keyRepositoryFor(opened: OpenedState, label: string): KeyRepository {
  const engine = opened.engine;
  if (engine === null) throw new RegisterError('keys', 'memory: keeps nothing between processes; keep keys in a keys file, sqlite:PATH or redis://');
  return 'db' in engine ? sqliteKeyRepository(engine.db, label) : redisKeyRepository(engine.client, label);
}

/** Keys in the `api_key` table of the SQLite state database; `meta.keys_version` counts the changes. */
export function sqliteKeyRepository(db: Database.Database, label: string): KeyRepository {
  const bump = db.prepare(
    `INSERT INTO meta (name, value) VALUES ('keys_version', '1') ON CONFLICT DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`,
  );
  const all = db.prepare('SELECT entry FROM api_key ORDER BY rowid').pluck();
  const one = db.prepare('SELECT entry FROM api_key WHERE id = ?').pluck();
  const put = db.prepare('INSERT INTO api_key (id, entry) VALUES (?, ?) ON CONFLICT DO NOTHING');
  const replace = db.prepare('UPDATE api_key SET entry = ? WHERE id = ?');
  const version = db.prepare(`SELECT value FROM meta WHERE name = 'keys_version'`).pluck();
  const insert = db.transaction((entry: KeyFileEntry): boolean => {
    if (put.run(entry.id, JSON.stringify(entry)).changes === 0) return false;
    bump.run();
    return true;
  });
  const revoke = db.transaction((id: string): KeyFileEntry | null => {
    const text = one.get(id) as string | undefined;
    if (text === undefined) return null;
    const entry = JSON.parse(text) as KeyFileEntry;
    if (!entry.revoked) {
      entry.revoked = true;
      replace.run(JSON.stringify(entry), id);
      bump.run();
    }
    return entry;
  });
  return {
    label,
    entries: async () => (all.all() as string[]).map((t) => JSON.parse(t) as unknown),
    insert: async (entry) => insert.immediate(entry),
    revoke: async (id) => revoke.immediate(id),
    version: async () => (version.get() as string | undefined) ?? '0',
    close: async () => {},
  };
}

// All under the hash tag {keys}: one slot, so the scripts below work on Redis Cluster too. An entry is written once;
// a revocation is a member of a set beside it, so no script has to rewrite (and re-encode) an entry.
const KEYS_HASH = 'ir:{keys}';
const KEYS_REVOKED = 'ir:{keys}:revoked';
const KEYS_VERSION = 'ir:{keys}:v';

/** Keys in one Redis hash (id → entry JSON), a set of revoked ids and a change counter. */
export function redisKeyRepository(client: Redis, label: string): KeyRepository {
  const withRevocation = (text: string, revoked: boolean): KeyFileEntry => {
    const entry = JSON.parse(text) as KeyFileEntry;
    if (revoked) entry.revoked = true;
    return entry;
  };
  return {
    label,
    entries: async () => {
      const [all, revoked] = await Promise.all([client.hgetall(KEYS_HASH), client.smembers(KEYS_REVOKED)]);
      const gone = new Set(revoked);
      return Object.entries(all).map(([id, text]) => withRevocation(text, gone.has(id)));
    },
    insert: async (entry) => {
      const added = (await client.eval(
        `if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end redis.call('INCR', KEYS[2]) return 1`,
        2,
        KEYS_HASH,
        KEYS_VERSION,
        entry.id,
        JSON.stringify(entry),
      )) as number;
      return added === 1;
    },
    revoke: async (id) => {
      const text = (await client.eval(
        `local t = redis.call('HGET', KEYS[1], ARGV[1])
         if not t then return false end
         if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then redis.call('INCR', KEYS[3]) end
         return t`,
        3,
        KEYS_HASH,
        KEYS_REVOKED,
        KEYS_VERSION,
        id,
      )) as string | null;
      return text === null ? null : withRevocation(text, true);
    },
    version: async () => (await client.get(KEYS_VERSION)) ?? '0',
    close: async () => {},
  };
}
