// The keys file (keys.json): its format, validation, atomic rewrite, and issuing, listing and revoking keys.
//
// A key is `rk_<id>_<secret>`: id 8 hex digits (public, used to find the record), secret base64url of 24 random
// bytes (192 bits). Only sha256(secret) in hex is stored, so the file does not let anyone call the API.

import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import type { KeyRecord } from '../interfaces.ts';

/** One entry of the keys file as stored. Unknown fields are kept when the file is rewritten. */
export interface KeyFileEntry {
  id: string;
  name: string;
  /** sha256 of the secret, 64 hex digits. */
  hash: string;
  /** `name`: the plan's name as GET /key reports it (optional, older files have none). */
  plan: { quota: number; rate: number; name?: string | null };
  /**
   * `provider` scopes the key to a provider's notices; `organisation` and `access_model` are reported by GET /key;
   * legacy allowed* lists are accepted and ignored.
   */
  meta: {
    provider?: string | null;
    organisation?: string | null;
    access_model?: string | null;
    allowedProviders?: unknown;
    allowedCountries?: unknown;
    allowedCompetitions?: unknown;
    [k: string]: unknown;
  };
  expires_at: string | null;
  revoked: boolean;
  created_at: string;
  [k: string]: unknown;
}

export interface KeyFile {
  keys: KeyFileEntry[];
  [k: string]: unknown;
}

/** What listing shows of a key: the record the server uses plus when it was issued; never the hash. */
export interface KeyListing extends KeyRecord {
  created_at: string;
}

export const DEFAULT_KEYS_FILE = 'keys.json';
export const DEFAULT_QUOTA = 1000;
export const DEFAULT_RATE = 2;

export const KEY_ID = /^[0-9a-f]{8}$/;
export const KEY_SECRET = /^[A-Za-z0-9_-]{32}$/;
/** A whole key; the id has a fixed length, so `_` inside the secret is no problem. */
export const API_KEY = /^rk_([0-9a-f]{8})_([A-Za-z0-9_-]{32})$/;
const HASH = /^[0-9a-f]{64}$/;
/** Provider slugs as the register spells them (transfermarkt, api_football, footballdatabase_eu). */
export const PROVIDER_SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Plan names and access models: short machine words (`preview`, `partner_preview`). */
export const PLAN_WORD = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Why a free-text label (a key's name, its organisation) is refused, or null when it is fine. */
export function labelProblem(value: string): string | null {
  if (value.trim() === '') return 'must not be empty';
  if (value.length > 200 || /[\u0000-\u001f\u007f]/.test(value)) return 'must be at most 200 characters, without control characters';
  return null;
}

/** sha256 of a key's secret part, hex: what the keys file stores. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Parses and checks keys-file text; throws RegisterError naming the file and the entry. Never echoes hashes. */
export function parseKeyFile(text: string, file: string): KeyFile {
  const { data, problems } = readKeyFileText(text, file);
  if (problems.length) throw new RegisterError('keys', problems[0].message, file);
  return data;
}

/** One entry that failed validation: where, what, and what of it is still legible. */
export interface KeyProblem {
  /** `key 3 (abcd1234): hash must be …`, never the hash or another value of the entry. */
  message: string;
  /** The entry's id, when that much is legible. */
  id: string | null;
  /** The entry legibly says `"revoked": true`: a revocation applies even when the rest of the entry is broken. */
  revoked: boolean;
}

/**
 * Parses keys-file text entry by entry: `data.keys` holds the valid entries (defaults filled in), `problems` one
 * line per invalid entry. Throws RegisterError only when the file as a whole is unreadable (not JSON, no "keys" array).
 */
export function readKeyFileText(text: string, file: string): { data: KeyFile; problems: KeyProblem[] } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // The parser's message can quote the file's text; say only where.
    throw new RegisterError('keys', 'not valid JSON', file);
  }
  if (!isObject(data) || !Array.isArray(data.keys)) throw new RegisterError('keys', 'expected an object with a "keys" array', file);
  const seen = new Set<string>();
  const problems: KeyProblem[] = [];
  const valid = data.keys.filter((entry, i) => {
    const problem = checkEntry(entry, seen);
    if (problem === null) return true;
    const e = isObject(entry) ? entry : {};
    const id = typeof e.id === 'string' && KEY_ID.test(e.id) ? e.id : null;
    problems.push({ message: `key ${i + 1}${id ? ` (${id})` : ''}: ${problem}`, id, revoked: e.revoked === true });
    return false;
  });
  return { data: { ...data, keys: valid as KeyFileEntry[] }, problems };
}

/** What is wrong with one entry (null: nothing; the entry's defaults are then filled in). */
function checkEntry(entry: unknown, seen: Set<string>): string | null {
  if (!isObject(entry)) return 'not an object';
  const e = entry;
  if (typeof e.id !== 'string' || !KEY_ID.test(e.id)) return 'id must be 8 lowercase hex digits';
  if (seen.has(e.id)) return 'duplicate id';
  seen.add(e.id);
  if (typeof e.name !== 'string' || e.name.trim() === '') return 'name must be a non-empty string';
  if (typeof e.hash !== 'string' || !HASH.test(e.hash)) return 'hash must be 64 lowercase hex digits (sha256 of the secret)';
  if (!isObject(e.plan)) return 'plan must be an object {quota, rate}';
  const plan = e.plan;
  if (!Number.isSafeInteger(plan.quota) || (plan.quota as number) < 0) return 'plan.quota must be a non-negative integer';
  if (!Number.isSafeInteger(plan.rate) || (plan.rate as number) < 1) return 'plan.rate must be a positive integer';
  if (plan.name != null && (typeof plan.name !== 'string' || !PLAN_WORD.test(plan.name))) return 'plan.name must be a short lowercase word (a-z, 0-9, _ . -)';
  const meta = e.meta ?? {};
  if (!isObject(meta)) return 'meta must be an object';
  const provider = meta.provider;
  if (provider !== undefined && provider !== null && (typeof provider !== 'string' || !PROVIDER_SLUG.test(provider))) return 'meta.provider must be a provider slug';
  const organisation = meta.organisation;
  if (organisation != null && (typeof organisation !== 'string' || labelProblem(organisation) !== null)) return 'meta.organisation must be a non-empty string of at most 200 characters';
  const access = meta.access_model;
  if (access != null && (typeof access !== 'string' || !PLAN_WORD.test(access))) return 'meta.access_model must be a short lowercase word (a-z, 0-9, _ . -)';
  const expires = e.expires_at ?? null;
  if (expires !== null && (typeof expires !== 'string' || Number.isNaN(Date.parse(expires)))) return 'expires_at must be an ISO date-time or null';
  const revoked = e.revoked ?? false;
  if (typeof revoked !== 'boolean') return 'revoked must be true or false';
  const created = e.created_at ?? '';
  if (typeof created !== 'string') return 'created_at must be a string';
  e.meta = meta;
  e.expires_at = expires;
  e.revoked = revoked;
  e.created_at = created;
  return null;
}

/** The server's view of an entry: plan and scope only; legacy meta.allowed* deliberately left out. */
export function toKeyRecord(e: KeyFileEntry): KeyRecord {
  return {
    id: e.id,
    name: e.name,
    quota: e.plan.quota,
    rate: e.plan.rate,
    provider: typeof e.meta.provider === 'string' ? e.meta.provider : null,
    plan: typeof e.plan.name === 'string' ? e.plan.name : null,
    organisation: typeof e.meta.organisation === 'string' ? e.meta.organisation : null,
    access_model: typeof e.meta.access_model === 'string' ? e.meta.access_model : null,
    expires_at: e.expires_at,
    revoked: e.revoked,
  };
}

/** Reads and checks the keys file; a missing file reads as no keys. */
export async function readKeyFile(file: string): Promise<KeyFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [] };
    throw new RegisterError('keys', `cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, file);
  }
  return parseKeyFile(text, file);
}

/**
 * Replaces the keys file atomically (temp file, fsync, rename, fsync of the directory), so a running server
 * polling it sees either the old or the new version, never half of one.
 */
export async function writeKeyFile(file: string, data: KeyFile): Promise<void> {
  const path = resolve(file);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, 'wx', 0o600);
    await fh.writeFile(JSON.stringify(data, null, 2) + '\n');
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, path);
    const dir = await open(dirname(path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch (e) {
    await fh?.close().catch(() => {});
    await unlink(tmp).catch(() => {}); // gone already if the rename happened
    throw new RegisterError('keys', `cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, file);
  }
}

