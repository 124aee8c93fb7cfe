// Reads entities back from a predecessor's compiled dist: its entity index, then the shard. A successor compile
// needs this only for the few IDs whose diff-base fingerprint changed (about 1% of them).
//
// Those reads are scattered over gigabytes of packs, and on a machine whose page cache does not hold the
// predecessor (measured here: 0.1-0.5 ms per 1 KiB read, one at a time) a partition's ~100 changed IDs at full
// size cost tens of milliseconds one read after another. So a partition's IDs are read together, with several
// reads in flight on the thread pool: the disk serves them side by side.
import { open, type FileHandle } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { RegisterError } from '../../common/errors.ts';
import { bucketOf } from '../../common/hash.ts';
import { checksum32 } from '../../common/checksum.ts';
import { findInBucket, readDirectoryEntry } from '../../common/bucket-format.ts';
import { ENTRY_LIVE, RELEASE_DOC, type ReleaseDoc } from '../../common/dist-layout.ts';
import { expandBridges } from '../../common/shard-format.ts';

/** What the changelog compares of one entity of the predecessor. */
export interface PriorEntity {
  status: string;
  label: string;
  /** Its bridges as `[provider, namespace, external_id][]` JSON, in the shard's (sorted) order. */
  bridgesJson: string;
}

/** Entities read at once by entities(): each is two dependent reads (index bucket, then shard). */
export const PRIOR_READS_IN_FLIGHT = 16;

export class PriorShards {
  private readonly doc: ReleaseDoc;
  private directory: Uint8Array | null = null;
  private readonly files = new Map<string, Promise<FileHandle>>();

  constructor(private readonly publicDir: string) {
    this.doc = JSON.parse(readFileSync(join(publicDir, RELEASE_DOC), 'utf8')) as ReleaseDoc;
  }

  private async read(path: string, offset: number, length: number): Promise<Buffer> {
    let file = this.files.get(path);
    if (file === undefined) this.files.set(path, (file = open(join(this.publicDir, path), 'r')));
    const out = Buffer.allocUnsafe(length);
    const { bytesRead } = await (await file).read(out, 0, length, offset);
    if (bytesRead !== length) throw this.corrupt(path);
    return out;
  }

  private corrupt(path: string): RegisterError {
    return new RegisterError('compile', 'fails its checksum; recompile the prior release (or remove its folder) and retry', join(this.publicDir, path));
  }

  /** The live entities `ids` as the predecessor published them; throws when one is not live there or bytes are bad. */
  async entities(ids: readonly string[]): Promise<Map<string, PriorEntity>> {
    const found = new Map<string, PriorEntity>();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < ids.length) {
        const id = ids[next++];
        found.set(id, await this.entity(id));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PRIOR_READS_IN_FLIGHT, ids.length) }, lane));
    return found;
  }

  /** The live entity `id` as the predecessor published it; throws when it is not live there or bytes are bad. */
  async entity(id: string): Promise<PriorEntity> {
    const family = this.doc.families.entities;
    this.directory ??= readFileSync(join(this.publicDir, family.directory));
    const { offset, length, checksum } = readDirectoryEntry(this.directory, bucketOf(id, family.buckets));
    const bucket = await this.read(family.pack, offset, length);
    if (checksum32(bucket) !== checksum) throw this.corrupt(family.pack);
    const v = findInBucket<number[]>(bucket, id);
    if (!v || v[0] !== ENTRY_LIVE) throw new RegisterError('compile', `${id} is in the prior release's diff base but not live in its index`, join(this.publicDir, family.pack));
    const pack = this.doc.shard_packs[v[1]];
    const shard = await this.read(pack, v[2], v[3]);
    if (checksum32(shard) !== v[12]) throw this.corrupt(pack);
    // Section ends: core, aliases, attributes, bridges, ... (see the index entry layout).
    const core = JSON.parse(shard.subarray(0, v[4]).toString('utf8') + '}') as { lifecycle_state: string; name_en: string };
    const section = Buffer.from(expandBridges(shard.subarray(v[6], v[7]), ENTITY_TYPES[v[11]])).toString('utf8');
    const bridges = JSON.parse(section.slice(section.indexOf('['))) as { provider: string; namespace: string; external_id: string }[];
    return { status: core.lifecycle_state, label: core.name_en, bridgesJson: JSON.stringify(bridges.map((b) => [b.provider, b.namespace, b.external_id])) };
  }

  async close(): Promise<void> {
    const files = [...this.files.values()];
    this.files.clear();
    // A handle whose open failed has nothing to close (its failure was thrown to the read that needed it).
    await Promise.all(files.map((f) => f.then((h) => h.close(), () => undefined)));
  }
}
