// Reads entities back from a predecessor's compiled dist, at the places its diff base recorded (see
// compiler/write/diff-base.ts). A successor compile needs this only for the few IDs whose diff-base fingerprint
// changed (about 1% of them).
//
// Those reads are scattered over gigabytes of packs. Where the page cache holds the predecessor (it usually does
// when it was compiled or served lately) a blocking read costs a few microseconds, while one handed to the thread
// pool costs this thread far more, mostly in waking a pool thread. Where the page cache does not hold it, each read
// waits for the disk, and only reads in flight side by side help. So reads block until enough of them are slow, a
// sign they are coming from the disk; from then on a chunk's IDs are read together, several in flight on the
// thread pool. Both read the same bytes. Each is one read at the place the diff base recorded, not a lookup in the
// predecessor's entity index first, which would make it two dependent reads.
import { closeSync, openSync, read, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { checksum32 } from '../../common/checksum.ts';
import { RELEASE_DOC, type ReleaseDoc } from '../../common/dist-layout.ts';
import type { ShardPlace } from '../write/diff-base.ts';
import { fixtureOf, type MatchFacts, type Scoreline } from '../../common/scoreline.ts';
import { expandShard } from '../../common/shard-format.ts';

/** What the changelog compares of one entity of the predecessor. */
export interface PriorEntity {
  status: string;
  label: string;
  /** Its bridges section as the shard stores it (common/shard-format.ts shardBridges), which its fingerprint hashed. */
  bridgesSection: string;
  /** A match's scoreline and fixture facts as it published them; null for another type. */
  match: MatchFacts | null;
}

/** Shards read at once by entities() once reads have turned slow. */
export const PRIOR_READS_IN_FLIGHT = 16;
/** A blocking read that takes longer than this, in milliseconds, is taken to have waited for the disk. */
const SLOW_READ_MS = 0.1;
/**
 * Reads go to the thread pool once this many blocking reads were slow and they are over a tenth of all blocking reads
 * so far. Reads from the disk are nearly all slow; reads from the page cache are slow only when this thread was
 * preempted mid-read, which with three threads on two cores happens to a few percent of them.
 */
export const SLOW_READS_TO_SWITCH = 8;

export class PriorShards {
  private readonly doc: ReleaseDoc;
  /** Open packs by path, opened on their first read. */
  private readonly files = new Map<string, number>();
  /** Reads on the thread pool not yet settled: close waits for them, so none lands on a reused descriptor. */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly slowReadMs: number;
  private slowReads = 0;
  private blockingReads = 0;

  /** `slowReadMs` is SLOW_READ_MS unless given (a test makes every read slow with a negative one). */
  constructor(private readonly publicDir: string, options: { slowReadMs?: number } = {}) {
    this.doc = JSON.parse(readFileSync(join(publicDir, RELEASE_DOC), 'utf8')) as ReleaseDoc;
    this.slowReadMs = options.slowReadMs ?? SLOW_READ_MS;
  }

  /** Whether reads still block (see the top of this file). */
  get blocking(): boolean {
    return this.slowReads < SLOW_READS_TO_SWITCH || this.slowReads * 10 <= this.blockingReads;
  }

  private fd(path: string): number {
    let fd = this.files.get(path);
    if (fd === undefined) this.files.set(path, (fd = openSync(join(this.publicDir, path), 'r')));
    return fd;
  }

  /** The shard at `place`, read blocking. */
  private readBlocking(place: ShardPlace): Buffer {
    const path = this.packOf(place);
    const out = Buffer.allocUnsafe(place.length);
    const t0 = performance.now();
    const n = readSync(this.fd(path), out, 0, place.length, place.offset);
    this.blockingReads++;
    if (performance.now() - t0 > this.slowReadMs) this.slowReads++;
    if (n !== place.length) throw this.corrupt(path);
    return out;
  }

  /** The shard at `place`, read on the thread pool. */
  private readInPool(place: ShardPlace): Promise<Buffer> {
    const path = this.packOf(place);
    const fd = this.fd(path);
    const out = Buffer.allocUnsafe(place.length);
    const done = new Promise<Buffer>((resolve, reject) => {
      read(fd, out, 0, place.length, place.offset, (err, n) => {
        this.pending.delete(done);
        if (err) reject(err);
        else if (n !== place.length) reject(this.corrupt(path));
        else resolve(out);
      });
    });
    this.pending.add(done);
    return done;
  }

  private corrupt(path: string): RegisterError {
    return new RegisterError('compile', 'fails its checksum; recompile the prior release (or remove its folder) and retry', join(this.publicDir, path));
  }

  /** The entities at `places` (ID and place) as the predecessor published them; throws when bytes are bad. */
  async entities(places: readonly (readonly [string, ShardPlace])[]): Promise<Map<string, PriorEntity>> {
    const found = new Map<string, PriorEntity>();
    let next = 0;
    for (; next < places.length && this.blocking; next++) {
      const [id, place] = places[next];
      found.set(id, this.parse(id, place, this.readBlocking(place)));
    }
    const lane = async (): Promise<void> => {
      while (next < places.length) {
        const [id, place] = places[next++];
        found.set(id, this.parse(id, place, await this.readInPool(place)));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PRIOR_READS_IN_FLIGHT, places.length - next) }, lane));
    return found;
  }

  private packOf(place: ShardPlace): string {
    const pack = this.doc.shard_packs[place.pack];
    if (pack === undefined) {
      throw new RegisterError('compile', `has no shard pack ${place.pack}, which its diff base names; recompile the prior release (or remove its folder) and retry`, join(this.publicDir, RELEASE_DOC));
    }
    return pack;
  }

  /** The entity `id` in `stored`, read from `place`; throws when its bytes fail their checksum. */
  private parse(id: string, place: ShardPlace, stored: Buffer): PriorEntity {
    if (checksum32(stored) !== place.checksum) throw this.corrupt(this.packOf(place));
    // The place's cuts are in the stored bytes; core, attributes and tail are read from the full text, the bridges
    // section as stored (what the fingerprint hashed, and what the successor's own section is compared with).
    const { bytes, cuts } = expandShard(stored, id, [place.coreEnd, place.bridgesStart, place.tailStart]);
    const shard = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const [coreEnd, bridgesStart, tailStart] = cuts;
    const core = JSON.parse(shard.subarray(0, coreEnd).toString('utf8') + '}') as { lifecycle_state: string; name_en: string };
    return {
      status: core.lifecycle_state, label: core.name_en, bridgesSection: stored.subarray(place.bridgesStart, place.bridgesEnd).toString('utf8'),
      match: tailStart < shard.length - 1 ? priorMatch(shard, coreEnd, bridgesStart, tailStart) : null,
    };
  }

  /** Closes the packs once every read has settled (after a failure, the next chunk's reads may still be out). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    for (const fd of this.files.values()) closeSync(fd);
    this.files.clear();
  }
}

/**
 * A match's facts from its shard: the scoreline its tail holds, the fixture from its attributes (read back into the
 * cells they came from, so the facts are what matchFactsOf made of them).
 */
function priorMatch(shard: Buffer, coreEnd: number, bridgesStart: number, tailStart: number): MatchFacts {
  const tail = JSON.parse(`{${shard.toString('utf8', tailStart + 1, shard.length)}`) as { match: Scoreline };
  const head = JSON.parse(`{${shard.toString('utf8', coreEnd + 1, bridgesStart)}}`) as { attributes: Record<string, string[]> };
  return { scoreline: tail.match, fixture: fixtureOf((name) => head.attributes[name]?.[0]) };
}
