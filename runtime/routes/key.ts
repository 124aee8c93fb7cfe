// GET /key: the calling key as the published service shows it (plan, access model, organisation, expiry, credits),
// how to extend it, and when its monthly allowance resets. Free, and answers without a release.
import type { KeyRecord } from '../interfaces.ts';
import { keyExpiry } from '../keys/key-expiry.ts';
import type { RouteDef } from '../route.ts';
import { quotaPeriod, quotaPeriodEnd } from '../state/quota-period.ts';

/** How a key that expires can be extended: a deployment setting (`serve --extend-how`, `--extend-contact`). */
export interface KeyExtension {
  how: string;
  contact: string | null;
}

/** What a deployment that set nothing tells the holder of an expiring key. */
export const DEFAULT_KEY_EXTENSION: KeyExtension = {
  how: 'Ask the operator who issued this key to extend it before it expires; an expired key answers 401 key_expired.',
  contact: null,
};

export interface KeyRouteOptions {
  /** Default DEFAULT_KEY_EXTENSION. */
  extension?: KeyExtension;
}

/** The /key body: the published fields in their order, then this server's own (`id` … `credits_reset_at`). */
export function keyBody(k: KeyRecord, nowMs: number, credits: number, extension: KeyExtension): string {
  const e = keyExpiry(k, nowMs);
  const key = {
    plan: k.plan,
    access_model: k.access_model,
    organisation: k.organisation,
    provider: k.provider,
    expires_at: e?.expiresAt ?? null,
    days_remaining: e?.daysRemaining ?? null,
    expiring_soon: e?.expiringSoon ?? false,
    credits_remaining: credits,
    // The state stores record a hit whenever they read a key's rolling window; reading it here would spend a slot.
    rate_limit_remaining: null,
    id: k.id,
    name: k.name,
    quota: k.quota,
    rate: k.rate,
    credits_reset_at: new Date(quotaPeriodEnd(nowMs)).toISOString(),
  };
  return JSON.stringify({ key, extend: e ? extension : null });
}

export function keyRoutes(opts: KeyRouteOptions = {}): RouteDef[] {
  const extension = opts.extension ?? DEFAULT_KEY_EXTENSION;
  return [
    {
      method: 'GET',
      path: '/key',
      auth: true,
      costing: false,
      // A key's plan and credits need no release: they answer while none is loaded or while it cannot be opened.
      noRelease: true,
      prepare(c) {
        const k = c.key!;
        return {
          cost: 0,
          async run() {
            const credits = await c.services.store.remaining(k.id, quotaPeriod(c.now), k.quota);
            return { status: 200, body: keyBody(k, c.now, credits, extension), headers: { 'cache-control': 'private, no-store' } };
          },
        };
      },
    },
  ];
}
