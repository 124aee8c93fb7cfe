// Walks up to five anchors' match lists together, in page order, from where a cursor stopped: each list is entered
// by binary search and read forward, so a page costs a few bucket reads per list, never a scan. Each entry it hands
// out carries its anchors' digests (for the page's other anchors) and finds its row copy, which lies beside the
// copies of the entries around it.
import { metaDay } from '../../common/match-index.ts';
import { isPromise, type MaybePromise } from '../interfaces.ts';
import { ArtefactError } from '../read-errors.ts';
import type { MatchIndex } from '../release/match-index.ts';
import type { CursorPosition } from './match-cursor.ts';

/** One list entry in page order: its match ordinal, day number (0: undated), meta and digests, and where it was read. */
export interface WalkEntry {
  ordinal: number;
  day: number;
  meta: number;
  sides: number;
  structure: number;
  /** The list it was read from, and its place in that list's run. */
  reader: ListReader;
  at: number;
}

/**
 * An anchor's list: its ascending run starts at `start`, the descending run right after it; `count` entries each.
 * The row copies of its ascending run start at `rows`.
 */
export interface AnchorList {
  start: number;
  count: number;
  rows: number;
}

export interface WalkOptions {
  sort: 'asc' | 'desc';
  /** Inclusive day-number bounds; null leaves that end open. With either, undated matches are left out. */
  fromDay: number | null;
  toDay: number | null;
  /** Continue after this entry (a cursor's position). */
  after: CursorPosition | null;
}

/** Page order: dated before undated; by date (latest first for desc); ties by ordinal, which is reep_id order. */
function compare(sort: 'asc' | 'desc', aDay: number, aOrd: number, bDay: number, bOrd: number): number {
  if ((aDay === 0) !== (bDay === 0)) return aDay === 0 ? 1 : -1;
  return (sort === 'asc' ? aDay - bDay : bDay - aDay) || aOrd - bOrd;
}

/**
 * The first i in [lo, hi) for which `before(i)` is false, `before` being true up to some point and false after it:
 * probes lo, lo+2, lo+6, lo+14, … (doubling steps) until one is not before, then a binary search between the last two
 * probes, so a near target costs a few reads and a far one O(log distance). At once when every probe is.
 */
function firstNotBefore(lo: number, hi: number, before: (i: number) => MaybePromise<boolean>): MaybePromise<number> {
  let a = lo;
  let b = hi;
  let step = 1;
  let galloping = true;
  const take = (probe: number, isBefore: boolean): void => {
    if (isBefore) {
      a = probe + 1;
      if (galloping) step *= 2;
    } else {
      b = probe;
      galloping = false;
    }
  };
  const go = (): MaybePromise<number> => {
    for (;;) {
      let probe: number;
      if (galloping && a + step - 1 < b) probe = a + step - 1;
      else {
        galloping = false;
        if (a >= b) return a;
        probe = (a + b) >>> 1;
      }
      const r = before(probe);
      if (isPromise(r)) return r.then((v) => (take(probe, v), go()));
      take(probe, r);
    }
  };
  return go();
}

/** `f` of `v`, at once when `v` is ready. */
const then = <T, U>(v: MaybePromise<T>, f: (t: T) => MaybePromise<U>): MaybePromise<U> => (isPromise(v) ? v.then(f) : f(v));

/** One list read forward from a position. */
export class ListReader {
  private position = 0;
  private end = 0;
  private base = 0;
  head: WalkEntry | null = null;

  constructor(
    private readonly index: MatchIndex,
    readonly list: AnchorList,
    private readonly opts: WalkOptions,
  ) {}

  /** Finds where this page starts and reads the first entry. */
  async open(): Promise<void> {
    const { sort, fromDay, toDay, after } = this.opts;
    this.base = this.list.start + (sort === 'asc' ? 0 : this.list.count);
    this.end = this.list.count;
    let from = 0;
    // A pseudo-entry with ordinal -1 sorts before every real entry of its day.
    const bound = sort === 'asc' ? fromDay : toDay;
    if (bound !== null) from = await this.firstAfter(bound, -1);
    if (after) from = Math.max(from, await this.firstAfter(after.day, after.ordinal));
    this.position = from;
    await this.advance();
  }

