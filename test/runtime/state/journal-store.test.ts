// The journal store: the shared contract, then what only a durable store must do (restart, torn tails, a failing
// disk, compaction, the directory lock, group commit).

import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StateUnavailableError } from '../../../runtime/interfaces.ts';
import { StateDirLockedError, openJournalStore, type JournalIo, type JournalStoreOptions } from '../../../runtime/state/journal-store.ts';
import { stateStoreContract } from './state-store-contract.ts';

const root = mkdtempSync(join(tmpdir(), 'journal-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = (): string => join(root, `s${++dirs}`);

const P = '2026-11';
const quiet = (): { log: (m: string) => void; messages: string[] } => {
  const messages: string[] = [];
  return { log: (m) => messages.push(m), messages };
};
const open = (dir: string, extra: Partial<JournalStoreOptions> = {}) => openJournalStore({ dir, log: () => {}, ...extra });
const journals = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('journal-')).sort();

stateStoreContract('journal', () => open(freshDir()));

describe('journal store: durability', () => {
  it('keeps counters, seen and acknowledgements (with actor and note) across a restart', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await a.charge('k1', P, 3, 10);
    await a.charge('k2', '2026-12', 1, 10);
    await a.markSeen('acme', 7, ['f1', 'f2'], '2026-11-01T00:00:00Z');
    await a.acknowledge('acme', 7, ['f1'], '2026-11-02T00:00:00Z', 'ops@acme', 'fixed');
    await a.close();

    const b = await open(dir);
    expect(await b.remaining('k1', P, 10)).toBe(7);
    expect(await b.remaining('k2', '2026-12', 10)).toBe(9);
    expect((await b.noticeDetails('acme', 7, ['f1'])).get('f1')).toEqual({
      seen_at: '2026-11-01T00:00:00Z',
      acknowledged_at: '2026-11-02T00:00:00Z',
      actor: 'ops@acme',
      note: 'fixed',
    });
    await b.acknowledge('acme', 7, ['f1'], '2026-11-05T00:00:00Z', 'late', null);
    expect((await b.notices('acme', 7, ['f1'])).get('f1')?.acknowledged_at).toBe('2026-11-02T00:00:00Z');
    await b.close();
  });

  it('has everything confirmed on disk the moment it resolves (a crash right after loses nothing)', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await Promise.all(Array.from({ length: 50 }, () => a.charge('k1', P, 1, 100)));
    await a.acknowledge('acme', 1, ['f1'], '2026-11-01T00:00:00Z', null, null);
    // "Crash": copy the directory as it is now, while the store is still open, minus its lock.
    const copy = freshDir();
    cpSync(dir, copy, { recursive: true, filter: (src) => !src.endsWith('lock') });
    const b = await open(copy);
    expect(await b.remaining('k1', P, 100)).toBe(50);
    expect((await b.notices('acme', 1, ['f1'])).get('f1')?.acknowledged_at).toBe('2026-11-01T00:00:00Z');
    await Promise.all([a.close(), b.close()]);
  });

  it('recovers a torn last record to the last complete one and cuts the tail', async () => {
    const dir = freshDir();
    const a = await open(dir);
    for (let i = 0; i < 5; i++) await a.charge('k1', P, 1, 100);
    await a.close();
    const file = join(dir, journals(dir)[0]);
    const good = statSync(file).size;
    appendFileSync(file, '1a2b3c4d ["c","k1","2026-1'); // a write cut short by a crash

    const { log, messages } = quiet();
    const b = await open(dir, { log });
    expect(await b.remaining('k1', P, 100)).toBe(95);
    expect(statSync(file).size).toBe(good);
    expect(messages.join('\n')).toMatch(/torn last record/);
    await b.charge('k1', P, 1, 100); // appends cleanly after the cut
    await b.close();
    const c = await open(dir);
    expect(await c.remaining('k1', P, 100)).toBe(94);
    await c.close();
  });

  it('drops a complete last record whose checksum does not match', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await a.charge('k1', P, 1, 100);
    await a.charge('k1', P, 10, 100);
    await a.close();
    const file = join(dir, journals(dir)[0]);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/,10\]\n$/, ',90]\n')); // bit rot in the last record
    const b = await open(dir);
    expect(await b.remaining('k1', P, 100)).toBe(99);
    await b.close();
  });

  it('keeps the bytes after a corrupt record in the middle for inspection', async () => {
    const dir = freshDir();
    const a = await open(dir);
    for (let i = 0; i < 3; i++) await a.charge('k1', P, 1, 100);
    await a.close();
    const file = join(dir, journals(dir)[0]);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1].replace('"k1"', '"k9"');
    writeFileSync(file, lines.join('\n'));
    const { log, messages } = quiet();
    const b = await open(dir, { log });
    expect(await b.remaining('k1', P, 100)).toBe(99);
    expect(messages.join('\n')).toMatch(/corrupt record after 1 good ones/);
    expect(readdirSync(dir).some((n) => n.includes('.dropped-'))).toBe(true);
    await b.close();
  });

  it('refuses to start when a checksummed record is not understood', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await a.charge('k1', P, 1, 100);
    await a.close();
    const { frameRecord } = await import('../../../runtime/state/journal-record.ts');
    appendFileSync(join(dir, journals(dir)[0]), frameRecord(['z', 'from the future']));
    await expect(open(dir)).rejects.toThrow(/not understood/);
    // The failed open released the lock.
    expect(readdirSync(dir)).not.toContain('lock');
  });
});

