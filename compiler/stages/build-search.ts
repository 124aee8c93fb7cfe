// Stage 4: search. Stage 2 hands each live entity to a SearchCollector (compiler/records/search-collector.ts): its search doc, and a posting for each
// token of its names. Ordinals number live entities by (bridge count desc, register ID asc), so "the 500 best
// candidates" of a token are its 500 smallest ordinals; token and prefix lists are then plain ascending integers.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import { MAX_CANDIDATES_PER_TOKEN, MAX_PREFIX, MIN_PREFIX } from '../../common/normalise.ts';
import { REGISTER_ID } from '../../common/ids.ts';
import { HashedFamilyWriter } from '../write/hashed-family-writer.ts';
import { OrdinalFamilyWriter } from '../write/ordinal-family-writer.ts';
import type { CompileContext } from '../context.ts';
import type { ContentFile } from '../write/content-file.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { forEachPosting, SEARCH_GROUPS, SOURCES } from '../records/search-postings.ts';
import type { SearchDocs, SearchInput } from '../records/search-collector.ts';
import type { ThreadedStage } from '../run-stages.ts';


/** Search docs per ordinal bucket. */
export const DOCS_PER_BUCKET = 256;

/** Prefix cut points of a token: code-unit lengths MIN_PREFIX..min(len-1, MAX_PREFIX), never inside a surrogate pair. */
export function prefixLengths(token: string): number[] {
  const out: number[] = [];
  const top = Math.min(token.length - 1, MAX_PREFIX);
  for (let j = MIN_PREFIX; j <= top; j++) {
    const c = token.charCodeAt(j - 1);
    if (c >= 0xd800 && c <= 0xdbff) continue;
    out.push(j);
  }
  return out;
}

export function deltaEncode(sorted: ArrayLike<number>): number[] {
  const out = new Array(sorted.length);
  let prev = 0;
  for (let i = 0; i < sorted.length; i++) {
    out[i] = sorted[i] - prev;
    prev = sorted[i];
  }
  return out;
}

/**
 * The `cap` smallest distinct ordinals (value >> 2, SOURCES being 4) over ascending lists of posting values: a k-way
 * merge through a binary heap that stops at `cap`, rather than concatenating every list and sorting.
 */
export function smallestOrdinals(lists: ArrayLike<number>[], cap: number): number[] {
  const out: number[] = [];
  if (lists.length === 1) {
    const only = lists[0];
    for (let i = 0; i < only.length; i++) {
      const o = only[i] >> 2;
      if (out.length === 0 || out[out.length - 1] !== o) out.push(o);
      if (out.length === cap) break;
    }
    return out;
  }
  // Heap of list indexes ordered by each list's current head; pos[i] is list i's next position.
  const pos = new Int32Array(lists.length);
  const heap: number[] = [];
  const head = (i: number) => lists[i][pos[i]];
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      if (l >= heap.length) return;
      const r = l + 1;
      const m = r < heap.length && head(heap[r]) < head(heap[l]) ? r : l;
      if (head(heap[m]) >= head(heap[at])) return;
      [heap[m], heap[at]] = [heap[at], heap[m]];
      at = m;
    }
  };
  for (let i = 0; i < lists.length; i++) if (lists[i].length) heap.push(i);
  for (let at = (heap.length >> 1) - 1; at >= 0; at--) down(at);
  while (heap.length && out.length < cap) {
    const i = heap[0];
    const o = head(i) >> 2;
    if (out.length === 0 || out[out.length - 1] !== o) out.push(o);
    if (++pos[i] >= lists[i].length) {
      heap[0] = heap[heap.length - 1];
      heap.pop();
    }
    if (heap.length) down(0);
  }
  return out;
}

/**
 * A token's posting values (ordinal × SOURCES + source, so below 2^31) in ascending order, cut to the first `cap`. Long
 * lists go through an Int32Array, whose sort is native and numeric: a comparator sort of a common name's tens of
 * thousands of postings was most of this stage's sorting. Short lists (nearly all tokens) are cheaper sorted as they are.
 */