  /** `f` of the run's entry `i` (of the run starting at `base`), at once when its lists bucket is kept. */
  private read<T>(i: number, f: (ordinal: number, meta: number, sides: number, structure: number) => T, base = this.base): MaybePromise<T> {
    const at = base + i;
    const b = this.index.entries(at);
    const k = this.index.entrySlot(at);
    return isPromise(b) ? b.then((a) => f(a[k], a[k + 1], a[k + 2], a[k + 3])) : f(b[k], b[k + 1], b[k + 2], b[k + 3]);
  }

  /** Reads the entry at the position into `head` (null past the end or past the window), and moves on: at once when its bucket is kept. */
  advance(): MaybePromise<void> {
    this.head = null;
    if (this.position >= this.end) return;
    return this.read(this.position++, this.take);
  }

  private readonly take = (ordinal: number, meta: number, sides: number, structure: number): void => {
    const day = metaDay(meta);
    const { sort, fromDay, toDay } = this.opts;
    if ((fromDay !== null || toDay !== null) && day === 0) return this.stop();
    if (sort === 'asc' && toDay !== null && day > toDay) return this.stop();
    if (sort === 'desc' && fromDay !== null && day < fromDay) return this.stop();
    this.head = { ordinal, day, meta, sides, structure, reader: this, at: this.position - 1 };
  };

  /**
   * Where the row of `e` (an entry this list handed out) is copied. Entry i of the ascending run has copy rows + i;
   * the descending run's entry is found in the ascending run by its ordinal (that run is in ordinal order), searched
   * outward from where it would be were every day's run one match long: a step or two, in buckets already read.
   */
  copyOf(e: WalkEntry): MaybePromise<number> {
    const { rows, count, start } = this.list;
    if (this.opts.sort === 'asc') return rows + e.at;
    const ordinalAt = (i: number): MaybePromise<number> => this.read(i, (o) => o, start);
    const guess = count - 1 - e.at;
    const found = (i: number): number => {
      if (i >= 0 && i < count) return rows + i;
      throw new ArtefactError(this.index.releaseFile, `match ${e.ordinal} of a descending run is not in its ascending run`);
    };
    const search = (o: number): MaybePromise<number> => {
      if (o === e.ordinal) return found(guess);
      // Upward: the first entry not below the ordinal. Downward: counted back from the guess, the first not above it.
      const i = o < e.ordinal
        ? firstNotBefore(guess + 1, count, (k) => then(ordinalAt(k), (v) => v < e.ordinal))
        : then(firstNotBefore(0, guess, (k) => then(ordinalAt(guess - 1 - k), (v) => v > e.ordinal)), (k) => guess - 1 - k);
      return then(i, (k) => then(k >= 0 && k < count ? ordinalAt(k) : -1, (v) => (v === e.ordinal ? found(k) : found(-1))));
    };
    return then(ordinalAt(guess), search);
  }

  private stop(): void {
    this.position = this.end;
  }

  /**
   * Moves `head` to the first entry not before (day, ordinal) in page order (null: none left in the window); never
   * back. At once when the buckets it reads are kept.
   */
  seek(day: number, ordinal: number): MaybePromise<void> {
    const h = this.head;
    if (h === null || compare(this.opts.sort, h.day, h.ordinal, day, ordinal) >= 0) return;
    const sort = this.opts.sort;
    const before = (o: number, meta: number): boolean => compare(sort, metaDay(meta), o, day, ordinal) < 0;
    const found = firstNotBefore(this.position, this.end, (i) => this.read(i, before));
    if (isPromise(found)) return found.then((p) => this.moveTo(p));
    return this.moveTo(found);
  }

