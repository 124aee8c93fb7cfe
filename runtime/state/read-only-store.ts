// A read-only mirror's state store: quota, rate and "seen" go to the configured store like on any instance (so a
// restart or a second mirror gives no key a fresh allowance); only acknowledgements are refused (the API answers 503).

import { StateUnavailableError, type StateStore } from '../interfaces.ts';
import { createMemoryStore } from './memory-store.ts';
import { checkNoticeArgs } from './state-core.ts';

/** Options of refuseAcknowledgements. */
export interface ReadOnlyOptions {
  /** Why acknowledgements cannot be stored, for the error message. Default: "this deployment is a read-only mirror". */
  reason?: string;
}

/** `store` with acknowledge refusing (StateUnavailableError) and `writable` false; everything else is the store's. */
export function refuseAcknowledgements(store: StateStore, options: ReadOnlyOptions = {}): StateStore {
  const reason = options.reason ?? 'this deployment is a read-only mirror';
  return {
    writable: false,
    charge: (...a) => store.charge(...a),
    refund: (...a) => store.refund(...a),
    remaining: (...a) => store.remaining(...a),
    hit: (...a) => store.hit(...a),
    admit: store.admit ? (...a) => store.admit!(...a) : undefined,
    ping: store.ping ? () => store.ping!() : undefined,
    notices: (...a) => store.notices(...a),
    markSeen: (...a) => store.markSeen(...a),
    acknowledge: async (provider: string, batchId: number, findingIds: string[]): Promise<void> => {
      checkNoticeArgs('acknowledge', provider, batchId, findingIds);
      throw new StateUnavailableError(`[state] acknowledgements cannot be stored: ${reason}`);
    },
    close: () => store.close(),
  };
}

/** An in-memory store that refuses acknowledgements: for tests of a mirror. */
export function createReadOnlyStore(options: ReadOnlyOptions = {}): StateStore {
  return refuseAcknowledgements(createMemoryStore(), options);
}
