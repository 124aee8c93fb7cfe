// The contract every ShardSource driver passes (fs, http): whole files, ranges, missing files, refused paths,
// shared concurrent reads, bounded caches, a rewritten pointer file, close.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPromise, type ShardSource } from '../../../runtime/interfaces.ts';

interface SourceUnderTest {
  source: ShardSource;
  /** Backend work so far: HTTP requests for http, file opens for fs. */
  fetches(): number;
  /** What the source currently retains and its bound: cached bytes for http, open handles for fs. */
  retained(): { used: number; limit: number };
  /** For a backend that holds a copy of the folder (an R2 bucket): the file at `path` was just rewritten there. */
  changed?(path: string): Promise<void>;
}

interface MakeSourceOptions {
  /** Ask for a small retention bound (a few files' worth), to exercise eviction. */
  small?: boolean;
}

/** Byte equality without vitest's element-by-element deep compare (slow on 100 KB); its diff only on failure. */
export function expectBytes(actual: Uint8Array | null, expected: Uint8Array, what = ''): void {
  if (actual && Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected)) return;
  expect(actual === null ? null : Array.from(actual.subarray(0, 64)), `${what} (first 64 bytes shown)`).toEqual(Array.from(expected.subarray(0, 64)));
  expect.fail(`${what}: bytes differ (${actual?.byteLength} vs ${expected.byteLength} bytes)`);
}

export type MakeSource = (root: string, opts: MakeSourceOptions) => Promise<SourceUnderTest>;

