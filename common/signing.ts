// Signed releases (docs/integrity.md, "Signatures"). WebCrypto Ed25519 only, no Node built-ins, so the same code
// signs in the compiler and verifies in `register verify`, `register serve --trust`, `register pull`, the browser and
// workerd. Pure: callers read and write the files (Node side: common/signing-files.ts).
//
// Files and formats (each one line of JSON or text, no trailing newline unless said):
// - Private key file FILE (mode 0600): {"format":"identity-register-signing-key/1","key_id":K,
//   "public_key":"ed25519:<base64 raw 32 bytes>","private_key":"<base64 PKCS#8>"} and a newline.
// - Public key file FILE.pub: `ed25519:<base64 of the raw 32-byte key>` and a newline. `--trust` takes the path of
//   such a file or that text itself.
// - Key ID: the first 16 hex digits of the sha256 of the raw 32-byte public key.
// - Signature files: `<stamp>/public/manifest.json.sig` signs the exact bytes of `<stamp>/public/manifest.json`;
//   `index.json.sig` (beside index.json) signs the exact bytes of `index.json`. Each holds one SignatureDoc as JSON
//   (keys in the order of the interface below). The signature is Ed25519 over signedMessage(doc): the format, what
//   it signs, the stamp, the sha256 of the signed bytes, the key ID, signed_at and valid_until, one per line. So the
//   doc commits to the exact bytes by their sha256, and a reader that fetched index.json and index.json.sig at two
//   moments sees the mismatch (`other_bytes`) and fetches again rather than trusting either.
// - signed_at is the signing moment unless given (reproducible signing: `--signed-at` or SOURCE_DATE_EPOCH, see
//   signingInstant), so a release of any age is signed valid from now; the same instant, key and bytes give the same
//   file (Ed25519 is deterministic). valid_until = signed_at + validity. For index.json the stamp is the index's
//   newest stamp (`next`).

/** Format tag of a signature document. */
const SIGNATURE_FORMAT = 'identity-register-signature/1';
/** Format tag of a private key file. */
const SIGNING_KEY_FORMAT = 'identity-register-signing-key/1';
/** Suffix of a signature file: it sits beside the file it signs (the dist's signature files: common/dist-layout.ts). */
export const SIG_SUFFIX = '.sig';
/** Suffix of the public key file written beside a private key file. */
export const PUB_SUFFIX = '.pub';
/** What a signature may sign: a stamp's public manifest (path relative to the stamp folder) or the dist's index. */
export type Signs = 'public/manifest.json' | 'index.json';
export const SIGNS_MANIFEST: Signs = 'public/manifest.json';
export const SIGNS_INDEX: Signs = 'index.json';
/** Default validity of a signature: long enough for a release cadence of months, short enough to bound a freeze. */
export const DEFAULT_VALID_DAYS = 180;

const PUBLIC_KEY_TEXT = /^ed25519:([A-Za-z0-9+/]{43}=)$/;
const ISO_SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const ED25519 = { name: 'Ed25519' } as const;

/** One signature file's content. */
export interface SignatureDoc {
  format: typeof SIGNATURE_FORMAT;
  signs: Signs;
  /** The stamp signed (for index.json: its newest stamp, `next`). */
  stamp: string;
  /** sha256 (hex) of the exact bytes signed. */
  sha256: string;
  key_id: string;
  /** ISO 8601 UTC to the second, e.g. 2026-11-01T00:00:00Z. */
  signed_at: string;
  valid_until: string;
  /** Ed25519 signature (base64) over signedMessage(doc). */
  signature: string;
}

/** A public key a verifier trusts. */
export interface TrustedKey {
  keyId: string;
  /** `ed25519:<base64>` as in a .pub file. */
  text: string;
  key: CryptoKey;
}

/** A private key read from its file, ready to sign. */
export interface SigningKey {
  keyId: string;
  publicKeyText: string;
  privateKey: CryptoKey;
}

/** Why a signature was not accepted. */
type SignatureFailure =
  | 'missing' // no signature file
  | 'malformed' // not a signature document of this format, or for another kind of file
  | 'untrusted_key' // signed by a key not among the trusted ones
  | 'bad_signature' // the Ed25519 signature does not verify
  | 'other_bytes' // an authentic signature, but over other bytes than those given (rewritten, or fetched mid-publish)
  | 'stamp_mismatch' // signs another stamp than the one expected
  | 'expired' // now is after valid_until
  | 'rollback'; // older than what was already accepted (common/trust.ts's rule; never returned here)

