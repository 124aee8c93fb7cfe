// Runs the StateStore contract against the in-memory and read-only drivers, plus the quota period helper.

import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../runtime/state/memory-store.ts';
import { quotaPeriod, quotaPeriodEnd } from '../../../runtime/state/quota-period.ts';
import { createReadOnlyStore } from '../../../runtime/state/read-only-store.ts';
import { stateStoreContract } from './state-store-contract.ts';

stateStoreContract('memory', async () => createMemoryStore());
stateStoreContract('read-only', async () => createReadOnlyStore(), { acknowledges: false });

describe('quotaPeriod', () => {
  it('cuts months at 00:00:00 UTC on the 1st', () => {
    expect(quotaPeriod(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe('2026-01');
    expect(quotaPeriod(Date.UTC(2026, 1, 1))).toBe('2026-02');
    expect(quotaPeriod(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toBe('2026-12');
    expect(quotaPeriod(Date.UTC(2027, 0, 1))).toBe('2027-01');
    // 23:30 on 31 Oct in New York is already November in UTC.
    expect(quotaPeriod(Date.parse('2026-10-31T23:30:00-04:00'))).toBe('2026-11');
  });

  it('gives the next reset', () => {
    expect(quotaPeriodEnd(Date.UTC(2026, 11, 15))).toBe(Date.UTC(2027, 0, 1));
    expect(() => quotaPeriod(NaN)).toThrow(RangeError);
  });
});

describe('memory store', () => {
  it('stores actor and note of the first acknowledgement', async () => {
    const s = createMemoryStore();
    await s.acknowledge('acme', 3, ['f1'], '2026-11-01T00:00:00Z', 'ops', 'note 1');
    await s.acknowledge('acme', 3, ['f1'], '2026-11-02T00:00:00Z', 'other', 'note 2');
    expect((await s.noticeDetails('acme', 3, ['f1'])).get('f1')).toEqual({
      seen_at: null,
      acknowledged_at: '2026-11-01T00:00:00Z',
      actor: 'ops',
      note: 'note 1',
    });
  });
});