describe('journal store: a failing disk', () => {
  /** I/O whose writes fail with ENOSPC while `full` is set; `partial` writes half the data first, as a real short write can. */
  function flakyDisk(): { io: Partial<JournalIo>; state: { full: boolean; partial: boolean; syncs: number } } {
    const state = { full: false, partial: false, syncs: 0 };
    const io: Partial<JournalIo> = {
      append(fh: FileHandle, data: Uint8Array, position: number) {
        if (state.full) {
          if (state.partial) writeSync(fh.fd, data, 0, data.length >> 1, position);
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }
        writeSync(fh.fd, data, 0, data.length, position);
      },
      async sync(fh: FileHandle) {
        state.syncs++;
        await fh.datasync();
      },
    };
    return { io, state };
  }

  it('rejects with StateUnavailableError, rolls back in memory, and recovers when space returns', async () => {
    const dir = freshDir();
    const { io, state } = flakyDisk();
    const { log, messages } = quiet();
    const s = await open(dir, { io, log });
    expect(await s.charge('k1', P, 2, 10)).toEqual({ ok: true, remaining: 8 });

    state.full = true;
    state.partial = true;
    const results = await Promise.allSettled([s.charge('k1', P, 3, 10), s.charge('k1', P, 5, 10), s.acknowledge('acme', 1, ['f1'], '2026-11-01T00:00:00Z', null, null)]);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StateUnavailableError);
    }
    expect(await s.remaining('k1', P, 10)).toBe(8); // the reservations were rolled back
    expect((await s.notices('acme', 1, ['f1'])).get('f1')?.acknowledged_at).toBeNull();
    await expect(s.markSeen('acme', 1, ['f1'], '2026-11-01T00:00:00Z')).rejects.toThrow(StateUnavailableError);
    // A charge that does not fit is still answered, without a write.
    expect(await s.charge('k1', P, 9, 10)).toEqual({ ok: false, remaining: 8 });
    expect(messages.filter((m) => /cannot write journal/.test(m))).toHaveLength(1); // logged once per outage

    // A big group written half-way leaves complete records of it on disk, past the last good one.
    const many = await Promise.allSettled(Array.from({ length: 40 }, () => s.charge('k2', P, 1, 100)));
    expect(many.every((r) => r.status === 'rejected')).toBe(true);
    expect(await s.remaining('k2', P, 100)).toBe(100);

    state.full = false;
    // Same length as each k2 record: without the cut, the k2 records after it would line up and replay as valid.
    expect(await s.charge('k1', P, 8, 10)).toEqual({ ok: true, remaining: 0 });
    expect(messages.join('\n')).toMatch(/succeed again/);
    await s.close();

    // The half-written groups were cut before the next write: nothing rolled back comes back on replay.
    const again = await open(dir);
    expect(await again.remaining('k1', P, 10)).toBe(0);
    expect(await again.remaining('k1', P, 100)).toBe(90);
    expect(await again.remaining('k2', P, 100)).toBe(100);
    await again.acknowledge('acme', 1, ['f1'], '2026-11-02T00:00:00Z', 'ops', null);
    expect((await again.notices('acme', 1, ['f1'])).get('f1')?.acknowledged_at).toBe('2026-11-02T00:00:00Z');
    await again.close();
  });

  it('treats a failing fsync like a failing write (fsync: all)', async () => {
    const dir = freshDir();
    let failSync = false;
    const s = await open(dir, {
      fsync: 'all',
      io: {
        sync: async (fh) => {
          if (failSync) throw Object.assign(new Error('EIO'), { code: 'EIO' });
          await fh.datasync();
        },
      },
    });
    failSync = true;
    await expect(s.charge('k1', P, 1, 10)).rejects.toThrow(/EIO/);
    expect(await s.remaining('k1', P, 10)).toBe(10);
    failSync = false;
    await s.charge('k1', P, 1, 10);
    await s.close();
    const again = await open(dir);
    expect(await again.remaining('k1', P, 10)).toBe(9);
    await again.close();
  });

  it('refuses to open under a path that cannot be a directory', async () => {
    const file = join(root, 'plain-file');
    writeFileSync(file, 'x');
    await expect(open(join(file, 'state'))).rejects.toThrow(StateUnavailableError);
  });

  it('rejects changes after close, but still answers reads', async () => {
    const s = await open(freshDir());
    await s.close();
    await expect(s.charge('k1', P, 1, 10)).rejects.toThrow(StateUnavailableError);
    await expect(s.acknowledge('acme', 1, ['f1'], 'x', null, null)).rejects.toThrow(StateUnavailableError);
    expect(await s.remaining('k1', P, 10)).toBe(10);
  });
});

