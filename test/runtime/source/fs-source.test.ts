// The fs ShardSource driver against the shared contract, plus what only a local disk can show.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFsSource, createReadPolicy } from '../../../runtime/source/fs-source.ts';
import { shardSourceContract } from './shard-source-contract.ts';
import { isPromise } from '../../../runtime/interfaces.ts';

// Every read mode passes the same contract: where a read runs must not change what it returns.
for (const reads of ['adaptive', 'sync', 'pool'] as const) {
  shardSourceContract(`fs (${reads} reads)`, async (root, opts) => {
    const source = createFsSource({ root, maxOpenFiles: opts.small ? 4 : undefined, reads });
    return {
      source,
      fetches: () => source.stats().opens,
      retained: () => ({ used: source.stats().openFiles, limit: source.stats().maxOpenFiles }),
    };
  });
}

describe('adaptive read policy', () => {
  it('reads on the event loop while reads are fast, on the pool while they are slow, and probes its way back', () => {
    const policy = createReadPolicy('adaptive');
    const decide = (n: number, ms: number) => {
      let onLoop = 0;
      for (let i = 0; i < n; i++) {
        if (policy.sync()) {
          onLoop++;
          policy.took(ms);
        }
      }
      return onLoop;
    };
    expect(decide(1000, 0.002)).toBe(1000); // page-cache copies: all on the loop
    // Rare outliers (a read descheduled for 5 ms on a busy machine) do not move reads off the loop.
    for (let i = 0; i < 50; i++) expect(decide(1, 5) + decide(19, 0.002)).toBe(20);
    const slow = decide(6400, 0.15); // disk reads: a few on the loop before the share crosses, then 1 in 64
    expect(slow).toBeGreaterThan(100);
    expect(slow).toBeLessThan(130);
    // Fast probes bring the average back down, and reads return to the loop.
    let calls = 0;
    for (let streak = 0; streak < 10 && calls < 100_000; calls++) {
      if (policy.sync()) {
        policy.took(0.002);
        streak++;
      } else streak = 0;
    }
    expect(calls).toBeLessThan(64 * 40); // ~27 fast probes, one in 64 calls
    expect(decide(100, 0.002)).toBe(100);
    expect(createReadPolicy('sync').sync()).toBe(true);
    expect(createReadPolicy('pool').sync()).toBe(false);
  });
});

describe('fs source', () => {
  it('answers a range at once once a file is open and reads run on the loop; with a promise while they go to the pool', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fs-source-'));
    // Under a stamp's public/: files at the root are pointers, always read whole and never kept open.
    const [A, B] = ['rel/public/a.bin', 'rel/public/b.bin'];
    const text = (b: Uint8Array) => Buffer.from(b).toString();
    try {
      mkdirSync(join(root, 'rel/public'), { recursive: true });
      writeFileSync(join(root, 'rel/public/a.bin'), Buffer.from('0123456789'));
      writeFileSync(join(root, 'rel/public/b.bin'), Buffer.from('abcdefghij'));
      for (const reads of ['sync', 'adaptive', 'pool'] as const) {
        const source = createFsSource({ root, reads, maxOpenFiles: 1 });
        const first = source.readRange(A, 2, 3);
        expect(isPromise(first), reads).toBe(true); // not open yet
        expect(text(await first)).toBe('234');
        const again = source.readRange(A, 2, 3);
        expect(isPromise(again), reads).toBe(reads === 'pool');
        expect(text(await again)).toBe('234');
        // Opening b evicts a (one handle at most): b is answered at once, a needs a wait again.
        await source.readRange(B, 0, 1);
        const b = source.readRange(B, 7, 3);
        expect(isPromise(b), reads).toBe(reads === 'pool');
        expect(text(await b)).toBe('hij');
        const a = source.readRange(A, 2, 3);
        expect(isPromise(a), reads).toBe(true);
        expect(text(await a)).toBe('234');
        // A failure found at once still rejects (ShardSource.readRange never throws).
        const past = source.readRange(A, 8, 3);
        expect(isPromise(past)).toBe(true);
        await expect(past).rejects.toThrow(/past the end/);
        await source.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('closes evicted handles only after in-flight reads finish', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fs-source-'));
    try {
      for (let i = 0; i < 6; i++) writeFileSync(join(root, `f${i}.bin`), Buffer.alloc(200_000, i));
      const source = createFsSource({ root: root, maxOpenFiles: 1 });
      // Interleaved reads over more files than handles: every read must still see its own file.
      const reads = [];
      for (let r = 0; r < 5; r++) for (let i = 0; i < 6; i++) reads.push(Promise.resolve(source.readRange(`f${i}.bin`, 1000 * r, 150_000)).then((b) => [i, b] as const));
      for (const [i, b] of await Promise.all(reads)) expect(b.every((x) => x === i)).toBe(true);
      expect(source.stats().openFiles).toBeLessThanOrEqual(1);
      await source.close();
      expect(source.stats().openFiles).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('labels itself with its root', () => {
    expect(createFsSource({ root: '/srv/dist' }).label).toBe('fs:/srv/dist');
  });

  it('treats a directory as missing (symlinks inside the root are followed)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fs-source-'));
    try {
      const source = createFsSource({ root });
      writeFileSync(join(root, 'x.bin'), 'x');
      symlinkSync(root, join(root, 'loop'));
      expect(await source.readFile('loop')).toBeNull();
      await expect(source.readRange('loop', 0, 1)).rejects.toThrow(/not found/);
      expect(await source.readFile('loop/x.bin')).toEqual(new Uint8Array(Buffer.from('x')));
      await source.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
