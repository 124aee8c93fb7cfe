// State store kept only in process memory: for tests, and the model the durable drivers are checked against.

import type { ChargeResult, NoticeState } from '../interfaces.ts';
import { RateWindows } from './rate-window.ts';
import { StateCore, checkCharge, checkNoticeArgs, checkRefund, creditsLeft, refundOn, type InspectableStateStore, type NoticeDetail } from './state-core.ts';

/** A StateStore whose state lives and dies with the process. `writable` is true: within the process it keeps what it is told. */
export function createMemoryStore(): InspectableStateStore {
  const core = new StateCore();
  const rates = new RateWindows();
  // Wrapping in an async function turns argument errors into rejections, the same as the durable drivers.
  return {
    writable: true,
    charge: async (keyId: string, period: string, cost: number, quota: number): Promise<ChargeResult> => {
      checkCharge(cost, quota);
      return core.tryCharge(keyId, period, cost, quota);
    },
    refund: async (keyId: string, period: string, cost: number): Promise<void> => {
      checkRefund(cost);
      const used = core.used(keyId, period);
      core.addUsed(keyId, period, refundOn(used, cost) - used);
    },
    remaining: async (keyId: string, period: string, quota: number): Promise<number> => creditsLeft(core.used(keyId, period), quota),
    hit: async (keyId: string, nowMs: number, rate: number): Promise<number> => rates.hit(keyId, nowMs, rate),
    notices: async (provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeState>> => {
      checkNoticeArgs('notices', provider, batchId, findingIds);
      return core.noticeStates(provider, batchId, findingIds);
    },
    noticeDetails: async (provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeDetail>> => {
      checkNoticeArgs('noticeDetails', provider, batchId, findingIds);
      return core.noticeDetails(provider, batchId, findingIds);
    },
    markSeen: async (provider: string, batchId: number, findingIds: string[], at: string): Promise<void> => {
      checkNoticeArgs('markSeen', provider, batchId, findingIds);
      core.applySeen(provider, batchId, findingIds, at);
    },
    acknowledge: async (provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): Promise<void> => {
      checkNoticeArgs('acknowledge', provider, batchId, findingIds);
      core.applyAck(provider, batchId, findingIds, at, actor ?? null, note ?? null);
    },
    close: async (): Promise<void> => {},
  };
}
