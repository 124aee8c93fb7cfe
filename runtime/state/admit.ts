// The rate check and the charge of one costing request, through StateStore.admit where a store has it (SQLite and
// Redis: one atomic step shared by every process) and as the two calls otherwise.
import type { Admission, StateStore } from '../interfaces.ts';

export function admit(store: StateStore, keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
  return store.admit ? store.admit(keyId, nowMs, rate, period, cost, quota) : hitThenCharge(store, keyId, nowMs, rate, period, cost, quota);
}

/** hit(), then charge() only if the rate admitted the request: a refused request costs nothing. */
async function hitThenCharge(store: StateStore, keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number): Promise<Admission> {
  const wait = await store.hit(keyId, nowMs, rate);
  if (wait > 0) return { wait, charge: null };
  return { wait: 0, charge: await store.charge(keyId, period, cost, quota) };
}
