// The app's gate and state store at the edge: each call goes to the Durable Object of the key or provider it is
// about (durable-objects.ts), so requests of different keys never meet in one object. The secret is hashed here, so
// no object ever sees it. A costing request is one call to its key's object: the key's check, the rate and the
// charge in one atomic step (Gate.enter); any other authenticated request, one call to check the key (Gate.check).
import { sha256Hex } from '#platform/crypto';
import type { Admission, AuthResult, ChargeResult, Gate, KeyAdmission, NoticeState, StateStore } from '../runtime/interfaces.ts';
import { API_KEY, BEARER } from '../runtime/keys/key-entry.ts';
import { checkCharge, checkMarkArgs, checkNoticeArgs, checkRefund } from '../runtime/state/state-core.ts';
import type { EdgeEnv } from './bindings.ts';

/** The Durable Object of key `keyId` (named by the id): what the gate, the state store and the admin routes call. */
export const keyObject = (env: EdgeEnv, keyId: string) => env.KEYS.get(env.KEYS.idFromName(keyId));
const providerObject = (env: EdgeEnv, provider: string) => env.PROVIDERS.get(env.PROVIDERS.idFromName(provider));

/** The key's id and its secret's sha256 (hex) from an Authorization header, or why it is refused without a call. */
function credential(authorization: string | null): { id: string; hash: string } | { ok: false; code: 'missing_key' | 'invalid_key' } {
  if (authorization === null || authorization === '') return { ok: false, code: 'missing_key' };
  const bearer = BEARER.exec(authorization);
  const parts = bearer ? API_KEY.exec(bearer[1]) : null;
  if (!parts) return { ok: false, code: 'invalid_key' };
  return { id: parts[1], hash: sha256Hex(parts[2]) };
}

export function edgeGate(env: EdgeEnv): Gate {
  return {
    async check(authorization: string | null, now: Date): Promise<AuthResult> {
      const c = credential(authorization);
      return 'id' in c ? keyObject(env, c.id).authenticate(c.hash, now.getTime()) : c;
    },
    async enter(authorization: string | null, now: Date, period: string, cost: number | null): Promise<KeyAdmission> {
      const c = credential(authorization);
      return 'id' in c ? keyObject(env, c.id).enter(c.hash, now.getTime(), period, cost) : c;
    },
  };
}

export function edgeStateStore(env: EdgeEnv): StateStore {
  return {
    writable: true,
    async charge(keyId: string, period: string, cost: number, quota: number): Promise<ChargeResult> {
      checkCharge(cost, quota);
      return keyObject(env, keyId).charge(period, cost, quota);
    },
    async refund(keyId: string, period: string, cost: number): Promise<void> {
      checkRefund(cost);
      await keyObject(env, keyId).refund(period, cost);
    },
    remaining: (keyId: string, period: string, quota: number): Promise<number> => keyObject(env, keyId).remaining(period, quota),
    hit: (keyId: string, nowMs: number, rate: number): Promise<number> => keyObject(env, keyId).hit(nowMs, rate),
    async admit(keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
      checkCharge(cost, quota);
      return keyObject(env, keyId).admit(nowMs, rate, period, cost, quota);
    },
    async notices(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeState>> {
      checkNoticeArgs('notices', provider, batchId, findingIds);
      return providerObject(env, provider).notices(batchId, findingIds);
    },
    async markSeen(provider: string, batchId: number, findingIds: string[], at: string): Promise<void> {
      checkMarkArgs('markSeen', provider, batchId, findingIds, at);
      await providerObject(env, provider).markSeen(batchId, findingIds, at);
    },
    async acknowledge(provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): Promise<void> {
      checkMarkArgs('acknowledge', provider, batchId, findingIds, at);
      await providerObject(env, provider).acknowledge(batchId, findingIds, at, actor ?? null, note ?? null);
    },
    close: async () => {},
  };
}
