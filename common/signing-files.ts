// The Node side of common/signing.ts: key files, `--trust` values, and the signature files of a dist on disk.
// Formats and names are documented at the top of common/signing.ts; docs/integrity.md says why.
import { chmod, open, readFile, writeFile } from 'node:fs/promises';
import { writeAtomically } from './durable-file.ts';
import { join } from 'node:path';
import { INDEX_FILE, MANIFEST_FILE, PUBLIC_DIR, type DistIndex, INDEX_SIG_FILE, manifestSigPath, MANIFEST_SIG_FILE } from './dist-layout.ts';
import { openIndex } from './index-file.ts';
import { generateSigningKey, isPublicKeyText, parsePublicKey, parseSigningKey, publicKeyFileText, PUB_SUFFIX, signBytes, SIGNS_INDEX, SIGNS_MANIFEST, trustedKeys, type SigningKey, type TrustedKey, type TrustedKeys, type VerifyResult } from './signing.ts';
import { TrustedSet } from './trust.ts';
import { fileMarkStore } from './trust-mark-file.ts';

/**
 * Writes a new key pair: the private key to `out` (created with mode 0600, refusing to overwrite a file), the public
 * key to `out.pub`. Returns the key ID.
 */
export async function writeNewSigningKey(out: string): Promise<{ keyId: string; publicKeyPath: string }> {
  const key = await generateSigningKey();
  // 'wx' fails on an existing file: a key is never replaced by accident (the releases it signed would be orphaned).
  const fh = await open(out, 'wx', 0o600);
  try {
    await fh.writeFile(key.privateKeyFile);
  } finally {
    await fh.close();
  }
  await chmod(out, 0o600); // whatever the umask
  const publicKeyPath = `${out}${PUB_SUFFIX}`;
  await writeFile(publicKeyPath, publicKeyFileText(key.publicKeyText), { flag: 'wx' });
  return { keyId: key.keyId, publicKeyPath };
}

/** The signing key in the private key file at `path`. Throws an Error naming the file. */
export async function readSigningKey(path: string): Promise<SigningKey> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`${path}: cannot read the signing key (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return await parseSigningKey(text);
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
}

/** One `--trust` value: the key itself (`ed25519:…`) or the path of a .pub file. Throws an Error naming the value. */
async function readTrustValue(value: string): Promise<TrustedKey> {
  if (isPublicKeyText(value)) return parsePublicKey(value);
  let text: string;
  try {
    text = await readFile(value, 'utf8');
  } catch (e) {
    throw new Error(`--trust ${value}: neither a public key (ed25519:…) nor a readable .pub file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return await parsePublicKey(text);
  } catch (e) {
    throw new Error(`--trust ${value}: ${(e as Error).message}`);
  }
}

/** The trusted keys of several `--trust` values (rotation: old and new key at once). */
export async function readTrust(values: readonly string[]): Promise<TrustedKeys> {
  return trustedKeys(await Promise.all(values.map(readTrustValue)));
}

/** A file's text, or null when it does not exist. */
async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

export interface DistSignOptions {
  /** ISO instant; default now (the signing moment). One run passes one instant, so its files agree. */
  signedAt?: string;
  validDays?: number;
}

/** Signs `<stamp>/public/manifest.json` of a compiled stamp: writes `<stamp>/public/manifest.json.sig`. */
export async function signStampManifest(dist: string, stamp: string, key: SigningKey, opts: DistSignOptions = {}): Promise<string> {
  const bytes = await readFile(join(dist, stamp, PUBLIC_DIR, MANIFEST_FILE));
  const sig = await signBytes(bytes, key, { signs: SIGNS_MANIFEST, stamp, ...opts });
  await writeAtomically(join(dist, stamp, PUBLIC_DIR), MANIFEST_SIG_FILE, sig);
  return sig;
}

