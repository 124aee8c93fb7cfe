// The SQLite store: the shared contract (with its restart and shared-file cases), then what only it must do.

import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../runtime/interfaces.ts';
import { openSqliteStore, type SqliteStateStore } from '../../../runtime/state/sqlite-store.ts';
import { refuseAcknowledgements } from '../../../runtime/state/read-only-store.ts';
import { eventually } from '../../helpers/eventually.ts';
import { stateStoreContract } from './state-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'sqlite-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshFile = (): string => join(root, `s${++n}`, 'register.db');
const open = (file: string) => openSqliteStore({ file, log: () => {} });
const P = '2026-11';

const same = (store: StateStore): string => (store as SqliteStateStore).file;
stateStoreContract('sqlite', () => open(freshFile()), {
  reopen: async (store) => {
    await store.close();
    return open(same(store));
  },
  sibling: (store) => open(same(store)),
});
stateStoreContract('sqlite, read-only mirror', async () => refuseAcknowledgements(await open(freshFile())), { acknowledges: false });

describe('sqlite store', () => {
  it('rejects changes after close', async () => {
    const s = await open(freshFile());
    await s.close();
    await expect(s.charge('k1', P, 1, 10)).rejects.toThrow(/closed/);
  });
});

describe('sqlite store checkpoints', () => {
  it("copies a tick's charges into the main file within about a second, not once per 1000 pages written", async () => {
    const file = freshFile();
    const s = await open(file);
    try {
      // One tick's charges: a few pages of WAL, far under SQLite's own checkpoint threshold.
      await Promise.all(Array.from({ length: 5 }, () => s.charge('k1', P, 1, 100)));
      // The main file alone (what survives a WAL damaged later) holds them once the store has checkpointed.
      const copy = join(root, `copy-${n}.db`);
      const usedInMainFile = (): number | undefined => {
        copyFileSync(file, copy);
        rmSync(`${copy}-wal`, { force: true });
        const db = new Database(copy, { readonly: true });
        try {
          return db.prepare('SELECT used FROM quota WHERE key_id = ? AND period = ?').pluck().get('k1', P) as number | undefined;
        } catch {
          return undefined; // not even the schema has reached the main file yet
        } finally {
          db.close();
        }
      };
      // The store's checkpoint timer fires a second after the tick (no further write comes to trigger one); a busy
      // machine may fire it later, so the poll's bound only ends a wait for a checkpoint that never comes.
      await eventually('the charges in the main file', () => usedInMainFile() === 5).catch(() => {});
      expect(usedInMainFile()).toBe(5);
    } finally {
      await s.close();
    }
  });
});
