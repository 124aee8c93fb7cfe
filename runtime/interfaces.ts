// The small interfaces the runtime is built from. Each family of drivers implements one of them and passes
// that family's shared contract suite (test/runtime/*-contract.ts).
import type { AuthErrorCode } from './contract/error-codes.ts';

/** Where compiled, public dist files come from: the local dist/ folder, or a mirror over HTTP (Range reads). */
export interface ShardSource {
  /** A short description for logs and errors (never includes credentials). */
  readonly label: string;
  /** How logs name the file at `path`: its path on disk or its URL (never credentials). Default `<label> <path>`. */
  where?(path: string): string;
  /** Whole file at `path` (relative to the dist root, `/`-separated), or null if it does not exist. */
  readFile(path: string): Promise<Uint8Array | null>;
  /**
   * `length` bytes at `offset` of `path`; fails if the file is shorter or missing. The bytes come at once when they
   * can be had without waiting (a file already open whose reads are page-cache copies), else as a promise; a failure
   * is always a rejection, never a throw. `transient`: the caller keeps the bytes only while it answers one request,
   * or keeps its own copy (a shard, not a cached bucket), so they may be a view of a shared buffer pool and a
   * source need not retain them.
   */
  readRange(path: string, offset: number, length: number, transient?: boolean): MaybePromise<Uint8Array>;
  /**
   * Whether reads are a local disk's, so they often come at once and a batch is CPU work rather than waiting
   * (routes/batch.ts sizes its concurrency limit by it). Default false: a source over the network.
   */
  readonly local?: boolean;
  /** Resolves when the origin answers, else rejects: the readiness probe. Optional: a local folder has no origin. */
  ping?(): Promise<void>;
  /**
   * Drops what the source holds of `path` (the whole file, and the range at `offset` when given), in memory and in
   * any shared cache: a check above it refused those bytes, so the next read goes to the origin again. Without it
   * a damaged copy held by a cache would be refused until evicted, after the origin was whole again. Optional: a
   * source that keeps nothing reads the origin every time anyway.
   */
  forget?(path: string, range?: { offset: number; length: number }): void;
  close(): Promise<void>;
}

/**
 * What a read returns: the value itself when it is ready (no promise, no microtask hop: a batch of 100 items
 * made ~8 promises per item when every read was async), or a promise when it needs I/O first. A read never
 * throws: a failure is a rejected promise, so a value that is not a promise is always an answer. A caller awaits
 * it, or tests isPromise once and takes the value at once.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Whether a MaybePromise still has to be waited for. */
export const isPromise = <T>(v: MaybePromise<T>): v is Promise<T> => v instanceof Promise;

/** Reads one bucketed family (see common/bucket-format.ts) through a ShardSource, one bucket at a time. */
export interface BucketFamilyReader {
  /** Value stored under `key` in a hashed family, or undefined: at once from a cached bucket, else once it is read. */
  get<V = unknown>(key: string): MaybePromise<V | undefined>;
  /** Value at `ordinal` in an ordinal family, or undefined. */
  at<V = unknown>(ordinal: number): Promise<V | undefined>;
  /**
   * The msgpack bytes of the value at `ordinal` in an ordinal family (below its entries), undecoded, for a reader
   * that writes them out as they are: a view of the verified bucket, to be read before the next await.
   */
  valueBytes(ordinal: number): MaybePromise<Uint8Array>;
}

/** A key's plan and scope as the server sees it (never the secret or its hash). */
export interface KeyRecord {
  id: string;
  name: string;
  /** Monthly lookup allowance. */
  quota: number;
  /** Costing requests per rolling second. */
  rate: number;
  /** Provider slug for provider-scoped keys (meta.provider), else null. */
  provider: string | null;
  /** The plan's name (`plan.name`, e.g. `preview`), or null when the key was issued without one. */
  plan: string | null;
  /** Who the key was issued to (`meta.organisation`), or null. */
  organisation: string | null;
  /** How the key was granted (`meta.access_model`, e.g. `partner_preview`), or null. */
  access_model: string | null;
  /** ISO date-time after which the key is refused, or null. */
  expires_at: string | null;
  revoked: boolean;
}

