// GET /key: the calling key as the published service shows it (plan, access model, organisation, expiry, credits),
// how to extend it, and when its monthly allowance resets. Free, and answers without a release.
import type { KeyRecord } from '../interfaces.ts';
import { keyExpiry } from '../keys/key-expiry.ts';
import { ERROR_CODES_401 } from '../contract/error-codes.ts';
import { errorResponse, headerRef, ok, STAMP_IF_LOADED } from '../contract/http-parts.ts';
import { KeyResponse, ref, type KeyExtensionBody, type KeyResponseBody } from '../contract/schemas.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { quotaPeriod, quotaPeriodEnd } from '../state/quota-period.ts';

/** How a key that expires can be extended: a deployment setting (`serve --extend-how`, `--extend-contact`). */
export type KeyExtension = KeyExtensionBody;

/** What a deployment that set nothing tells the holder of an expiring key. */
export const DEFAULT_KEY_EXTENSION: KeyExtension = {
  how: 'Ask the operator who issued this key to extend it before it expires; an expired key answers 401 key_expired.',
};

export interface KeyRouteOptions {
  /** Default DEFAULT_KEY_EXTENSION. */
  extension?: KeyExtension;
}

/** The /key body: the published fields in their order, then this server's own (`id` … `credits_reset_at`). */
function keyBody(k: KeyRecord, nowMs: number, credits: number, extension: KeyExtension): string {
  const e = keyExpiry(k, nowMs);
  const key: KeyResponseBody['key'] = {
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
  const body: KeyResponseBody = { key, extend: e ? extension : null };
  return JSON.stringify(body);
}

export function keyRoutes(opts: KeyRouteOptions = {}): RouteDef[] {
  const extension = opts.extension ?? DEFAULT_KEY_EXTENSION;
  return [
    defineRoute({
      method: 'GET',
      path: '/key',
      auth: true,
      operation: {
        operationId: 'getKey',
        tag: 'keys',
        summary: 'The calling key, its plan and remaining credits',
        description: 'No lookup cost. Answers even before a release is loaded, so the stamp header may be absent.',
        cost: 0,
        responses: {
          '200': ok('The calling key.', ref(KeyResponse), STAMP_IF_LOADED),
          '401': errorResponse('Missing, invalid, revoked or expired key.', ERROR_CODES_401, {
            ...STAMP_IF_LOADED,
            'WWW-Authenticate': headerRef('WWWAuthenticate'),
          }),
          // The credits come from the state store: while it cannot be read, the key cannot be shown as it stands.
          '503': errorResponse('The state store cannot be read right now, so the credits cannot be told (`state_unavailable`). Free.', ['state_unavailable'], STAMP_IF_LOADED),
        },
      },
      // A key's plan and credits need no release: they answer while none is loaded or while it cannot be opened.
      noRelease: true,
      prepare(c) {
        const k = c.key!;
        return {
          async run() {
            const credits = await c.services.store.remaining(k.id, quotaPeriod(c.now), k.quota);
            return { status: 200, body: keyBody(k, c.now, credits, extension), headers: { 'cache-control': 'private, no-store' } };
          },
        };
      },
    }),
  ];
}
