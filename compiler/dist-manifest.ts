// Manifests of a compiled release: every file with size and sha256, and digests over the public part, the private
// part and the whole tree. `register verify` re-hashes against them.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { createHash } from 'node:crypto';
import { MANIFEST_FILE, PRIVATE_DIR, PUBLIC_DIR } from '../common/dist-layout.ts';
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
  return out.filter((f) => f !== MANIFEST_FILE).sort();
}

/**
 * Hashes every file under `root` (except its manifest.json). `known` holds files already hashed while they were
 * written (the content-addressed packs, most of the bytes); only the others are read back.
 */
export async function hashPart(root: string, known?: Map<string, { bytes: number; sha256: string }>): Promise<PartManifest> {
  const files: PartManifest['files'] = {};
  const digest = createHash('sha256');
  for (const f of await listFiles(root)) {
    const k = known?.get(f);
    const sha256 = k ? k.sha256 : await sha256File(join(root, f));
    const bytes = k ? k.bytes : (await stat(join(root, f))).size;
    files[f] = { bytes, sha256 };
    digest.update(`${sha256}  ${bytes}  ${f}\n`);
  }
  return { files, digest: digest.digest('hex') };
}

export const combineDigests = (pub: string, priv: string): string => createHash('sha256').update(`public ${pub}\nprivate ${priv}\n`).digest('hex');

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

/** Re-hashes a compiled release; returns one line per difference (empty when it matches). */
export async function verifyStamp(dir: string): Promise<string[]> {
  const problems: string[] = [];
  let top: StampManifest;
  try {
    top = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8'));
  } catch {
    return [`${MANIFEST_FILE}: missing or unreadable`];
  }
  const digests: Record<string, string> = {};
  for (const part of [PUBLIC_DIR, PRIVATE_DIR]) {
    let listed: PartManifest;
    try {
      listed = JSON.parse(await readFile(join(dir, part, MANIFEST_FILE), 'utf8'));
    } catch {
      problems.push(`${part}/${MANIFEST_FILE}: missing or unreadable`);
      continue;
    }
    const actual = await hashPart(join(dir, part));
    for (const [f, want] of Object.entries(listed.files)) {
      const got = actual.files[f];
      if (!got) problems.push(`${part}/${f}: listed in the manifest but missing`);
      else if (got.bytes !== want.bytes) problems.push(`${part}/${f}: ${got.bytes} bytes, manifest says ${want.bytes}`);
      else if (got.sha256 !== want.sha256) problems.push(`${part}/${f}: sha256 ${got.sha256} does not match the manifest (${want.sha256})`);
    }
    for (const f of Object.keys(actual.files)) if (!listed.files[f]) problems.push(`${part}/${f}: present but not in the manifest`);
    if (actual.digest !== listed.digest) problems.push(`${part}/${MANIFEST_FILE}: digest does not match its files`);
    digests[part] = actual.digest;
  }
  if (digests.public && digests.private) {
    if (top.public_digest !== digests.public || top.private_digest !== digests.private || top.digest !== combineDigests(digests.public, digests.private)) {
      problems.push(`${MANIFEST_FILE}: tree digest does not match`);
    }
  }
  return problems;
}
