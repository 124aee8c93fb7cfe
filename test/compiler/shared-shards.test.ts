// A successor inherits its predecessor's shard packs (compiler/write/shared-shards.ts): unchanged shards stay where
// they are, so the packs a mirror or an edge already holds are the same files, and only the changed shards are new.
// The answers are those of a compile that writes every shard anew, the same bytes compile whatever order the stamps
// are compiled in, and a chain whose packs have too many dead bytes is compacted. Compiled without zstd patches, as
// the shared fixture is (this tier starts no child process; test/compiler/release-patches.test.ts has them).
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { MIN_REFERENCED_SHARE } from '../../compiler/write/shared-shards.ts';
import { INCLUDES } from '../../common/ids.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { compiledSamples, copyCompiled } from '../fixtures/compiled-fixtures.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';

const FIRST = '20261001T120000Z';
const NEXT = '20261008T120000Z';
let root: string;
let releases: string;
/** The samples compiled as `register compile` does: the successor inherits the first's packs. */
let shared: string;
/** The same releases, every shard written anew. */
let full: string;
const opened: InProcessRuntime[] = [];

interface Manifest {
  files: Record<string, { bytes: number; sha256: string }>;
}
const manifest = (dist: string, stamp: string): Manifest => JSON.parse(readFileSync(join(dist, stamp, 'public', 'manifest.json'), 'utf8'));
const releaseDoc = (dist: string, stamp: string): { shard_packs: string[] } => JSON.parse(readFileSync(join(dist, stamp, 'public', 'release.json'), 'utf8'));
const digestOf = (dist: string, stamp: string): string => JSON.parse(readFileSync(join(dist, stamp, 'manifest.json'), 'utf8')).digest;
const diffBaseMeta = (dist: string, stamp: string) => join(dist, stamp, 'private', 'diff-base', 'meta.json');

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-shared-shards-'));
  const c = copyCompiled(await compiledSamples(), root);
  releases = c.releases;
  shared = c.dist;
  full = join(root, 'full');
  await compileAll({ releases, dist: full, progress: false, shareShards: false, patches: false });
});
afterAll(async () => {
  for (const rt of opened) await rt.close();
  rmSync(root, { recursive: true, force: true });
});

