// Rolling one-second rate windows: the rule every driver applies (admitInWindow), and a per-process map of
// windows for the in-memory store. The durable drivers keep each key's window in their engine instead, so that
// every process sharing the store sees one window per key.

/** How many hits between sweeps that drop the windows of keys that went quiet. */
const SWEEP_EVERY = 4096;

/**
 * The rolling-window rule over `w`, one key's admission times in ascending order (modified in place):
 * admits (and records) a request at `nowMs` if fewer than `rate` were admitted in (nowMs - 1000, nowMs], and drops
 * the times that left the window. Returns 0 when admitted, else the milliseconds (>= 1) until enough of the window
 * expires to admit one more.
 */
export function admitInWindow(w: number[], nowMs: number, rate: number): number {
  if (!Number.isFinite(nowMs)) throw new RangeError(`[state] rate hit: not a time: ${nowMs}`);
  const limit = Math.floor(rate);
  if (!(limit >= 1)) return 1000; // a plan that admits nothing (rate 0) never frees a slot; ask again in a second
  const floor = nowMs - 1000;
  let start = 0;
  while (start < w.length && w[start] <= floor) start++;
  if (start > 0) w.splice(0, start);
  // Times later than now (the clock stepped back) still count: refusing a little longer is the safe side.
  if (w.length < limit) {
    let i = w.length;
    while (i > 0 && w[i - 1] > nowMs) i--;
    w.splice(i, 0, nowMs);
    return 0;
  }
  // Enough admissions must leave the window for one more to fit; the oldest of those decides.
  const leaving = w[w.length - limit];
  return Math.max(1, leaving + 1000 - nowMs);
}

export class RateWindows {
  /** Admission times per key, ascending. */
  private readonly windows = new Map<string, number[]>();
  private hitsSinceSweep = 0;

  /** admitInWindow over `keyId`'s window. */
  hit(keyId: string, nowMs: number, rate: number): number {
    if (!Number.isFinite(nowMs)) throw new RangeError(`[state] rate hit: not a time: ${nowMs}`);
    if (++this.hitsSinceSweep >= SWEEP_EVERY) this.sweep(nowMs);
    let w = this.windows.get(keyId);
    if (!w) {
      w = [];
      this.windows.set(keyId, w);
    }
    return admitInWindow(w, nowMs, rate);
  }

  private sweep(nowMs: number): void {
    this.hitsSinceSweep = 0;
    const floor = nowMs - 1000;
    for (const [keyId, w] of this.windows) if (w.length === 0 || w[w.length - 1] <= floor) this.windows.delete(keyId);
  }
}
