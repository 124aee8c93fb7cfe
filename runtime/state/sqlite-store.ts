// The embedded state store behind `--state sqlite:PATH` (the default): quota counters, rate windows, seen and
// acknowledged findings in one SQLite database through better-sqlite3, in WAL mode.
//
// Every change of one event-loop tick (the charges, rate hits, refunds and notice marks that callers asked for
// while the tick ran) is applied in one IMMEDIATE transaction at the end of the tick, and only then are the callers
// answered. The transaction reads and writes the counters and windows themselves, so any number of processes
// opening the same file (`serve --workers N`, several `serve`s on one machine) stay exact: SQLite's lock orders
// their transactions. Commits are written to the WAL before anyone is answered, so a killed process (SIGKILL)
// loses nothing it answered; with synchronous=NORMAL they are fsynced at the next checkpoint, within a second of
// the tick, so a power loss can lose the last second of charges, in the client's favour. A tick holding an
// acknowledgement commits with synchronous=FULL (its WAL frames fsynced before anyone is answered).
//
// Another process holding the write lock (a `BEGIN IMMEDIATE` elsewhere, another instance's long transaction) never
// blocks the event loop: the tick's transaction does not wait inside SQLite (busy timeout 0 for it) but is tried
// again from timers, a few times within `lockWaitMs`, and only then are its callers answered 503. Meanwhile health
// checks, free routes and reads (WAL readers never wait for the writer) keep answering.

import Database from 'better-sqlite3';
import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StateUnavailableError, type Admission, type ChargeResult, type NoticeState } from '../interfaces.ts';
import { RATE_SCHEMA, TurnWindows, rateStatements, type RateStatements } from './sqlite-rate-windows.ts';
import { admission, chargeOn, checkCharge, checkMarkArgs, checkNoticeArgs, checkRefund, creditsLeft, noticeStatesOf, refundOn, type InspectableStateStore, type NoticeDetail, type StateImage } from './state-core.ts';

/** Options of openSqliteStore. */
export interface SqliteStoreOptions {
  /** The database file; created (with its folder) if missing. */
  file: string;
  /**
   * Run `PRAGMA integrity_check` before serving, and refuse a damaged database. Default true; a `--workers`
   * primary checks once and its workers skip it.
   */
  check?: boolean;
  /**
   * How long a tick's changes wait for another process's write lock (retried from timers, off the event loop) before
   * their requests answer 503, ms. Default 500: long enough for another instance's ordinary transaction or a
   * checkpoint, short enough that a held lock answers quickly.
   */
  lockWaitMs?: number;
  /** Where outage and recovery lines go (never key material). Default console.warn. */
  log?: (message: string) => void;
}

/**
 * The busy timeout of everything but the tick's transaction: opening (schema, integrity), the journal import and the
 * key table's writes from `register keys`, which run before or beside serving and may wait for a lock.
 */
const BLOCKING_BUSY_MS = 2000;
/** Waits between tries of a tick that found the write lock taken, ms; the last repeats until the tick's time is up. */
const LOCK_RETRY_MS = [1, 2, 5, 10, 20, 50, 100];
/** /readyz writes a probe row at most this often; a write of the tick within it stands for the probe. */
const PROBE_EVERY_MS = 1000;
/**
 * What a probe writes while writes fail, bytes. On a full disk a write of a page or two can still succeed in WAL
 * space a failed transaction left allocated; this many (16 pages) cannot, so readiness returns only with room.
 */
const RECOVERY_PROBE_BYTES = 64 * 1024;