/** Options of addKey. */
export interface AddKeyOptions {
  /** Keys file to add to; created if missing. Default "keys.json". Ignored when `repository` is given. */
  file?: string;
  /** Where the key is stored instead of a file (a state store's key table). Default: the keys file. */
  repository?: KeyRepository;
  /** Partner or purpose, shown in listings. */
  name: string;
  /** Monthly lookup allowance. Default 1000. */
  quota?: number;
  /** Costing requests per rolling second. Default 2. */
  rate?: number;
  /** Provider slug for a provider's own key (unlocks its notices). Default none. */
  provider?: string | null;
  /** The plan's name, reported by GET /key (e.g. `preview`). Default none. */
  plan?: string | null;
  /** Who the key is issued to, reported by GET /key. Default none. */
  organisation?: string | null;
  /** How the key was granted, reported by GET /key (e.g. `partner_preview`). Default none. */
  accessModel?: string | null;
  /** Expiry: an ISO date (the key works through that day, UTC) or date-time. Default never. */
  expires?: string | null;
  /** Issue time, for tests. Default now. */
  now?: Date;
}

/** Where keys are kept: the keys file, or a key table in the state store (runtime/keys/key-repository.ts). */
export interface KeyRepository {
  /** The file or store, for messages (never a password). */
  readonly label: string;
  /** Every entry as stored (the caller validates). */
  entries(): Promise<unknown[]>;
  /** Adds `entry` unless its id is taken; false when taken. */
  insert(entry: KeyFileEntry): Promise<boolean>;
  /** Marks key `id` revoked; its entry, or null when there is no such key. */
  revoke(id: string): Promise<KeyFileEntry | null>;
  /** Changes whenever a key is added or revoked: what a running server polls. */
  version(): Promise<string>;
  close(): Promise<void>;
}

/** Issues a key: stores its hash and returns the record and the key itself, which is never shown again. */
export async function addKey(options: AddKeyOptions): Promise<{ record: KeyListing; key: string }> {
  const repository = options.repository ?? fileRepository(options.file ?? DEFAULT_KEYS_FILE);
  const now = options.now ?? new Date();
  const name = options.name?.trim();
  if (!name) throw new RegisterError('keys', 'a key needs a --name');
  const nameProblem = labelProblem(name);
  if (nameProblem) throw new RegisterError('keys', `--name ${nameProblem}`);
  const quota = options.quota ?? DEFAULT_QUOTA;
  const rate = options.rate ?? DEFAULT_RATE;
  if (!Number.isSafeInteger(quota) || quota < 0) throw new RegisterError('keys', `--quota must be a non-negative integer, got ${quota}`);
  if (!Number.isSafeInteger(rate) || rate < 1) throw new RegisterError('keys', `--rate must be a positive integer, got ${rate}`);
  const provider = options.provider ?? null;
  if (provider !== null && !PROVIDER_SLUG.test(provider)) throw new RegisterError('keys', `--provider must be a provider slug (lowercase letters, digits, _ and -), got ${JSON.stringify(provider)}`);
  const plan = options.plan ?? null;
  if (plan !== null && !PLAN_WORD.test(plan)) throw new RegisterError('keys', `--plan must be a short lowercase word (a-z, 0-9, _ . -), got ${JSON.stringify(plan)}`);
  const organisation = options.organisation?.trim() || null;
  const orgProblem = organisation === null ? null : labelProblem(organisation);
  if (orgProblem) throw new RegisterError('keys', `--organisation ${orgProblem}`);
  const accessModel = options.accessModel ?? null;
  if (accessModel !== null && !PLAN_WORD.test(accessModel)) {
    throw new RegisterError('keys', `--access-model must be a short lowercase word (a-z, 0-9, _ . -), got ${JSON.stringify(accessModel)}`);
  }
  const expires_at = options.expires == null ? null : parseExpiry(options.expires, now);
  for (;;) {
    const id = randomBytes(4).toString('hex');
    const secret = randomBytes(24).toString('base64url');
    const entry: KeyFileEntry = {
      id,
      name,
      hash: hashSecret(secret),
      // Fields that are not set stay out of the entry, so a file written before they existed reads the same.
      plan: plan === null ? { quota, rate } : { quota, rate, name: plan },
      meta: {
        ...(provider ? { provider } : {}),
        ...(organisation !== null ? { organisation } : {}),
        ...(accessModel !== null ? { access_model: accessModel } : {}),
      },
      expires_at,
      revoked: false,
      created_at: now.toISOString(),
    };
    // An id already taken (one in four billion per key) is drawn again.
    if (await repository.insert(entry)) return { record: listing(entry), key: `rk_${id}_${secret}` };
  }
}

