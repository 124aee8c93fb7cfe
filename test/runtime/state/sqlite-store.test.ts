// The SQLite store: the shared contract (with its restart and shared-file cases), then what only it must do.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../runtime/interfaces.ts';
import { openSqliteStore, type SqliteStateStore } from '../../../runtime/state/sqlite-store.ts';
import { refuseAcknowledgements } from '../../../runtime/state/read-only-store.ts';
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
