// The signed cursor of GET /matches: where the last page stopped, bound to the normalised filters and the index
// generation, signed with HMAC-SHA256 under the deployment's secret and valid for a day.
import { fromBase64url, hmacSha256, sameBytes, toBase64url } from '#platform/crypto';
import { ApiError } from '../api-error.ts';

/**
 * A cursor records the hour it was issued in, not the moment: the same request against the same stamp then
 * answers the same bytes (next_cursor included) throughout that clock hour. It is accepted until 24 hours after
 * that hour ends, so every cursor lives at least 24 hours and less than 25.
 */
const HOUR_MS = 3_600_000;
export const CURSOR_LIFETIME_HOURS = 24;
const CURSOR_LIFETIME_MS = CURSOR_LIFETIME_HOURS * HOUR_MS;
/** How far ahead of this instance's clock another instance's may run and still have its cursors taken. */
const CLOCK_SKEW_MS = 5_000;
/** The longest cursor issued (ordinals and day numbers have few digits; generous), for the page's byte budget. */
export const MAX_CURSOR_CHARS = 320;
/** A deployment secret shorter than this is refused: it would be guessable. */
const MIN_SECRET_CHARS = 32;

/** The clock hour a cursor issued at `now` records: a page is the same bytes throughout it. */
export const cursorHour = (now: number): number => Math.floor(now / HOUR_MS);

/** Where a page stopped: the last list entry it examined, as (day number, match ordinal). */
export interface CursorPosition {
  day: number;
  ordinal: number;
}

const VERSION = 1;
const utf8 = new TextEncoder();

export class CursorSigner {
  constructor(private readonly secret: string) {
    if (secret.length < MIN_SECRET_CHARS) throw new Error(`the cursor secret must be at least ${MIN_SECRET_CHARS} characters`);
  }

  /** The cursor after `at` for these filters (their digest) and generation, issued at `now`. */
  issue(generation: string, filters: string, at: CursorPosition, now: number): string {
    const payload = toBase64url(utf8.encode(JSON.stringify([VERSION, generation, filters, cursorHour(now), at.day, at.ordinal])));
    return `${payload}.${this.sign(payload)}`;
  }

  /**
   * The position a cursor names, if this deployment signed it for exactly these filters and generation and it has
   * not expired; else 400 stale_cursor (which never says which check failed).
   */
  open(cursor: string, generation: string, filters: string, now: number): CursorPosition {
    const stale = (why: string) => new ApiError(400, 'stale_cursor', `This cursor cannot continue this request: ${why}. Start again without a cursor.`);
    const dot = cursor.indexOf('.');
    if (cursor.length > MAX_CURSOR_CHARS || dot < 0) throw stale('it is not a cursor this API issued');
    const payload = cursor.slice(0, dot);
    // The signature's text as issued, compared whole: decoding it first would accept other spellings of the same
    // bytes (standard base64, `=` padding, stray characters the decoder skips).
    const given = utf8.encode(cursor.slice(dot + 1));
    const expected = utf8.encode(this.sign(payload));
    if (!sameBytes(given, expected)) throw stale('it is not a cursor this API issued, or it was altered');
    let v: unknown;
    try {
      v = JSON.parse(new TextDecoder().decode(fromBase64url(payload)));
    } catch {
      throw stale('it is not a cursor this API issued');
    }
    if (!Array.isArray(v) || v.length !== 6 || v[0] !== VERSION || !v.slice(3).every((n) => Number.isSafeInteger(n) && n >= 0)) {
      throw stale('it is not a cursor this API issued');
    }
    if (v[1] !== generation) throw stale('it belongs to another generation of the match index');
    if (v[2] !== filters) throw stale('it was issued for other filters');
    // Issued in an hour that has not begun here: signed by a clock far ahead, never by this deployment in
    // earnest (another instance's clock may run a little ahead, hence the skew).
    if (v[3] * HOUR_MS > now + CLOCK_SKEW_MS) throw stale('it was issued in the future');
    if (now >= (v[3] + 1) * HOUR_MS + CURSOR_LIFETIME_MS) throw stale('it has expired (cursors live 24 hours)');
    return { day: v[4], ordinal: v[5] };
  }

  private sign(payload: string): string {
    return toBase64url(hmacSha256(this.secret, payload));
  }
}
