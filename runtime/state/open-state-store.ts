// Which state store a server runs on, from one `--state` value: `memory:`, `sqlite:PATH` (the default,
// `sqlite:.state/register.db`), a plain folder (`DIR` means `sqlite:DIR/register.db`), or `redis://…`/`rediss://…`.
// `serve`, a `--workers` primary and its workers, and `register keys --state` all decide here.

import { dirname, join } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import type { StateStore } from '../interfaces.ts';
import { createMemoryStore } from './memory-store.ts';
import { refuseAcknowledgements } from './read-only-store.ts';
import { redisLabel } from './redis-label.ts';
import type { RedisStateStore } from './redis-store.ts';
import type { SqliteStateStore } from './sqlite-store.ts';

/** The default `--state`: a SQLite database in `.state/`. */
export const DEFAULT_STATE = '.state';

/** A parsed `--state` value. */
export type StateLocation = { kind: 'memory' } | { kind: 'sqlite'; file: string } | { kind: 'redis'; url: string };

/** Parses a `--state` value; throws RegisterError naming it when it is none of the accepted forms. */
export function parseStateLocation(raw: string): StateLocation {
  if (raw === 'memory:') return { kind: 'memory' };
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new RegisterError('state', 'sqlite: needs a file, e.g. sqlite:.state/register.db');
    return { kind: 'sqlite', file };
  }
  if (/^rediss?:\/\//i.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new RegisterError('state', `not a valid Redis URL: ${raw.replace(/\/\/[^@/]*@/, '//')}`);
    }
    return { kind: 'redis', url: raw };
  }
  // A scheme we do not know is a mistake, not a folder named "postgres:".
  if (/^[a-z][a-z0-9+.-]+:/i.test(raw)) throw new RegisterError('state', `unknown state store ${JSON.stringify(raw.split(':')[0] + ':')} (use memory:, sqlite:PATH, redis://host:port/db or a folder)`);
  return { kind: 'sqlite', file: join(raw, 'register.db') };
}

/** A location as logs may show it (no Redis password). */
export function describeStateLocation(loc: StateLocation): string {
  if (loc.kind === 'memory') return 'memory: (this process only)';
  if (loc.kind === 'sqlite') return `sqlite:${loc.file}`;
  return redisLabel(new URL(loc.url));
}

/** Options of openStateStore. */
export interface OpenStateOptions {
  /** A read-only mirror: acknowledgements answer 503; quota and "seen" are stored as on any instance. Default false. */
  readOnly?: boolean;
  /** Check the SQLite database's integrity first (default true; `--workers` workers skip it: the primary checked). */
  check?: boolean;
  /** Where state lines go. Default console.warn. */
  log?: (message: string) => void;
}

/** The engine under a store (before any read-only wrapper), tagged by the `--state` scheme that chose it. */
type StateEngine = { kind: 'sqlite'; sqlite: SqliteStateStore } | { kind: 'redis'; redis: RedisStateStore };

/** The opened store and, for the engines that hold one, the engine the key table is kept in. */
export interface OpenedState {
  store: StateStore;
  location: StateLocation;
  /** Null for memory:, which keeps nothing beside the state. */
  engine: StateEngine | null;
}

/** Opens the store `raw` names. SQLite: imports an earlier version's journal found beside the database, once. */
export async function openStateStore(raw: string, options: OpenStateOptions = {}): Promise<OpenedState> {
  const location = parseStateLocation(raw);
  const log = options.log ?? ((m: string) => console.warn(m));
  let store: StateStore;
  let engine: OpenedState['engine'] = null;
  if (location.kind === 'memory') store = createMemoryStore();
  // Each engine's client is loaded only when used: ioredis alone is a fifth of a cold start.
  else if (location.kind === 'sqlite') {
    const { openSqliteStore } = await import('./sqlite-store.ts');
    const { importLegacyJournal } = await import('./journal-import.ts');
    const sqlite = await openSqliteStore({ file: location.file, check: options.check, log });
    try {
      importLegacyJournal(sqlite, dirname(sqlite.file), log);
    } catch (e) {
      await sqlite.close();
      throw e;
    }
    store = sqlite;
    engine = { kind: 'sqlite', sqlite };
  } else {
    const { openRedisStore } = await import('./redis-store.ts');
    const redis = await openRedisStore({ url: location.url, log });
    store = redis;
    engine = { kind: 'redis', redis };
  }
  if (options.readOnly) store = refuseAcknowledgements(store);
  return { store, location, engine };
}
