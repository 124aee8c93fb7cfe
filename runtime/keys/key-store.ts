// Authenticates `Authorization: Bearer <key>` against the keys file, picking up edits to the file without a restart.

import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { RegisterError } from '../../common/errors.ts';
import type { AuthResult, KeyRecord, KeyStore } from '../interfaces.ts';
import { API_KEY, parseKeyFile, toKeyRecord, type KeyFile } from './key-file.ts';

/** Options of openKeyStore. */
export interface KeyStoreOptions {
  /** The keys file. Must exist and be valid when the store opens. */
  file: string;
  /** How often to check the file for changes, in ms. Default 250, so an edit (a revocation) applies within a second. */
  pollMs?: number;
  /** Where reload problems go (never with key material). Default console.warn. */
  log?: (message: string) => void;
}

interface Loaded {
  record: KeyRecord;
  hash: Buffer;
  expiresMs: number | null;
}

// "Bearer", one space, one token of visible ASCII; anything else (two spaces, tabs, padding, no token) is invalid.
const BEARER = /^bearer ([\x21-\x7e]+)$/i;
// Compared against when the id is unknown, so an unknown id costs the same work as a wrong secret.
const DUMMY_HASH = createHash('sha256').update('no such key').digest();

/** Opens the key store; throws RegisterError if the file is missing or invalid at start. */
export function openKeyStore(options: KeyStoreOptions): KeyStore {
  const file = options.file;
  const pollMs = options.pollMs ?? 250;
  const log = options.log ?? ((m: string) => console.warn(m));

  let text: string;
  let signature: string;
  try {
    signature = signatureOf(statSync(file, { bigint: true }));
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new RegisterError('keys', code === 'ENOENT' ? 'keys file not found; create a key with `register keys add --name NAME`' : `cannot read (${code})`, file);
  }
  let keys = index(parseKeyFile(text, file));
  // Tokens that verified against `keys`, by their exact text: a client's repeat calls skip the sha256 (a tenth of an
  // entity lookup's CPU, measured). Only tokens that matched a key get in, one per key, and the map is replaced with
  // the keys on every reload, so it is bounded by the key count and never outlives a revocation or a rotated hash.
  // A wrong token costs a Map lookup (a seeded string hash) and then the full check, as before.
  let verified = new Map<string, Loaded>();
  let lastProblem: string | null = null;
  let checking = false;

  const check = async (): Promise<void> => {
    if (checking) return;
    checking = true;
    try {
      let sig: string;
      try {
        sig = signatureOf(await stat(file, { bigint: true }));
      } catch (e) {
        report(`[keys] ${file}: cannot read (${(e as NodeJS.ErrnoException).code}); keeping the last good version`);
        return;
      }
      if (sig === signature) return;
      let next: Map<string, Loaded>;
      try {
        next = index(parseKeyFile(await readFile(file, 'utf8'), file));
      } catch (e) {
        // Probably caught mid-write by a non-atomic editor: keep serving the last good keys, retry next poll.
        report(`${(e as Error).message}; keeping the last good version`);
        return;
      }
      signature = sig;
      keys = next;
      verified = new Map();
      if (lastProblem) log(`[keys] ${file}: reloaded (${keys.size} keys)`);
      lastProblem = null;
    } finally {
      checking = false;
    }
  };
  const report = (message: string): void => {
    if (message !== lastProblem) log(message);
    lastProblem = message;
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
      if (found.expiresMs !== null && now.getTime() > found.expiresMs) return { ok: false, code: 'expired_key' };
      return { ok: true, key: found.record };
    },
    close(): void {
      clearInterval(timer);
    },
  };
}

function index(data: KeyFile): Map<string, Loaded> {
  const out = new Map<string, Loaded>();
  for (const e of data.keys) {
    out.set(e.id, {
      record: Object.freeze(toKeyRecord(e)),
      hash: Buffer.from(e.hash, 'hex'),
      expiresMs: e.expires_at === null ? null : Date.parse(e.expires_at),
    });
  }
  return out;
}

/** Changes whenever the file is replaced (inode) or rewritten in place (size, nanosecond mtime and ctime). */
function signatureOf(s: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}