/** One key as every key repository stores it (never its secret). Unknown fields are kept when an entry is rewritten. */
export interface KeyEntry {
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

/**
 * Where keys are kept: the keys file (keys/file-key-repository.ts), or the key table of the state store the
 * `--state` scheme names (keys/sqlite-key-repository.ts, keys/redis-key-repository.ts). Each driver passes the
 * shared suite test/runtime/keys/key-store-contract.ts.
 */
export interface KeyRepository {
  /** The file or store, for messages (never a password). */
  readonly label: string;
  /** Every entry as stored (the caller validates). */
  entries(): Promise<unknown[]>;
  /** Adds `entry` unless its id is taken; false when taken. */
  insert(entry: KeyEntry): Promise<boolean>;
  /** Marks key `id` revoked; its entry, or null when there is no such key. */
  revoke(id: string): Promise<KeyEntry | null>;
  /** Changes whenever a key is added or revoked: what a running server polls. */
  version(): Promise<string>;
  close(): Promise<void>;
}

/** Outcome of authenticating a bearer token. */
export type AuthResult =
  | { ok: true; key: KeyRecord }
  | { ok: false; code: AuthErrorCode };

/**
 * The admission port: who may ask, and whether a costing request may go ahead. One order of checks on every platform
 * (runtime/app.ts STEPS): a costing request's key is checked in the call that charges it, after the validation steps,
 * and a request those steps refuse makes the call with no cost, so a bad key is 401 before any 400. Node's gate is
 * its key store with its state store (state/admit.ts keyStoreGate); the edge's, the key's Durable Object, where the
 * check, the rate and the charge are one atomic call (edge/edge-state.ts).
 */
export interface Gate {
  /** Checks a key (a route that needs one and costs nothing): its record, or why it is refused. */
  check(authorization: string | null, now: Date): MaybePromise<AuthResult>;
  /**
   * Checks the key and, given a `cost`, admits the costing request by the key's own plan (rate, then quota, as
   * StateStore.admit) charging `cost` in `period`; given null, only checks it.
   */
  enter(authorization: string | null, now: Date, period: string, cost: number | null): Promise<KeyAdmission>;
}

/**
 * What Gate.enter decided: the key refused, or its record, the admission (null: none asked) and the key's credits
 * in `period` after it (null: not read in the same call; the app asks the state store when it needs them).
 */
export type KeyAdmission =
  | { ok: false; code: AuthErrorCode }
  | { ok: true; key: KeyRecord; admission: Admission | null; remaining: number | null };

export interface KeyStore {
  /** Checks `Authorization` header value against the keys file (constant-time secret comparison). */
  authenticate(authorization: string | null, now: Date): AuthResult;
  /**
   * Version checks finished since it opened. A change written before a check starts is seen by that check, so a
   * revocation applies by the second check finished after it was written; tests and /metrics count on this.
   */
  checks(): number;
  close(): void;
}

/** Result of trying to charge lookups against a key's monthly quota. */
export interface ChargeResult {
  ok: boolean;
  /** Credits left in the period after this call (unchanged when !ok). */
  remaining: number;
}

/** What admit() decided: refused by the rate limit (`wait` ms until a slot frees, nothing charged), or the charge. */
export type Admission = { wait: number; charge: null } | { wait: 0; charge: ChargeResult };

/** Per-finding state kept site-side. */
export interface NoticeState {
  seen_at: string | null;
  acknowledged_at: string | null;
}

/**
 * Durable runtime state: quota counters, rate windows, seen and acknowledged notices.
 * Every mutating call resolves only once the change is stored where a killed process cannot lose it (SQLite: in
 * its WAL; Redis: replied to), so a response sent after it can never be forgotten by a crash; acknowledgements
 * resolve only once fsynced.
 */
export interface StateStore {
  /**
   * Atomically charge `cost` lookups to `keyId` in `period` (e.g. "2026-11") if `used + cost <= quota`.
   * A cost of 0 just reports the remaining credits.
   */
  charge(keyId: string, period: string, cost: number, quota: number): Promise<ChargeResult>;
  /**
   * Refunds `cost` lookups charged to `keyId` in `period` (never below zero used): the request they paid for
   * failed with a 5xx, and nobody is charged for a server error. The caller refunds a charge at most once.
   */
  refund(keyId: string, period: string, cost: number): Promise<void>;
  /** Credits left for `keyId` in `period` without charging. */
  remaining(keyId: string, period: string, quota: number): Promise<number>;
  /**
   * Rolling-window rate check: admits the request (and records it) if fewer than `rate` requests of this key
   * were admitted in (nowMs - 1000, nowMs]. Returns 0 when admitted, else the milliseconds until a slot frees.
   */
  hit(keyId: string, nowMs: number, rate: number): Promise<number>;
  /**
   * hit(), then charge() if the rate admitted the request, as one atomic step, so a store shared by several
   * processes answers a costing request in one round trip and no other request slips between the two. Optional:
   * `admit()` (state/admit.ts) falls back to the two calls, which is what a store in this process does anyway.
   */
  admit?(keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission>;
  /** State of the given findings of one provider's batch (missing ones: both null). */
  notices(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeState>>;
  /** Marks findings seen at `at` where not already seen; durable before resolving. */
  markSeen(provider: string, batchId: number, findingIds: string[], at: string): Promise<void>;
  /**
   * Marks findings acknowledged at `at` where not already acknowledged (the first acknowledged_at is kept),
   * storing actor and note; durable (fsynced) before resolving. Throws StateUnavailableError if it cannot persist.
   */
  acknowledge(provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): Promise<void>;
  /** Whether this store can persist acknowledgements (false: read-only mirror, the API answers 503). */
  readonly writable: boolean;
  /** Resolves when the store answers, else rejects (StateUnavailableError): the readiness probe. Optional: a store in this process always answers. */
  ping?(): Promise<void>;
  /** Flushes pending writes and releases files. */
  close(): Promise<void>;
}

/** Thrown by a StateStore that cannot make a write durable (disk full, read-only, unwritable directory). */
export class StateUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateUnavailableError';
  }
}

/** Injectable time source, so quota months and rate windows can be tested exactly. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };
