// Quota periods: the calendar month (UTC) a lookup is charged to, so every driver and the API agree on resets.

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The quota period of the instant `nowMs` as "YYYY-MM" in UTC; a new period starts at 00:00:00 UTC on the 1st. */
export function quotaPeriod(nowMs: number): string {
  // Every costing request asks, and the answer changes once a month: keep the last period and where it ends.
  if (nowMs >= lastPeriodStart && nowMs < lastPeriodEnd) return lastPeriod;
  const d = new Date(nowMs);
  if (Number.isNaN(d.getTime())) throw new RangeError(`[state] quotaPeriod: not a time: ${nowMs}`);
  lastPeriod = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}`;
  lastPeriodStart = monthStart(d.getUTCFullYear(), d.getUTCMonth());
  lastPeriodEnd = monthStart(d.getUTCFullYear(), d.getUTCMonth() + 1);
  return lastPeriod;
}
let lastPeriod = '';
let lastPeriodStart = 0;
let lastPeriodEnd = 0;

/** Milliseconds since the epoch at which the period containing `nowMs` ends (the next reset). */
export function quotaPeriodEnd(nowMs: number): number {
  quotaPeriod(nowMs);
  return lastPeriodEnd;
}

/** 00:00 UTC on the 1st of month `month` (0-based, may overflow into the next year) of `year`; unlike Date.UTC, years 0–99 mean themselves. */
function monthStart(year: number, month: number): number {
  const t = new Date(0);
  t.setUTCFullYear(year, month, 1);
  return t.getTime();
}