export function ascendingCapped(list: number[], cap: number): ArrayLike<number> {
  if (list.length < 64) {
    list.sort((a, b) => a - b);
    if (list.length > cap) list.length = cap;
    return list;
  }
  const sorted = Int32Array.from(list).sort();
  return sorted.length > cap ? sorted.subarray(0, cap) : sorted;
}

/**
 * Doc indexes in ordinal order: bridge count descending, then register ID ascending. A register ID (REGISTER_ID:
 * `r`, a letter and 14 hex digits) is two integers that order as the string does, and an LSD radix sort over
 * 16-bit digits of (ID low, ID high, bridge count) takes a fraction of a comparator sort's time over 2M docs.
 * Any other ID (none reaches here from a checked release) falls back to the comparator sort.
 */
export function ordinalOrder(ids: readonly string[], bridges: readonly number[]): Int32Array {
  const n = ids.length;
  const hi = new Uint32Array(n); // letter (5 bits) and the first 6 hex digits
  const lo = new Uint32Array(n); // the last 8 hex digits
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (!REGISTER_ID.test(id) || !(bridges[i] >= 0 && bridges[i] <= 0xffffffff)) return comparatorOrder(ids, bridges);
    hi[i] = (id.charCodeAt(1) - 97) * 0x1000000 + parseInt(id.slice(2, 8), 16);
    lo[i] = parseInt(id.slice(8), 16);
  }
  let order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let spare = new Int32Array(n);
  const digit = new Uint16Array(n);
  const counts = new Int32Array(0x10001);
  // Least significant digit first; each pass is stable, so earlier passes break the later ones' ties. A digit
  // that is the same for every doc (the high half of nearly every bridge count) needs no pass.
  for (let pass = 0; pass < 6; pass++) {
    let same = true;
    for (let i = 0; i < n; i++) {
      const d =
        pass === 0 ? lo[i] & 0xffff
        : pass === 1 ? lo[i] >>> 16
        : pass === 2 ? hi[i] & 0xffff
        : pass === 3 ? hi[i] >>> 16
        : pass === 4 ? 0xffff - (bridges[i] & 0xffff) // descending
        : 0xffff - Math.floor(bridges[i] / 0x10000);
      digit[i] = d;
      if (d !== digit[0]) same = false;
    }
    if (same) continue;
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[digit[i] + 1]++;
    for (let d = 0; d < 0x10000; d++) counts[d + 1] += counts[d];
    for (let k = 0; k < n; k++) {
      const i = order[k];
      spare[counts[digit[i]]++] = i;
    }
    [order, spare] = [spare, order];
  }
  return order;
}

