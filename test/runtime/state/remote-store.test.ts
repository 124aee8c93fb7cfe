// The remote driver (a worker of `serve --workers N` reaching the primary's store) passes the same StateStore
// contract as the stores it fronts, stays exact when several workers race for one key's credits, and fails
// closed (StateUnavailableError, nothing charged) once the primary is gone.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateUnavailableError, type StateStore } from '../../../runtime/interfaces.ts';
import { openJournalStore } from '../../../runtime/state/journal-store.ts';
import { createReadOnlyStore } from '../../../runtime/state/read-only-store.ts';
import { createRemoteStore, serveStore, type StateLink } from '../../../runtime/state/remote-store.ts';
import { stateStoreContract } from './state-store-contract.ts';

/** Two linked ends in one process: each message is a JSON copy delivered on a later turn, as over a real channel. */
function linkedPair(): { worker: StateLink; primary: StateLink; cut(): void } {
  type End = { listeners: ((m: unknown) => void)[]; closers: (() => void)[]; closed: boolean; other?: End };
  const a: End = { listeners: [], closers: [], closed: false };
  const b: End = { listeners: [], closers: [], closed: false };
  a.other = b;
  b.other = a;
  const end = (self: End): StateLink => ({
    send(message) {
      if (self.closed) throw new Error('channel closed');
      const copy = JSON.parse(JSON.stringify(message)) as unknown;
      setImmediate(() => self.other!.listeners.forEach((l) => l(copy)));
    },
    onMessage: (l) => void self.listeners.push(l),
    onClose: (l) => void self.closers.push(l),
  });
  return {
    worker: end(a),
    primary: end(b),
    cut() {
      for (const e of [a, b]) {
        e.closed = true;
        e.closers.forEach((c) => c());
      }
    },
  };
}

/** A remote store in front of `backing`; closing it closes the backing store too. */
function fronted(backing: StateStore, writable: boolean): StateStore {
  const { worker, primary } = linkedPair();
  serveStore(backing, primary);
  const remote = createRemoteStore(worker, { writable });
  return {
    ...remote,
    close: async () => {
      await remote.close();
      await backing.close();
    },
  };
}

const P = '2026-11';
const journalDir = () => mkdtempSync(join(tmpdir(), 'ir-remote-'));

stateStoreContract('remote, in front of the journal store', async () => fronted(await openJournalStore({ dir: journalDir(), log: () => {} }), true));
stateStoreContract('remote, in front of the read-only store', async () => fronted(createReadOnlyStore(), false), { acknowledges: false });

describe('remote store', () => {
  it('stays exact when two workers race for one key: 2,000 charges on 1,000 credits', async () => {
    const journal = await openJournalStore({ dir: journalDir(), log: () => {} });
    const workers = [linkedPair(), linkedPair()].map(({ worker, primary }) => {
      serveStore(journal, primary);
      return createRemoteStore(worker, { writable: true });
    });
    const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => workers[i % 2].charge('k1', P, 1, 1000)));
    expect(results.filter((r) => r.ok)).toHaveLength(1000);
    expect(new Set(results.filter((r) => r.ok).map((r) => r.remaining)).size).toBe(1000);
    // One rate window for both: a rate of 3 admits three hits in a second, whichever worker asks.
    const waits = await Promise.all([0, 1, 0, 1, 0].map((w, i) => workers[w].hit('k2', 10_000 + i, 3)));
    expect(waits.filter((w) => w === 0)).toHaveLength(3);
    await journal.close();
  });

  it('sends the calls of one turn as one message', async () => {
    const { worker, primary } = linkedPair();
    let messages = 0;
    const counting: StateLink = { ...primary, onMessage: (l) => primary.onMessage((m) => (messages++, l(m))) };
    serveStore(createReadOnlyStore(), counting);
    const remote = createRemoteStore(worker, { writable: false });
    await Promise.all(Array.from({ length: 100 }, () => remote.charge('k1', P, 1, 1000)));
    expect(messages).toBe(1);
    expect(await remote.remaining('k1', P, 1000)).toBe(900);
    // A costing request's rate check and charge are one call: 100 requests of a turn, one message.
    const admissions = await Promise.all(Array.from({ length: 100 }, (_, i) => remote.admit!('k2', 5000 + i, 40, P, 1, 1000)));
    expect(messages).toBe(3);
    expect(admissions.filter((a) => a.charge?.ok)).toHaveLength(40);
    expect(await remote.remaining('k2', P, 1000)).toBe(960);
  });

  it('fails closed once the primary is gone: pending and later calls reject with StateUnavailableError', async () => {
    const journal = await openJournalStore({ dir: journalDir(), log: () => {} });
    const pair = linkedPair();
    serveStore(journal, pair.primary);
    const remote = createRemoteStore(pair.worker, { writable: true });
    expect(await remote.charge('k1', P, 1, 10)).toEqual({ ok: true, remaining: 9 });
    const pending = remote.charge('k1', P, 1, 10);
    pair.cut();
    await expect(pending).rejects.toBeInstanceOf(StateUnavailableError);
    await expect(remote.acknowledge('acme', 1, ['f1'], '2026-11-01T00:00:00Z', null, null)).rejects.toBeInstanceOf(StateUnavailableError);
    expect(await journal.remaining('k1', P, 10)).toBe(9); // the cut call never reached the store
    await journal.close();
  });
});