describe('journal store: compaction', () => {
  it('snapshots, starts a fresh journal, deletes the old one and keeps the state', async () => {
    const dir = freshDir();
    const s = await open(dir, { compactBytes: 2000 });
    for (let i = 0; i < 120; i++) await s.charge(`k${i % 7}`, P, 1, 1000);
    for (let i = 0; i < 20; i++) await s.acknowledge('acme', 1, [`f${i}`], `2026-11-01T00:00:${String(i).padStart(2, '0')}Z`, 'ops', `n${i}`);
    await s.close();
    expect(readdirSync(dir)).toContain('snapshot.json');
    expect(journals(dir)).toHaveLength(1);
    expect(journals(dir)[0]).not.toBe('journal-00000000.log');
    // The snapshot covers every journal before the one left, so that journal holds only the records written since
    // the last rotation. How many that is depends on how long the snapshot's fsync took while charges went on (CI
    // once saw 3,144 bytes against a 2,000-byte threshold), so the test asserts what compaction guarantees instead
    // of a byte bound: the snapshot names the journal left, and that journal holds fewer than the 140 records.
    const snapshot = JSON.parse(readFileSync(join(dir, 'snapshot.json'), 'utf8').slice(9)) as { gen: number };
    expect(journals(dir)[0]).toBe(`journal-${String(snapshot.gen).padStart(8, '0')}.log`);
    const left = readFileSync(join(dir, journals(dir)[0]), 'utf8').split('\n').filter(Boolean).length;
    expect(left).toBeLessThan(140);

    const again = await open(dir, { compactBytes: 2000 });
    let total = 0;
    for (let k = 0; k < 7; k++) total += 1000 - (await again.remaining(`k${k}`, P, 1000));
    expect(total).toBe(120);
    const d = await again.noticeDetails('acme', 1, ['f0', 'f19']);
    expect(d.get('f0')).toEqual({ seen_at: null, acknowledged_at: '2026-11-01T00:00:00Z', actor: 'ops', note: 'n0' });
    expect(d.get('f19')?.note).toBe('n19');
    await again.close();
  });

  it('replays every journal from the snapshot on when a compaction did not finish', async () => {
    const dir = freshDir();
    let failSnapshot = true;
    const s = await open(dir, {
      compactBytes: 600,
      io: {
        // Journal writes go at their offset; the snapshot is the only write at offset 0 of a file named *.tmp,
        // which cannot be told from here, so fail any write of a snapshot-shaped record instead.
        write: async (fh, data, position) => {
          if (failSnapshot && Buffer.from(data).includes('"gen"')) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
          await fh.write(data, 0, data.length, position);
        },
      },
    });
    for (let i = 0; i < 60; i++) await s.charge('k1', P, 1, 1000);
    expect(journals(dir).length).toBeGreaterThan(1); // switched journals, but no snapshot to drop the old one
    expect(readdirSync(dir)).not.toContain('snapshot.json');
    await s.close();
    failSnapshot = false;
    const again = await open(dir, { compactBytes: 600 });
    expect(await again.remaining('k1', P, 1000)).toBe(940);
    await again.close();
    expect(readdirSync(dir)).toContain('snapshot.json'); // compacted on open, the journals being over the limit
    expect(journals(dir)).toHaveLength(1);
  });

  it('refuses to start when the journal the snapshot points to is missing', async () => {
    const dir = freshDir();
    const s = await open(dir, { compactBytes: 300 });
    for (let i = 0; i < 30; i++) await s.charge('k1', P, 1, 1000);
    await s.close();
    const name = journals(dir)[0];
    const gen = Number(/\d{8}/.exec(name)![0]);
    rmSync(join(dir, name));
    writeFileSync(join(dir, `journal-${String(gen + 1).padStart(8, '0')}.log`), '');
    await expect(open(dir)).rejects.toThrow(/is missing/);
  });
});

