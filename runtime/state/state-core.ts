// The in-memory picture of runtime state (quota counters and notice states): the memory store's whole state, the
// image an earlier version's journal is imported through, and the argument checks every driver shares.

import type { Admission, ChargeResult, NoticeState, StateStore } from '../interfaces.ts';

/**
 * The quota rule, written once: `cost` more lookups on `used` of `quota` fit, or are refused charging nothing; the
 * credits left after it. Every driver applies it to its own counter (the memory store through StateCore, SQLite in
 * its tick, the edge's key object); Redis runs the same rule in its script, next to the counter, in one round trip.
 * The caller adds `cost` to its counter when `ok`.
 */
export function chargeOn(used: number, cost: number, quota: number): ChargeResult {
  if (used + cost > quota) return { ok: false, remaining: creditsLeft(used, quota) };
  return { ok: true, remaining: creditsLeft(used + cost, quota) };
}

/** Credits left of `quota` once `used` were charged: never below zero (a plan lowered below its month's use). */
export function creditsLeft(used: number, quota: number): number {
  return Math.max(0, quota - used);
}

/** The counter after a refund of `cost`: never below zero used. */
export function refundOn(used: number, cost: number): number {
  return used - Math.min(cost, used);
}

/**
 * Rate, then quota, for one costing request: refused by the rate (`wait` ms, nothing charged), or the charge.
 * `charge` is called only when the rate admitted the request.
 */
export function admission(wait: number, charge: () => ChargeResult): Admission {
  return wait > 0 ? { wait, charge: null } : { wait: 0, charge: charge() };
}

/** Everything stored about one finding of one provider's batch. */
export interface NoticeDetail {
  seen_at: string | null;
  acknowledged_at: string | null;
  /** Who acknowledged it (from the first acknowledgement), or null. */
  actor: string | null;
  /** Free text stored with the first acknowledgement, or null. */
  note: string | null;
}

/** A state store that can also show the stored actor and note (for tests and the later ledger reconciliation). */
export interface InspectableStateStore extends StateStore {
  /** Full stored detail of the given findings (missing ones: all null). */
  noticeDetails(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeDetail>>;
}

/** Serialisable form of a StateCore: counters as [period, keyId, used], notices as [provider, batch, finding, seen_at, acknowledged_at, actor, note]. */
export interface StateImage {
  counters: [string, string, number][];
  notices: [string, number, string, string | null, string | null, string | null, string | null][];
}

interface NoticeEntry extends NoticeDetail {
  provider: string;
  batchId: number;
  findingId: string;
}

// NUL cannot occur in a provider slug or finding ID, so it separates the parts of a compound map key unambiguously.
const noticeKey = (provider: string, batchId: number, findingId: string): string => `${provider}\u0000${batchId}\u0000${findingId}`;

export class StateCore {
  /** period → keyId → lookups charged. Periods outermost so a whole month can be dropped at once later. */
  private readonly counters = new Map<string, Map<string, number>>();
  private readonly noticeEntries = new Map<string, NoticeEntry>();

  used(keyId: string, period: string): number {
    return this.counters.get(period)?.get(keyId) ?? 0;
  }

  addUsed(keyId: string, period: string, delta: number): void {
    let byKey = this.counters.get(period);
    if (!byKey) {
      byKey = new Map();
      this.counters.set(period, byKey);
    }
    const next = (byKey.get(keyId) ?? 0) + delta;
    if (next > 0) byKey.set(keyId, next);
    else byKey.delete(keyId);
  }

  /** Checks and charges in one synchronous step, so no interleaving caller can slip between check and increment. */
  tryCharge(keyId: string, period: string, cost: number, quota: number, reserved = 0): ChargeResult {
    const result = chargeOn(this.used(keyId, period) + reserved, cost, quota);
    if (result.ok && cost > 0) this.addUsed(keyId, period, cost);
    return result;
  }

  noticeStates(provider: string, batchId: number, findingIds: string[]): Map<string, NoticeState> {
    const out = new Map<string, NoticeState>();
    for (const id of findingIds) {
      const e = this.noticeEntries.get(noticeKey(provider, batchId, id));
      out.set(id, { seen_at: e?.seen_at ?? null, acknowledged_at: e?.acknowledged_at ?? null });
    }
    return out;
  }

  noticeDetails(provider: string, batchId: number, findingIds: string[]): Map<string, NoticeDetail> {
    const out = new Map<string, NoticeDetail>();
    for (const id of findingIds) {
      const e = this.noticeEntries.get(noticeKey(provider, batchId, id));
      out.set(id, { seen_at: e?.seen_at ?? null, acknowledged_at: e?.acknowledged_at ?? null, actor: e?.actor ?? null, note: e?.note ?? null });
    }
    return out;
  }

