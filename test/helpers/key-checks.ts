// "A revocation applies within a second", checked by counting the key store's checks instead of timing them: the
// poll runs every 250 ms, and a revocation must apply by the second check finished after it was written. A busy
// machine delays the checks, and this assertion with them, so it holds at any speed.
import { expect } from 'vitest';
import { fetchAny } from './in-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Count = () => number | Promise<number>;

/**
 * Waits until `holds()`, failing if two checks (`checks()`, the store's count of finished ones) finished after the
 * call while it did not hold yet. Call it right after the change (a revocation, a new key) is written.
 */
export async function expectBySecondCheck(checks: Count, holds: () => boolean | Promise<boolean>, label = 'the change'): Promise<void> {
  const from = await checks();
  for (;;) {
    // Read the count before asking: if two checks had finished by then, the change must already show.
    const seen = await checks();
    if (await holds()) return;
    expect(seen, `${label}: ${seen - from} checks finished after it was written, and it does not show`).toBeLessThan(from + 2);
    await sleep(10);
  }
}

/** Resolves once `n` more checks have finished: every version written before the call has been read. */
export async function afterChecks(checks: Count, n = 2): Promise<void> {
  const until = (await checks()) + n;
  while ((await checks()) < until) await sleep(10);
}

/** The `register_key_checks_total` count of a runtime's /metrics (`origin`: http://host:port, or an in-process one). */
export async function keyChecksOf(origin: string): Promise<number> {
  const text = await (await fetchAny(`${origin}/metrics`)).text();
  const m = /^register_key_checks_total (\d+)$/m.exec(text);
  if (!m) throw new Error(`no register_key_checks_total in ${origin}/metrics`);
  return Number(m[1]);
}
