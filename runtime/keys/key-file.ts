// Issuing, listing and revoking keys, in whichever key repository the command names (the keys file by default).

import { randomBytes } from 'node:crypto';
import { RegisterError } from '../../common/errors.ts';
import type { KeyEntry, KeyRecord, KeyRepository } from '../interfaces.ts';
import { DEFAULT_KEYS_FILE, fileKeyRepository } from './file-key-repository.ts';
import { KEY_ID, PLAN_WORD, PROVIDER_SLUG, hashSecret, labelProblem, readKeyFileText, toKeyRecord } from './key-entry.ts';

/** What listing shows of a key: the record the server uses plus when it was issued; never the hash. */
export interface KeyListing extends KeyRecord {
  created_at: string;
}

export const DEFAULT_QUOTA = 1000;
export const DEFAULT_RATE = 2;

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

/** Issues a key: stores its hash and returns the record and the key itself, which is never shown again. */
export async function addKey(options: AddKeyOptions): Promise<{ record: KeyListing; key: string }> {
  const repository = options.repository ?? fileKeyRepository(options.file ?? DEFAULT_KEYS_FILE);
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
    const entry: KeyEntry = {
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
  const repository = options.repository ?? fileKeyRepository(options.file ?? DEFAULT_KEYS_FILE);
  const { data, problems } = readKeyFileText(JSON.stringify({ keys: await repository.entries() }), repository.label);
  if (problems.length) throw new RegisterError('keys', problems[0].message, repository.label);
  return data.keys.map(listing);
}

/** Marks key `id` revoked (every running server refuses it within a second). Revoking twice is harmless. */
export async function revokeKey(id: string, options: { file?: string; repository?: KeyRepository } = {}): Promise<KeyListing> {
  const repository = options.repository ?? fileKeyRepository(options.file ?? DEFAULT_KEYS_FILE);
  if (!KEY_ID.test(id)) throw new RegisterError('keys', `not a key id (8 hex digits): ${JSON.stringify(id)}`, repository.label);
  const entry = await repository.revoke(id);
  if (!entry) throw new RegisterError('keys', `no key with id ${id}`, repository.label);
  return listing(entry);
}

function listing(e: KeyEntry): KeyListing {
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
