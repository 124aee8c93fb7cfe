// The StateStore contract: every state driver runs this same suite (memory, sqlite, redis, and each as a read-only
// mirror). The durable drivers also run its restart and shared-store cases.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateUnavailableError, type StateStore } from '../../../runtime/interfaces.ts';
import { admit } from '../../../runtime/state/admit.ts';
import { quotaPeriod } from '../../../runtime/state/quota-period.ts';

/** What a driver promises beyond the core: the read-only mirror store refuses acknowledgements. */
export interface ContractOptions {
  /** Whether acknowledge persists (true) or rejects with StateUnavailableError (false). Default true. */
  acknowledges?: boolean;
  /** Closes `store` and opens the same stored state again (a restart). Durable drivers only. */
  reopen?: (store: StateStore) => Promise<StateStore>;
  /** Another handle on the same stored state, as another process or instance would open it. Shared drivers only. */
  sibling?: (store: StateStore) => Promise<StateStore>;
}

const P = '2026-11';

export function stateStoreContract(name: string, makeStore: () => Promise<StateStore>, options: ContractOptions = {}): void {
  const acknowledges = options.acknowledges ?? true;

  describe(`StateStore contract: ${name}`, () => {
    let store: StateStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('reports whether it can persist acknowledgements', () => {
      expect(store.writable).toBe(acknowledges);
    });

    it('charges exactly the quota when 2,000 charges race for 1,000 credits', async () => {
      const results = await Promise.all(Array.from({ length: 2000 }, () => store.charge('k1', P, 1, 1000)));
      expect(results.filter((r) => r.ok)).toHaveLength(1000);
      expect(results.every((r) => r.remaining >= 0)).toBe(true);
      // Each success reports a distinct remaining count, 999 down to 0: no two callers saw the same credit.
      expect(new Set(results.filter((r) => r.ok).map((r) => r.remaining)).size).toBe(1000);
      expect(results.filter((r) => !r.ok).every((r) => r.remaining === 0)).toBe(true);
      expect(await store.remaining('k1', P, 1000)).toBe(0);
    });

    it('charges a batch all-or-nothing', async () => {
      expect(await store.charge('k1', P, 8, 10)).toEqual({ ok: true, remaining: 2 });
      expect(await store.charge('k1', P, 5, 10)).toEqual({ ok: false, remaining: 2 });
      expect(await store.remaining('k1', P, 10)).toBe(2);
      expect(await store.charge('k1', P, 2, 10)).toEqual({ ok: true, remaining: 0 });
      expect(await store.charge('k1', P, 1, 10)).toEqual({ ok: false, remaining: 0 });
    });

    it('reports without charging for a cost of 0', async () => {
      expect(await store.charge('k1', P, 0, 5)).toEqual({ ok: true, remaining: 5 });
      await store.charge('k1', P, 5, 5);
      expect(await store.charge('k1', P, 0, 5)).toEqual({ ok: true, remaining: 0 });
      expect(await store.remaining('k1', P, 5)).toBe(0);
    });

    it('never reports negative credits when the quota is lowered below what was used', async () => {
      await store.charge('k1', P, 7, 10);
      expect(await store.remaining('k1', P, 5)).toBe(0);
      expect(await store.charge('k1', P, 1, 5)).toEqual({ ok: false, remaining: 0 });
    });

    it('keeps periods and keys apart', async () => {
      const oct = quotaPeriod(Date.UTC(2026, 9, 31, 23, 59, 59, 999));
      const nov = quotaPeriod(Date.UTC(2026, 10, 1, 0, 0, 0, 0));
      expect([oct, nov]).toEqual(['2026-10', '2026-11']);
      await store.charge('k1', oct, 3, 3);
      expect(await store.charge('k1', oct, 1, 3)).toEqual({ ok: false, remaining: 0 });
      expect(await store.charge('k1', nov, 1, 3)).toEqual({ ok: true, remaining: 2 });
      expect(await store.charge('k2', oct, 1, 3)).toEqual({ ok: true, remaining: 2 });
    });

    it('gives a refunded charge back, never below nothing used', async () => {
      await store.charge('k1', P, 5, 10);
      await store.refund('k1', P, 2);
      expect(await store.remaining('k1', P, 10)).toBe(7);
      await store.refund('k1', P, 100);
      expect(await store.remaining('k1', P, 10)).toBe(10);
      await store.refund('k2', P, 1);
      expect(await store.remaining('k2', P, 10)).toBe(10);
      await expect(store.refund('k1', P, -1)).rejects.toThrow(RangeError);
    });

    it('refunds exactly what concurrent refunds return', async () => {
      await store.charge('k1', P, 500, 1000);
      await Promise.all(Array.from({ length: 300 }, () => store.refund('k1', P, 1)));
      expect(await store.remaining('k1', P, 1000)).toBe(800);
    });

    it('rejects a negative or fractional cost', async () => {
      await expect(store.charge('k1', P, -1, 10)).rejects.toThrow(RangeError);
      await expect(store.charge('k1', P, 1.5, 10)).rejects.toThrow(RangeError);
      expect(await store.remaining('k1', P, 10)).toBe(10);
    });

    it('admits a costing request: rate first, and a request the rate refuses charges nothing', async () => {
      expect(await admit(store, 'k1', 1000, 2, P, 3, 10)).toEqual({ wait: 0, charge: { ok: true, remaining: 7 } });
      expect(await admit(store, 'k1', 1001, 2, P, 3, 10)).toEqual({ wait: 0, charge: { ok: true, remaining: 4 } });
      expect(await admit(store, 'k1', 1002, 2, P, 3, 10)).toEqual({ wait: 998, charge: null });
      expect(await store.remaining('k1', P, 10)).toBe(4);
      expect(await admit(store, 'k1', 2001, 2, P, 5, 10)).toEqual({ wait: 0, charge: { ok: false, remaining: 4 } });
    });

    it('admits exactly `rate` requests in any window (t-1000, t]', async () => {
      expect(await store.hit('k1', 1000, 2)).toBe(0);
      expect(await store.hit('k1', 1500, 2)).toBe(0);
      expect(await store.hit('k1', 1999, 2)).toBe(1); // 1000 leaves the window at 2000
      expect(await store.hit('k1', 2000, 2)).toBe(0); // refused hits are not recorded
      expect(await store.hit('k1', 2001, 2)).toBe(499);
      expect(await store.hit('k2', 2001, 2)).toBe(0); // per key
    });

    it('agrees with a brute-force model of the rolling window', async () => {
      let seed = 7;
      const rand = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
      for (const rate of [1, 2, 5]) {
        const admitted: number[] = [];
        let t = 10_000;
        for (let i = 0; i < 400; i++) {
          t += Math.floor(rand() * 400);
          const inWindow = (at: number): number => admitted.filter((a) => a > at - 1000 && a <= at).length;
          const expectAdmit = inWindow(t) < rate;
          const wait = await store.hit(`m${rate}`, t, rate);
          expect(wait === 0).toBe(expectAdmit);
          if (expectAdmit) admitted.push(t);
          else {
            expect(wait).toBeGreaterThanOrEqual(1);
            expect(inWindow(t + wait)).toBeLessThan(rate); // a slot is free after the wait...
            expect(inWindow(t + wait - 1)).toBe(rate); // ...and not a millisecond earlier
          }
        }
      }
    });

    it('reports unknown findings as neither seen nor acknowledged', async () => {
      const s = await store.notices('acme', 1, ['f1', 'f2']);
      expect([...s.entries()]).toEqual([
        ['f1', { seen_at: null, acknowledged_at: null }],
        ['f2', { seen_at: null, acknowledged_at: null }],
      ]);
    });

    it('marks findings seen once, keeping the first seen_at', async () => {
      await store.markSeen('acme', 1, ['f1', 'f2'], '2026-11-01T10:00:00Z');
      await store.markSeen('acme', 1, ['f2', 'f3'], '2026-11-02T10:00:00Z');
      const s = await store.notices('acme', 1, ['f1', 'f2', 'f3', 'f4']);
      expect(s.get('f1')).toEqual({ seen_at: '2026-11-01T10:00:00Z', acknowledged_at: null });
      expect(s.get('f2')?.seen_at).toBe('2026-11-01T10:00:00Z');
      expect(s.get('f3')?.seen_at).toBe('2026-11-02T10:00:00Z');
      expect(s.get('f4')?.seen_at).toBeNull();
      // Batches and providers are separate.
      expect((await store.notices('acme', 2, ['f1'])).get('f1')?.seen_at).toBeNull();
      expect((await store.notices('other', 1, ['f1'])).get('f1')?.seen_at).toBeNull();
    });

    if (options.reopen) {
      const reopen = options.reopen;
      it('keeps counters, rate windows, seen and acknowledgements (with actor and note) across a restart', async () => {
        await store.charge('k1', P, 3, 10);
        await store.charge('k2', '2026-12', 1, 10);
        expect(await store.hit('k1', 10_000, 1)).toBe(0);
        await store.markSeen('acme', 7, ['f1', 'f2'], '2026-11-01T00:00:00Z');
        if (acknowledges) await store.acknowledge('acme', 7, ['f1'], '2026-11-02T00:00:00Z', 'ops@acme', 'fixed');
        store = await reopen(store);
        expect(await store.remaining('k1', P, 10)).toBe(7);
        expect(await store.remaining('k2', '2026-12', 10)).toBe(9);
        // The window is stored too, so a restart does not hand out a second second's worth of requests.
        expect(await store.hit('k1', 10_500, 1)).toBe(500);
        const s = await store.notices('acme', 7, ['f1', 'f2']);
        expect(s.get('f2')).toEqual({ seen_at: '2026-11-01T00:00:00Z', acknowledged_at: null });
        if (acknowledges) {
          expect(s.get('f1')).toEqual({ seen_at: '2026-11-01T00:00:00Z', acknowledged_at: '2026-11-02T00:00:00Z' });
          const inspect = store as StateStore & { noticeDetails?: (p: string, b: number, ids: string[]) => Promise<Map<string, unknown>> };
          if (inspect.noticeDetails) expect((await inspect.noticeDetails('acme', 7, ['f1'])).get('f1')).toMatchObject({ actor: 'ops@acme', note: 'fixed' });
        }
      });
    }

    if (options.sibling) {
      const sibling = options.sibling;
      it('stays exact across two handles on one store: 2,000 admissions race for 1,000 credits, one rate window', async () => {
        const other = await sibling(store);
        try {
          const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => admit(i % 2 ? store : other, 'k1', 10_000 + i, 1_000_000, P, 1, 1000)));
          expect(results.filter((r) => r.charge?.ok)).toHaveLength(1000);
          expect(new Set(results.filter((r) => r.charge?.ok).map((r) => r.charge!.remaining)).size).toBe(1000);
          // A rate of 3 admits three hits in a second, whichever handle asks.
          const waits = await Promise.all([store, other, store, other, store].map((s, i) => s.hit('k2', 20_000 + i, 3)));
          expect(waits.filter((w) => w === 0)).toHaveLength(3);
          // What one handle marks, the other sees at once.
          await other.markSeen('acme', 1, ['f9'], '2026-11-01T00:00:00Z');
          expect((await store.notices('acme', 1, ['f9'])).get('f9')?.seen_at).toBe('2026-11-01T00:00:00Z');
        } finally {
          await other.close();
        }
      });
    }

    if (acknowledges) {
      it('keeps the first acknowledged_at when acknowledged twice', async () => {
        await store.acknowledge('acme', 1, ['f1'], '2026-11-01T10:00:00Z', 'ops@acme', 'fixed upstream');
        await store.acknowledge('acme', 1, ['f1', 'f2'], '2026-11-03T10:00:00Z', null, null);
        const s = await store.notices('acme', 1, ['f1', 'f2']);
        expect(s.get('f1')).toEqual({ seen_at: null, acknowledged_at: '2026-11-01T10:00:00Z' });
        expect(s.get('f2')).toEqual({ seen_at: null, acknowledged_at: '2026-11-03T10:00:00Z' });
        expect((await store.notices('acme', 2, ['f1'])).get('f1')?.acknowledged_at).toBeNull();
      });

      it('keeps the first of concurrent acknowledgements', async () => {
        await Promise.all([
          store.acknowledge('acme', 1, ['f1'], '2026-11-01T10:00:00Z', 'a', null),
          store.acknowledge('acme', 1, ['f1'], '2026-11-01T11:00:00Z', 'b', null),
        ]);
        expect((await store.notices('acme', 1, ['f1'])).get('f1')?.acknowledged_at).toBe('2026-11-01T10:00:00Z');
      });

      it('treats an empty acknowledgement as a no-op', async () => {
        await store.acknowledge('acme', 1, [], '2026-11-01T10:00:00Z', null, null);
        await store.markSeen('acme', 1, [], '2026-11-01T10:00:00Z');
      });
    } else {
      it('refuses acknowledgements with StateUnavailableError', async () => {
        await expect(store.acknowledge('acme', 1, ['f1'], '2026-11-01T10:00:00Z', null, null)).rejects.toThrow(StateUnavailableError);
        expect((await store.notices('acme', 1, ['f1'])).get('f1')?.acknowledged_at).toBeNull();
      });
    }
  });
}
