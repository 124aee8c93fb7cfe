// The diff base: what the next release's changelog needs to find what changed, kept in
// dist/<stamp>/private/diff-base/ two files per partition. `pNNNN.tsv` holds each live ID with a fingerprint of its
// state, label and bridges, and each merged ID that kept bridges with those bridges. `pNNNN.loc` holds, for each
// live line in the same order, where that ID's shard sits in this release's packs (28 bytes). A successor compile
// reads its predecessor's diff base partition by partition instead of parsing the predecessor's CSV rows again,
// and reads the predecessor's shard only for an ID whose fingerprint differs: one read at a known place, not an
// index lookup first (see PriorShards). A fingerprint, not the bridge list, keeps the file small. It is
// compile-internal: never served, hashed into the private manifest like everything else.
import { createHash, hash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { DIST_FORMAT, MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR } from '../../common/dist-layout.ts';
import type { ReleaseInput } from '../read/release-input.ts';
import type { ContentFile } from './content-file.ts';

const DIFF_BASE_DIR = 'diff-base';
// 4: fingerprints and merged IDs' bridges over the stored bridges section, no longer a JSON list of their own.
// 5: a match's fingerprint covers its scoreline and fixture; places record where a shard's tail (scoreline) starts;
// lines of kind 2 name IDs this release tombstoned because its tables lacked them.
// 6: places carry 64 bits of sha256 over the stored shard, so an unchanged shard is found without reading it and
// kept where it is (see ShardPackWriter); a place may name a pack inherited from the predecessor (INHERITED_PACK);
// the meta counts the shard bytes still referenced against the packs' bytes (see shareShards).
const FORMAT = 6;

/** Identifies a diff base: the release it describes (by its manifest) and the partitioning it was cut by. */
export interface DiffBaseMeta {
  format: number;
  partitions: number;
  /** sha256 over the release's stamp and its listed files' paths and sha256s, in path order. */
  source: string;
  /**
   * `[first partition, first pack]` of each entity range, in order: a location names its pack within the range that
   * built its partition, and the range's packs start at `first pack` in the release's shard_packs.
   */
  packRanges: [number, number][];
  /** Bytes of the shards and stubs this release's index points at, and of all its shard packs (see shareShards). */
  shardBytes: { referenced: number; packs: number };
}

/** Where a successor finds its predecessor's diff base (and the sha256 each partition file must have) and dist. */
export interface DiffBaseSource {
  dir: string;
  sha256: Record<string, string>;
  /** The predecessor's public/, to read an entity whose fingerprint changed. */
  publicDir: string;
  /** See DiffBaseMeta.packRanges. */
  packRanges: [number, number][];
  /** See DiffBaseMeta.shardBytes. */
  shardBytes: { referenced: number; packs: number };
}

/**
 * Marks a pack number, in a place or an index entry written by a range, as a pack inherited from the predecessor,
 * numbered as in the predecessor's shard_packs (which this release's list starts with), not within the range.
 */
export const INHERITED_PACK = 0x80000000;

/** The release-wide number of a range's pack `pack` when the range's own packs start at `packBase`. */
export const releasePack = (pack: number, packBase: number): number => (pack >= INHERITED_PACK ? pack - INHERITED_PACK : pack + packBase);

/** The release a diff base describes, independent of how its release.json is laid out (key order, spacing). */
function releaseIdentity(release: ReleaseInput): string {
  const files = release.manifest.files;
  const listed = Object.keys(files).sort().map((path) => [path, files[path].sha256]);
  return createHash('sha256').update(JSON.stringify([release.stamp, listed])).digest('hex');
}

export const diffBaseMeta = (release: ReleaseInput, partitions: number, packRanges: [number, number][], shardBytes = { referenced: 0, packs: 0 }): DiffBaseMeta => ({
  format: FORMAT, partitions, source: releaseIdentity(release), packRanges, shardBytes,
});

const partitionFile = (p: number): string => `p${String(p).padStart(4, '0')}.tsv`;
const locationFile = (p: number): string => `p${String(p).padStart(4, '0')}.loc`;

/** Where a live entity's shard sits in its release: what the changelog needs to read its old values back. */
export interface ShardPlace {
  /** Pack number within its entity range (a diff base file) or in the release's shard_packs (from priorPlace). */
  pack: number;
  offset: number;
  length: number;
  /** checksum32 of the shard's bytes. */
  checksum: number;
  /** Byte ends of the core section and of the attributes section (where bridges start), and of the bridges. */
  coreEnd: number;
  bridgesStart: number;
  bridgesEnd: number;
  /** Byte end of the overlay section: a match's scoreline runs from here to the closing `}`. */
  tailStart: number;
  /** The first 8 bytes of the sha256 of the shard's stored bytes, as two little-endian uint32 (see ShardDigest). */
  digest0: number;
  digest1: number;
}

/** 64 bits of a stored shard's sha256: with its length and CRC-32, what says a shard is unchanged. */
export interface ShardDigest {
  digest0: number;
  digest1: number;
}

/** A location record: the fields above, in order, as ten little-endian uint32. */
const LOCATION_BYTES = 40;

/**
 * What a live ID's line holds: 64 bits of sha256 over its state, label and bridges. The bridges are the section its
 * shard stores (common/shard-format.ts shardBridges: the ID's own rows, sorted and deduplicated, each with its
 * provider's role marker), the very text the shard is written from, so no second text of ~10M bridges is made for
 * it. A successor that finds the fingerprint changed reads that section back from the predecessor's shard. A
 * provider whose role changed changes the fingerprint of every ID it bridges: those are read back, compared as
 * bridge lists, and found unchanged, which costs time but no event.
 */
export const fingerprint = (status: string, label: string, bridgesSection: string, matchFacts: string): string =>
  // One-shot rather than a Hash object per entity, which was a visible share of stage 2; the bytes hashed are the same.
  hash('sha256', JSON.stringify([status, label]) + bridgesSection + matchFacts, 'hex').slice(0, 16);

/**
 * One entity range's diff base, a partition at a time: its lines (in ID order) and the places of its live IDs'
 * shards, in the same order. Lines come when an ID's fingerprint is known, places when its shard is written.
 */
export class DiffBaseWriter {
  private lines: string[] = [];
  private live = 0;
  private places = Buffer.alloc(64 * LOCATION_BYTES);
  private placed = 0;

  constructor(private readonly privateDir: string) {
    mkdirSync(join(privateDir, DIFF_BASE_DIR), { recursive: true });
  }

  /** A live ID: `<id>\t1\t<fingerprint>`. Its place follows with `place`. */
  addLive(id: string, fp: string): void {
    this.lines.push(`${id}\t1\t${fp}`);
    this.live++;
  }

  /**
   * A merged ID, with the bridges that named it (it has no shard to read them back from), as shardBridges writes
   * them: `<id>\t0\t<section>`. The section's JSON holds no raw tab or newline, and its markers are neither.
   */
  addMerged(id: string, bridgesSection: string): void {
    this.lines.push(`${id}\t0\t${bridgesSection}`);
  }

  /**
   * An ID this release tombstoned because its tables lacked it (no redirect row says so): `<id>\t2\t`. The next
   * release finds it here, as it finds the other retired IDs in this release's redirects table.
   */
  addRetired(id: string): void {
    this.lines.push(`${id}\t2\t`);
  }

  /** Where the next live ID's shard went: `cuts` as ShardPackWriter.addParts reports them (core, aliases, attributes, bridges, ...). */
  place(pack: number, offset: number, length: number, checksum: number, cuts: readonly number[], digest: ShardDigest): void {
    if ((this.placed + 1) * LOCATION_BYTES > this.places.length) {
      const grown = Buffer.alloc(this.places.length * 2);
      this.places.copy(grown);
      this.places = grown;
    }
    const b = this.places;
    const at = this.placed++ * LOCATION_BYTES;
    b.writeUInt32LE(pack, at);
    b.writeUInt32LE(offset, at + 4);
    b.writeUInt32LE(length, at + 8);
    b.writeUInt32LE(checksum, at + 12);
    b.writeUInt32LE(cuts[0], at + 16);
    b.writeUInt32LE(cuts[2], at + 20);
    b.writeUInt32LE(cuts[3], at + 24);
    b.writeUInt32LE(cuts[5], at + 28);
    b.writeUInt32LE(digest.digest0, at + 32);
    b.writeUInt32LE(digest.digest1, at + 36);
  }

  /** Writes partition `p`'s two files and starts the next partition; returns the files for the private manifest. */
  finishPartition(p: number): ContentFile[] {
    if (this.placed !== this.live) throw new Error(`diff base partition ${p}: ${this.live} live IDs but ${this.placed} shard places`);
    const text = Buffer.from(this.lines.length ? this.lines.join('\n') + '\n' : '', 'utf8');
    const files = [this.file(partitionFile(p), text), this.file(locationFile(p), this.places.subarray(0, this.placed * LOCATION_BYTES))];
    this.lines = [];
    this.live = this.placed = 0;
    return files;
  }

  private file(name: string, bytes: Uint8Array): ContentFile {
    writeFileSync(join(this.privateDir, DIFF_BASE_DIR, name), bytes);
    return { path: `${DIFF_BASE_DIR}/${name}`, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
}

export function writeDiffBaseMeta(privateDir: string, meta: DiffBaseMeta): void {
  mkdirSync(join(privateDir, DIFF_BASE_DIR), { recursive: true });
  writeFileSync(join(privateDir, DIFF_BASE_DIR, 'meta.json'), JSON.stringify(meta));
}

/** One partition of a predecessor's diff base, as read. */
export interface DiffBasePartition {
  text: string;
  places: Buffer;
  /** The partition's two files, which errors name. */
  textFile: string;
  placesFile: string;
}

/** Reads one file of a predecessor's diff base, checked against its private manifest. */
function readChecked(source: DiffBaseSource, name: string): Buffer {
  const bytes = readFileSync(join(source.dir, name));
  if (createHash('sha256').update(bytes).digest('hex') !== source.sha256[`${DIFF_BASE_DIR}/${name}`]) {
    throw new RegisterError('compile', 'does not match its manifest; recompile the prior release (or remove its folder) and retry', `${source.dir}/${name}`);
  }
  return bytes;
}

/** Reads one partition of a predecessor's diff base (both files checked against its private manifest); see matchDiffBase. */
export function readDiffBasePartition(source: DiffBaseSource, p: number): DiffBasePartition {
  return {
    text: readChecked(source, partitionFile(p)).toString('utf8'), places: readChecked(source, locationFile(p)),
    textFile: `${source.dir}/${partitionFile(p)}`, placesFile: `${source.dir}/${locationFile(p)}`,
  };
}

/**
 * Walks a partition's lines beside `ids`, this release's IDs of the partition sorted as the lines are (both in
 * String order): a merge, since at full size each range worker meets ~1M of the predecessor's IDs, and cutting each
 * out to look it up was slow. Calls `live(i, at, ordinal)` for a live line of `ids[i]`, with where its
 * fingerprint starts in the text (see sameFingerprint) and its ordinal among the live lines (see priorPlace), and
 * `merged(i, section)` for a merged ID's line, `retired(i)` for a tombstoned one's. Returns the lines' IDs that `ids` lacks, in order: the caller adds
 * them and walks again, and a second walk that still misses one means the lines are out of order.
 */
export function matchDiffBase(
  part: DiffBasePartition, ids: readonly string[],
  live: (i: number, fingerprintAt: number, ordinal: number) => void,
  merged: (i: number, bridgesSection: string) => void,
  retired: (i: number) => void,
): string[] {
  const text = part.text;
  const absent: string[] = [];
  let ordinal = 0;
  let j = 0;
  for (let pos = 0; pos < text.length; ) {
    const t1 = text.indexOf('\t', pos);
    const nl = text.indexOf('\n', t1);
    const idLength = t1 - pos;
    // Nearly always ids[j] itself; an ID new in this release (about 1%) is stepped over.
    let found = -1;
    let lineId: string | null = null;
    for (; j < ids.length; j++) {
      const id = ids[j];
      if (id.length === idLength && text.startsWith(id, pos)) {
        found = j++;
        break;
      }
      lineId ??= text.slice(pos, t1);
      if (id > lineId) break;
    }
    // Section text holds no raw tab or newline.
    const kind = text.charCodeAt(t1 + 1);
    const isLive = kind === 49;
    if (found < 0) absent.push(lineId ?? text.slice(pos, t1));
    else if (isLive) live(found, t1 + 3, ordinal);
    else if (kind === 50) retired(found);
    else merged(found, text.slice(t1 + 3, nl));
    if (isLive) ordinal++;
    pos = nl + 1;
  }
  if (ordinal * LOCATION_BYTES !== part.places.length) {
    throw new RegisterError('compile', `holds ${part.places.length / LOCATION_BYTES} shard places for ${ordinal} live IDs; recompile the prior release (or remove its folder) and retry`, part.placesFile);
  }
  return absent;
}

/** Whether the live line whose fingerprint starts at `at` has the fingerprint `fp`. */
export const sameFingerprint = (part: DiffBasePartition, at: number, fp: string): boolean => part.text.startsWith(fp, at) && part.text.charCodeAt(at + fp.length) === 10;

/** Where the predecessor's shard of partition `p`'s live ID number `ordinal` sits, its pack numbered in shard_packs. */
export function priorPlace(source: DiffBaseSource, part: DiffBasePartition, p: number, ordinal: number): ShardPlace {
  let base = 0;
  for (const [first, firstPack] of source.packRanges) if (first <= p) base = firstPack;
  const b = part.places;
  const at = ordinal * LOCATION_BYTES;
  return {
    pack: releasePack(b.readUInt32LE(at), base), offset: b.readUInt32LE(at + 4), length: b.readUInt32LE(at + 8), checksum: b.readUInt32LE(at + 12),
    coreEnd: b.readUInt32LE(at + 16), bridgesStart: b.readUInt32LE(at + 20), bridgesEnd: b.readUInt32LE(at + 24),
    tailStart: b.readUInt32LE(at + 28), digest0: b.readUInt32LE(at + 32), digest1: b.readUInt32LE(at + 36),
  };
}

/**
 * The predecessor's diff base in `distDir`, if its compiled folder holds one for this very release (same manifest)
 * cut into the same partitions; null otherwise, and the compile reads the predecessor's tables instead.
 */
export function findDiffBase(distDir: string, prior: ReleaseInput, partitions: number): DiffBaseSource | null {
  const privateDir = join(distDir, prior.stamp, PRIVATE_DIR);
  try {
    // Changed entities are read from the predecessor's shards: they must be in this compiler's dist format.
    if ((JSON.parse(readFileSync(join(distDir, prior.stamp, MANIFEST_FILE), 'utf8')) as { format?: string }).format !== DIST_FORMAT) return null;
    const meta = JSON.parse(readFileSync(join(privateDir, DIFF_BASE_DIR, 'meta.json'), 'utf8')) as DiffBaseMeta;
    const want = diffBaseMeta(prior, partitions, []);
    if (meta.format !== want.format || meta.partitions !== want.partitions || meta.source !== want.source) return null;
    const manifest = JSON.parse(readFileSync(join(privateDir, MANIFEST_FILE), 'utf8')) as { files: Record<string, { sha256: string }> };
    const sha256: Record<string, string> = {};
    for (let p = 0; p < partitions; p++) {
      for (const name of [partitionFile(p), locationFile(p)]) {
        const rel = `${DIFF_BASE_DIR}/${name}`;
        if (!manifest.files[rel]) return null;
        sha256[rel] = manifest.files[rel].sha256;
      }
    }
    return { dir: join(privateDir, DIFF_BASE_DIR), sha256, publicDir: join(distDir, prior.stamp, PUBLIC_DIR), packRanges: meta.packRanges, shardBytes: meta.shardBytes };
  } catch {
    return null;
  }
}
