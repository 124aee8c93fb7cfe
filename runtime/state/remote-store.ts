// A StateStore that lives in another process. `register serve --workers N` runs N HTTP worker processes beside
// one primary that owns the real store (the journal, or the read-only mirror store); every worker's app reaches it
// through this driver. Quota reservations, rate windows and notice state therefore stay in one place, and stay as
// exact across processes as they are within one: the primary runs calls in the order they arrive, and its store
// reserves credits synchronously.
//
// Calls a worker makes in one turn of its event loop travel as one message, and the answers the primary has in
// one turn of its loop go back as one, so the cost of the link is paid per group of requests, not per request.

import { StateUnavailableError, type Admission, type ChargeResult, type NoticeState, type StateStore } from '../interfaces.ts';
import { admit } from './admit.ts';

/** A message link to the other process (a cluster worker and the primary), or two ends in one process in tests. */
export interface StateLink {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  /** The other side is gone (its process exited, the channel closed). */
  onClose(listener: () => void): void;
}

const METHODS = ['admit', 'charge', 'refund', 'remaining', 'hit', 'notices', 'markSeen', 'acknowledge'] as const;
type Method = (typeof METHODS)[number];
type Call = [id: number, method: Method, args: unknown[]];
type Failure = { name: string; message: string };
type Outcome = [id: number, value: unknown, error?: Failure];

/** Messages on the link carry one of these fields, so they can share a channel with other traffic. */
interface CallsMessage {
  stateCalls: Call[];
}
interface OutcomesMessage {
  stateOutcomes: Outcome[];
}

/** The worker's side: a StateStore whose every call is answered by the store behind `link`. */
export function createRemoteStore(link: StateLink, opts: { writable: boolean }): StateStore {
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let gone: StateUnavailableError | null = null;

  const failAll = (err: StateUnavailableError): void => {
    gone ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    outbox.drop();
  };
  const outbox = perTurn<Call>((calls) => {
    try {
      link.send({ stateCalls: calls } satisfies CallsMessage);
    } catch (e) {
      failAll(new StateUnavailableError(`[state] cannot reach the state store (${(e as Error).message})`));
    }
  });
  link.onMessage((m) => {
    const outcomes = (m as Partial<OutcomesMessage> | null)?.stateOutcomes;
    if (!Array.isArray(outcomes)) return;
    for (const [id, value, error] of outcomes) {
      const p = pending.get(id);
      if (!p) continue;
      pending.delete(id);
      if (error) p.reject(revive(error));
      else p.resolve(value);
    }
  });
  link.onClose(() => failAll(new StateUnavailableError('[state] the process that holds the state store is gone')));

  const call = <T>(method: Method, args: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (gone) return reject(gone);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      outbox.push([id, method, args]);
    });

  return {
    writable: opts.writable,
    admit: (keyId: string, nowMs: number, rate: number, period: string, cost: number, quota: number) =>
      call<Admission>('admit', [keyId, nowMs, rate, period, cost, quota]),
    charge: (keyId: string, period: string, cost: number, quota: number) => call<ChargeResult>('charge', [keyId, period, cost, quota]),
    refund: async (keyId: string, period: string, cost: number) => {
      await call('refund', [keyId, period, cost]);
    },
    remaining: (keyId: string, period: string, quota: number) => call<number>('remaining', [keyId, period, quota]),
    hit: (keyId: string, nowMs: number, rate: number) => call<number>('hit', [keyId, nowMs, rate]),
    notices: async (provider: string, batchId: number, findingIds: string[]) =>
      new Map(await call<[string, NoticeState][]>('notices', [provider, batchId, findingIds])),
    markSeen: async (provider: string, batchId: number, findingIds: string[], at: string) => {
      await call('markSeen', [provider, batchId, findingIds, at]);
    },
    acknowledge: async (provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null) => {
      await call('acknowledge', [provider, batchId, findingIds, at, actor, note]);
    },
    // The primary owns the store and closes it once every worker has stopped; a worker only stops asking.
    close: async () => {
      await new Promise<void>((r) => setImmediate(r)); // let calls already made go out first
      gone ??= new StateUnavailableError('[state] the state store is closed');
    },
  };
}

/**
 * The primary's side: runs the calls arriving on `link` against `store`, in arrival order (so reservations are
 * made in the order the workers asked), and sends the outcomes back in groups.
 */
export function serveStore(store: StateStore, link: StateLink): void {
  let closed = false;
  const outbox = perTurn<Outcome>((outcomes) => {
    if (closed) return;
    try {
      link.send({ stateOutcomes: outcomes } satisfies OutcomesMessage);
    } catch {
      // The worker is gone; what it asked was done (a charge stays charged, as when a client disconnects).
    }
  });
  link.onClose(() => {
    closed = true;
    outbox.drop();
  });
  link.onMessage((m) => {
    const calls = (m as Partial<CallsMessage> | null)?.stateCalls;
    if (!Array.isArray(calls)) return;
    for (const c of calls) {
      const [id, method, args] = Array.isArray(c) ? c : [];
      if (typeof id !== 'number') continue;
      if (!(METHODS as readonly string[]).includes(method as string) || !Array.isArray(args)) {
        outbox.push([id, null, { name: 'TypeError', message: `[state] unknown state call ${JSON.stringify(method)}` }]);
        continue;
      }
      let result: Promise<unknown>;
      try {
        result =
          method === 'admit'
            ? admit(store, ...(args as [string, number, number, string, number, number]))
            : (store[method as Method] as (...a: unknown[]) => Promise<unknown>).apply(store, args);
      } catch (e) {
        result = Promise.reject(e);
      }
      result.then(
        (v) => outbox.push([id, v instanceof Map ? [...v] : (v ?? null)]),
        (e: unknown) => outbox.push([id, null, { name: (e as Error)?.name ?? 'Error', message: String((e as Error)?.message ?? e) }]),
      );
    }
  });
}

/**
 * Collects what is pushed during one turn of the event loop and hands it to `deliver` in one piece on the next:
 * the calls of a worker's turn travel as one message, and so do the answers of a turn of the primary.
 */
function perTurn<T>(deliver: (items: T[]) => void): { push(item: T): void; drop(): void } {
  let items: T[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const batch = items;
    items = [];
    if (batch.length) deliver(batch);
  };
  return {
    push(item) {
      items.push(item);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    drop() {
      items = [];
    },
  };
}

/** The error a call failed with on the other side, as the same kind of error here. */
function revive(f: Failure): Error {
  if (f.name === 'StateUnavailableError') return new StateUnavailableError(f.message);
  if (f.name === 'TypeError') return new TypeError(f.message);
  if (f.name === 'RangeError') return new RangeError(f.message);
  return new Error(f.message);
}
