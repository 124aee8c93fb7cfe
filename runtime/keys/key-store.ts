// Authenticates `Authorization: Bearer <key>` against the keys file or the state store's key table, picking up
// changes (a new key, a revocation) without a restart.
//
// A reload that finds invalid entries fails safe entry by entry: a valid entry applies; an invalid one whose
// `"revoked": true` is still legible revokes its key all the same (revocation fails closed); any other invalid
// entry keeps that key's last good state; and the problem is logged loudly. A version that cannot be read at all
// (not JSON, caught mid-write) keeps every key's last good state.

import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { RegisterError } from '../../common/errors.ts';
import type { AuthResult, KeyRecord, KeyStore } from '../interfaces.ts';
import type { KeyRepository } from '../interfaces.ts';
import { API_KEY, BEARER, readKeyFileText, toKeyRecord, type KeyFile, type KeyProblem } from './key-entry.ts';

/** Options of openKeyStore. */
export interface KeyStoreOptions {
  /** The keys file. Must exist and be valid when the store opens. */
  file: string;
  /** How often to check for changes, in ms. Default 250, so an edit (a revocation) applies within a second. */
  pollMs?: number;
  /** Where reload problems go (never with key material). Default console.warn. */
  log?: (message: string) => void;
}

/** Options of openRepositoryKeyStore. */
export interface RepositoryKeyStoreOptions {
  /** The keys to serve: a key repository (runtime/interfaces.ts), e.g. the state store's key table. */
  repository: KeyRepository;
  /** How often to poll its version, in ms. Default 250. */
  pollMs?: number;
  /** Where reload problems go (never with key material). Default console.warn. */
  log?: (message: string) => void;
}

interface Loaded {
  record: KeyRecord;
  hash: Buffer;
  expiresMs: number | null;
}

// Compared against when the id is unknown, so an unknown id costs the same work as a wrong secret.
const DUMMY_HASH = createHash('sha256').update('no such key').digest();

/** Where the keys come from: a cheap signature that changes with them, and the keys themselves. */
interface KeySource {
  label: string;
  signature(): Promise<string>;
  /** The parsed keys; throws RegisterError when nothing of them is readable. */
  load(): Promise<{ data: KeyFile; problems: KeyProblem[] }>;
}

/** Opens the key store over a keys file; throws RegisterError if the file is missing or invalid at start. */
export function openKeyStore(options: KeyStoreOptions): KeyStore {
  const file = options.file;
  let text: string;
  let signature: string;
  try {
    signature = signatureOf(statSync(file, { bigint: true }));
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new RegisterError('keys', code === 'ENOENT' ? 'keys file not found; create a key with `register keys add --name NAME`' : `cannot read (${code})`, file);
  }
  // At start there is no last good state to fall back on: an invalid entry refuses the start, naming it.
  const first = readKeyFileText(text, file);
  if (first.problems.length) throw new RegisterError('keys', first.problems[0].message, file);
  const source: KeySource = {
    label: file,
    signature: async () => {
      try {
        return signatureOf(await stat(file, { bigint: true }));
      } catch (e) {
        throw new RegisterError('keys', `cannot read (${(e as NodeJS.ErrnoException).code})`, file);
      }
    },
    load: async () => readKeyFileText(await readFile(file, 'utf8'), file),
  };
  return keyStoreOver(source, first.data, signature, options.pollMs, options.log);
}

/** Opens the key store over the state store's key table; rejects (RegisterError) when it cannot be read at start. */
export async function openRepositoryKeyStore(options: RepositoryKeyStoreOptions): Promise<KeyStore> {
  const repo = options.repository;
  const source: KeySource = {
    label: repo.label,
    signature: () => repo.version(),
    load: async () => readKeyFileText(JSON.stringify({ keys: await repo.entries() }), repo.label),
  };
  let signature: string;
  let first: { data: KeyFile; problems: KeyProblem[] };
  try {
    signature = await source.signature();
    first = await source.load();
  } catch (e) {
    throw new RegisterError('keys', `cannot read the keys (${(e as Error).message})`, repo.label);
  }
  if (first.problems.length) throw new RegisterError('keys', first.problems[0].message, repo.label);
  return keyStoreOver(source, first.data, signature, options.pollMs, options.log);
}

