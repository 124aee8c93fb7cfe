// Node's admission (the Gate of runtime/interfaces.ts): the key store checks the key in this process, at once, and
// the state store admits the costing request: the rate check and the charge through StateStore.admit where a store
// has it (SQLite and Redis: one atomic step shared by every process) and as the two calls otherwise.
import type { Admission, Gate, KeyAdmission, KeyStore, StateStore } from '../interfaces.ts';

export function admit(store: StateStore, keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
  return store.admit ? store.admit(keyId, nowMs, rate, period, cost, quota) : hitThenCharge(store, keyId, nowMs, rate, period, cost, quota);
}

/** hit(), then charge() only if the rate admitted the request: a refused request costs nothing (state-core.ts admission). */
async function hitThenCharge(store: StateStore, keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
  const wait = await store.hit(keyId, nowMs, rate);
  if (wait > 0) return { wait, charge: null };
  return { wait: 0, charge: await store.charge(keyId, period, cost, quota) };
}

/**
 * The gate of a server whose keys are held in this process: the key store's check, then the state store's
 * admission. The credits of a request refused by the rate, or only checked, are not read here: the app reads them
 * only for an answer that shows them.
 */
export function keyStoreGate(keys: KeyStore, store: StateStore): Gate {
  return {
    check: (authorization, now) => keys.authenticate(authorization, now),
    async enter(authorization, now, period, cost): Promise<KeyAdmission> {
      const auth = keys.authenticate(authorization, now);
      if (!auth.ok || cost === null) return auth.ok ? { ok: true, key: auth.key, admission: null, remaining: null } : auth;
      const key = auth.key;
      const admission = await admit(store, key.id, now.getTime(), key.rate, period, cost, key.quota);
      return { ok: true, key, admission, remaining: admission.charge ? admission.charge.remaining : null };
    },
  };
}
