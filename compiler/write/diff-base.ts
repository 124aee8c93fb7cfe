// The diff base: what the next release's changelog needs to find what changed, kept in
// dist/<stamp>/private/diff-base/ one file per partition: each live ID with a fingerprint of its state, label and
// bridges, and each merged ID that kept bridges with those bridges. A successor compile reads its predecessor's
// diff base partition by partition instead of parsing the predecessor's 12M CSV rows again (which made it 20%
// slower than a first compile), and reads the predecessor's shard only for an ID whose fingerprint differs.
// Fingerprints keep it at ~35 bytes an ID (full bridge lists took 0.39 GiB at full size). It is compile-internal:
// never served, hashed into the private manifest like everything else.
import { createHash, hash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { DIST_FORMAT, MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR } from '../../common/dist-layout.ts';
import type { ReleaseInput } from '../read/release-input.ts';
import type { ContentFile } from './content-file.ts';

export const DIFF_BASE_DIR = 'diff-base';
const FORMAT = 2;

/** Identifies a diff base: the release it describes (by its manifest) and the partitioning it was cut by. */
export interface DiffBaseMeta {
  format: number;
  partitions: number;
  /** sha256 over the release's stamp and its listed files' paths and sha256s, in path order. */
  source: string;
}

/** Where a successor finds its predecessor's diff base (and the sha256 each partition file must have) and dist. */
export interface DiffBaseSource {
  dir: string;
  sha256: Record<string, string>;
  /** The predecessor's public/, to read an entity whose fingerprint changed. */
  publicDir: string;
}

/** The release a diff base describes, independent of how its release.json is laid out (key order, spacing). */
function releaseIdentity(release: ReleaseInput): string {
  const files = release.manifest.files;
  const listed = Object.keys(files).sort().map((path) => [path, files[path].sha256]);
  return createHash('sha256').update(JSON.stringify([release.stamp, listed])).digest('hex');
}

export const diffBaseMeta = (release: ReleaseInput, partitions: number): DiffBaseMeta => ({ format: FORMAT, partitions, source: releaseIdentity(release) });

export const partitionFile = (p: number): string => `p${String(p).padStart(4, '0')}.tsv`;

/**
 * What a live ID's line holds: 64 bits of sha256 over its state, label and bridges (the ID's own (provider,
 * namespace, external ID) rows, sorted and deduplicated, as JSON).
 */
export const fingerprint = (status: string, label: string, bridgesJson: string): string =>
  // One-shot: a Hash object per entity cost ~5% of stage 2. The bytes hashed are the same as two updates'.
  hash('sha256', JSON.stringify([status, label]) + bridgesJson, 'hex').slice(0, 16);

/** A live ID's line: `<id>\t1\t<fingerprint>`. */
export const liveLine = (id: string, fp: string): string => `${id}\t1\t${fp}`;
/** A merged ID's line, with the bridges that named it (it has no shard to read them back from): `<id>\t0\t<JSON>`. */
export const mergedLine = (id: string, bridgesJson: string): string => `${id}\t0\t${bridgesJson}`;

export type DiffBaseEntry = { id: string; live: true; fingerprint: string } | { id: string; live: false; bridgesJson: string };

/** Writes one partition's lines (in ID order) and returns the file for the private manifest. */
export function writeDiffBasePartition(privateDir: string, p: number, lines: string[]): ContentFile {
  const dir = join(privateDir, DIFF_BASE_DIR);
  mkdirSync(dir, { recursive: true });
  const bytes = Buffer.from(lines.length ? lines.join('\n') + '\n' : '', 'utf8');
  writeFileSync(join(dir, partitionFile(p)), bytes);
  return { path: `${DIFF_BASE_DIR}/${partitionFile(p)}`, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

export function writeDiffBaseMeta(privateDir: string, meta: DiffBaseMeta): void {
  mkdirSync(join(privateDir, DIFF_BASE_DIR), { recursive: true });
  writeFileSync(join(privateDir, DIFF_BASE_DIR, 'meta.json'), JSON.stringify(meta));
}

/** Reads one partition of a predecessor's diff base, checked against its private manifest. */
export function readDiffBasePartition(source: DiffBaseSource, p: number, onEntry: (e: DiffBaseEntry) => void): void {
  const rel = `${DIFF_BASE_DIR}/${partitionFile(p)}`;
  const bytes = readFileSync(join(source.dir, partitionFile(p)));
  if (createHash('sha256').update(bytes).digest('hex') !== source.sha256[rel]) {
    throw new RegisterError('compile', 'does not match its manifest; recompile the prior release (or remove its folder) and retry', `${source.dir}/${partitionFile(p)}`);
  }
  const text = bytes.toString('utf8');
  for (let pos = 0; pos < text.length; ) {
    const nl = text.indexOf('\n', pos);
    const t1 = text.indexOf('\t', pos);
    const id = text.slice(pos, t1);
    const rest = text.slice(t1 + 3, nl); // JSON text holds no raw tab or newline
    pos = nl + 1;
    onEntry(text.charCodeAt(t1 + 1) === 49 ? { id, live: true, fingerprint: rest } : { id, live: false, bridgesJson: rest });
  }
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
    const want = diffBaseMeta(prior, partitions);
    if (meta.format !== want.format || meta.partitions !== want.partitions || meta.source !== want.source) return null;
    const manifest = JSON.parse(readFileSync(join(privateDir, MANIFEST_FILE), 'utf8')) as { files: Record<string, { sha256: string }> };
    const sha256: Record<string, string> = {};
    for (let p = 0; p < partitions; p++) {
      const rel = `${DIFF_BASE_DIR}/${partitionFile(p)}`;
      if (!manifest.files[rel]) return null;
      sha256[rel] = manifest.files[rel].sha256;
    }
    return { dir: join(privateDir, DIFF_BASE_DIR), sha256, publicDir: join(distDir, prior.stamp, PUBLIC_DIR) };
  } catch {
    return null;
  }
}
