// Manifests of a compiled release: every file with size and sha256, and digests over the public part, the private
// part and the whole tree. `register verify` re-hashes against them.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { createHash } from 'node:crypto';
import { DIST_FORMAT, INDEX_FILE, MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR, MANIFEST_SIG_FILE as MANIFEST_SIG, type IndexedRelease } from '../common/dist-layout.ts';
import { openIndex } from '../common/index-file.ts';
import { PATCHES_DIR } from '../common/zstd-patch.ts';
import { sha256File } from './read/release-input.ts';

export interface PartManifest {
  files: Record<string, { bytes: number; sha256: string }>;
  digest: string;
}

export interface StampManifest {
  format: string;
  stamp: string;
  public_digest: string;
  private_digest: string;
  digest: string;
}

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(root, p).split(sep).join('/'));
    }
  };
  await walk(root);
  // The manifest's own signature (common/signing.ts) is written after it and vouches for it, so it is not listed in it.
  return out.filter((f) => f !== MANIFEST_FILE && f !== MANIFEST_SIG).sort();
}

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Files up to this size are hashed from one read rather than streamed. */
const SMALL_FILE_BYTES = 1024 * 1024;

/**
 * Hashes every file under `root` (except its manifest.json). `known` holds files already hashed while they were
 * written (the content-addressed packs, most of the bytes); only the others are read back.
 */
async function hashPart(root: string, known?: Map<string, { bytes: number; sha256: string }>): Promise<PartManifest> {
  const files: PartManifest['files'] = {};
  for (const f of await listFiles(root)) {
    const k = known?.get(f);
    const bytes = k ? k.bytes : (await stat(join(root, f))).size;
    // Most unknown files are small (a stamp's diff base is 512 of them): one read each, not a 1 MiB stream buffer.
    const sha256 = k ? k.sha256 : bytes <= SMALL_FILE_BYTES ? sha256Hex(await readFile(join(root, f))) : await sha256File(join(root, f));
    files[f] = { bytes, sha256 };
  }
  return { files, digest: digestOf(files) };
}

/** A part's digest: over its files in path order (listFiles' order), each as `sha256  bytes  path`. */
function digestOf(files: PartManifest['files']): string {
  const digest = createHash('sha256');
  for (const f of Object.keys(files).sort()) digest.update(`${files[f].sha256}  ${files[f].bytes}  ${f}\n`);
  return digest.digest('hex');
}

const combineDigests = (pub: string, priv: string): string => createHash('sha256').update(`public ${pub}\nprivate ${priv}\n`).digest('hex');

/** Writes public/manifest.json, private/manifest.json and manifest.json for the release at `dir`. */
export async function writeManifests(
  dir: string, stamp: string, format: string,
  known?: Map<string, { bytes: number; sha256: string }>, knownPrivate?: Map<string, { bytes: number; sha256: string }>,
): Promise<StampManifest> {
  const pub = await hashPart(join(dir, PUBLIC_DIR), known);
  const priv = await hashPart(join(dir, PRIVATE_DIR), knownPrivate);
  await writeFile(join(dir, PUBLIC_DIR, MANIFEST_FILE), JSON.stringify({ stamp, ...pub }));
  await writeFile(join(dir, PRIVATE_DIR, MANIFEST_FILE), JSON.stringify({ stamp, ...priv }));
  const top: StampManifest = { format, stamp, public_digest: pub.digest, private_digest: priv.digest, digest: combineDigests(pub.digest, priv.digest) };
  await writeFile(join(dir, MANIFEST_FILE), JSON.stringify(top));
  return top;
}


/**
 * The public files (path → bytes and sha256) of the compiled stamp folder `dir`, or null when it is not compiled in
 * this format: what a successor's compile inherits packs from and makes patches against.
 */
export async function readCompiledPublicFiles(dir: string): Promise<PartManifest['files'] | null> {
  try {
    const top = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as { format?: string };
    if (top.format !== DIST_FORMAT) return null;
    return ((JSON.parse(await readFile(join(dir, PUBLIC_DIR, MANIFEST_FILE), 'utf8')) as Partial<PartManifest>).files ?? null);
  } catch {
    return null;
  }
}

/**
 * The manifest at `path` (relative to the stamp folder `dir`), parsed, or a problem line: missing, not the bytes
 * index.json vouches for (`want`, when the stamp is published), or not JSON.
 */
async function readManifest<T>(dir: string, path: string, want: string | undefined, problems: string[]): Promise<T | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, path));
  } catch {
    problems.push(`${path}: missing or unreadable`);
    return null;
  }
  if (want !== undefined && sha256Hex(bytes) !== want) problems.push(`${path}: sha256 ${sha256Hex(bytes)} does not match ${INDEX_FILE} (${want})`);
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    problems.push(`${path}: not JSON`);
    return null;
  }
}

/**
 * Re-hashes a compiled release; returns one line per difference (empty when it matches). `listed`: the stamp's
 * entry in index.json when it is published, whose manifest sha256s the manifests must match (a stamp compiled but
 * not yet published, as a killed compile may leave, is checked against its own manifests alone).
 */