export type VerifyResult =
  | { ok: true; doc: SignatureDoc; keyId: string }
  | { ok: false; reason: SignatureFailure; message: string; /** The message without the signature file's name in front. */ detail: string };

// ---- bytes ----

const utf8 = new TextEncoder();

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const hex = (bytes: ArrayBuffer): string => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

// WebCrypto takes any view; the cast only widens what TypeScript accepts (a view over any backing store).
const asBytes = (data: Uint8Array | string): Uint8Array<ArrayBuffer> => (typeof data === 'string' ? utf8.encode(data) : (data as Uint8Array<ArrayBuffer>));

/** sha256 (hex) of bytes or of the UTF-8 of a string. */
export async function sha256Hex(data: Uint8Array | string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', asBytes(data)));
}

// ---- time ----

/** `iso` plus `days` whole days, as ISO 8601 UTC to the second. */
function addDays(iso: string, days: number): string {
  return new Date(Date.parse(iso) + days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Whole seconds since the epoch, as reproducible-builds' SOURCE_DATE_EPOCH writes them (no sign, no fraction). */
const EPOCH_SECONDS = /^\d{1,12}$/;
/** Least time a new signature must still be valid: one that lapses sooner would be refused before it is published. */
const MIN_VALID_MS = 86_400_000;

/**
 * The signed_at of a signing run: `signedAt` (a command line's `--signed-at`) if given, else `sourceDateEpoch` (the
 * SOURCE_DATE_EPOCH environment variable, the reproducible-builds convention) if set, else `now`. Throws naming the
 * value when either is malformed.
 */
export function signingInstant(opts: { signedAt?: string; sourceDateEpoch?: string; now: Date }): string {
  if (opts.signedAt !== undefined) return normaliseInstant(opts.signedAt);
  const epoch = opts.sourceDateEpoch;
  if (epoch !== undefined && epoch !== '') {
    if (!EPOCH_SECONDS.test(epoch)) throw new Error(`SOURCE_DATE_EPOCH=${JSON.stringify(epoch)} is not a whole number of seconds since 1970-01-01T00:00:00Z (e.g. 1793491200)`);
    return isoSecond(Number(epoch) * 1000);
  }
  return isoSecond(opts.now.getTime());
}

/**
 * Refuses (throws) a signature from `signedAt` for `days` days that is expired at `now` or expires within a day of
 * it: written, it would be refused by every `--trust` reader before it could be published.
 */
export function checkLifetime(signedAt: string, days: number, now: Date): void {
  const until = addDays(signedAt, days);
  if (Date.parse(until) - now.getTime() >= MIN_VALID_MS) return;
  const state = Date.parse(until) <= now.getTime() ? 'already expired' : 'expiring within a day';
  throw new Error(`a signature made at ${signedAt}, valid ${days} days, expires at ${until}: ${state} at ${isoSecond(now.getTime())}; sign at a later --signed-at (or SOURCE_DATE_EPOCH), or give more --valid-days`);
}

const isoSecond = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An ISO 8601 UTC instant normalised to the second (signed_at given on a command line). Throws on another text. */
export function normaliseInstant(text: string): string {
  const t = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(t)) throw new Error(`${JSON.stringify(text)} is not an ISO 8601 instant (e.g. 2026-11-01T00:00:00Z)`);
  return new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// ---- keys ----

/** Key ID of a raw 32-byte public key: first 16 hex digits of its sha256. */
export async function keyIdOf(rawPublicKey: Uint8Array): Promise<string> {
  return (await sha256Hex(rawPublicKey)).slice(0, 16);
}

/** A new key pair: the private key file's text (with newline) and the public key text (`ed25519:…`). */
export async function generateSigningKey(): Promise<{ keyId: string; privateKeyFile: string; publicKeyText: string }> {
  const pair = (await crypto.subtle.generateKey(ED25519, true, ['sign', 'verify'])) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey));
  const keyId = await keyIdOf(raw);
  const publicKeyText = `ed25519:${toBase64(raw)}`;
  const privateKeyFile = `${JSON.stringify({ format: SIGNING_KEY_FORMAT, key_id: keyId, public_key: publicKeyText, private_key: toBase64(pkcs8) })}\n`;
  return { keyId, privateKeyFile, publicKeyText };
}

