// A stored key entry: its format, its checks, and the server's view of it. Every key repository stores entries of
// this one format (the keys file as JSON, SQLite and Redis one JSON text per key), and every reader checks them here.
//
// A key is `rk_<id>_<secret>`: id 8 hex digits (public, used to find the record), secret base64url of 24 random
// bytes (192 bits). Only sha256(secret) in hex is stored, so no store lets anyone call the API.

import { sha256Hex } from '#platform/crypto';
import { RegisterError } from '../../common/errors.ts';
import type { KeyEntry, KeyRecord } from '../interfaces.ts';

/** A set of entries as the keys file holds them. Unknown fields are kept when the file is rewritten. */
export interface KeyFile {
  keys: KeyEntry[];
  [k: string]: unknown;
}

export const KEY_ID = /^[0-9a-f]{8}$/;
export const KEY_SECRET = /^[A-Za-z0-9_-]{32}$/;
/**
 * An Authorization header: "Bearer" in any case, one space, one token of visible ASCII; anything else (two spaces,
 * tabs, padding, no token) is invalid.
 */
export const BEARER = /^bearer ([\x21-\x7e]+)$/i;
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
  return sha256Hex(secret);
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
  const data = keyFileDocument(text, file);
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
  return { data: { ...data, keys: valid as KeyEntry[] }, problems };
}

/** Keys-file text as an object with a "keys" array, its entries not yet checked; RegisterError when it is not one. */
export function keyFileDocument(text: string, file: string): { keys: unknown[]; [k: string]: unknown } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // The parser's message can quote the file's text; say only where.
    throw new RegisterError('keys', 'not valid JSON', file);
  }
  if (!isObject(data) || !Array.isArray(data.keys)) throw new RegisterError('keys', 'expected an object with a "keys" array', file);
  return data as { keys: unknown[] };
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
export function toKeyRecord(e: KeyEntry): KeyRecord {
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