function comparatorOrder(ids: readonly string[], bridges: readonly number[]): Int32Array {
  const order = Array.from(ids, (_, i) => i);
  order.sort((a, b) => bridges[b] - bridges[a] || (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
  return Int32Array.from(order);
}

/** Docs in ordinal order, and each doc's ordinal: what both halves of the search index are built from. */
export interface SearchOrder {
  order: Int32Array;
  ordinalOfDoc: Int32Array;
}

/** Stage: numbers the docs (see ordinalOrder). */
export function orderSearchDocs(_ctx: CompileContext, docs: SearchDocs): SearchOrder {
  const order = ordinalOrder(docs.ids, docs.bridges);
  const ordinalOfDoc = new Int32Array(order.length);
  for (let o = 0; o < order.length; o++) ordinalOfDoc[order[o]] = o;
  return { order, ordinalOfDoc };
}

/** Stage: the search docs family, one `[id, type, label, bridges]` per live entity, by ordinal. */
export async function buildSearchDocs(ctx: CompileContext, input: { docs: SearchDocs; order: SearchOrder }): Promise<BucketFamily> {
  const { ids, types, labels, bridges } = input.docs;
  const { order } = input.order;
  const writer = new OrdinalFamilyWriter({ root: ctx.publicDir, name: 'search/docs', tmpDir: join(ctx.scratchDir, 'docs-writer'), perBucket: DOCS_PER_BUCKET, ledger: ctx.written });
  for (let o = 0; o < order.length; o++) {
    const i = order[o];
    writer.push([ids[i], types[i], labels[i], bridges[i]]);
  }
  return writer.finish();
}

/** Plain data in, for a worker thread: what the token family is built from. */
export interface SearchTokensJob {
  /** Stage 2's postings spills, one per range, and where each range's docs start. */
  postings: GroupSpillHandle[];
  docStarts: number[];
  /** Each doc's ordinal (see ordinalOrder). */
  ordinalOfDoc: Int32Array;
  publicDir: string;
  scratchDir: string;
}

export interface SearchTokensResult {
  search: BucketFamily;
  files: ContentFile[];
}

/**
 * Stage: the search tokens family. It needs only the postings and the ordinals, so it can run in a thread of its
 * own while the main thread writes the entity index, the search docs, the changelog and the documents. The postings
 * spills are gone after.
 */
export const searchTokensStage: ThreadedStage<{ search: SearchInput; order: SearchOrder }, SearchTokensJob, SearchTokensResult, BucketFamily> = {
  worker: new URL('./build-search.ts#buildSearchTokens', import.meta.url),
  jobs: (ctx, { search, order }) => [{
    postings: search.postings.map((sp) => sp.handle()),
    docStarts: search.docStarts,
    ordinalOfDoc: order.ordinalOfDoc,
    publicDir: ctx.publicDir,
    scratchDir: join(ctx.scratchDir, 'search-writer'),
  }],
  run: (job) => buildSearchTokens(job),
  merge: (ctx, [r]) => {
    for (const f of r.files) ctx.written.set(f.path, f);
    return r.search;
  },
};

/** The search tokens family: per token and typeahead prefix, the smallest ordinals that hold it (see below). */
export async function buildSearchTokens(job: SearchTokensJob): Promise<SearchTokensResult> {
  const ledger = new Map<string, ContentFile>();
  const postings = job.postings.map((h) => GroupSpill.open(h));
  const { docStarts, ordinalOfDoc } = job;
  // A query reads up to six token buckets; 16 KiB keeps each decode well under a millisecond.
  const writer = new HashedFamilyWriter({ root: job.publicDir, name: 'search/tokens', tmpDir: job.scratchDir, targetBucketBytes: 16 * 1024, ledger });
  try {
    for (let g = 0; g < SEARCH_GROUPS; g++) {
      const gathered = new Map<string, number[]>();
      // Lists are sorted below, so the order in which ranges contributed postings does not matter.
      for (let r = 0; r < postings.length; r++) {
        const start = docStarts[r];
        forEachPosting(postings[r].readText(g), (token, doc, source) => {
          const v = ordinalOfDoc[start + doc] * SOURCES + source;
          const list = gathered.get(token);
          if (list) list.push(v);
          else gathered.set(token, [v]);
        });
      }
      for (const spill of postings) spill.release(g);
      // A prefix collects references to its tokens' (sorted, capped) lists, not copies of their values: a short
      // prefix can stand for thousands of tokens, and only its 500 smallest ordinals are kept.
      const exact = new Map<string, ArrayLike<number>>();
      const prefix = new Map<string, ArrayLike<number>[]>();
      for (const [token, unsorted] of gathered) {
        const list = ascendingCapped(unsorted, MAX_CANDIDATES_PER_TOKEN);
        exact.set(token, list);
        for (const j of prefixLengths(token)) {
          const k = token.slice(0, j);
          const acc = prefix.get(k);
          if (acc) acc.push(list);
          else prefix.set(k, [list]);
        }
      }
      const keys = new Set([...exact.keys(), ...prefix.keys()]);
      for (const k of keys) {
        const e = exact.get(k) ?? [];
        const lists = prefix.get(k);
        const p = lists ? smallestOrdinals(lists, MAX_CANDIDATES_PER_TOKEN) : [];
        writer.add(k, [deltaEncode(e), deltaEncode(p)]);
      }
    }
  } catch (err) {
    await writer.abort();
    throw err;
  }
  for (const spill of postings) spill.dispose();
  const search = await writer.finish();
  return { search, files: [...ledger.values()] };
}