function keyStoreOver(source: KeySource, initial: KeyFile, initialSignature: string, pollMs = 250, log: (m: string) => void = (m) => console.warn(m)): KeyStore {
  let signature = initialSignature;
  let keys = index(initial.keys.map(load));
  // Tokens that verified against `keys`, by their exact text: a client's repeat calls skip the sha256 (a tenth of an
  // entity lookup's CPU, measured). Only tokens that matched a key get in, one per key, and the map is replaced with
  // the keys on every reload, so it is bounded by the key count and never outlives a revocation or a rotated hash.
  // A wrong token costs a Map lookup (a seeded string hash) and then the full check, as before.
  let verified = new Map<string, Loaded>();
  let lastProblem: string | null = null;
  // A source that cannot be read (a file caught mid-write, the state store away) writes one line when that starts
  // and one when it ends, not one per check or per error message.
  let unreadable = false;
  let checking = false;
  let checksDone = 0;

  const report = (message: string): void => {
    if (message !== lastProblem) log(message);
    lastProblem = message;
  };
  const check = async (): Promise<void> => {
    if (checking) return;
    checking = true;
    try {
      let sig: string;
      let next: { data: KeyFile; problems: KeyProblem[] };
      try {
        sig = await source.signature();
        if (sig === signature) {
          if (unreadable) log(`[keys] ${source.label}: readable again, unchanged`);
          unreadable = false;
          return;
        }
        next = await source.load();
      } catch (e) {
        // Probably caught mid-write by a non-atomic editor, or the store is away: keep serving the last good keys.
        const why = (e as Error).message;
        if (!unreadable) log(`${why.startsWith('[') ? why : `[keys] ${source.label}: cannot read the keys (${why})`}; keeping the last good version`);
        unreadable = true;
        return;
      }
      const wasUnreadable = unreadable;
      unreadable = false;
      signature = sig;
      keys = merge(keys, next.data.keys.map(load), next.problems);
      verified = new Map();
      if (next.problems.length) {
        report(
          `[keys] ${source.label}: REFUSED ${next.problems.length} invalid entr${next.problems.length === 1 ? 'y' : 'ies'}: ` +
            `${next.problems.map((p) => p.message).join('; ')}. Revocations in them still apply; their other keys keep their last good state until fixed`,
        );
      } else {
        if (lastProblem || wasUnreadable) log(`[keys] ${source.label}: reloaded (${keys.size} keys)`);
        lastProblem = null;
      }
    } finally {
      checking = false;
      checksDone++;
    }
  };
  const timer = setInterval(() => void check(), pollMs);
  timer.unref();

  return {
    authenticate(authorization: string | null, now: Date): AuthResult {
      if (authorization === null || authorization === undefined || authorization === '') return { ok: false, code: 'missing_key' };
      const bearer = BEARER.exec(authorization);
      if (!bearer) return { ok: false, code: 'invalid_key' };
      let found = verified.get(bearer[1]);
      if (!found) {
        const parts = API_KEY.exec(bearer[1]);
        if (!parts) return { ok: false, code: 'invalid_key' };
        found = keys.get(parts[1]);
        const given = createHash('sha256').update(parts[2], 'utf8').digest();
        const matches = timingSafeEqual(given, found ? found.hash : DUMMY_HASH);
        if (!found || !matches) return { ok: false, code: 'invalid_key' };
        verified.set(bearer[1], found);
      }
      // Revocation and expiry are told only to a caller who holds the real secret.
      if (found.record.revoked) return { ok: false, code: 'revoked_key' };
      if (found.expiresMs !== null && now.getTime() > found.expiresMs) return { ok: false, code: 'key_expired' };
      return { ok: true, key: found.record };
    },
    checks: () => checksDone,
    close(): void {
      clearInterval(timer);
    },
  };
}

function load(e: KeyFile['keys'][number]): Loaded {
  return { record: Object.freeze(toKeyRecord(e)), hash: Buffer.from(e.hash, 'hex'), expiresMs: e.expires_at === null ? null : Date.parse(e.expires_at) };
}

function index(entries: Loaded[]): Map<string, Loaded> {
  return new Map(entries.map((l) => [l.record.id, l]));
}

/** The next key set from a reload with `problems`: valid entries apply, legible revocations apply, the rest keep their last good state. */
function merge(last: Map<string, Loaded>, valid: Loaded[], problems: KeyProblem[]): Map<string, Loaded> {
  const next = index(valid);
  for (const p of problems) {
    if (p.id === null || next.has(p.id)) continue;
    const before = last.get(p.id);
    if (!before) continue; // a key never seen valid is not served
    next.set(p.id, p.revoked && !before.record.revoked ? { ...before, record: Object.freeze({ ...before.record, revoked: true }) } : before);
  }
  return next;
}

/** Changes whenever the file is replaced (inode) or rewritten in place (size, nanosecond mtime and ctime). */
function signatureOf(s: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}