/** The text of a public key file for `publicKeyText` (with newline). */
export const publicKeyFileText = (publicKeyText: string): string => `${publicKeyText}\n`;

/** Whether a `--trust` value is a key itself (rather than the path of a .pub file). */
export const isPublicKeyText = (value: string): boolean => PUBLIC_KEY_TEXT.test(value.trim());

/** A trusted key from the text of a .pub file or a key given inline. Throws an Error saying what is wrong. */
export async function parsePublicKey(text: string): Promise<TrustedKey> {
  const trimmed = text.trim();
  const m = PUBLIC_KEY_TEXT.exec(trimmed);
  if (!m) throw new Error('not an Ed25519 public key (expected one line `ed25519:<base64 of 32 bytes>`, as `register signing-key new` writes to FILE.pub)');
  const raw = fromBase64(m[1]);
  if (raw.length !== 32) throw new Error(`an Ed25519 public key is 32 bytes, this one ${raw.length}`);
  const key = await crypto.subtle.importKey('raw', raw, ED25519, true, ['verify']);
  return { keyId: await keyIdOf(raw), text: trimmed, key };
}

/** A signing key from the text of a private key file. Throws an Error saying what is wrong. */
export async function parseSigningKey(text: string): Promise<SigningKey> {
  let doc: { format?: unknown; key_id?: unknown; public_key?: unknown; private_key?: unknown };
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('not a signing key file (not JSON; `register signing-key new --out FILE` writes one)');
  }
  if (doc?.format !== SIGNING_KEY_FORMAT) throw new Error(`not a signing key file (format ${JSON.stringify(doc?.format)}, expected ${SIGNING_KEY_FORMAT})`);
  if (typeof doc.private_key !== 'string' || typeof doc.public_key !== 'string') throw new Error('signing key file lacks private_key or public_key');
  const pub = await parsePublicKey(doc.public_key);
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey('pkcs8', fromBase64(doc.private_key), ED25519, false, ['sign']);
  } catch (e) {
    throw new Error(`signing key file's private_key is not an Ed25519 PKCS#8 key (${(e as Error).message})`);
  }
  // A file whose halves do not belong together would sign what its own public key cannot verify.
  const probe = utf8.encode('identity-register key check');
  const sig = await crypto.subtle.sign(ED25519, privateKey, probe);
  if (!(await crypto.subtle.verify(ED25519, pub.key, sig, probe))) throw new Error('signing key file: private_key does not match public_key');
  if (doc.key_id !== undefined && doc.key_id !== pub.keyId) throw new Error(`signing key file names key_id ${JSON.stringify(doc.key_id)}, its public key's is ${pub.keyId}`);
  return { keyId: pub.keyId, publicKeyText: pub.text, privateKey };
}

/** Trusted keys by key ID (several at once, for rotation). */
export type TrustedKeys = ReadonlyMap<string, TrustedKey>;

export const trustedKeys = (keys: TrustedKey[]): TrustedKeys => new Map(keys.map((k) => [k.keyId, k]));

// ---- signing ----

/** The bytes an Ed25519 signature covers: every field of the doc but the signature, one per line. */
function signedMessage(doc: Omit<SignatureDoc, 'signature'>): Uint8Array<ArrayBuffer> {
  return utf8.encode(`${doc.format}\n${doc.signs}\n${doc.stamp}\n${doc.sha256}\n${doc.key_id}\n${doc.signed_at}\n${doc.valid_until}\n`);
}

export interface SignOptions {
  signs: Signs;
  stamp: string;
  /** ISO instant; default: now (the signing moment). */
  signedAt?: string;
  /** Days from signed_at to valid_until; default DEFAULT_VALID_DAYS. */
  validDays?: number;
}

