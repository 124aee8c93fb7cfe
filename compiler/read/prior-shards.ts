// Reads entities back from a predecessor's compiled dist, at the places its diff base recorded (see
// compiler/write/diff-base.ts). A successor compile needs this only for the few IDs whose diff-base fingerprint
// changed (about 1% of them).
//
// Those reads are scattered over gigabytes of packs, and on a machine whose page cache does not hold the
// predecessor (measured here: 0.1-0.5 ms per 1 KiB read, one at a time) a partition's ~100 changed IDs at full
// size cost tens of milliseconds one read after another. So a chunk's IDs are read together, with several reads in
// flight on the thread pool: the disk serves them side by side. Each is one read: a lookup in the predecessor's
// entity index first made it two dependent reads, and the second could only start when the event loop next ran.
import { open, type FileHandle } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { RegisterError } from '../../common/errors.ts';
import { checksum32 } from '../../common/checksum.ts';
import { RELEASE_DOC, type ReleaseDoc } from '../../common/dist-layout.ts';
import { expandBridges } from '../../common/shard-format.ts';
import { bridgesJsonText, type ShardPlace } from '../write/diff-base.ts';

/** What the changelog compares of one entity of the predecessor. */
export interface PriorEntity {
  status: string;
  label: string;
  /** Its bridges as `[provider, namespace, external_id][]` JSON, in the shard's (sorted) order. */
  bridgesJson: string;
}

/** Shards read at once by entities(). */
export const PRIOR_READS_IN_FLIGHT = 16;

export class PriorShards {
  private readonly doc: ReleaseDoc;
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

  /** The entities at `places` (ID and place) as the predecessor published them; throws when bytes are bad. */
  async entities(places: readonly (readonly [string, ShardPlace])[]): Promise<Map<string, PriorEntity>> {
    const found = new Map<string, PriorEntity>();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < places.length) {
        const [id, place] = places[next++];
        found.set(id, await this.entity(place));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PRIOR_READS_IN_FLIGHT, places.length) }, lane));
    return found;
  }

  /** The entity at `place` as the predecessor published it; throws when its bytes fail their checksum. */
  async entity(place: ShardPlace): Promise<PriorEntity> {
    const pack = this.doc.shard_packs[place.pack];
    if (pack === undefined) {
      throw new RegisterError('compile', `has no shard pack ${place.pack}, which its diff base names; recompile the prior release (or remove its folder) and retry`, join(this.publicDir, RELEASE_DOC));
    }
    const shard = await this.read(pack, place.offset, place.length);
    if (checksum32(shard) !== place.checksum) throw this.corrupt(pack);
    const core = JSON.parse(shard.subarray(0, place.coreEnd).toString('utf8') + '}') as { lifecycle_state: string; name_en: string };
    const section = Buffer.from(expandBridges(shard.subarray(place.bridgesStart, place.bridgesEnd), ENTITY_TYPES[place.type])).toString('utf8');
    const bridges = JSON.parse(section.slice(section.indexOf('['))) as { provider: string; namespace: string; external_id: string }[];
    return { status: core.lifecycle_state, label: core.name_en, bridgesJson: bridgesJsonText(bridges.map((b) => [b.provider, b.namespace, b.external_id] as const)) };
  }

  async close(): Promise<void> {
    const files = [...this.files.values()];
    this.files.clear();
    // A handle whose open failed has nothing to close (its failure was thrown to the read that needed it).
    await Promise.all(files.map((f) => f.then((h) => h.close(), () => undefined)));
  }
}