describe('shard packs shared with the predecessor', () => {
  it("start the successor's pack list with the predecessor's very files, and leave it only the changed shards to write", () => {
    const before = releaseDoc(shared, FIRST).shard_packs;
    const after = releaseDoc(shared, NEXT).shard_packs;
    expect(after.slice(0, before.length)).toEqual(before);
    const [m1, m2] = [manifest(shared, FIRST), manifest(shared, NEXT)];
    for (const p of before) expect(m2.files[p]).toEqual(m1.files[p]);
    const own = after.slice(before.length).reduce((n, p) => n + m2.files[p].bytes, 0);
    const inherited = before.reduce((n, p) => n + m1.files[p].bytes, 0);
    // The samples' successor changes a few percent of its entities (generator/successor.ts): so few shards are new.
    expect(own).toBeGreaterThan(0);
    expect(own / inherited).toBeLessThan(0.1);
    // Written anew, the successor's packs are as large as the predecessor's and share none of its files.
    const fresh = releaseDoc(full, NEXT).shard_packs;
    expect(fresh.filter((p) => before.includes(p))).toEqual([]);
  });

  it("answer every entity, retired ID and bridge with the bytes of a compile that writes every shard anew", async () => {
    const keys = join(root, 'keys.json');
    const { key } = await addKey({ file: keys, name: 'compare', quota: 10_000_000, rate: 10_000_000 });
    const calls = [];
    for (const dist of [shared, full]) {
      const rt = await openInProcess({ dist, keys, state: 'memory:' });
      opened.push(rt);
      calls.push(client(`${rt.url}/api/next`, key));
    }
    const ids: string[] = [];
    const bridges: string[] = [];
    for (const table of ['entities', 'redirects', 'bridges']) {
      let header: string[] = [];
      await readCsv(join(releases, NEXT, 'csv', `${table}.csv.gz`), table, {
        header: (h) => void (header = h),
        row: (f) => {
          const r = Object.fromEntries(header.map((h, i) => [h, f[i]]));
          if (table === 'bridges') bridges.push(`/resolve/${encodeURIComponent(r.provider)}/${encodeURIComponent(r.external_id)}${r.namespace ? `?namespace=${encodeURIComponent(r.namespace)}` : ''}`);
          else ids.push(r.reep_id);
        },
      });
    }
    // The predecessor's IDs too: one the successor lacks answers from its tombstone stub.
    await readCsv(join(releases, FIRST, 'csv', 'entities.csv.gz'), 'entities', { header: () => {}, row: (f) => void ids.push(f[0]) });
    const paths = [...new Set(ids)].map((id) => `/entities/${id}?include=${INCLUDES.join(',')}`);
    paths.push(...bridges.filter((_, i) => i % 7 === 0));
    expect(paths.length).toBeGreaterThan(3000);
    const statuses = new Set<number>();
    for (const path of paths) {
      const [a, b] = await Promise.all(calls.map((call) => call(path)));
      statuses.add(a.status);
      // Bodies and status alike; the ETag names the stamp's manifest, which the layout of its packs is part of.
      expect({ path, status: a.status, body: a.text }).toEqual({ path, status: b.status, body: b.text });
    }
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 410]));
  });

  it('compile to the same bytes when one stamp is compiled alone: its predecessor is compiled first', async () => {
    const dist = join(root, 'alone');
    const reports = await compileAll({ releases, dist, stamp: NEXT, progress: false, patches: false });
    expect(reports.map((r) => r.stamp)).toEqual([FIRST, NEXT]);
    for (const s of [FIRST, NEXT]) expect(digestOf(dist, s)).toBe(digestOf(shared, s));
    // An inherited pack is a hard link: the dist stores it once.
    for (const p of releaseDoc(dist, FIRST).shard_packs) expect(statSync(join(dist, NEXT, 'public', p)).ino).toBe(statSync(join(dist, FIRST, 'public', p)).ino);
  });

  it("are not inherited once too few of the predecessor's pack bytes are its own shards (compaction)", async () => {
    const dist = join(root, 'compacted');
    await compileAll({ releases, dist, stamp: FIRST, progress: false, patches: false });
    // As if a chain of releases had left the first's packs mostly dead bytes.
    const meta = JSON.parse(readFileSync(diffBaseMeta(dist, FIRST), 'utf8'));
    const packs = meta.shardBytes.packs;
    writeFileSync(diffBaseMeta(dist, FIRST), JSON.stringify({ ...meta, shardBytes: { referenced: Math.floor(packs * MIN_REFERENCED_SHARE) - 1, packs } }));
    await compileAll({ releases, dist, stamp: NEXT, progress: false, patches: false });
    expect(digestOf(dist, NEXT)).toBe(digestOf(full, NEXT));
    // At the threshold they are inherited again.
    writeFileSync(diffBaseMeta(dist, FIRST), JSON.stringify({ ...meta, shardBytes: { referenced: Math.ceil(packs * MIN_REFERENCED_SHARE), packs } }));
    await compileAll({ releases, dist, stamp: NEXT, progress: false, patches: false });
    expect(digestOf(dist, NEXT)).toBe(digestOf(shared, NEXT));
    // The successor records its own share for the next: every byte of its own packs is live, some inherited ones are not.
    const next = JSON.parse(readFileSync(diffBaseMeta(dist, NEXT), 'utf8'));
    expect(next.shardBytes.referenced).toBeLessThan(next.shardBytes.packs);
    expect(next.shardBytes.referenced).toBeGreaterThan(MIN_REFERENCED_SHARE * next.shardBytes.packs);
  });

  it('refuse an inherited pack whose bytes differ from its manifest, naming it, and leave the published successor alone', async () => {
    const dist = join(root, 'damaged');
    await compileAll({ releases, dist, progress: false, patches: false });
    const published = digestOf(dist, NEXT);
    const shards = join(dist, FIRST, 'public', 'shards');
    const pack = readdirSync(shards)[0];
    // A copy, not the hard link the successor holds, is damaged: as a disk error in the predecessor's file would be.
    const bytes = readFileSync(join(shards, pack));
    rmSync(join(shards, pack));
    bytes[bytes.length >> 1] ^= 1;
    writeFileSync(join(shards, pack), bytes);
    // Whichever comes first names the pack: the check of the whole file, or the checksum of a changed ID's old shard
    // read from it while the stages run beside that check.
    await expect(compileAll({ releases, dist, stamp: NEXT, progress: false, patches: false })).rejects.toThrow(new RegExp(`${pack}: (does not match its manifest|fails its checksum)`));
    expect(digestOf(dist, NEXT)).toBe(published);
  });

  it('leave a successor that changed no shard no pack of its own', async () => {
    const dir = join(root, 'unchanged');
    const rows: Record<string, Rows> = {
      entities: [['rt000000000000a1', 'team', 'active', 'Alpha', '', '', '', '', ''], ['rt000000000000b2', 'team', 'active', 'Beta', '', '', '', '', '']],
      bridges: [['opta', '', 't1', 'rt000000000000a1', ''], ['opta', '', 't2', 'rt000000000000b2', '']],
    };
    writeHandRelease(join(dir, 'releases'), FIRST, rows);
    writeHandRelease(join(dir, 'releases'), NEXT, rows, { prior: FIRST });
    await compileAll({ releases: join(dir, 'releases'), dist: join(dir, 'dist'), progress: false, patches: false });
    const [before, after] = [releaseDoc(join(dir, 'dist'), FIRST).shard_packs, releaseDoc(join(dir, 'dist'), NEXT).shard_packs];
    expect(before.length).toBeGreaterThan(0);
    expect(after).toEqual(before);
    expect(readdirSync(join(dir, 'dist', NEXT, 'public', 'shards')).sort()).toEqual(before.map((p) => p.slice('shards/'.length)).sort());
  });
});