/** Deterministic pseudo-random bytes. */
export function bytesOf(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const DATA = 'rel/public/data.bin';
const EMPTY = 'rel/public/empty.bin';
// ASCII only: serve-handler cannot put other characters in its Content-Disposition header.
const ODD = 'rel/public/odd name %+#?;=.bin';
const MANY = (i: number) => `rel/public/many/f${i}.bin`;
const MANY_COUNT = 12;
const MANY_BYTES = 1000;

const REFUSED_PATHS = [
  '',
  '/etc/passwd',
  '../outside.txt',
  'rel/../../outside.txt',
  'rel/public/../../../outside.txt',
  './index.json',
  'rel//public/data.bin',
  'rel/public/',
  'rel\\..\\..\\outside.txt',
  '..\\outside.txt',
  'rel/public/data.bin\u0000.txt',
  'rel/\npublic',
  'a/'.repeat(600) + 'x',
];

export function shardSourceContract(name: string, makeSource: MakeSource): void {
  describe(`ShardSource contract: ${name}`, () => {
    let base: string;
    let root: string;
    const data = bytesOf(100_000, 7);
    const opened: SourceUnderTest[] = [];
    const make = async (opts: MakeSourceOptions = {}) => {
      const s = await makeSource(root, opts);
      opened.push(s);
      return s;
    };

    beforeAll(() => {
      base = mkdtempSync(join(tmpdir(), 'shard-source-'));
      root = join(base, 'dist');
      mkdirSync(join(root, 'rel/public/many'), { recursive: true });
      mkdirSync(join(root, 'rel/public/sub'), { recursive: true });
      writeFileSync(join(base, 'outside.txt'), 'secret outside the root');
      writeFileSync(join(root, 'index.json'), '{"v":1}');
      writeFileSync(join(root, DATA), data);
      writeFileSync(join(root, EMPTY), new Uint8Array(0));
      writeFileSync(join(root, ODD), 'odd');
      for (let i = 0; i < MANY_COUNT; i++) writeFileSync(join(root, MANY(i)), bytesOf(MANY_BYTES, 100 + i));
    });

    afterAll(async () => {
      for (const s of opened) await s.source.close();
      rmSync(base, { recursive: true, force: true });
    });

    it('reads whole files', async () => {
      const { source } = await make();
      expectBytes(await source.readFile(DATA), data);
      expectBytes(await source.readFile(EMPTY), new Uint8Array(0));
      expect(Buffer.from((await source.readFile(ODD))!).toString()).toBe('odd');
      expect(Buffer.from((await source.readFile('index.json'))!).toString()).toBe('{"v":1}');
      expect(typeof source.label).toBe('string');
    });

    it('answers null for a missing file, a missing directory and a path through a file', async () => {
      const { source } = await make();
      expect(await source.readFile('rel/public/nope.bin')).toBeNull();
      expect(await source.readFile('nope/public/data.bin')).toBeNull();
      expect(await source.readFile(`${DATA}/inside`)).toBeNull();
    });

    it('reads ranges at the start, middle and end', async () => {
      const { source } = await make();
      expectBytes(await source.readRange(DATA, 0, 10), data.subarray(0, 10));
      expectBytes(await source.readRange(DATA, 4321, 5000), data.subarray(4321, 9321));
      expectBytes(await source.readRange(DATA, data.length - 17, 17), data.subarray(data.length - 17));
      expectBytes(await source.readRange(DATA, data.length - 1, 1), data.subarray(data.length - 1));
      expectBytes(await source.readRange(DATA, 0, data.length), data);
      expectBytes(await source.readRange(DATA, 100, 0), new Uint8Array(0));
      expectBytes(await source.readRange(ODD, 1, 2), new Uint8Array(Buffer.from('dd')));
    });

    it('reads many concurrent ranges correctly', async () => {
      const { source } = await make();
      const ranges = Array.from({ length: 60 }, (_, i) => [(i * 7919) % 90_000, 1 + ((i * 104_729) % 9000)] as const);
      const got = await Promise.all(ranges.map(([o, n]) => source.readRange(DATA, o, n)));
      got.forEach((bytes, i) => expectBytes(bytes, data.subarray(ranges[i][0], ranges[i][0] + ranges[i][1]), `range ${i}`));
    });

    it('refuses ranges past the end, on missing files and malformed ranges', async () => {
      const { source } = await make();
      await expect(source.readRange(DATA, data.length - 5, 10)).rejects.toThrow(/past the end/);
      await expect(source.readRange(DATA, data.length + 10, 1)).rejects.toThrow(/past the end/);
      await expect(source.readRange(EMPTY, 0, 1)).rejects.toThrow(/past the end/);
      await expect(source.readRange('rel/public/nope.bin', 0, 1)).rejects.toThrow(/not found/);
      await expect(source.readRange('rel/public/nope.bin', 0, 0)).rejects.toThrow(/not found/);
      await expect(source.readRange(DATA, -1, 1)).rejects.toThrow(/invalid range/);
      await expect(source.readRange(DATA, 1.5, 1)).rejects.toThrow(/invalid range/);
      await expect(source.readRange(DATA, 0, -1)).rejects.toThrow(/invalid range/);
    });

    it('refuses path tricks before touching the backend', async () => {
      const s = await make();
      const before = s.fetches();
      for (const p of REFUSED_PATHS) {
        await expect(s.source.readFile(p), JSON.stringify(p)).rejects.toThrow(/refused path/);
        await expect(s.source.readRange(p, 0, 1), JSON.stringify(p)).rejects.toThrow(/refused path/);
      }
      expect(s.fetches()).toBe(before);
    });

    it('shares concurrent identical reads', async () => {
      const s = await make();
      let before = s.fetches();
      const ranges = await Promise.all(Array.from({ length: 8 }, () => s.source.readRange(MANY(0), 10, 100)));
      for (const r of ranges) expectBytes(r, bytesOf(MANY_BYTES, 100).subarray(10, 110));
      expect(s.fetches() - before).toBe(1);

      before = s.fetches();
      const files = await Promise.all(Array.from({ length: 8 }, () => s.source.readFile(MANY(1))));
      for (const f of files) expectBytes(f, bytesOf(MANY_BYTES, 101));
      expect(s.fetches() - before).toBe(1);

      before = s.fetches();
      expect(await Promise.all(Array.from({ length: 4 }, () => s.source.readFile('rel/public/gone.bin')))).toEqual([null, null, null, null]);
      expect(s.fetches() - before).toBe(1);
    });

    it('does not go back to the backend for a range it just read', async () => {
      const s = await make();
      await s.source.readRange(MANY(2), 0, 50);
      const before = s.fetches();
      expectBytes(await s.source.readRange(MANY(2), 0, 50), bytesOf(MANY_BYTES, 102).subarray(0, 50));
      expect(s.fetches()).toBe(before);
    });

    it('keeps what it retains within its bound and still reads correctly after eviction', async () => {
      const s = await make({ small: true });
      const perRound: number[] = [];
      for (let round = 0; round < 2; round++) {
        const before = s.fetches();
        for (let i = 0; i < MANY_COUNT; i++) {
          const want = bytesOf(MANY_BYTES, 100 + i);
          expectBytes(await s.source.readRange(MANY(i), 100, 400), want.subarray(100, 500));
          expectBytes(await s.source.readRange(MANY(i), 0, MANY_BYTES), want);
          const { used, limit } = s.retained();
          expect(used).toBeLessThanOrEqual(limit);
        }
        perRound.push(s.fetches() - before);
      }
      // The bound is smaller than the working set, so the second round had to go back to the backend.
      expect(perRound[1]).toBeGreaterThan(0);
    });

    it('sees a root pointer file replaced by rename', async () => {
      const s = await make();
      expect(Buffer.from((await s.source.readFile('index.json'))!).toString()).toBe('{"v":1}');
      expect(Buffer.from(await s.source.readRange('index.json', 5, 1)).toString()).toBe('1');
      writeFileSync(join(root, 'index.json.tmp'), '{"v":2}');
      renameSync(join(root, 'index.json.tmp'), join(root, 'index.json'));
      await s.changed?.('index.json');
      expect(Buffer.from((await s.source.readFile('index.json'))!).toString()).toBe('{"v":2}');
      expect(Buffer.from(await s.source.readRange('index.json', 5, 1)).toString()).toBe('2');
    });

    it('answers readRange at once only with the bytes a wait would give, and fails by rejecting either way', async () => {
      const s = await make({ small: true });
      const want = (i: number) => bytesOf(MANY_BYTES, 100 + i);
      const atOnce = (what: string, got: ReturnType<ShardSource['readRange']>, expected: Uint8Array): void => {
        if (!isPromise(got)) expectBytes(got, expected, what);
      };
      // Refused paths are refused whether or not anything is open: always a rejection, never a throw.
      for (const p of REFUSED_PATHS) {
        const got = s.source.readRange(p, 0, 1);
        expect(isPromise(got), JSON.stringify(p)).toBe(true);
        await expect(got).rejects.toThrow(/refused path/);
      }
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < MANY_COUNT; i++) {
          expectBytes(await s.source.readRange(MANY(i), 0, 1), want(i).subarray(0, 1), `file ${i}`);
          for (const [o, n] of [[0, MANY_BYTES], [250, 300], [MANY_BYTES - 1, 1], [7, 0]]) {
            const got = s.source.readRange(MANY(i), o, n, round === 1);
            atOnce(`file ${i} ${o}+${n}`, got, want(i).subarray(o, o + n));
            expectBytes(await got, want(i).subarray(o, o + n), `file ${i} ${o}+${n}`);
          }
          for (const [o, n, why] of [[MANY_BYTES - 5, 10, /past the end/], [-1, 1, /invalid range/]] as const) {
            const got = s.source.readRange(MANY(i), o, n);
            expect(isPromise(got), `file ${i} ${o}+${n}`).toBe(true);
            await expect(got).rejects.toThrow(why);
          }
          // Files evicted past the small bound are never read through a handle that was closed.
          for (let j = 0; j < i; j++) {
            const old = s.source.readRange(MANY(j), 10, 20);
            atOnce(`earlier file ${j}`, old, want(j).subarray(10, 30));
            expectBytes(await old, want(j).subarray(10, 30), `earlier file ${j}`);
          }
          expect(s.retained().used).toBeLessThanOrEqual(s.retained().limit);
        }
      }
      await s.source.close();
      const closed = s.source.readRange(MANY(0), 0, 1);
      expect(isPromise(closed)).toBe(true);
      await expect(closed).rejects.toThrow(/closed/);
    });

    it('refuses reads after close', async () => {
      const s = await make();
      await s.source.readRange(DATA, 0, 1);
      await s.source.close();
      await expect(s.source.readFile(DATA)).rejects.toThrow(/closed/);
      await expect(s.source.readRange(DATA, 0, 1)).rejects.toThrow(/closed/);
      await s.source.close();
    });
  });
}
