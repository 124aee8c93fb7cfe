// The compiler's two byte-buffered writers, over real files: GroupSpill (text or binary records grouped onto disk,
// read back in order) and ShardPackWriter (documents encoded straight into the pack's buffer, located by offset and length).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupSpill } from '../../compiler/write/group-spill.ts';
import { ShardPackWriter } from '../../compiler/write/shard-pack-writer.ts';
import { checksum32 } from '../../common/checksum.ts';

// Lines as the compile writes them (no raw newline), from ASCII to astral, some longer than a small buffer.
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abc,"xyz019 -'.split('')), maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ' ')),
  fc.integer({ min: 1000, max: 9000 }).map((n) => 'é'.repeat(n)),
);

describe('GroupSpill', () => {
  it('reads back each group its records in the order they were added, tagged or not, as text or bytes, whatever their size', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.constantFrom('', 'B', 'OA', '3'), text, fc.boolean()), { maxLength: 120 }), (records) => {
        const dir = mkdtempSync(join(tmpdir(), 'spill-'));
        try {
          // A 4 KiB buffer: records often flush it, and some are larger than it.
          const spill = new GroupSpill({ dir, groups: 8, flushBytes: 4096 });
          const want: string[][] = Array.from({ length: 8 }, () => []);
          for (const [g, tag, line, asBytes] of records) {
            // As bytes: the line's UTF-8 inside a larger buffer, as a CSV record sits in the chunk it was read in.
            const bytes = Buffer.from(`x,${line},y`);
            if (tag && asBytes) spill.addTaggedBytes(g, tag, bytes, 2, bytes.length - 2);
            else if (tag) spill.addTaggedLine(g, tag, line);
            else spill.addLine(g, line);
            want[g].push(tag ? `${tag},${line}` : line);
          }
          spill.seal();
          // Read as another thread would, from the handle alone.
          const again = GroupSpill.open(spill.handle());
          for (let g = 0; g < 8; g++) {
            expect(again.count(g)).toBe(want[g].length);
            expect(again.readText(g)).toBe(want[g].map((l) => l + '\n').join(''));
            expect(again.readLines(g)).toEqual(want[g]);
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads back a group of JSON lines as the JSON array of them, in order, whatever their characters and size', () => {
    fc.assert(
      // JSON.stringify writes no raw newline, as the match records are written; strings from ASCII to astral.
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.jsonValue({ maxDepth: 3 })), { maxLength: 80 }), (records) => {
        const dir = mkdtempSync(join(tmpdir(), 'spill-json-'));
        try {
          const spill = new GroupSpill({ dir, groups: 4, flushBytes: 4096 });
          const want: unknown[][] = Array.from({ length: 4 }, () => []);
          for (const [g, value] of records) {
            spill.addLine(g, JSON.stringify(value));
            want[g].push(JSON.parse(JSON.stringify(value)));
          }
          spill.seal();
          const again = GroupSpill.open(spill.handle());
          for (let g = 0; g < 4; g++) expect(JSON.parse(again.readJsonArray(g))).toEqual(want[g]);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads back each group its binary records, byte for byte, in the order they were added, whatever their size', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.uint8Array({ minLength: 1, maxLength: 9000 })), { maxLength: 80 }), (records) => {
        const dir = mkdtempSync(join(tmpdir(), 'spill-'));
        try {
          const spill = new GroupSpill({ dir, groups: 8, flushBytes: 4096 });
          const want: number[][] = Array.from({ length: 8 }, () => []);
          for (const [g, bytes] of records) {
            // Room asked for is an upper bound, as a caller writing UTF-8 asks: more than it then writes.
            const buf = spill.reserve(g, bytes.length + 7);
            buf.set(bytes, spill.cursor);
            spill.commit(spill.cursor + bytes.length);
            want[g].push(...bytes);
          }
          spill.reserve(0, 4);
          expect(() => spill.commit(spill.cursor), 'an empty record').toThrow('empty binary record in spill group 0');
          spill.seal();
          const again = GroupSpill.open(spill.handle());
          for (let g = 0; g < 8; g++) {
            expect(again.count(g)).toBe(records.filter(([h]) => h === g).length);
            expect([...again.readBytes(g)]).toEqual(want[g]);
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('ShardPackWriter', () => {
  it('locates every document by offset, byte length and checksum, across buffer and pack boundaries', async () => {
    const root = mkdtempSync(join(tmpdir(), 'packs-'));
    try {
      // Packs roll at 64 KiB; documents run from empty to larger than the writer's 4 MiB buffer.
      const docs = ['', '{}', '{"name":"Łódź"}', '{"x":"😀"}', 'a'.repeat(70_000), '{"big":"' + 'ü'.repeat(1_500_000) + '"}', ...Array.from({ length: 300 }, (_, i) => `{"i":${i},"s":"${'é'.repeat(i)}"}`)];
      const w = new ShardPackWriter({ root, packBytes: 64 * 1024 });
      const locs = docs.map((d) => w.add(d));
      const packs = await w.finish();
      expect(packs.length).toBeGreaterThan(2);
      docs.forEach((d, i) => {
        const bytes = readFileSync(join(root, packs[locs[i].pack])).subarray(locs[i].offset, locs[i].offset + locs[i].length + 1);
        expect(bytes.subarray(0, -1).toString('utf8')).toBe(d);
        expect(bytes[bytes.length - 1]).toBe(0x0a);
        expect(locs[i].length).toBe(Buffer.byteLength(d));
        expect(locs[i].checksum).toBe(checksum32(bytes, 0, bytes.length - 1));
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('writes a document given in parts as the joined document, with each part\'s byte end', async () => {
    const root = mkdtempSync(join(tmpdir(), 'packs-'));
    try {
      // Parts of every width in UTF-8, empty ones, and one document too large for the 4 MiB buffer.
      const docs: string[][] = [
        ['{"a":1', '', ',"n":"Łódź"', ',"e":"😀"', '}'],
        ['', ''],
        ['{"big":"', 'ü'.repeat(1_500_000), '"}'],
        ...Array.from({ length: 200 }, (_, i) => [`{"i":${i}`, `,"s":"${'é'.repeat(i)}"`, '', '}']),
      ];
      const w = new ShardPackWriter({ root, packBytes: 64 * 1024 });
      const ends: number[][] = [];
      const locs = docs.map((parts) => {
        const e: number[] = [];
        const loc = w.addParts(parts, e);
        ends.push(e);
        return loc;
      });
      const packs = await w.finish();
      docs.forEach((parts, i) => {
        const bytes = readFileSync(join(root, packs[locs[i].pack])).subarray(locs[i].offset, locs[i].offset + locs[i].length);
        expect(bytes.toString('utf8')).toBe(parts.join(''));
        expect(locs[i].checksum).toBe(checksum32(bytes, 0, bytes.length));
        let end = 0;
        expect(ends[i]).toEqual(parts.map((p) => (end += Buffer.byteLength(p))));
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
