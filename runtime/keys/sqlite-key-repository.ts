// Keys in the SQLite state database (`--state sqlite:PATH`), so every instance sharing the file sees a new key or a
// revocation within a poll. Only the hash of a key's secret is stored, as in the keys file.

import type Database from 'better-sqlite3';
import type { KeyEntry, KeyRepository } from '../interfaces.ts';

/** Options of sqliteKeyRepository. */
export interface SqliteKeyOptions {
  /** The state store's open connection (sqlite-store.ts creates the table). */
  db: Database.Database;
  /** How messages name the store. */
  label: string;
}

/** Keys in the `api_key` table of the SQLite state database; `meta.keys_version` counts the changes. */
export function sqliteKeyRepository({ db, label }: SqliteKeyOptions): KeyRepository {
  const bump = db.prepare(
    `INSERT INTO meta (name, value) VALUES ('keys_version', '1') ON CONFLICT DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`,
  );
  const all = db.prepare('SELECT entry FROM api_key ORDER BY rowid').pluck();
  const one = db.prepare('SELECT entry FROM api_key WHERE id = ?').pluck();
  const put = db.prepare('INSERT INTO api_key (id, entry) VALUES (?, ?) ON CONFLICT DO NOTHING');
  const replace = db.prepare('UPDATE api_key SET entry = ? WHERE id = ?');
  const version = db.prepare(`SELECT value FROM meta WHERE name = 'keys_version'`).pluck();
  const insert = db.transaction((entry: KeyEntry): boolean => {
    if (put.run(entry.id, JSON.stringify(entry)).changes === 0) return false;
    bump.run();
    return true;
  });
  const revoke = db.transaction((id: string): KeyEntry | null => {
    const text = one.get(id) as string | undefined;
    if (text === undefined) return null;
    const entry = JSON.parse(text) as KeyEntry;
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
