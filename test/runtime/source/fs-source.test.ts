// The fs ShardSource driver against the shared contract, plus what only a local disk can show.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFsSource } from '../../../runtime/source/fs-source.ts';
import { shardSourceContract } from './shard-source-contract.ts';

shardSourceContract('fs', async (root, opts) => {
  const source = createFsSource({ root, maxOpenFiles: opts.small ? 4 : undefined });
  return {
    source,
    fetches: () => source.stats().opens,
    retained: () => ({ used: source.stats().openFiles, limit: source.stats().maxOpenFiles }),
  };
});

describe('fs source', () => {
  it('closes evicted handles only after in-flight reads finish', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fs-source-'));
    try {
      for (let i = 0; i < 6; i++) writeFileSync(join(root, `f${i}.bin`), Buffer.alloc(200_000, i));
      const source = createFsSource({ root: root, maxOpenFiles: 1 });
      // Interleaved reads over more files than handles: every read must still see its own file.
      const reads = [];
      for (let r = 0; r < 5; r++) for (let i = 0; i < 6; i++) reads.push(source.readRange(`f${i}.bin`, 1000 * r, 150_000).then((b) => [i, b] as const));
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
