// IndexEntryLog carries a stage-2 range's entity index entries to the main thread as binary records, over a real
// file: every kind of entry reads back as written, in order, with the pack numbers moved by the range's base.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexEntryLog, readIndexEntryLog } from '../../compiler/records/index-entry-log.ts';
import { INHERITED_PACK } from '../../compiler/write/diff-base.ts';
import { ENTRY_LIVE, ENTRY_REDIRECT, ENTRY_TOMBSTONE, type EntityIndexValue } from '../../common/dist-layout.ts';

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const id = fc.oneof(fc.stringMatching(/^r[a-z][0-9a-f]{14}$/), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }));
const entry: fc.Arbitrary<[string, EntityIndexValue]> = fc.oneof(
  fc.tuple(id, fc.array(u32, { minLength: 12, maxLength: 12 }).map((n) => [ENTRY_LIVE, ...n] as EntityIndexValue)),
  fc.tuple(id, fc.array(u32, { minLength: 4, maxLength: 4 }).map((n) => [ENTRY_TOMBSTONE, ...n] as EntityIndexValue)),
  fc.tuple(id, id.map((to) => [ENTRY_REDIRECT, to] as EntityIndexValue)),
);

function withDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'index-log-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('IndexEntryLog', () => {
  it('reads back every entry in order, live and tombstone pack numbers moved by the base (but inherited ones), over many flushes', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 800 }), (entries, packBase, repeat) =>
        withDir((dir) => {
          const log = new IndexEntryLog(join(dir, 'entries.bin'));
          // Repeated so that the 1 MiB buffer is flushed part-way for the longer runs.
          const all = Array.from({ length: Math.ceil(repeat / 100) }, () => entries).flat();
          for (const [k, v] of all) log.add(k, v);
          log.close();
          const got: [string, EntityIndexValue][] = [];
          readIndexEntryLog(log.path, packBase, (k, v) => got.push([k, v]));
          // A pack number marked INHERITED_PACK is the predecessor's, numbered release-wide already: only the mark goes.
          const pack = (n: number) => (n >= INHERITED_PACK ? n - INHERITED_PACK : n + packBase);
          const moved = (v: EntityIndexValue): EntityIndexValue => (v[0] === ENTRY_REDIRECT ? v : ([v[0], pack(v[1] as number), ...v.slice(2)] as EntityIndexValue));
          expect(got).toEqual(all.map(([k, v]) => [k, moved(v)]));
        }),
      ),
      { numRuns: 60 },
    );
  });

  it('holds a full-size range of entries across flushes', () => {
    withDir((dir) => {
      const log = new IndexEntryLog(join(dir, 'entries.bin'));
      const n = 40_000; // ~70 bytes each: about three flushes of the 1 MiB buffer
      for (let i = 0; i < n; i++) log.add(`rt${i.toString(16).padStart(14, '0')}`, [ENTRY_LIVE, 0, i * 900, 900, 80, 200, 400, 700, 750, 899, i % 7, i % 9, (i * 2654435761) >>> 0]);
      log.close();
      let count = 0;
      readIndexEntryLog(log.path, 3, (k, v) => {
        expect(k).toBe(`rt${count.toString(16).padStart(14, '0')}`);
        expect(v[1]).toBe(3);
        expect(v[2]).toBe(count * 900);
        expect(v[12]).toBe((count * 2654435761) >>> 0);
        count++;
      });
      expect(count).toBe(n);
    });
  });

  it('refuses what it cannot hold exactly: a number that is not a u32, a wrong count, an over-long ID, a second file', () => {
    withDir((dir) => {
      const log = new IndexEntryLog(join(dir, 'entries.bin'));
      expect(() => log.add('ra0000000000000a', [ENTRY_TOMBSTONE, 0, -1, 10, 5])).toThrow(/not a u32/);
      expect(() => log.add('ra0000000000000a', [ENTRY_TOMBSTONE, 0, 2 ** 32, 10, 5])).toThrow(/not a u32/);
      expect(() => log.add('ra0000000000000a', [ENTRY_TOMBSTONE, 0, 1.5, 10, 5])).toThrow(/not a u32/);
      expect(() => log.add('ra0000000000000a', [ENTRY_LIVE, 0, 1, 2, 3] as unknown as EntityIndexValue)).toThrow(/4 numbers/);
      expect(() => log.add('r'.repeat(256), [ENTRY_REDIRECT, 'ra0000000000000a'])).toThrow(/more than 255 bytes/);
      expect(() => new IndexEntryLog(log.path)).toThrow(/EEXIST/);
      // Nothing of the refused entries was written: the one accepted after them reads back alone.
      log.add('rc0000000000000c', [ENTRY_TOMBSTONE, 1, 2, 3, 4]);
      log.close();
      const got: unknown[] = [];
      readIndexEntryLog(log.path, 0, (k, v) => got.push([k, v]));
      expect(got).toEqual([['rc0000000000000c', [ENTRY_TOMBSTONE, 1, 2, 3, 4]]]);
      expect(() => log.add('ra0000000000000a', [ENTRY_REDIRECT, 'rb0000000000000b'])).toThrow(/after close/);
    });
  });
});
