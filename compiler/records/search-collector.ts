// What stage 2 hands the search stage: each range's search docs (the live entities in build order) and the postings
// of their names' tokens, collected an entity at a time.
import { tokenize } from '../../common/normalise.ts';
import { ownCopy } from '../../common/own-copy.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { addPosting, SEARCH_GROUPS } from './search-postings.ts';

/** Sources of a posting: how strongly a name backs its entity (below SOURCES). */
const SRC_LABEL = 3;
const SRC_ALIAS = 2;
const SRC_OVERLAY = 1;

/** Live entities' search docs, by doc position: register ID, type index, label, bridge count. */
export interface SearchDocs {
  ids: string[];
  types: number[];
  labels: string[];
  bridges: number[];
}

/** What one stage-2 range hands on: its docs and its postings (whose docs are positions in its own docs). */
export interface SearchPart {
  docs: SearchDocs;
  postings: GroupSpillHandle;
}

/** Collects one stage-2 range's search docs and postings, an entity at a time, in that stage's single pass. */
export class SearchCollector {
  private readonly postings: GroupSpill;
  private readonly docs: SearchDocs = { ids: [], types: [], labels: [], bridges: [] };

  /** `dir`: scratch directory of the postings spill. */
  constructor(dir: string) {
    this.postings = new GroupSpill({ dir, groups: SEARCH_GROUPS });
  }

  /** One live entity: its doc, and a posting for each token of its names, from the strongest source that has it. */
  add(id: string, typeIndex: number, label: string, bridgeCount: number, aliases: readonly { name: string }[], overlayAliases: readonly { name: string }[] | null): void {
    // Strings of their own: the docs outlive the partition, and a slice would keep its whole text alive.
    const doc = this.docs.ids.push(ownCopy(id)) - 1;
    this.docs.types.push(typeIndex);
    this.docs.labels.push(ownCopy(label));
    this.docs.bridges.push(bridgeCount);
    const best = new Map<string, number>();
    takeTokens(best, label, SRC_LABEL);
    for (const x of aliases) takeTokens(best, x.name, SRC_ALIAS);
    if (overlayAliases) for (const x of overlayAliases) takeTokens(best, x.name, SRC_OVERLAY);
    for (const [t, src] of best) addPosting(this.postings, t, doc, src);
  }

  finish(): SearchPart {
    this.postings.seal();
    return { docs: this.docs, postings: this.postings.handle() };
  }
}

/** Keeps each token of `text` with its strongest source so far. */
function takeTokens(best: Map<string, number>, text: string, src: number): void {
  for (const t of tokenize(text)) if ((best.get(t) ?? 0) < src) best.set(t, src);
}

/** The search stage's input: every range's docs, one range after another, and postings. */
export interface SearchInput {
  docs: SearchDocs;
  /** One spill per range; a posting's doc is counted from its range's docStart. */
  postings: GroupSpill[];
  docStarts: number[];
}

/** Joins the ranges' parts, in range order. */
export function joinSearchParts(parts: readonly SearchPart[]): SearchInput {
  const out: SearchInput = { docs: { ids: [], types: [], labels: [], bridges: [] }, postings: [], docStarts: [] };
  for (const part of parts) {
    out.postings.push(GroupSpill.open(part.postings));
    out.docStarts.push(out.docs.ids.length);
    // concat, not push(...): a spread of a million arguments overflows the stack.
    const d = out.docs;
    out.docs = { ids: d.ids.concat(part.docs.ids), types: d.types.concat(part.docs.types), labels: d.labels.concat(part.docs.labels), bridges: d.bridges.concat(part.docs.bridges) };
  }
  return out;
}