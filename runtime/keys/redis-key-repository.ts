// Keys in the Redis of the state store (`--state redis://…`), so every instance sharing it sees a new key or a
// revocation within a poll. Only the hash of a key's secret is stored, as in the keys file.

import type { Redis } from 'ioredis';
import type { KeyEntry, KeyRepository } from '../interfaces.ts';

/** Options of redisKeyRepository. */
export interface RedisKeyOptions {
  /** The state store's client. */
  client: Redis;
  /** How messages name the store (never a password). */
  label: string;
  /** Prefix of the key names; default `ir:`, the state store's. */
  prefix?: string;
}

// All under the hash tag {keys}: one slot, so the scripts below work on Redis Cluster too. An entry is written once;
// a revocation is a member of a set beside it, so no script has to rewrite (and re-encode) an entry.

/** Keys in one Redis hash (id → entry JSON), a set of revoked ids and a change counter. */
export function redisKeyRepository({ client, label, prefix = 'ir:' }: RedisKeyOptions): KeyRepository {
  const KEYS_HASH = `${prefix}{keys}`;
  const KEYS_REVOKED = `${prefix}{keys}:revoked`;
  const KEYS_VERSION = `${prefix}{keys}:v`;
  const withRevocation = (text: string, revoked: boolean): KeyEntry => {
    const entry = JSON.parse(text) as KeyEntry;
    if (revoked) entry.revoked = true;
    return entry;
  };
  return {
    label,
    entries: async () => {
      const [all, revoked] = await Promise.all([client.hgetall(KEYS_HASH), client.smembers(KEYS_REVOKED)]);
      const gone = new Set(revoked);
      return Object.entries(all).map(([id, text]) => withRevocation(text, gone.has(id)));
    },
    insert: async (entry) => {
      const added = (await client.eval(
        `if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end redis.call('INCR', KEYS[2]) return 1`,
        2,
        KEYS_HASH,
        KEYS_VERSION,
        entry.id,
        JSON.stringify(entry),
      )) as number;
      return added === 1;
    },
    revoke: async (id) => {
      const text = (await client.eval(
        `local t = redis.call('HGET', KEYS[1], ARGV[1])
         if not t then return false end
         if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then redis.call('INCR', KEYS[3]) end
         return t`,
        3,
        KEYS_HASH,
        KEYS_REVOKED,
        KEYS_VERSION,
        id,
      )) as string | null;
      return text === null ? null : withRevocation(text, true);
    },
    version: async () => (await client.get(KEYS_VERSION)) ?? '0',
    close: async () => {},
  };
}
