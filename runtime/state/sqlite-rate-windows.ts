// Rate windows in the SQLite store, applied inside one tick's transaction (sqlite-store.ts) by the rule of
// rate-window.ts (admitInWindow): a key's admissions of the last second are rows (time, how many at that time) with
// their total beside them. A tick reads, per key, the total and only the rows that leave the window during the tick,
// counts its hits in memory, and writes its admissions and removals once at the end: per hit a little arithmetic,
// not a read and rewrite of the whole window (a key at thousands of requests a second holds thousands of times).

import type Database from 'better-sqlite3';

export const RATE_SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_hit (key_id TEXT NOT NULL, at REAL NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (key_id, at)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rate_total (key_id TEXT PRIMARY KEY, n INTEGER NOT NULL) STRICT, WITHOUT ROWID;
`;

interface Window {
  /** Admissions in the window as far as this tick has got. */
  n: number;
  /** Stored rows that leave the window at some hit of this tick, oldest first, and how many have left so far. */
  leaving: { at: number; n: number }[];
  left: number;
  /** Delete stored rows up to this time at the end of the tick. */
  expireTo: number;
  /** This tick's admissions by time, not yet written. */
  added: Map<number, number>;
  addedOldest: number;
  dirty: boolean;
}

export type RateStatements = ReturnType<typeof rateStatements>;

export function rateStatements(db: Database.Database) {
  return {
    total: db.prepare('SELECT n FROM rate_total WHERE key_id = ?').pluck(),
    setTotal: db.prepare('INSERT INTO rate_total (key_id, n) VALUES (?, ?) ON CONFLICT DO UPDATE SET n = excluded.n'),
    dropTotal: db.prepare('DELETE FROM rate_total WHERE key_id = ?'),
    leaving: db.prepare('SELECT at, n FROM rate_hit WHERE key_id = ? AND at <= ? ORDER BY at'),
    expire: db.prepare('DELETE FROM rate_hit WHERE key_id = ? AND at <= ?'),
    add: db.prepare('INSERT INTO rate_hit (key_id, at, n) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n'),
    inOrder: db.prepare('SELECT at, n FROM rate_hit WHERE key_id = ? ORDER BY at'),
  };
}

/** The rate windows of one tick. `latestFloor` per key: the largest `now - 1000` among the tick's hits of that key. */
export class TurnWindows {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly sql: RateStatements,
    private readonly latestFloor: Map<string, number>,
  ) {}

  /** admitInWindow for `keyId` at `nowMs`: 0 when admitted, else the milliseconds until a slot frees. */
  hit(keyId: string, nowMs: number, rate: number): number {
    const limit = Math.floor(rate);
    if (!(limit >= 1)) return 1000; // a plan that admits nothing never frees a slot; ask again in a second
    const w = this.window(keyId);
    const floor = nowMs - 1000;
    // An admission of this same tick leaving the window needs a tick longer than a second (a test's clock):
    // write the tick so far, then go on from the stored rows.
    if (w.addedOldest <= floor) this.write(keyId, w);
    while (w.left < w.leaving.length && w.leaving[w.left].at <= floor) {
      w.n -= w.leaving[w.left++].n;
      w.expireTo = floor;
      w.dirty = true;
    }
    // Times later than now (the clock stepped back) stay and count: refusing a little longer is the safe side.
    if (w.n < limit) {
      w.added.set(nowMs, (w.added.get(nowMs) ?? 0) + 1);
      if (nowMs < w.addedOldest) w.addedOldest = nowMs;
      w.n++;
      w.dirty = true;
      return 0;
    }
    // Refused: enough admissions must leave for one more to fit, and the oldest of those decides. The stored rows
    // are the window once this tick's changes are written.
    this.write(keyId, w);
    let skip = w.n - limit;
    for (const { at, n } of this.sql.inOrder.iterate(keyId) as Iterable<{ at: number; n: number }>) {
      if (skip < n) return Math.max(1, at + 1000 - nowMs);
      skip -= n;
    }
    throw new Error(`rate window of key ${keyId} holds fewer admissions than its total`);
  }

  /** Writes every window this tick changed. */
  finish(): void {
    for (const [keyId, w] of this.windows) {
      if (!w.dirty) continue;
      this.write(keyId, w, false);
      if (w.n > 0) this.sql.setTotal.run(keyId, w.n);
      else this.sql.dropTotal.run(keyId);
    }
  }

  private window(keyId: string): Window {
    let w = this.windows.get(keyId);
    if (!w) {
      const n = (this.sql.total.get(keyId) as number | undefined) ?? 0;
      const leaving = n > 0 ? (this.sql.leaving.all(keyId, this.latestFloor.get(keyId) ?? -Infinity) as { at: number; n: number }[]) : [];
      w = { n, leaving, left: 0, expireTo: -Infinity, added: new Map(), addedOldest: Infinity, dirty: false };
      this.windows.set(keyId, w);
    }
    return w;
  }

  /** Stores the tick's admissions and removals so far; the rows still to leave are read again from the store. */
  private write(keyId: string, w: Window, goOn = true): void {
    if (w.expireTo > -Infinity) this.sql.expire.run(keyId, w.expireTo);
    for (const [at, n] of w.added) this.sql.add.run(keyId, at, n);
    w.added.clear();
    w.addedOldest = Infinity;
    if (!goOn) return;
    w.leaving = this.sql.leaving.all(keyId, this.latestFloor.get(keyId) ?? -Infinity) as { at: number; n: number }[];
    w.left = 0;
    w.expireTo = -Infinity;
  }
}
