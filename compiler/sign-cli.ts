// `register signing-key new` and `register sign`: making a key pair and signing a compiled dist (common/signing.ts
// says the formats, docs/integrity.md why). `compile --sign` signs through signDist too.
import { defineCommand } from 'citty';
import { join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import { STAMP } from '../common/ids.ts';
import { badValue, ioOf } from '../cli/command-line.ts';
import { readSigningKey, signDistIndex, signStampManifest, writeNewSigningKey, type DistSignOptions } from '../common/signing-files.ts';
import { INDEX_SIG_FILE, manifestSigPath } from '../common/dist-layout.ts';
import { checkLifetime, DEFAULT_VALID_DAYS, signingInstant, type SigningKey } from '../common/signing.ts';
import { listStamps } from './compile.ts';

/** `--valid-days`: a whole number of days from 1 to 3650. */
export function validDays(command: string, raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_VALID_DAYS;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= 3650)) throw badValue(command, `bad --valid-days ${JSON.stringify(raw)} (a whole number of days from 1 to 3650)`);
  return n;
}

/**
 * The signed_at of this run and its validity, refused (exit 1, naming the dates) when the signatures would be expired
 * or expire within a day: `--signed-at` if given, else SOURCE_DATE_EPOCH (reproducible signing), else now.
 */
export function signingTimeOf(command: string, signedAt: string | undefined, days: number, now = new Date()): DistSignOptions {
  let at: string;
  try {
    at = signingInstant({ signedAt, sourceDateEpoch: process.env.SOURCE_DATE_EPOCH, now });
  } catch (e) {
    throw badValue(command, `${signedAt !== undefined ? '--signed-at: ' : ''}${(e as Error).message}`);
  }
  try {
    checkLifetime(at, days, now);
  } catch (e) {
    throw new RegisterError(command, `refused: ${(e as Error).message}`);
  }
  return { signedAt: at, validDays: days };
}

/** The signing key of `--sign`/`--key`, or a refusal naming the file. */
export async function signingKeyOf(command: string, path: string): Promise<SigningKey> {
  try {
    return await readSigningKey(path);
  } catch (e) {
    throw new RegisterError(command, (e as Error).message);
  }
}

/**
 * Signs the public manifests of `stamps` and then index.json (last: a reader checks the index's signature first, and
 * it names the newest stamp). Returns the files written, relative to the dist.
 */
export async function signDist(dist: string, stamps: readonly string[], key: SigningKey, opts: DistSignOptions): Promise<string[]> {
  const written: string[] = [];
  for (const stamp of stamps) {
    await signStampManifest(dist, stamp, key, opts);
    written.push(manifestSigPath(stamp));
  }
  await signDistIndex(dist, key, opts);
  written.push(INDEX_SIG_FILE);
  return written;
}

const signingKeyNew = defineCommand({
  meta: { name: 'new', description: 'Make an Ed25519 signing key pair: the private key in FILE (readable by its owner only), the public key in FILE.pub; prints the key ID' },
  args: {
    out: { type: 'string', description: 'File to write the private key to (refused if it exists); the public key goes to FILE.pub', valueHint: 'FILE', required: true },
  },
  async run(ctx) {
    const io = ioOf(ctx);
    const out = ctx.args.out;
    let made;
    try {
      made = await writeNewSigningKey(out);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new RegisterError('signing-key', code === 'EEXIST' ? `${out} (or ${out}.pub) exists already: a key is never overwritten` : `${out}: ${code ?? (e as Error).message}`);
    }
    io.out(`${made.keyId}\n`);
    io.err(`[signing-key] key ${made.keyId}: private key in ${out} (keep it secret), public key in ${made.publicKeyPath} (give it to mirrors: --trust ${made.publicKeyPath})\n`);
  },
});

export const signingKeyCommand = defineCommand({
  meta: { name: 'signing-key', description: 'Manage the Ed25519 keys that sign releases' },
  subCommands: { new: signingKeyNew },
});

export const signCommand = defineCommand({
  meta: { name: 'sign', description: 'Sign compiled stamps (their public manifest) and index.json with a signing key; again before valid_until to extend it' },
  args: {
    dist: { type: 'string', description: 'Dist folder', valueHint: 'DIR', default: 'dist' },
    stamp: { type: 'string', description: 'Sign only this stamp (and index.json); default every compiled stamp', valueHint: 'STAMP' },
    key: { type: 'string', description: 'Private key file (`register signing-key new`)', valueHint: 'FILE', required: true },
    'valid-days': { type: 'string', description: `Days from the signing time to valid_until (default ${DEFAULT_VALID_DAYS})`, valueHint: 'N' },
    'signed-at': { type: 'string', description: 'Signing time, ISO 8601 (default: SOURCE_DATE_EPOCH if set, else now); the same time, key and dist give the same bytes', valueHint: 'TIME' },
  },
  async run(ctx) {
    const io = ioOf(ctx);
    const { dist, stamp } = ctx.args;
    if (stamp !== undefined && !STAMP.test(stamp)) throw badValue('sign', `bad --stamp ${JSON.stringify(stamp)} (e.g. 20261101T000000Z)`);
    const opts = signingTimeOf('sign', ctx.args['signed-at'], validDays('sign', ctx.args['valid-days']));
    const key = await signingKeyOf('sign', ctx.args.key);
    const compiled = await listStamps(dist);
    if (compiled.length === 0) throw new RegisterError('sign', `no compiled release under ${dist}/`);
    if (stamp !== undefined && !compiled.includes(stamp)) throw new RegisterError('sign', `no compiled release ${stamp} under ${dist}/`);
    let written: string[];
    try {
      written = await signDist(dist, stamp !== undefined ? [stamp] : compiled, key, opts);
    } catch (e) {
      throw new RegisterError('sign', (e as Error).message);
    }
    for (const f of written) io.err(`[sign] ${join(dist, f)}: signed by ${key.keyId}\n`);
  },
});
