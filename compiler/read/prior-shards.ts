// Reads single entities back from a predecessor's compiled dist: its entity index, then the shard. A successor
// compile needs this only for the few IDs whose diff-base fingerprint changed (about 1% of them).
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
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

export class PriorShards {
  private readonly doc: ReleaseDoc;
  private directory: Uint8Array | null = null;
  private readonly fds = new Map<string, number>();

  constructor(private readonly publicDir: string) {
    this.doc = JSON.parse(readFileSync(join(publicDir, RELEASE_DOC), 'utf8')) as ReleaseDoc;
  }

  private read(path: string, offset: number, length: number): Buffer {
    let fd = this.fds.get(path);
    if (fd === undefined) this.fds.set(path, (fd = openSync(join(this.publicDir, path), 'r')));
    const out = Buffer.allocUnsafe(length);
    if (readSync(fd, out, 0, length, offset) !== length) throw this.corrupt(path);
    return out;
  }

  private corrupt(path: string): RegisterError {
    return new RegisterError('compile', 'fails its checksum; recompile the prior release (or remove its folder) and retry', join(this.publicDir, path));
  }

  /** The live entity `id` as the predecessor published it; throws when it is not live there or bytes are bad. */
  entity(id: string): PriorEntity {
    const family = this.doc.families.entities;
    this.directory ??= readFileSync(join(this.publicDir, family.directory));
    const { offset, length, checksum } = readDirectoryEntry(this.directory, bucketOf(id, family.buckets));
    const bucket = this.read(family.pack, offset, length);
    if (checksum32(bucket) !== checksum) throw this.corrupt(family.pack);
    const v = findInBucket<number[]>(bucket, id);
    if (!v || v[0] !== ENTRY_LIVE) throw new RegisterError('compile', `${id} is in the prior release's diff base but not live in its index`, join(this.publicDir, family.pack));
    const pack = this.doc.shard_packs[v[1]];
    const shard = this.read(pack, v[2], v[3]);
    if (checksum32(shard) !== v[12]) throw this.corrupt(pack);
    // Section ends: core, aliases, attributes, bridges, ... (see the index entry layout).
    const core = JSON.parse(shard.subarray(0, v[4]).toString('utf8') + '}') as { lifecycle_state: string; name_en: string };
    const section = Buffer.from(expandBridges(shard.subarray(v[6], v[7]), ENTITY_TYPES[v[11]])).toString('utf8');
    const bridges = JSON.parse(section.slice(section.indexOf('['))) as { provider: string; namespace: string; external_id: string }[];
    return { status: core.lifecycle_state, label: core.name_en, bridgesJson: JSON.stringify(bridges.map((b) => [b.provider, b.namespace, b.external_id])) };
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}
