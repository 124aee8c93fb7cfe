// Rolling one-second rate windows per key, kept in memory by every state driver.
//
// Not durable on purpose: a window only matters for one second, so losing it in a restart admits at most one
// extra second's worth of requests, while persisting it would put an fsync on every request (admitted or not).

/** How many hits between sweeps that drop the windows of keys that went quiet. */
const SWEEP_EVERY = 4096;

export class RateWindows {
  /** Admission times per key, ascending. */
  private readonly windows = new Map<string, number[]>();
  private hitsSinceSweep = 0;

  /**
   * Admits (and records) a request of `keyId` at `nowMs` if fewer than `rate` were admitted in (nowMs - 1000, nowMs].
   * Returns 0 when admitted, else the milliseconds (>= 1) until enough of the window expires to admit one more.
   */
  hit(keyId: string, nowMs: number, rate: number): number {
    if (!Number.isFinite(nowMs)) throw new RangeError(`[state] rate hit: not a time: ${nowMs}`);
    if (++this.hitsSinceSweep >= SWEEP_EVERY) this.sweep(nowMs);
    const limit = Math.floor(rate);
    if (!(limit >= 1)) return 1000; // a plan that admits nothing (rate 0) never frees a slot; ask again in a second
    let w = this.windows.get(keyId);
    if (!w) {
      w = [];
      this.windows.set(keyId, w);
    }
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

  private sweep(nowMs: number): void {
    this.hitsSinceSweep = 0;
    const floor = nowMs - 1000;
    for (const [keyId, w] of this.windows) if (w.length === 0 || w[w.length - 1] <= floor) this.windows.delete(keyId);
  }
}
