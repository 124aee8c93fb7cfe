// Finished first pages of /matches, kept so a page asked again costs a map lookup instead of a walk and a write.
//
// Why: a page is a pure function of the release, the request and the clock hour its cursor records
// (match-cursor.ts), as an entity answer is of the release and the request; but it is ~15 KiB against an entity's
// ~1 KiB, and pages are asked of many teams, so it gets a store and a budget of its own rather than a share of the
// entity answers' (runtime/release/body-cache.ts).
//
// Memory: pages are kept for one scope at a time (a release and an hour: no page of another scope can be asked for
// again), first asked first kept, until the budget is spent; then no more until the scope changes. Evicting the
// oldest instead would keep nothing useful when more pages are asked in turn than fit (each would leave just
// before it is asked again); this way the pages kept stay kept for the hour.
import { ownCopy } from '../../common/own-copy.ts';

/**
 * Default budget: ~1,000 first pages of ~15 KiB, as much as the entity answers get. The full-size runtime holds
 * ~294 MiB after the benchmark's load against a target of 300, so more would be memory the target does not have.
 */
export const KEPT_PAGE_BYTES = 16 * 1024 * 1024;
/** Pages longer than this are not kept (a page of 100 rows is ~80 KiB). */
const LARGEST_KEPT_PAGE = 96 * 1024;
/** What a kept page's key and map entry cost besides its bytes, counted against the budget. */
const ENTRY_BYTES = 128;

export class KeptPages {
  private readonly pages = new Map<string, Uint8Array>();
  private scope = '';
  private used = 0;

  constructor(readonly capacity: number) {}

  /** Number of pages kept. */
  get size(): number {
    return this.pages.size;
  }

  /** The page kept for `query` in `scope`, or undefined. Never write to it. */
  get(scope: string, query: string): Uint8Array | undefined {
    return scope === this.scope ? this.pages.get(query) : undefined;
  }

  /** Keeps `body` as the page of `query` in `scope` when the budget allows; returns the bytes to send. */
  keep(scope: string, query: string, body: Uint8Array): Uint8Array {
    if (scope !== this.scope) {
      this.pages.clear();
      this.used = 0;
      this.scope = scope;
    }
    const size = body.length + 2 * query.length + ENTRY_BYTES;
    if (body.length > LARGEST_KEPT_PAGE || this.used + size > this.capacity || this.pages.has(query)) return body;
    // A copy of its own: the writer's buffer is larger than the page.
    const own = body.slice();
    // A key of its own too: one cut from the request's URL would keep the URL's text alive with it.
    this.pages.set(ownCopy(query), own);
    this.used += size;
    return own;
  }
}
