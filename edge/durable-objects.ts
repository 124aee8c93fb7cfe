// The edge's exact state, one Durable Object per subject so that no single object is on every request's path:
// - KeyObject, one per API key (named by its id): the key's entry, its rate window and its monthly quota. Each
//   method changes memory in one synchronous step (a Durable Object runs one event at a time, and nothing here
//   awaits between the check and the change), so admissions and charges are exact under any concurrency; the
//   storage write it makes is durable before the caller sees the answer (the runtime's output gate). A costing
//   request is one call (`enter`: the secret's hash, revocation and expiry checked with the rate and the charge).
// - ProviderObject, one per provider: the seen and acknowledged state of its notices.
// - KeyDirectory, one for the deployment: the list the admin route shows. Only the admin route reaches it.
// None reads a binding, so none names the Worker's env (bindings.ts names these classes: that way round, no cycle).
import { DurableObject } from 'cloudflare:workers';
import { fromHex, sameBytes } from '#platform/crypto';
import type { Admission, AuthResult, ChargeResult, KeyAdmission, KeyEntry, NoticeState } from '../runtime/interfaces.ts';
import { toKeyRecord } from '../runtime/keys/key-entry.ts';
import { admitInWindow } from '../runtime/state/rate-window.ts';
import { admission, chargeOn, checkCharge, creditsLeft, refundOn, StateCore, type NoticeDetail } from '../runtime/state/state-core.ts';
import { decodeMark, encodeMark, raiseMark } from '../common/trust.ts';

/** Stands in for a missing key's hash, so an unknown key is compared like a known one. */
const NO_HASH = new Uint8Array(32);

/** A period's stored count and the rate window as it was then (a bare count: stored before windows were). */
type StoredUse = number | [number, number[]];

/**
 * The window as stored: its latest 1,024 times at most (9 KiB), far under a stored value's 128 KiB whatever the
 * key's rate. A key admitted faster than that may, after a restart, get a little more than its rate for a second.
 */
const storedWindow = (w: number[]): number[] => (w.length > 1024 ? w.slice(-1024) : w);

export class KeyObject extends DurableObject {
  private entry: KeyEntry | null = null;
  /** Lookups charged by quota period ("2026-11"). */
  private readonly used = new Map<string, number>();
  /**
   * The key's rate window: its admission times in the last second, ascending. Stored with each admission, as the
   * other durable drivers store theirs, so a restarted object does not hand out a second second's worth of requests:
   * in the charged period's row beside its count (a charged lookup still writes one row), or, for an admission that
   * charges nothing, under `window`. Loaded from whichever holds the latest time.
   */
  private readonly window: number[] = [];
  /**
   * Calls this object has answered since it was loaded, `stats` aside: the Durable Object requests the platform
   * bills. Kept in memory only (a write per request would cost more than it tells); the admin route shows it.
   */
  private calls = 0;

