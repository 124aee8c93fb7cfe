// Release.entity answers at once when its bytes are ready, and that is a shortcut, not a second meaning: over a
// compiled world (live IDs, a merge chain, a tombstone, an ID never published) the answer given at once is exactly
// the one given after the reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPromise } from '../../../runtime/interfaces.ts';
import { loadRelease, type Release } from '../../../runtime/release/open-release.ts';
import { createBucketCache } from '../../../runtime/release/bucket-family-reader.ts';
import { createFsSource, type FsShardSource } from '../../../runtime/source/fs-source.ts';
import { ShardCache } from '../../../runtime/release/shard-cache.ts';
import { ArtefactError } from '../../../runtime/read-errors.ts';
import { compileAll } from '../../../compiler/compile.ts';
import { ID, makeHandWorld, STAMPS, type World } from '../../fixtures/hand-world.ts';

let world: World;
beforeAll(async () => {
  world = await makeHandWorld();
  await compileAll({ releases: world.releases, dist: world.dist, progress: false });
});
// Every source is closed, so no pack handle is left for garbage collection to close (Node warns, DEP0137).
const sources: FsShardSource[] = [];
const source = (reads: 'sync' | 'pool'): FsShardSource => {
  const s = createFsSource({ root: world.dist, reads });
  sources.push(s);
  return s;
};
afterAll(async () => {
  for (const s of sources) await s.close();
  rmSync(world.root, { recursive: true, force: true });
});

/** What index.json vouches for: the sha256 of the stamp's public manifest. */
const manifestSha256 = (stamp: string): string => createHash('sha256').update(readFileSync(join(world.dist, stamp, 'public', 'manifest.json'))).digest('hex');
const open = async (stamp: string, reads: 'sync' | 'pool'): Promise<Release> => loadRelease(source(reads), stamp, manifestSha256(stamp), createBucketCache(1 << 20));
// Bytes compare as text whether they are a Buffer or a plain Uint8Array (the replacer sees a value before toJSON).
const plain = (x: unknown) =>
  JSON.parse(
    JSON.stringify(x, function (this: Record<string, unknown>, k, v) {
      const raw = this[k];
      return raw instanceof Uint8Array ? Buffer.from(raw).toString() : v;
    }),
  );

describe('Release.entity at once', () => {
  it('answers at once what it answered after the reads, for every kind of ID', async () => {
    for (const stamp of STAMPS) {
      const release = await open(stamp, 'sync');
      for (const id of Object.values(ID)) {
        const first = release.entity(id);
        const awaited = await first;
        const again = release.entity(id);
        // An ID the index lacks may sit in an empty bucket, which is never retained: then it stays a read away.
        if (id !== ID.never || !isPromise(again)) {
          expect(isPromise(again), `${stamp} ${id}`).toBe(false);
          expect(plain(again), `${stamp} ${id}`).toEqual(plain(awaited));
        }
      }
      // The kinds are all there: a live entity, a merge (followed to its survivor), a tombstone, nothing.
      expect((await release.entity(ID.arsenal))?.kind).toBe('live');
      expect(await release.entity(ID.mergedOld)).toMatchObject({ kind: 'live', requestedId: ID.mergedOld });
      expect((await release.entity(ID.tomb))?.kind).toBe('gone');
      expect(await release.entity(ID.never)).toBeNull();
    }
  });

  it('keeps a looked-up ID ready although its index bucket is not cached, with the same answer', async () => {
    // A bucket cache of 0 bytes retains nothing: only the release's memo of recent index entries can answer.
    const release = await loadRelease(source('sync'), STAMPS[0], manifestSha256(STAMPS[0]), createBucketCache(0));
    for (const id of [ID.arsenal, ID.mergedOld, ID.tomb]) {
      const first = release.entity(id);
      expect(isPromise(first), id).toBe(true);
      const awaited = await first;
      const again = release.entity(id);
      expect(isPromise(again), id).toBe(false);
      expect(plain(again), id).toEqual(plain(awaited));
    }
    // An ID the index lacks is not remembered: it is looked up (and not found) each time.
    expect(await release.entity(ID.never)).toBeNull();
    const never = release.entity(ID.never);
    expect(isPromise(never)).toBe(true);
    expect(await never).toBeNull();
  });

  it('never answers at once while shard reads go to the thread pool', async () => {
    const release = await open(STAMPS[0], 'pool');
    await release.entity(ID.arsenal);
    const again = release.entity(ID.arsenal);
    expect(isPromise(again)).toBe(true);
    expect((await again)?.kind).toBe('live');
  });

  it('answers at once from the shard cache once the shard was read, even from the thread pool, with the same bytes', async () => {
    const shards = new ShardCache(1 << 20);
    const release = await loadRelease(source('pool'), STAMPS[0], manifestSha256(STAMPS[0]), createBucketCache(1 << 20), shards);
    const awaited = await release.entity(ID.arsenal);
    expect(shards.size).toBe(1);
    const again = release.entity(ID.arsenal);
    expect(isPromise(again)).toBe(false);
    expect(plain(again)).toEqual(plain(awaited));
  });

  it('rejects, never throws, when a shard read at once fails its checksum; the pack repaired, it answers again', async () => {
    const release = await open(STAMPS[0], 'sync');
    // Both entities are read once, so the pack is open and the index entries remembered: what follows is at once.
    expect((await release.entity(ID.chelsea))?.kind).toBe('live');
    expect((await release.entity(ID.arsenal))?.kind).toBe('live');
    const shards = join(world.dist, STAMPS[0], 'public', 'shards');
    const pack = join(shards, readdirSync(shards).find((n) => readFileSync(join(shards, n)).includes(`{"reep_id":"${ID.arsenal}"`))!);
    const pristine = readFileSync(pack);
    const damaged = Buffer.from(pristine);
    damaged[pristine.indexOf(`{"reep_id":"${ID.arsenal}"`) + 3] ^= 0x20;
    writeFileSync(pack, damaged); // in place: the open handle reads the new bytes
    try {
      let answer: ReturnType<Release['entity']> | undefined;
      expect(() => (answer = release.entity(ID.arsenal))).not.toThrow();
      expect(isPromise(answer)).toBe(true);
      const err = await (answer as Promise<unknown>).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ArtefactError);
      expect((err as ArtefactError).check).toMatch(new RegExp(`^crc32 of bytes \\d+\\+\\d+ does not match the index entry of ${ID.arsenal}$`));
      expect((err as ArtefactError).subject).toBe(ID.arsenal);
    } finally {
      writeFileSync(pack, pristine);
    }
    const again = release.entity(ID.arsenal);
    expect(isPromise(again)).toBe(false);
    expect((again as Exclude<typeof again, Promise<unknown>>)?.kind).toBe('live');
  });
});
