// Quota periods: the remembered last period never answers for an instant outside it, in any order of calls.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quotaPeriod, quotaPeriodEnd } from '../../../runtime/state/quota-period.ts';

/** The period computed from scratch, as the contract defines it. */
const fresh = (t: number): string => {
  const d = new Date(t);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

describe('quotaPeriod', () => {
  it('agrees with a fresh computation for any sequence of instants, month edges included', () => {
    const edges = [Date.UTC(2026, 10, 1), Date.UTC(2026, 11, 1), Date.UTC(2027, 0, 1), Date.UTC(2024, 1, 29)];
    const instant = fc.oneof(
      fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), // years 1 to 9999
      fc.constantFrom(...edges).chain((e) => fc.integer({ min: e - 2, max: e + 1 })),
    );
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 50 }), (ts) => {
        for (const t of ts) expect(quotaPeriod(t)).toBe(fresh(t));
      }),
      { seed: 20261123, numRuns: 500 },
    );
  });

  it('ends a period at 00:00 UTC on the 1st of the next month, in any year', () => {
    expect(quotaPeriodEnd(Date.UTC(2026, 10, 23))).toBe(Date.UTC(2026, 11, 1));
    expect(quotaPeriodEnd(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe(Date.UTC(2027, 0, 1));
    expect(new Date(quotaPeriodEnd(new Date('0050-03-10T00:00:00Z').getTime())).toISOString()).toBe('0050-04-01T00:00:00.000Z');
    expect(() => quotaPeriod(Number.NaN)).toThrow(RangeError);
  });
});