  constructor(ctx: ConstructorParameters<typeof DurableObject>[0], env: unknown) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.entry = (await ctx.storage.get<KeyEntry>('entry')) ?? null;
      let latest = (await ctx.storage.get<number[]>('window')) ?? [];
      // A count alone is a row written before windows were stored.
      for (const [k, v] of await ctx.storage.list<StoredUse>({ prefix: 'used:' })) {
        const [n, w] = typeof v === 'number' ? [v, []] : v;
        this.used.set(k.slice(5), n);
        if ((w.at(-1) ?? -Infinity) > (latest.at(-1) ?? -Infinity)) latest = w;
      }
      this.window.push(...latest);
    });
  }

  /** Checks a secret's sha256 (hex) against the stored one at `nowMs`: the key's record, or why it is refused. */
  authenticate(hashHex: string, nowMs: number): AuthResult {
    this.calls++;
    return this.check(hashHex, nowMs);
  }

  /**
   * A costing request in one call: the key checked as `authenticate` does, then, given a `cost`, the rate and the
   * charge by the key's own plan (`admit`); given null, only the check (a request refused before its charge). With
   * the key's credits in `period` after it.
   */
  enter(hashHex: string, nowMs: number, period: string, cost: number | null): KeyAdmission {
    this.calls++;
    const auth = this.check(hashHex, nowMs);
    if (!auth.ok) return auth;
    const { quota, rate } = auth.key;
    if (cost !== null) checkCharge(cost, quota);
    const admission = cost === null ? null : this.admitNow(nowMs, rate, period, cost, quota);
    return { ok: true, key: auth.key, admission, remaining: this.left(period, quota) };
  }

  /** This key's call count (`calls`), or null when there is no such key. Not counted itself. */
  stats(): { id: string; calls: number } | null {
    return this.entry ? { id: this.entry.id, calls: this.calls } : null;
  }

  private check(hashHex: string, nowMs: number): AuthResult {
    const stored = this.entry ? fromHex(this.entry.hash) : NO_HASH;
    const given = fromHex(hashHex);
    if (!sameBytes(given.length === 32 ? given : NO_HASH, stored) || !this.entry) return { ok: false, code: 'invalid_key' };
    if (this.entry.revoked) return { ok: false, code: 'revoked_key' };
    if (this.entry.expires_at !== null && nowMs > Date.parse(this.entry.expires_at)) return { ok: false, code: 'key_expired' };
    return { ok: true, key: toKeyRecord(this.entry) };
  }

  /** The rate check and, if it admits, the charge: one step, so nothing slips between them. */
  admit(nowMs: number, rate: number, period: string, cost: number, quota: number): Admission {
    this.calls++;
    return this.admitNow(nowMs, rate, period, cost, quota);
  }

  charge(period: string, cost: number, quota: number): ChargeResult {
    this.calls++;
    return this.chargeNow(period, cost, quota);
  }

  refund(period: string, cost: number): void {
    this.calls++;
    this.setUsed(period, refundOn(this.used.get(period) ?? 0, cost));
  }

  remaining(period: string, quota: number): number {
    this.calls++;
    return this.left(period, quota);
  }

  hit(nowMs: number, rate: number): number {
    this.calls++;
    return this.hitNow(nowMs, rate);
  }

  private admitNow(nowMs: number, rate: number, period: string, cost: number, quota: number): Admission {
    const result = admission(admitInWindow(this.window, nowMs, rate), () => this.chargeNow(period, cost, quota));
    // A charge stored the window with its count; an admission that charged nothing stores it alone.
    if (result.charge && (!result.charge.ok || cost === 0)) this.storeWindow();
    return result;
  }

  private hitNow(nowMs: number, rate: number): number {
    const wait = admitInWindow(this.window, nowMs, rate);
    if (wait === 0) this.storeWindow();
    return wait;
  }

  private storeWindow(): void {
    // Not awaited, as setUsed's: the output gate holds the answer until it is durable.
    void this.ctx.storage.put('window', storedWindow(this.window));
  }

  private chargeNow(period: string, cost: number, quota: number): ChargeResult {
    const used = this.used.get(period) ?? 0;
    const result = chargeOn(used, cost, quota);
    if (result.ok && cost > 0) this.setUsed(period, used + cost);
    return result;
  }

  private left(period: string, quota: number): number {
    return creditsLeft(this.used.get(period) ?? 0, quota);
  }

  /** Stores a new key's entry; false when this id already has one. */
  create(entry: KeyEntry): boolean {
    this.calls++;
    if (this.entry) return false;
    this.entry = entry;
    void this.ctx.storage.put('entry', entry);
    return true;
  }

  /** Marks the key revoked (applies to its next request); its entry, or null when there is no such key. */
  revoke(): KeyEntry | null {
    this.calls++;
    if (!this.entry) return null;
    if (!this.entry.revoked) {
      this.entry = { ...this.entry, revoked: true };
      void this.ctx.storage.put('entry', this.entry);
    }
    return this.entry;
  }

  private setUsed(period: string, n: number): void {
    this.used.set(period, n);
    // Not awaited: the write is made now, and the output gate holds the answer until it is durable.
    void this.ctx.storage.put<StoredUse>(`used:${period}`, [n, storedWindow(this.window)]);
  }
}

/** Stored per finding: [seen_at, acknowledged_at, actor, note]. */
type StoredNotice = [string | null, string | null, string | null, string | null];

export class ProviderObject extends DurableObject {
  /** This provider's notices (StateCore keys them by provider too; here it is always the same one). */
  private readonly core = new StateCore();