/** The schema version this code writes; a database written by a newer one is refused rather than guessed at. */
const SCHEMA_VERSION = 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS quota (key_id TEXT NOT NULL, period TEXT NOT NULL, used INTEGER NOT NULL,
  PRIMARY KEY (key_id, period)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notice (provider TEXT NOT NULL, batch_id INTEGER NOT NULL, finding_id TEXT NOT NULL,
  seen_at TEXT, acknowledged_at TEXT, actor TEXT, note TEXT,
  PRIMARY KEY (provider, batch_id, finding_id)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS api_key (id TEXT PRIMARY KEY, entry TEXT NOT NULL) STRICT;
`;

type Op =
  | { kind: 'admit'; keyId: string; nowMs: number; rate: number; period: string; cost: number; quota: number }
  | { kind: 'hit'; keyId: string; nowMs: number; rate: number }
  | { kind: 'charge'; keyId: string; period: string; cost: number; quota: number }
  | { kind: 'refund'; keyId: string; period: string; cost: number }
  | { kind: 'seen'; provider: string; batchId: number; ids: string[]; at: string }
  | { kind: 'ack'; provider: string; batchId: number; ids: string[]; at: string; actor: string | null; note: string | null }
  | { kind: 'probe'; value: string };

interface Queued {
  op: Op;
  resolve: (value: unknown) => void;
  reject: (e: Error) => void;
  /** Until when (Date.now()) it may wait for another process's write lock. */
  deadline: number;
}

/** A state store in a SQLite database, shareable by every process on the machine. */
export interface SqliteStateStore extends InspectableStateStore {
  /** The database file, resolved. */
  readonly file: string;
  /** The open connection, for the key table and the journal import, which live in the same file. */
  readonly db: Database.Database;
  /** Loads a whole state image (the import of an earlier version's journal) in one transaction with `marker` set in meta. */
  importImage(image: StateImage, marker: string): void;
  /** Whether `marker` was set by an earlier importImage. */
  hasMarker(marker: string): boolean;
}

/**
 * Opens (creating if needed) the database at `options.file`. Rejects with StateUnavailableError naming the file and
 * the system error when it cannot be created or written (a read-only filesystem, a file where a folder should be),
 * and with a plain Error saying how to recover when the database is damaged.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStateStore> {
  const file = resolve(options.file);
  const log = options.log ?? ((m: string) => console.warn(m));
  // SQLite says only "unable to open database file"; asking the filesystem first names what is wrong.
  try {
    mkdirSync(dirname(file), { recursive: true });
    closeSync(openSync(file, 'a'));
  } catch (e) {
    throw new StateUnavailableError(`[state] ${file}: cannot create or write the state database (${whyUnwritable(dirname(file)) ?? describe(e)})`);
  }
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: BLOCKING_BUSY_MS });
  } catch (e) {
    throw damagedOrUnavailable(file, e);
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    if (options.check ?? true) {
      const problems = (db.pragma('integrity_check(20)') as { integrity_check: string }[]).map((r) => r.integrity_check);
      if (problems.length !== 1 || problems[0] !== 'ok') throw damaged(file, problems.slice(0, 3).join('; '));
    }
    db.exec(SCHEMA + RATE_SCHEMA);
    const version = db.prepare(`SELECT value FROM meta WHERE name = 'schema'`).pluck().get() as string | undefined;
    if (version === undefined) db.prepare(`INSERT INTO meta (name, value) VALUES ('schema', ?)`).run(String(SCHEMA_VERSION));
    else if (Number(version) !== SCHEMA_VERSION) throw new Error(`[state] ${file}: schema version ${version} is not supported (this version writes ${SCHEMA_VERSION})`);
  } catch (e) {
    db.close();
    throw e instanceof StateUnavailableError || !(e instanceof Database.SqliteError) ? e : damagedOrUnavailable(file, e);
  }
  return new SqliteStore(file, db, log, options.lockWaitMs ?? 500);
}

class SqliteStore implements SqliteStateStore {
  readonly writable = true;
  private queue: Queued[] = [];
  private scheduled = false;
  private closed = false;
  /** The error of the last write that failed, while no write has succeeded since (an outage is logged once). */
  private failing: StateUnavailableError | null = null;
  /** When the last tick finished (written or failed), for /readyz. */
  private lastWriteAt = 0;
  private probing: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Tries in a row that found the write lock taken. */
  private lockTries = 0;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private lastCheckpoint = 0;
  private readonly sql;
  private readonly rateSql: RateStatements;
  /** A tick's transaction, wrapped once: better-sqlite3 builds a wrapper of closures per transaction() call. */
  private readonly tick: Database.Transaction<(batch: Queued[]) => unknown[]>;

  constructor(
    readonly file: string,
    readonly db: Database.Database,
    private readonly log: (message: string) => void,
    private readonly lockWaitMs: number,
  ) {
    this.rateSql = rateStatements(db);
    this.tick = db.transaction((batch: Queued[]) => this.apply(batch));
    // Checkpoints are this store's (checkpointSoon), at most one a second, not one per 1000 pages inside a commit.
    db.pragma('wal_autocheckpoint = 0');
    this.sql = {
      used: db.prepare('SELECT used FROM quota WHERE key_id = ? AND period = ?').pluck(),
      setUsed: db.prepare('INSERT INTO quota (key_id, period, used) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET used = excluded.used'),
      dropUsed: db.prepare('DELETE FROM quota WHERE key_id = ? AND period = ?'),
      // The first seen_at and the first acknowledgement (time, actor, note) are kept: SET reads the old row.
      seen: db.prepare(
        'INSERT INTO notice (provider, batch_id, finding_id, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET seen_at = coalesce(seen_at, excluded.seen_at)',
      ),
      ack: db.prepare(
        `INSERT INTO notice (provider, batch_id, finding_id, acknowledged_at, actor, note) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET
           actor = iif(acknowledged_at IS NULL, excluded.actor, actor), note = iif(acknowledged_at IS NULL, excluded.note, note),
           acknowledged_at = coalesce(acknowledged_at, excluded.acknowledged_at)`,
      ),
      details: db.prepare(
        'SELECT finding_id, seen_at, acknowledged_at, actor, note FROM notice WHERE provider = ? AND batch_id = ? AND finding_id IN (SELECT value FROM json_each(?))',
      ),
      marker: db.prepare('SELECT 1 FROM meta WHERE name = ?').pluck(),
      probe: db.prepare(`INSERT INTO meta (name, value) VALUES ('probe', ?) ON CONFLICT DO UPDATE SET value = excluded.value`),
    };
  }

  // ---- StateStore ----

  // Async methods, so an argument error rejects like a failed write instead of throwing at the caller. The one on
  // every costing request rejects by hand instead: an async wrapper is one promise and one hop more per request.
  admit(keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
    try {
      checkCharge(cost, quota);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.enqueue({ kind: 'admit', keyId, nowMs, rate, period, cost, quota });
  }

  async hit(keyId: string, nowMs: number, rate: number): Promise<number> {
    if (!Number.isFinite(nowMs)) throw new RangeError(`[state] rate hit: not a time: ${nowMs}`);
    return this.enqueue({ kind: 'hit', keyId, nowMs, rate });
  }

  async charge(keyId: string, period: string, cost: number, quota: number): Promise<ChargeResult> {
    checkCharge(cost, quota);
    return this.enqueue({ kind: 'charge', keyId, period, cost, quota });
  }

  async refund(keyId: string, period: string, cost: number): Promise<void> {
    checkRefund(cost);
    if (cost > 0) await this.enqueue({ kind: 'refund', keyId, period, cost });
  }

  /**
   * The readiness probe: whether the database takes writes. A tick written or failed within the last second answers
   * for it; else one probe row is written (at most once a second, shared by concurrent probes), through the tick's
   * own path, so a full disk or a held lock fails it as it fails a charge.
   */
  async ping(): Promise<void> {
    if (this.closed) throw new StateUnavailableError(`[state] ${this.file}: the state store is closed`);
    if (Date.now() - this.lastWriteAt < PROBE_EVERY_MS) {
      if (this.failing) throw this.failing;
      return;
    }
    const at = new Date().toISOString();
    this.probing ??= this.enqueue<void>({ kind: 'probe', value: this.failing ? at.padEnd(RECOVERY_PROBE_BYTES, '.') : at }).finally(() => {
      this.probing = null;
    });
    await this.probing;
  }

  async remaining(keyId: string, period: string, quota: number): Promise<number> {
    return creditsLeft(this.read(() => (this.sql.used.get(keyId, period) as number | undefined) ?? 0), quota);
  }

  async notices(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeState>> {
    checkNoticeArgs('notices', provider, batchId, findingIds);
    return noticeStatesOf(this.readDetails(provider, batchId, findingIds));
  }

  async noticeDetails(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeDetail>> {
    checkNoticeArgs('noticeDetails', provider, batchId, findingIds);
    return this.readDetails(provider, batchId, findingIds);
  }

  async markSeen(provider: string, batchId: number, findingIds: string[], at: string): Promise<void> {
    checkMarkArgs('markSeen', provider, batchId, findingIds, at);
    if (findingIds.length) await this.enqueue({ kind: 'seen', provider, batchId, ids: findingIds, at });
  }

  async acknowledge(provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): Promise<void> {
    checkMarkArgs('acknowledge', provider, batchId, findingIds, at);
    if (findingIds.length) await this.enqueue({ kind: 'ack', provider, batchId, ids: findingIds, at, actor: actor ?? null, note: note ?? null });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.queue.length) this.flush();
    try {
      // PASSIVE: copy what it can without waiting on another process that still writes (its close does the rest).
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // the next connection to open the file checkpoints
    }
    this.db.close();
  }

  // ---- import ----

  importImage(image: StateImage, marker: string): void {
    this.waitForLocks(true);
    this.db.transaction(() => {
      for (const [period, keyId, used] of image.counters) {
        const before = (this.sql.used.get(keyId, period) as number | undefined) ?? 0;
        this.sql.setUsed.run(keyId, period, before + used);
      }
      for (const [provider, batchId, findingId, seenAt, ackAt, actor, note] of image.notices) {
        if (seenAt !== null) this.sql.seen.run(provider, batchId, findingId, seenAt);
        if (ackAt !== null) this.sql.ack.run(provider, batchId, findingId, ackAt, actor, note);
      }
      this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)').run(marker, new Date().toISOString());
    }).immediate();
  }

  hasMarker(marker: string): boolean {
    return this.sql.marker.get(marker) !== undefined;
  }

  // ---- the tick's transaction ----

  private enqueue<T>(op: Op): Promise<T> {
    if (this.closed) return Promise.reject(new StateUnavailableError(`[state] ${this.file}: the state store is closed`));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject, deadline: Date.now() + this.lockWaitMs });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    this.retryTimer = null;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const durable = batch.some((q) => q.op.kind === 'ack');
    let results: unknown[];
    try {
      if (durable) this.db.pragma('synchronous = FULL');
      this.waitForLocks(false);
      try {
        results = this.tick.immediate(batch);
      } finally {
        if (durable) this.db.pragma('synchronous = NORMAL');
      }
    } catch (e) {
      if (isLockTaken(e) && !this.closed && this.retry(batch)) return;
      this.lastWriteAt = Date.now();
      this.fail(batch, new StateUnavailableError(`[state] ${this.file}: cannot write the state database (${describe(e)}${isLockTaken(e) ? ': another process holds the write lock' : ''})`));
      return;
    }
    this.lockTries = 0;
    this.lastWriteAt = Date.now();
    if (this.failing) this.log(`[state] ${this.file}: writes succeed again`);
    this.failing = null;
    this.checkpointSoon();
    for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
  }

  /**
   * Puts a tick that found the write lock taken back at the head of the queue, to be tried again from a timer; the
   * changes whose time is up are refused (503, nothing applied). Whatever arrives meanwhile joins the next try.
   * Returns false when none may wait any longer.
   */
  private retry(batch: Queued[]): boolean {
    const now = Date.now();
    const waiting = batch.filter((q) => q.deadline > now);
    if (waiting.length === 0) return false;
    if (waiting.length < batch.length) {
      this.fail(
        batch.filter((q) => q.deadline <= now),
        new StateUnavailableError(`[state] ${this.file}: cannot write the state database (SQLITE_BUSY: another process holds the write lock)`),
      );
    }
    this.queue = waiting.concat(this.queue);
    const pause = LOCK_RETRY_MS[Math.min(this.lockTries++, LOCK_RETRY_MS.length - 1)];
    this.scheduled = true;
    this.retryTimer = setTimeout(() => this.flush(), Math.max(1, Math.min(pause, Math.min(...waiting.map((q) => q.deadline)) - now)));
    return true;
  }

  /** Refuses `batch` with `err`; the first failure after a success writes the one line an outage writes. */
  private fail(batch: Queued[], err: StateUnavailableError): void {
    this.trouble(err);
    for (const q of batch) q.reject(err);
  }

  private trouble(err: StateUnavailableError): void {
    if (!this.failing) this.log(`${err.message}; state changes answer 503 until a write succeeds`);
    this.failing = err;
  }

  /**
   * Copies the ticks' changes into the main file within a second, acknowledgements (already durable in the fsynced
   * WAL) among them, so that a WAL damaged later cannot take them: SQLite replays a WAL only up to its first bad
   * frame, without a word. At most one checkpoint a second, because each blocks the event loop for its fsyncs:
   * SQLite's own (wal_autocheckpoint, off on this connection) ran one every 1000 pages written, several a second
   * under load, each a stall that every request in flight waited out.
   */
  private checkpointSoon(): void {
    if (this.checkpointTimer || this.closed) return;
    const wait = Math.max(0, this.lastCheckpoint + 1000 - Date.now());
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = null;
      if (this.closed) return;
      this.lastCheckpoint = Date.now();
      try {
        this.db.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // the WAL holds them; the next checkpoint copies them
      }
    }, wait);
    this.checkpointTimer.unref();
  }

  /**
   * Runs the ops of one tick inside its transaction; each key's counter and window total are read once and written
   * once. The window follows the rule of rate-window.ts (admitInWindow) over the rows of rate_hit.
   */
  private apply(batch: Queued[]): unknown[] {
    const counters = new Map<string, { keyId: string; period: string; used: number; dirty: boolean }>();
    const counter = (keyId: string, period: string) => {
      const slot = `${period}\u0000${keyId}`;
      let c = counters.get(slot);
      if (!c) {
        c = { keyId, period, used: (this.sql.used.get(keyId, period) as number | undefined) ?? 0, dirty: false };
        counters.set(slot, c);
      }
      return c;
    };
    // Each key's rows that may leave its window this tick are read once: up to its latest hit's floor.
    const latestFloor = new Map<string, number>();
    for (const { op } of batch) {
      if (op.kind !== 'admit' && op.kind !== 'hit') continue;
      const floor = op.nowMs - 1000;
      if (!(floor <= (latestFloor.get(op.keyId) ?? -Infinity))) latestFloor.set(op.keyId, floor);
    }
    const windows = new TurnWindows(this.rateSql, latestFloor);
    const hit = (keyId: string, nowMs: number, rate: number): number => windows.hit(keyId, nowMs, rate);
    const charge = (keyId: string, period: string, cost: number, quota: number): ChargeResult => {
      const c = counter(keyId, period);
      const result = chargeOn(c.used, cost, quota);
      if (result.ok && cost > 0) {
        c.used += cost;
        c.dirty = true;
      }
      return result;
    };
    const results = batch.map(({ op }): unknown => {
      switch (op.kind) {
        case 'admit': {
          return admission(hit(op.keyId, op.nowMs, op.rate), () => charge(op.keyId, op.period, op.cost, op.quota));
        }
        case 'hit':
          return hit(op.keyId, op.nowMs, op.rate);
        case 'charge':
          return charge(op.keyId, op.period, op.cost, op.quota);
        case 'refund': {
          const c = counter(op.keyId, op.period);
          const next = refundOn(c.used, op.cost);
          if (next !== c.used) {
            c.used = next;
            c.dirty = true;
          }
          return undefined;
        }
        case 'seen':
          for (const id of op.ids) this.sql.seen.run(op.provider, op.batchId, id, op.at);
          return undefined;
        case 'ack':
          for (const id of op.ids) this.sql.ack.run(op.provider, op.batchId, id, op.at, op.actor, op.note);
          return undefined;
        case 'probe':
          this.sql.probe.run(op.value);
          return undefined;
      }
    });
    for (const c of counters.values()) {
      if (!c.dirty) continue;
      if (c.used > 0) this.sql.setUsed.run(c.keyId, c.period, c.used);
      else this.sql.dropUsed.run(c.keyId, c.period);
    }
    windows.finish();
    return results;
  }

  private readDetails(provider: string, batchId: number, findingIds: string[]): Map<string, NoticeDetail> {
    const rows = this.read(() => this.sql.details.all(provider, batchId, JSON.stringify(findingIds)) as ({ finding_id: string } & NoticeDetail)[]);
    const byId = new Map(rows.map((r) => [r.finding_id, r]));
    const out = new Map<string, NoticeDetail>();
    for (const id of findingIds) {
      const r = byId.get(id);
      out.set(id, { seen_at: r?.seen_at ?? null, acknowledged_at: r?.acknowledged_at ?? null, actor: r?.actor ?? null, note: r?.note ?? null });
    }
    return out;
  }

  /**
   * Whether SQLite waits for another process's lock (BLOCKING_BUSY_MS) or fails at once. The tick's transaction
   * must not wait: a lock held elsewhere would hold the whole event loop for the wait. Each switch is a pragma
   * prepared anew (SQLite applies it when it is prepared, not when it runs), two per tick cost ~9 µs, so the
   * connection stays as the last caller left it: ticks back to back switch nothing, and the store's own reads and
   * imports switch back to waiting. (The key table's reads beside serving read the WAL, which waits on no lock.)
   */
  private waitForLocks(wait: boolean): void {
    if (this.waiting === wait) return;
    this.db.pragma(`busy_timeout = ${wait ? BLOCKING_BUSY_MS : 0}`);
    this.waiting = wait;
  }
  private waiting = true;

  /** A read that fails (the file vanished, the disk is gone) is a 503 like a failed write, not a 500. */
  private read<T>(fn: () => T): T {
    if (this.closed) throw new StateUnavailableError(`[state] ${this.file}: the state store is closed`);
    this.waitForLocks(true);
    try {
      return fn();
    } catch (e) {
      const err = new StateUnavailableError(`[state] ${this.file}: cannot read the state database (${describe(e)})`);
      this.trouble(err);
      throw err;
    }
  }
}

/**
 * The system's reason a folder cannot be created or written, from its nearest existing ancestor: a recursive mkdir
 * on a read-only filesystem reports ENOENT, which names nothing useful.
 */
function whyUnwritable(dir: string): string | null {
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (!statSync(d).isDirectory()) return 'ENOTDIR';
      accessSync(d, constants.W_OK);
      return null;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(d) === d) return describe(e);
    }
  }
}

/** SQLITE_BUSY and its kin: another connection holds what the transaction needs, for now. */
function isLockTaken(e: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test((e as { code?: string })?.code ?? '');
}

function describe(e: unknown): string {
  return (e as NodeJS.ErrnoException)?.code ?? (e as Error)?.message ?? String(e);
}

const DAMAGE_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_INDEX']);

function damaged(file: string, what: string): Error {
  return new Error(
    `[state] ${file}: the state database is damaged (${what}); refusing to start rather than lose acknowledgements. ` +
      `Nothing was changed. Restore the file from a backup, or salvage what is readable with ` +
      `\`sqlite3 ${file} .recover | sqlite3 ${file}.recovered\` and start with --state sqlite:${file}.recovered`,
  );
}

function damagedOrUnavailable(file: string, e: unknown): Error {
  const code = (e as { code?: string }).code ?? '';
  if (DAMAGE_CODES.has(code)) return damaged(file, `${code}: ${(e as Error).message}`);
  return new StateUnavailableError(`[state] ${file}: cannot open the state database (${code || (e as Error).message})`);
}