/** Signs dist/index.json as it is now: writes dist/index.json.sig (after index.json, see docs/integrity.md). */
export async function signDistIndex(dist: string, key: SigningKey, opts: DistSignOptions = {}): Promise<string> {
  const text = await readFile(join(dist, INDEX_FILE), 'utf8');
  const index = openIndex(text);
  if (!index.next) throw new Error(`${join(dist, INDEX_FILE)} lists no stamp: nothing to sign`);
  const sig = await signBytes(text, key, { signs: SIGNS_INDEX, stamp: index.next, ...opts });
  await writeAtomically(dist, INDEX_SIG_FILE, sig);
  return sig;
}

/** Checks a stamp's manifest signature on disk. */
async function verifyStampSignature(dist: string, stamp: string, set: TrustedSet, now: Date): Promise<VerifyResult> {
  const bytes = await readFile(join(dist, stamp, PUBLIC_DIR, MANIFEST_FILE)).catch(() => null);
  if (bytes === null) {
    const detail = `${stamp}/${PUBLIC_DIR}/${MANIFEST_FILE} is missing, nothing to verify`;
    return { ok: false, reason: 'missing', message: `${manifestSigPath(stamp)}: ${detail}`, detail };
  }
  return set.checkManifest(await readOptional(join(dist, manifestSigPath(stamp))), { bytes }, stamp, now);
}

/** The values of one `--trust` option: comma-separated (citty keeps only the last of a repeated option). */
export const splitTrust = (value: string | undefined): string[] => (value ?? '').split(',').map((v) => v.trim()).filter((v) => v !== '');

/** What `register verify --trust` found about a dist's signatures: one line per problem, naming the file. */
export interface SignatureVerdict {
  index: string[];
  stamps: Map<string, string[]>;
  /** Key ID per stamp whose signature verified. */
  signedBy: Map<string, string>;
}

/**
 * Checks index.json's signature and every compiled stamp's (`stamps`) against `trusted` at `now`, through the one
 * trust check (common/trust.ts). Its rollback mark, read only: the one a `serve --trust` or `pull --trust` of this
 * dist saved beside it, raised by what the dist itself shows (its newest signed stamp is what `next` has reached), so
 * an older index.json put back over a newer signed stamp it does not list is named as a rollback.
 */
export async function verifyDistSignatures(dist: string, stamps: readonly string[], trusted: TrustedKeys, now: Date): Promise<SignatureVerdict> {
  const verdict: SignatureVerdict = { index: [], stamps: new Map(), signedBy: new Map() };
  const checker = await TrustedSet.open({ trusted, readOnly: true });
  for (const stamp of stamps) {
    const r = await verifyStampSignature(dist, stamp, checker, now);
    verdict.stamps.set(stamp, r.ok ? [] : [`${PUBLIC_DIR}/${MANIFEST_SIG_FILE}: ${r.reason}: ${r.detail}`]);
    if (r.ok) verdict.signedBy.set(stamp, r.keyId);
  }
  const newestSigned = [...verdict.signedBy.keys()].sort().at(-1) ?? null;
  let set: TrustedSet;
  try {
    set = await TrustedSet.open({ trusted, store: fileMarkStore(dist), evidence: { next: newestSigned }, readOnly: true });
  } catch (e) {
    verdict.index.push((e as Error).message);
    set = await TrustedSet.open({ trusted, evidence: { next: newestSigned }, readOnly: true });
  }
  let text: string;
  let index: DistIndex;
  try {
    text = await readFile(join(dist, INDEX_FILE), 'utf8');
    index = openIndex(text);
  } catch {
    verdict.index.push(`${INDEX_SIG_FILE}: index.json cannot be read, so its signature cannot be checked`);
    return verdict;
  }
  const r = await set.checkIndex(await readOptional(join(dist, INDEX_SIG_FILE)), text, { stamp: index.next, pointers: { v1: index.v1, next: index.next }, now });
  if (!r.ok) verdict.index.push(`${'pointer' in r ? INDEX_FILE : INDEX_SIG_FILE}: ${r.reason}: ${r.detail}`);
  return verdict;
}