describe('journal store: the directory lock', () => {
  it('refuses a second opener of the same directory until the first closes', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await expect(open(dir)).rejects.toThrow(StateDirLockedError);
    await expect(open(dir)).rejects.toThrow(/state directory is in use/);
    await a.close();
    const b = await open(dir);
    await b.close();
  });

  it('refuses when another live process holds the lock', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await a.close();
    writeFileSync(join(dir, 'lock'), `${process.ppid} 0123456789abcdef\n`);
    await expect(open(dir)).rejects.toThrow(new RegExp(`process ${process.ppid} holds it`));
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dir = freshDir();
    const a = await open(dir);
    await a.charge('k1', P, 1, 10);
    await a.close();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(join(dir, 'lock'), `${dead} 0123456789abcdef\n`);
    const { log, messages } = quiet();
    const b = await open(dir, { log });
    expect(messages.join('\n')).toMatch(/stale lock/);
    expect(await b.remaining('k1', P, 10)).toBe(9);
    await b.close();
  });

  it('takes over a lock whose holder was killed but not yet reaped (a zombie)', async () => {
    const dir = freshDir();
    await (await open(dir)).close();
    // A parent that starts a short-lived child, prints its pid and blocks its own event loop, so the child's exit is
    // not reaped: the child stays a zombie, which signal 0 still reaches.
    const parent = spawn(process.execPath, ['-e', `
      const c = require('node:child_process').spawn(process.execPath, ['-e', '0']);
      console.log(c.pid);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);
    `]);
    const pid = Number((await new Promise<Buffer>((r) => parent.stdout.once('data', r))).toString());
    try {
      const state = () => /\) (\w) /.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
      while (state() !== 'Z') await new Promise((r) => setTimeout(r, 20)); // exited, not reaped
      writeFileSync(join(dir, 'lock'), `${pid} 0123456789abcdef\n`);
      const { log, messages } = quiet();
      const b = await open(dir, { log });
      expect(messages.join('\n')).toMatch(/stale lock/);
      await b.close();
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

describe('journal store: group commit', () => {
  const counting = (): { io: Partial<JournalIo>; counts: { syncs: number; writes: number } } => {
    const counts = { syncs: 0, writes: 0 };
    return {
      counts,
      io: {
        append(fh, data, position) {
          counts.writes++;
          writeSync(fh.fd, data, 0, data.length, position);
        },
        async sync(fh) {
          counts.syncs++;
          await fh.datasync();
        },
      },
    };
  };

  it('shares one write and fsync among concurrent callers', async () => {
    const { io, counts } = counting();
    const s = await open(freshDir(), { io });
    const results = await Promise.all(Array.from({ length: 2000 }, () => s.charge('k1', P, 1, 5000)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(counts.syncs).toBeLessThan(10);
    await s.close();
  });

  it("writes a group's charges as one record per key and period, in order with the notice records, and replays the same counts", async () => {
    const dir = freshDir();
    const s = await open(dir);
    await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => s.charge(i % 3 === 0 ? 'k2' : 'k1', P, 2, 5000)),
      s.charge('k1', '2026-12', 5, 5000),
      s.markSeen('acme', 1, ['f1'], '2026-11-01T00:00:00Z'),
      s.acknowledge('acme', 1, ['f1'], '2026-11-02T00:00:00Z', null, null),
    ]);
    await s.close();
    const lines = readFileSync(join(dir, journals(dir)[0]), 'utf8').trim().split('\n').map((l) => JSON.parse(l.slice(9)));
    expect(lines.filter((r) => r[0] === 'c')).toEqual(expect.arrayContaining([['c', 'k1', P, 40], ['c', 'k2', P, 20], ['c', 'k1', '2026-12', 5]]));
    expect(lines.filter((r) => r[0] === 'c')).toHaveLength(3);
    expect(lines.filter((r) => r[0] !== 'c').map((r) => r[0])).toEqual(['s', 'a']);
    const again = await open(dir);
    expect(await again.remaining('k1', P, 5000)).toBe(4960);
    expect(await again.remaining('k2', P, 5000)).toBe(4980);
    expect(await again.remaining('k1', '2026-12', 5000)).toBe(4995);
    expect((await again.notices('acme', 1, ['f1'])).get('f1')?.acknowledged_at).toBe('2026-11-02T00:00:00Z');
    await again.close();
  });

  it('writes one record per fsync when group commit is off', async () => {
    const { io, counts } = counting();
    const s = await open(freshDir(), { io, groupCommit: false, fsync: 'all' });
    await Promise.all(Array.from({ length: 50 }, () => s.charge('k1', P, 1, 5000)));
    expect(counts.syncs).toBe(50);
    await s.close();
  });

  it('never holds a charge behind the background fsync of earlier ones, and retries a failed one', async () => {
    let held = null as (() => void) | null;
    let hold = true;
    let failNext = true;
    let syncs = 0;
    const { log, messages } = quiet();
    const dir = freshDir();
    const s = await open(dir, {
      syncIntervalMs: 5,
      log,
      io: {
        async sync(fh) {
          syncs++;
          if (failNext) {
            failNext = false;
            throw Object.assign(new Error('EIO'), { code: 'EIO' });
          }
          if (hold) await new Promise<void>((r) => (held = r));
          await fh.datasync();
        },
      },
    });
    await s.charge('k1', P, 1, 100);
    while (held === null) await new Promise((r) => setTimeout(r, 5)); // the first fsync failed; the retry is held
    expect(messages.join('\n')).toMatch(/fsync failed \(EIO\); retrying/);
    // With that fsync still running, more charges are written and answered.
    expect(await Promise.all(Array.from({ length: 10 }, () => s.charge('k1', P, 1, 100)))).toHaveLength(10);
    expect(syncs).toBe(2);
    hold = false;
    held!();
    await s.close(); // fsyncs the ten charges
    const again = await open(dir);
    expect(await again.remaining('k1', P, 100)).toBe(89);
    await again.close();
  });

  it('by default answers charges once written and fsyncs them soon after; acknowledgements wait for fsync', async () => {
    const { io, counts } = counting();
    const s = await open(freshDir(), { io, syncIntervalMs: 20 });
    await Promise.all(Array.from({ length: 20 }, () => s.charge('k1', P, 1, 5000)));
    expect(counts.syncs).toBe(0); // answered before any fsync
    await new Promise((r) => setTimeout(r, 80));
    expect(counts.syncs).toBe(1); // then one fsync covers them all
    await s.acknowledge('opta', 1, ['f1'], '2026-11-01T00:00:00Z', null, null);
    expect(counts.syncs).toBe(2); // the acknowledgement waited for its own fsync
    await s.close();
  });
});