  /** The distinct IDs among `findingIds` not yet seen (the ones a markSeen would change). */
  unseen(provider: string, batchId: number, findingIds: string[]): string[] {
    return distinct(findingIds).filter((id) => !this.noticeEntries.get(noticeKey(provider, batchId, id))?.seen_at);
  }

  /** The distinct IDs among `findingIds` not yet acknowledged. */
  unacknowledged(provider: string, batchId: number, findingIds: string[]): string[] {
    return distinct(findingIds).filter((id) => !this.noticeEntries.get(noticeKey(provider, batchId, id))?.acknowledged_at);
  }

  applySeen(provider: string, batchId: number, findingIds: string[], at: string): void {
    for (const id of findingIds) {
      const e = this.entry(provider, batchId, id);
      if (!e.seen_at) e.seen_at = at;
    }
  }

  /** First acknowledgement wins: its time, actor and note are kept; later ones change nothing. */
  applyAck(provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): void {
    for (const id of findingIds) {
      const e = this.entry(provider, batchId, id);
      if (e.acknowledged_at) continue;
      e.acknowledged_at = at;
      e.actor = actor;
      e.note = note;
    }
  }

  image(): StateImage {
    const counters: StateImage['counters'] = [];
    for (const [period, byKey] of this.counters) for (const [keyId, used] of byKey) counters.push([period, keyId, used]);
    const notices: StateImage['notices'] = [];
    for (const e of this.noticeEntries.values()) notices.push([e.provider, e.batchId, e.findingId, e.seen_at, e.acknowledged_at, e.actor, e.note]);
    return { counters, notices };
  }

  /** Loads an image into an empty core; throws on a malformed one (the caller names the file). */
  load(image: StateImage): void {
    if (!Array.isArray(image?.counters) || !Array.isArray(image?.notices)) throw new Error('counters and notices must be arrays');
    for (const c of image.counters) {
      if (!Array.isArray(c) || typeof c[0] !== 'string' || typeof c[1] !== 'string' || !Number.isSafeInteger(c[2])) {
        throw new Error(`bad counter ${JSON.stringify(c)}`);
      }
      this.addUsed(c[1], c[0], c[2]);
    }
    for (const n of image.notices) {
      if (!Array.isArray(n) || typeof n[0] !== 'string' || !Number.isSafeInteger(n[1]) || typeof n[2] !== 'string' || !n.slice(3, 7).every(isStringOrNull)) {
        throw new Error(`bad notice ${JSON.stringify(n)}`);
      }
      const e = this.entry(n[0], n[1], n[2]);
      [e.seen_at, e.acknowledged_at, e.actor, e.note] = [n[3], n[4], n[5], n[6]];
    }
  }

  private entry(provider: string, batchId: number, findingId: string): NoticeEntry {
    const k = noticeKey(provider, batchId, findingId);
    let e = this.noticeEntries.get(k);
    if (!e) {
      e = { provider, batchId, findingId, seen_at: null, acknowledged_at: null, actor: null, note: null };
      this.noticeEntries.set(k, e);
    }
    return e;
  }
}

const isStringOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

function distinct(ids: string[]): string[] {
  return ids.length < 2 ? ids : [...new Set(ids)];
}

/** Argument checks every driver shares, so a caller's bug fails the same way whatever the driver. */
export function checkCharge(cost: number, quota: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`[state] charge: cost must be a non-negative integer, got ${cost}`);
  if (typeof quota !== 'number' || Number.isNaN(quota)) throw new RangeError(`[state] charge: quota must be a number, got ${quota}`);
}

export function checkRefund(cost: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`[state] refund: cost must be a non-negative integer, got ${cost}`);
}

/** checkNoticeArgs plus the time a seen mark or an acknowledgement carries. */
export function checkMarkArgs(op: string, provider: string, batchId: number, findingIds: string[], at: string): void {
  checkNoticeArgs(op, provider, batchId, findingIds);
  if (typeof at !== 'string') throw new TypeError(`[state] ${op}: at must be a string`);
}

/** The seen and acknowledged times of stored notice details: what StateStore.notices answers. */
export function noticeStatesOf(details: Map<string, NoticeDetail>): Map<string, NoticeState> {
  const out = new Map<string, NoticeState>();
  for (const [id, d] of details) out.set(id, { seen_at: d.seen_at, acknowledged_at: d.acknowledged_at });
  return out;
}

export function checkNoticeArgs(op: string, provider: string, batchId: number, findingIds: string[]): void {
  if (typeof provider !== 'string' || provider === '') throw new TypeError(`[state] ${op}: provider must be a non-empty string`);
  if (!Number.isSafeInteger(batchId)) throw new TypeError(`[state] ${op}: batchId must be an integer, got ${batchId}`);
  if (!Array.isArray(findingIds) || !findingIds.every((id) => typeof id === 'string')) throw new TypeError(`[state] ${op}: findingIds must be strings`);
}
