// The one memory budget the runtime's caches share (`serve --cache-mib`), and the rule that divides it.
//
// Why one budget: the caches were sized one by one, each with a default that looked small, and together with the
// per-release memos (which had no bound across releases) they held enough that the full-size runtime's RSS after
// the benchmark's load (318 MiB) missed its 300 MiB target. One figure the operator sets, divided by a fixed rule,
// bounds the sum; each cache counts what it holds in bytes against its share (catalog.ts cacheUsage).

/**
 * The default budget in MiB (docs/operations.md, "Memory: the caches' budget"). Measured on the 100k-entity dist
 * after the benchmark's rows (12,000 requests each), RSS medians: 265 MiB with the caches sized one by one as
 * before, 254 with a budget of 64, 243 with 48, 232 with 32. The full-size runtime measured 318 MiB before,
 * against a target of 300: 48 is the largest budget that saves the ~20 MiB it lacked.
 */
export const DEFAULT_CACHE_MIB = 48;

export const MIB = 1024 * 1024;
/** DEFAULT_CACHE_MIB in bytes. */
export const DEFAULT_CACHE_BYTES = DEFAULT_CACHE_MIB * MIB;

/** Bytes each cache may hold. */
export interface CacheShares {
  /** Verified index, resolve, search and match buckets (bucket-family-reader.ts), across releases. */
  buckets: number;
  /** Finished answers: entities, resolves, searches (body-cache.ts), across releases. */
  answers: number;
  /** Verified entity shards (shard-cache.ts), across releases. */
  shards: number;
  /** Finished first pages of /matches (routes/match-pages.ts). */
  pages: number;
  /** Entity index entries of recently asked IDs (open-release.ts), across releases. */
  recentIds: number;
  /** Match rows' reference texts (release/match-index.ts), across releases. */
  matchReferences: number;
  /** Decoded match list buckets (release/match-index.ts), across releases. */
  matchLists: number;
}

/**
 * The rule, in 32nds of the budget. Buckets get the most: every lookup that no answer or memo saves goes through
 * them (a miss is a read and a checksum). Answers next: a hit skips all the work of an answer; at the default the
 * benchmark's 4,000 sampled entities (~3.5 MiB of answers) or its ~4,000 searches (~11 MiB at full size) stay kept
 * while their row runs. Shards and pages an eighth each: the 4,000 sampled shards are ~3.5 MiB, and ~400 first
 * pages of /matches (~15 KiB each) fit in 6 MiB. The match memos a sixteenth each: a cold page names ~40 distinct
 * references and walks a few list buckets (4 KiB decoded each), and at full size the refs are ~70k, so 3 MiB keeps
 * ~31k references and ~750 list buckets; the other memos are small and cheap to make again.
 */
export const CACHE_SHARE_RULE: Readonly<Record<keyof CacheShares, number>> = {
  buckets: 10,
  answers: 8,
  shards: 4,
  pages: 4,
  recentIds: 2,
  matchReferences: 2,
  matchLists: 2,
};

/**
 * `totalBytes` divided by CACHE_SHARE_RULE; a share named in `overrides` (the older per-cache options, e.g.
 * `bodyCacheBytes`) replaces the rule's and is outside the budget, the others keep theirs.
 */
export function divideCacheBudget(totalBytes: number, overrides: Partial<Record<keyof CacheShares, number | undefined>> = {}): CacheShares {
  if (!(totalBytes >= 0) || !Number.isSafeInteger(totalBytes)) throw new RangeError(`cache budget must be a whole number of bytes >= 0, got ${totalBytes}`);
  const shares = {} as CacheShares;
  for (const name of Object.keys(CACHE_SHARE_RULE) as (keyof CacheShares)[]) {
    shares[name] = overrides[name] ?? Math.floor((totalBytes * CACHE_SHARE_RULE[name]) / 32);
  }
  return shares;
}

/** The budget a runtime uses when the operator sets none. */
export const defaultCacheShares = (): CacheShares => divideCacheBudget(DEFAULT_CACHE_BYTES);
