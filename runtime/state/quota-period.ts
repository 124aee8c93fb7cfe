// Quota periods: the calendar month (UTC) a lookup is charged to, so every driver and the API agree on resets.

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The quota period of the instant `nowMs` as "YYYY-MM" in UTC; a new period starts at 00:00:00 UTC on the 1st. */
export function quotaPeriod(nowMs: number): string {
  const d = new Date(nowMs);
  if (Number.isNaN(d.getTime())) throw new RangeError(`[state] quotaPeriod: not a time: ${nowMs}`);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}`;
}

/** Milliseconds since the epoch at which the period containing `nowMs` ends (the next reset). */
export function quotaPeriodEnd(nowMs: number): number {
  const d = new Date(nowMs);
  if (Number.isNaN(d.getTime())) throw new RangeError(`[state] quotaPeriodEnd: not a time: ${nowMs}`);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