/** Every key, in the order stored, without hashes. */
export async function listKeys(options: { file?: string; repository?: KeyRepository } = {}): Promise<KeyListing[]> {
  const repository = options.repository ?? fileRepository(options.file ?? DEFAULT_KEYS_FILE);
  const { data, problems } = readKeyFileText(JSON.stringify({ keys: await repository.entries() }), repository.label);
  if (problems.length) throw new RegisterError('keys', problems[0].message, repository.label);
  return data.keys.map(listing);
}

/** Marks key `id` revoked (every running server refuses it within a second). Revoking twice is harmless. */
export async function revokeKey(id: string, options: { file?: string; repository?: KeyRepository } = {}): Promise<KeyListing> {
  const repository = options.repository ?? fileRepository(options.file ?? DEFAULT_KEYS_FILE);
  if (!KEY_ID.test(id)) throw new RegisterError('keys', `not a key id (8 hex digits): ${JSON.stringify(id)}`, repository.label);
  const entry = await repository.revoke(id);
  if (!entry) throw new RegisterError('keys', `no key with id ${id}`, repository.label);
  return listing(entry);
}

/** The keys file as a KeyRepository: each change a locked read-modify-write and an atomic rewrite. */
export function fileRepository(file: string): KeyRepository {
  return {
    label: file,
    entries: async () => (await readKeyFile(file)).keys,
    insert: (entry) =>
      withFileLock(file, async () => {
        const data = await readKeyFile(file);
        if (data.keys.some((k) => k.id === entry.id)) return false;
        data.keys.push(entry);
        await writeKeyFile(file, data);
        return true;
      }),
    revoke: (id) =>
      withFileLock(file, async () => {
        const data = await readKeyFile(file);
        const entry = data.keys.find((k) => k.id === id);
        if (!entry) return null;
        if (!entry.revoked) {
          entry.revoked = true;
          await writeKeyFile(file, data);
        }
        return entry;
      }),
    version: async () => {
      try {
        const s = await stat(file, { bigint: true });
        return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
      } catch {
        return 'missing';
      }
    },
    close: async () => {},
  };
}

function listing(e: KeyFileEntry): KeyListing {
  return { ...toKeyRecord(e), created_at: e.created_at };
}

/** A bare date means "through that day": the key expires at its last millisecond, UTC. */
function parseExpiry(value: string, now: Date): string {
  const text = value.trim();
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T23:59:59.999Z`) : Date.parse(text);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}/.test(text)) throw new RegisterError('keys', `--expires must be an ISO date (2027-06-30) or date-time, got ${JSON.stringify(value)}`);
  if (ms <= now.getTime()) throw new RegisterError('keys', `--expires ${text} is already past`);
  return new Date(ms).toISOString();
}

/** Serialises read-modify-write of the keys file between CLI runs (an O_EXCL lock file next to it). */
async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${resolve(file)}.lock`;
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await (await open(lock, 'wx')).close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new RegisterError('keys', `cannot create lock file ${lock} (${(e as NodeJS.ErrnoException).code})`, file);
      if (Date.now() > deadline) throw new RegisterError('keys', `another keys command holds ${lock}; if none is running, delete that file`, file);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => {});
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
