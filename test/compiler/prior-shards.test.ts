// PriorShards reads a predecessor's entities back from its packs, blocking until reads turn slow and on the thread
// pool after. Both ways must read the same entities, and a bad byte must be refused either way.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { openRelease } from '../../compiler/read/release-input.ts';
import { PriorShards, SLOW_READS_TO_SWITCH, type PriorEntity } from '../../compiler/read/prior-shards.ts';
import { findDiffBase, matchDiffBase, priorPlace, readDiffBasePartition, type ShardPlace } from '../../compiler/write/diff-base.ts';
import type { ReleaseDoc } from '../../common/dist-layout.ts';
import { expandBridges, expandShard, NO_STORED_BRIDGES, parseStoredBridges } from '../../common/shard-format.ts';

const dec = new TextDecoder();

const PARTITIONS = 256;

describe('PriorShards', () => {
  let root: string;
  let publicDir: string;
  /** Every live ID of the compiled release with its shard's place, in partition order. */
  const places: [string, ShardPlace][] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ir-prior-shards-'));
    const releases = join(root, 'releases');
    cpSync(join(process.cwd(), 'releases'), releases, { recursive: true });
    const [first] = readdirSync(releases).sort();
    const dist = join(root, 'dist');
    await compileAll({ releases, dist, stamp: first, progress: false });
    publicDir = join(dist, first, 'public');
    const source = findDiffBase(dist, await openRelease(join(releases, first)), PARTITIONS);
    expect(source).not.toBeNull();
    for (let p = 0; p < PARTITIONS; p++) {
      // Walked beside no IDs, every line's ID comes back; walked beside those, every live one is found.
      const part = readDiffBasePartition(source!, p);
      const ids = matchDiffBase(part, [], () => {}, () => {}, () => {});
      expect(matchDiffBase(part, ids, (i, _at, ordinal) => places.push([ids[i], priorPlace(source!, part, p, ordinal)]), () => {}, () => {})).toEqual([]);
    }
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const readAll = async (shards: PriorShards): Promise<Map<string, PriorEntity>> => {
    try {
      // In chunks, as stage 2 asks for them.
      const all = new Map<string, PriorEntity>();
      for (let i = 0; i < places.length; i += 100) for (const [id, e] of await shards.entities(places.slice(i, i + 100))) all.set(id, e);
      return all;
    } finally {
      await shards.close();
    }
  };

  it('reads the same entities blocking and on the thread pool, and switches after a few slow reads', async () => {
    expect(places.length).toBeGreaterThan(1000);
    const blocking = await readAll(new PriorShards(publicDir, { slowReadMs: Infinity }));
    // Every read counts as slow: the first SLOW_READS_TO_SWITCH block, the rest go to the pool.
    const switching = new PriorShards(publicDir, { slowReadMs: -1 });
    expect(switching.blocking).toBe(true);
    await switching.entities(places.slice(0, SLOW_READS_TO_SWITCH - 1));
    expect(switching.blocking).toBe(true);
    const pooled = await readAll(switching);
    expect(switching.blocking).toBe(false);
    expect(pooled.size).toBe(places.length);
    expect(pooled).toEqual(blocking);

    // What was read is what the shards say, as a client would see it in the public JSON.
    const doc = JSON.parse(readFileSync(join(publicDir, 'release.json'), 'utf8')) as ReleaseDoc;
    // One with bridges, past the middle.
    const [id, place] = places.slice(places.length >> 1).find(([i]) => blocking.get(i)!.bridgesSection !== NO_STORED_BRIDGES)!;
    const pack = readFileSync(join(publicDir, doc.shard_packs[place.pack]));
    // The shard as the runtime reads it: its dictionary expanded, then its bridges.
    const { bytes: shard, cuts } = expandShard(pack.subarray(place.offset, place.offset + place.length), id, [place.coreEnd]);
    const core = JSON.parse(dec.decode(shard.subarray(0, cuts[0])) + '}') as { reep_id: string; name_en: string; lifecycle_state: string; entity_type: string };
    expect(core.reep_id).toBe(id);
    expect(blocking.get(id)).toMatchObject({ label: core.name_en, status: core.lifecycle_state });
    // Its bridges, as the stored section's rows, are the shard's bridges once expanded as the runtime expands them.
    const entity = JSON.parse(dec.decode(expandBridges(shard, core.entity_type))) as { bridges: { provider: string; namespace: string; external_id: string }[] };
    expect(parseStoredBridges(blocking.get(id)!.bridgesSection)).toEqual(entity.bridges.map((b) => [b.provider, b.namespace, b.external_id]));
  });

  it('refuses a shard whose bytes fail their checksum, blocking or not', async () => {
    const doc = JSON.parse(readFileSync(join(publicDir, 'release.json'), 'utf8')) as ReleaseDoc;
    const [, place] = places[0];
    const path = join(publicDir, doc.shard_packs[place.pack]);
    const good = readFileSync(path);
    const bad = Buffer.from(good);
    bad[place.offset + 2] ^= 1;
    writeFileSync(path, bad);
    try {
      for (const slowReadMs of [Infinity, -1]) {
        const shards = new PriorShards(publicDir, { slowReadMs });
        // Past the switch for -1, so the bad shard is read on the pool.
        const asked = slowReadMs < 0 ? [...places.slice(1, 1 + SLOW_READS_TO_SWITCH), places[0]] : [places[0]];
        await expect(shards.entities(asked)).rejects.toThrow(/fails its checksum; recompile the prior release/);
        await shards.close();
      }
    } finally {
      writeFileSync(path, good);
    }
  });
});
