// When a key stops working, as GET /key and the X-Register-Key-* headers tell it: one computation for both.
import type { KeyRecord } from '../interfaces.ts';

const DAY_MS = 86_400_000;
/** A key is "expiring soon" from this many days before its expiry (CONTRACT-DECISIONS.md, GET /key). */
const EXPIRING_SOON_DAYS = 7;

export interface KeyExpiry {
  /** The stored expiry, an ISO date-time. */
  expiresAt: string;
  /** Whole days left before the expiry (0 on its last day). */
  daysRemaining: number;
  expiringSoon: boolean;
}

/** The expiry of `key` seen at `nowMs`, or null for a key that never expires. */
export function keyExpiry(key: KeyRecord, nowMs: number): KeyExpiry | null {
  if (key.expires_at === null) return null;
  const left = Date.parse(key.expires_at) - nowMs;
  return { expiresAt: key.expires_at, daysRemaining: Math.max(0, Math.floor(left / DAY_MS)), expiringSoon: left <= EXPIRING_SOON_DAYS * DAY_MS };
}

/** The headers every authenticated answer of an expiring key carries, so a client can warn without polling. */
export function keyExpiryHeaders(key: KeyRecord, nowMs: number, into: Record<string, string>): void {
  const e = keyExpiry(key, nowMs);
  if (!e) return;
  into['x-register-key-expires'] = e.expiresAt;
  into['x-register-key-days-remaining'] = String(e.daysRemaining);
}
