// State store for a read-only mirror: quota, rate and "seen" work in memory, acknowledgements are refused (the API answers 503).

import { StateUnavailableError, type StateStore } from '../interfaces.ts';
import { createMemoryStore } from './memory-store.ts';
import { checkNoticeArgs } from './state-core.ts';

/** Options of createReadOnlyStore. */
export interface ReadOnlyStoreOptions {
  /** Why acknowledgements cannot be stored, for the error message. Default: "this deployment is a read-only mirror". */
  reason?: string;
}

/**
 * A store that never writes. Quota counters and rate windows are per process (a mirror restart resets them),
 * and "seen" is kept in memory so GET /notices still works; only acknowledge, which promises durability, refuses.
 */
export function createReadOnlyStore(options: ReadOnlyStoreOptions = {}): StateStore {
  const reason = options.reason ?? 'this deployment is a read-only mirror';
  const mem = createMemoryStore();
  return {
    writable: false,
    charge: mem.charge,
    refund: mem.refund,
    remaining: mem.remaining,
    hit: mem.hit,
    notices: mem.notices,
    markSeen: mem.markSeen,
    acknowledge: async (provider: string, batchId: number, findingIds: string[]): Promise<void> => {
      checkNoticeArgs('acknowledge', provider, batchId, findingIds);
      throw new StateUnavailableError(`[state] acknowledgements cannot be stored: ${reason}`);
    },
    close: mem.close,
  };
}