export async function verifyStamp(dir: string, listed?: IndexedRelease, publicOnly = false): Promise<string[]> {
  const problems: string[] = [];
  // A public-only copy has no stamp manifest (it covers the private part too): its public manifest is vouched for
  // by the sha256 index.json records for it, and checked below like any other.
  const top = publicOnly ? null : await readManifest<StampManifest>(dir, MANIFEST_FILE, listed?.sha256.manifest, problems);
  if (!top && !publicOnly) return problems;
  if (top && top.format !== DIST_FORMAT) problems.push(`${MANIFEST_FILE}: format ${JSON.stringify(top.format)}, expected ${DIST_FORMAT}`);
  if (top && top.stamp !== basename(dir)) problems.push(`${MANIFEST_FILE}: names stamp ${JSON.stringify(top.stamp)}, not its folder ${basename(dir)}`);
  const digests: Record<string, string> = {};
  for (const part of publicOnly ? [PUBLIC_DIR] : [PUBLIC_DIR, PRIVATE_DIR]) {
    const manifest = await readManifest<PartManifest & { stamp?: string }>(dir, `${part}/${MANIFEST_FILE}`, listed?.sha256[part === PUBLIC_DIR ? 'public' : 'private'], problems);
    if (!manifest) continue;
    if (manifest.stamp !== basename(dir)) problems.push(`${part}/${MANIFEST_FILE}: names stamp ${JSON.stringify(manifest.stamp)}, not its folder ${basename(dir)}`);
    const actual = await hashPart(join(dir, part));
    for (const [f, want] of Object.entries(manifest.files ?? {})) {
      const got = actual.files[f];
      // A pulled copy fetches a patch only to use it (mirror/pull.ts): one it did not need is not held, and not a
      // fault, since what it serves is the files patches make, checked themselves. Counted as listed for the digest.
      if (!got && publicOnly && part === PUBLIC_DIR && f.startsWith(`${PATCHES_DIR}/`)) actual.files[f] = want;
      else if (!got) problems.push(`${part}/${f}: listed in the manifest but missing`);
      else if (got.bytes !== want.bytes) problems.push(`${part}/${f}: ${got.bytes} bytes, manifest says ${want.bytes}`);
      else if (got.sha256 !== want.sha256) problems.push(`${part}/${f}: sha256 ${got.sha256} does not match the manifest (${want.sha256})`);
    }
    for (const f of Object.keys(actual.files)) if (!manifest.files?.[f]) problems.push(`${part}/${f}: present but not in the manifest`);
    actual.digest = digestOf(actual.files);
    if (actual.digest !== manifest.digest) problems.push(`${part}/${MANIFEST_FILE}: digest does not match its files`);
    digests[part] = actual.digest;
  }
  if (top && digests.public && digests.private) {
    if (top.public_digest !== digests.public || top.private_digest !== digests.private || top.digest !== combineDigests(digests.public, digests.private)) {
      problems.push(`${MANIFEST_FILE}: tree digest does not match`);
    }
  }
  return problems;
}

/** What `register verify` found for a whole dist: index.json's own problems, and each stamp's. */
export interface DistVerdict {
  index: string[];
  /** `publicOnly`: the stamp holds its public part alone (a pulled copy), checked against index.json. */
  stamps: { stamp: string; published: boolean; publicOnly: boolean; problems: string[] }[];
}

const absent = async (path: string): Promise<boolean> => (await stat(path).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : e))) === null;

/**
 * A copy of a published stamp holding its public part alone, as `register pull` and publish-public.sh leave it: the
 * index lists it (and so vouches for its public manifest), and neither its stamp manifest nor any of its private
 * folder is there. Any private file present, or a stamp manifest, means a full copy, checked in full: a damaged
 * private part is never passed off as one that is not held.
 */
async function isPublicOnly(dir: string, listed: IndexedRelease | undefined): Promise<boolean> {
  return listed !== undefined && (await absent(join(dir, MANIFEST_FILE))) && (await absent(join(dir, PRIVATE_DIR)));
}

/**
 * Verifies a dist from its root: index.json's seal, every stamp it lists (present, and matching the manifest sha256s
 * it records), and every compiled stamp folder against its manifests.
 */
export async function verifyDist(dist: string, stamps: string[]): Promise<DistVerdict> {
  const index: string[] = [];
  const entries = new Map<string, IndexedRelease>();
  let text: string | null = null;
  try {
    text = await readFile(join(dist, INDEX_FILE), 'utf8');
  } catch {
    index.push(`${INDEX_FILE}: missing or unreadable`);
  }
  if (text !== null) {
    try {
      for (const r of openIndex(text).releases) entries.set(r.stamp, r);
    } catch (e) {
      index.push(`${INDEX_FILE}: ${(e as Error).message}`);
    }
  }
  for (const stamp of entries.keys()) if (!stamps.includes(stamp)) index.push(`${INDEX_FILE}: lists ${stamp}, which is not in the dist`);
  const verdicts: DistVerdict['stamps'] = [];
  for (const stamp of stamps) {
    const listed = entries.get(stamp);
    const publicOnly = await isPublicOnly(join(dist, stamp), listed);
    verdicts.push({ stamp, published: listed !== undefined, publicOnly, problems: await verifyStamp(join(dist, stamp), listed, publicOnly) });
  }
  return { index, stamps: verdicts };
}