/** The signature document (its file's exact text, no newline) for `bytes`. Same inputs, same text. */
export async function signBytes(bytes: Uint8Array | string, key: SigningKey, opts: SignOptions): Promise<string> {
  const signedAt = opts.signedAt ? normaliseInstant(opts.signedAt) : isoSecond(Date.now());
  const days = opts.validDays ?? DEFAULT_VALID_DAYS;
  if (!(days > 0) || !Number.isFinite(days)) throw new Error(`validity must be a positive number of days, not ${days}`);
  const body: Omit<SignatureDoc, 'signature'> = {
    format: SIGNATURE_FORMAT,
    signs: opts.signs,
    stamp: opts.stamp,
    sha256: await sha256Hex(asBytes(bytes)),
    key_id: key.keyId,
    signed_at: signedAt,
    valid_until: addDays(signedAt, days),
  };
  const signature = new Uint8Array(await crypto.subtle.sign(ED25519, key.privateKey, signedMessage(body)));
  return JSON.stringify({ ...body, signature: toBase64(signature) } satisfies SignatureDoc);
}

// ---- verifying ----

/** The signature document in `text`, or why it is not one. */
export function parseSignature(text: string): SignatureDoc | string {
  let doc: Partial<SignatureDoc>;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (doc?.format !== SIGNATURE_FORMAT) return `format ${JSON.stringify(doc?.format)}, expected ${SIGNATURE_FORMAT}`;
  for (const f of ['signs', 'stamp', 'sha256', 'key_id', 'signed_at', 'valid_until', 'signature'] as const) {
    if (typeof doc[f] !== 'string') return `field ${f} missing or not a string`;
  }
  if (!ISO_SECOND.test(doc.signed_at!) || !ISO_SECOND.test(doc.valid_until!)) return 'signed_at or valid_until is not ISO 8601 UTC to the second';
  if (!/^[0-9a-f]{64}$/.test(doc.sha256!)) return 'sha256 is not 64 hex digits';
  return doc as SignatureDoc;
}

export interface VerifyOptions {
  /** What the signature must sign. */
  signs: Signs;
  /** The stamp it must name (for index.json: the index's newest stamp, when the caller knows it). */
  stamp?: string;
  trusted: TrustedKeys;
  /** The clock, injectable for tests. */
  now: Date;
}

const fail = (reason: SignatureFailure, what: string, detail: string): VerifyResult => ({ ok: false, reason, message: `${what}: ${detail}`, detail });

/**
 * Checks the signature file's text (`null` when absent) against the exact bytes it should sign. Never throws: a
 * failure names its reason and says why in words that name the file signed.
 */
export async function verifyBytes(signatureText: string | null, bytes: Uint8Array | string, opts: VerifyOptions): Promise<VerifyResult> {
  return verifyDigest(signatureText, await sha256Hex(asBytes(bytes)), opts);
}

/**
 * verifyBytes for a reader that holds the sha256 (hex) of the signed bytes rather than the bytes: the runtime knows
 * a public manifest's sha256 from index.json and checks the manifest's bytes against it when it opens the stamp.
 */
export async function verifyDigest(signatureText: string | null, actual: string, opts: VerifyOptions): Promise<VerifyResult> {
  const what = `${opts.signs}${SIG_SUFFIX}`;
  if (signatureText === null) return fail('missing', what, 'no signature');
  const doc = parseSignature(signatureText);
  if (typeof doc === 'string') return fail('malformed', what, `not a signature (${doc})`);
  if (doc.signs !== opts.signs) return fail('malformed', what, `signs ${doc.signs}, not ${opts.signs}`);
  const key = opts.trusted.get(doc.key_id);
  if (!key) return fail('untrusted_key', what, `signed by key ${doc.key_id}, which is not trusted (trusted: ${[...opts.trusted.keys()].join(', ') || 'none'})`);
  let good = false;
  try {
    good = await crypto.subtle.verify(ED25519, key.key, fromBase64(doc.signature), signedMessage(doc));
  } catch {
    good = false;
  }
  if (!good) return fail('bad_signature', what, `signature does not verify with key ${doc.key_id}`);
  if (actual !== doc.sha256) return fail('other_bytes', what, `signs bytes with sha256 ${doc.sha256}, ${opts.signs} has ${actual}`);
  if (opts.stamp !== undefined && doc.stamp !== opts.stamp) return fail('stamp_mismatch', what, `signs stamp ${doc.stamp}, expected ${opts.stamp}`);
  if (opts.now.getTime() > Date.parse(doc.valid_until)) return fail('expired', what, `expired at ${doc.valid_until} (re-sign with \`register sign\`)`);
  return { ok: true, doc, keyId: doc.key_id };
}