  /**
   * The entry `n - 1` places after `head`, when at least one more follows it in the window; else null. Found by a
   * search for the window's end, without reading the entries between.
   */
  nth(n: number): MaybePromise<WalkEntry | null> {
    if (this.head === null) return null;
    const first = this.position - 1;
    const { sort, fromDay, toDay } = this.opts;
    const bounded = fromDay !== null || toDay !== null;
    const inside = (meta: number): boolean => {
      const day = metaDay(meta);
      if (bounded && day === 0) return false;
      if (sort === 'asc' && toDay !== null && day > toDay) return false;
      return !(sort === 'desc' && fromDay !== null && day < fromDay);
    };
    // The window is a run of the list: entries inside it, then none.
    const windowEnd = firstNotBefore(first, this.end, (i) => this.read(i, (_, meta) => inside(meta)));
    const at = (end: number): MaybePromise<WalkEntry | null> =>
      end - first <= n ? null : this.read(first + n - 1, (ordinal, meta, sides, structure): WalkEntry => ({ ordinal, day: metaDay(meta), meta, sides, structure, reader: this, at: first + n - 1 }));
    return isPromise(windowEnd) ? windowEnd.then(at) : at(windowEnd);
  }

  private moveTo(position: number): MaybePromise<void> {
    this.position = position;
    return this.advance();
  }

  /**
   * The first position whose entry comes after (day, ordinal) in page order, searched from the run's start: a
   * window or cursor near the newest (oldest, ascending) end, the usual case, costs a probe or a few.
   */
  private firstAfter(day: number, ordinal: number): MaybePromise<number> {
    const sort = this.opts.sort;
    const notAfter = (o: number, meta: number): boolean => compare(sort, metaDay(meta), o, day, ordinal) <= 0;
    return firstNotBefore(0, this.end, (i) => this.read(i, notAfter));
  }

}

/** The union of some anchors' lists in page order, each match once. */
export class MatchWalk {
  private readers: ListReader[];
  private last = -1;
  /** An entry read ahead by more(), or undefined. */
  private pending: WalkEntry | null | undefined;

  constructor(index: MatchIndex, lists: readonly AnchorList[], private readonly opts: WalkOptions) {
    this.readers = lists.map((l) => new ListReader(index, l, opts));
  }

  async open(): Promise<void> {
    await Promise.all(this.readers.map((r) => r.open()));
  }

  /** The next entry in page order, or null when every list is done: at once when the buckets it needs are kept. */
  next(): MaybePromise<WalkEntry | null> {
    if (this.pending !== undefined) {
      const p = this.pending;
      this.pending = undefined;
      return p;
    }
    for (;;) {
      let best: ListReader | null = null;
      for (const r of this.readers) {
        const h = r.head;
        if (h && (best === null || compare(this.opts.sort, h.day, h.ordinal, best.head!.day, best.head!.ordinal) < 0)) best = r;
      }
      if (best === null) return null;
      const e = best.head!;
      const moved = best.advance();
      if (isPromise(moved)) return moved.then(() => this.taken(e));
      if (e.ordinal === this.last) continue;
      this.last = e.ordinal;
      return e;
    }
  }

  /** `e` as the next entry, or the one after it when `e` was handed out just before. */
  private taken(e: WalkEntry): MaybePromise<WalkEntry | null> {
    // A match in two of the lists (two teams that met) comes from both, one after the other: once is enough.
    if (e.ordinal === this.last) return this.next();
    this.last = e.ordinal;
    return e;
  }

  /**
   * Where the walk would stand after handing out `n` entries, for a page that can take none of them: the n-th entry
   * when another follows it, null when the walk would end by then. Only over a single list and before any next()
   * (undefined otherwise): one list holds each match once, so the n-th entry is n - 1 places on.
   */
  nth(n: number): MaybePromise<WalkEntry | null> | undefined {
    if (this.readers.length !== 1 || this.last !== -1 || this.pending !== undefined) return undefined;
    return this.readers[0].nth(n);
  }

  /** Whether another entry follows; it is read now and handed out by the next call to next(). */
  async more(): Promise<boolean> {
    if (this.pending === undefined) this.pending = await this.next();
    return this.pending !== null;
  }
}