  constructor(ctx: ConstructorParameters<typeof DurableObject>[0], env: unknown) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const notices: [string, number, string, ...StoredNotice][] = [];
      for (const [k, v] of await ctx.storage.list<StoredNotice>({ prefix: 'n:' })) {
        const [, batch, id] = /^n:(-?\d+):(.*)$/s.exec(k) ?? [];
        if (id !== undefined) notices.push(['p', Number(batch), id, ...v]);
      }
      this.core.load({ counters: [], notices });
    });
  }

  notices(batchId: number, findingIds: string[]): Map<string, NoticeState> {
    return this.core.noticeStates('p', batchId, findingIds);
  }

  details(batchId: number, findingIds: string[]): Map<string, NoticeDetail> {
    return this.core.noticeDetails('p', batchId, findingIds);
  }

  markSeen(batchId: number, findingIds: string[], at: string): void {
    const changed = this.core.unseen('p', batchId, findingIds);
    this.core.applySeen('p', batchId, changed, at);
    this.persist(batchId, changed);
  }

  acknowledge(batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): void {
    const changed = this.core.unacknowledged('p', batchId, findingIds);
    this.core.applyAck('p', batchId, changed, at, actor, note);
    this.persist(batchId, changed);
  }

  private persist(batchId: number, ids: string[]): void {
    if (ids.length === 0) return;
    const out: Record<string, StoredNotice> = {};
    for (const [id, d] of this.core.noticeDetails('p', batchId, ids)) out[`n:${batchId}:${id}`] = [d.seen_at, d.acknowledged_at, d.actor, d.note];
    // One put of up to 128 entries at a time (the storage API's bound); the output gate waits for all of them.
    const keys = Object.keys(out);
    for (let i = 0; i < keys.length; i += 128) void this.ctx.storage.put(Object.fromEntries(keys.slice(i, i + 128).map((k) => [k, out[k]])));
  }
}

/** The deployment's list of keys, for `register keys list --edge`; a request's authentication never reads it. */
export class KeyDirectory extends DurableObject {
  /** By id, in the order they were added; each stored under `k:<id>` (a stored value is bounded at 128 KiB). */
  private readonly entries = new Map<string, KeyEntry>();
  private version = 0;

  constructor(ctx: ConstructorParameters<typeof DurableObject>[0], env: unknown) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const stored = [...(await ctx.storage.list<KeyEntry>({ prefix: 'k:' })).values()];
      for (const e of stored.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0))) this.entries.set(e.id, e);
      this.version = (await ctx.storage.get<number>('version')) ?? 0;
    });
  }

  list(): { entries: KeyEntry[]; version: string } {
    return { entries: [...this.entries.values()], version: String(this.version) };
  }

  insert(entry: KeyEntry): boolean {
    if (this.entries.has(entry.id)) return false;
    this.save(entry);
    return true;
  }

  /** Records what the key's own object now holds for it (a revocation); the version moves only if that changed it. */
  update(entry: KeyEntry): void {
    if (JSON.stringify(this.entries.get(entry.id)) !== JSON.stringify(entry)) this.save(entry);
  }

  private save(entry: KeyEntry): void {
    this.entries.set(entry.id, entry);
    this.version++;
    void this.ctx.storage.put({ [`k:${entry.id}`]: entry, version: this.version });
  }
}

/** Storage key of the trust mark (its text, as common/trust.ts encodes it). */
const MARK_KEY = 'mark';

/**
 * Holds the mark. A Durable Object runs one event at a time and its storage writes are atomic and durable before the
 * caller sees the answer, so a save merges with what is stored and never lowers it, whichever isolate saves.
 */
export class TrustMarkObject extends DurableObject {
  /** The stored mark's text, or null when none was ever saved. */
  async load(): Promise<string | null> {
    return (await this.ctx.storage.get<string>(MARK_KEY)) ?? null;
  }

  /** Stores the newer of `text` and what is stored, field by field. */
  async save(text: string): Promise<void> {
    const mark = decodeMark(text);
    const stored = await this.ctx.storage.get<string>(MARK_KEY);
    let merged = mark;
    try {
      if (stored !== undefined) merged = raiseMark(decodeMark(stored), mark);
    } catch {
      // A damaged stored mark is replaced by the one given, which the caller loaded (refusing damage) and raised.
    }
    await this.ctx.storage.put(MARK_KEY, encodeMark(merged));
  }
}
