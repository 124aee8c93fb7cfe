// Change events: stage 2 writes each event, as its JSON text on a line, into every stream it belongs to (all events,
// its type's, and its provider's), and stage 5 (build-changes) pages each stream. The events are made here, so each
// type's fields are in contract order in one place.
import { CHANGE_EVENT_TYPES } from '../../common/dist-layout.ts';
import { ownCopy } from '../../common/own-copy.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { fixtureFields, type MatchFacts, type Scoreline } from '../../common/scoreline.ts';

/** A bridge an event names. */
export interface BridgeRef {
  namespace: string;
  external_id: string;
}

export const entityAdded = (id: string, entityType: string, label: string) => ({ type: 'entity_added' as const, reep_id: id, entity_type: entityType, label });
export const statusChanged = (id: string, from: string, to: string) => ({ type: 'entity_status_changed' as const, reep_id: id, from, to });
export const labelUpdated = (id: string, from: string, to: string) => ({ type: 'label_updated' as const, reep_id: id, from, to });
export const entityRemoved = (id: string) => ({ type: 'entity_removed' as const, reep_id: id });
export const redirectChanged = (id: string, to: string) => ({ type: 'redirect_changed' as const, reep_id: id, redirected_to: to });
export const fixtureUpdated = (id: string, facts: MatchFacts) => ({ type: 'fixture_updated' as const, reep_id: id, ...fixtureFields(facts) });
export const scoreUpdated = (id: string, match: Scoreline) => ({ type: 'score_updated' as const, reep_id: id, match });
export const providerUpdated = (id: string, provider: string, added: BridgeRef[], removed: BridgeRef[]) => ({
  type: 'provider_updated' as const, reep_id: id, provider, added, removed,
});

export type ChangeEvent = ReturnType<
  | typeof entityAdded | typeof statusChanged | typeof labelUpdated | typeof entityRemoved | typeof redirectChanged | typeof providerUpdated
  | typeof fixtureUpdated | typeof scoreUpdated
>;

/** The streams of a release with these providers, each with its group: `all`, one per event type, one per provider. */
function streamGroupsOf(providers: readonly string[]): Map<string, number> {
  const groups = new Map<string, number>([['all', 0]]);
  for (const t of CHANGE_EVENT_TYPES) groups.set(`type:${t}`, groups.size);
  for (const p of providers) groups.set(`provider:${p}`, groups.size);
  return groups;
}

/** One stage-2 range's events, grouped by stream. */
export class ChangeEventWriter {
  private readonly groups: Map<string, number>;
  private readonly spill: GroupSpill;

  /** `providers`: this release's, sorted; every range is given the same list, so groups agree. */
  constructor(dir: string, providers: readonly string[]) {
    this.groups = streamGroupsOf(providers);
    this.spill = new GroupSpill({ dir, groups: this.groups.size });
  }

  /** Writes `event` to `all`, its type's stream and (when it names one still in this release) its provider's. */
  emit(event: ChangeEvent, provider?: string): void {
    const text = JSON.stringify(event);
    this.spill.addLine(0, text);
    this.spill.addLine(this.groups.get(`type:${event.type}`)!, text);
    if (provider === undefined) return;
    // A provider only the predecessor had has no stream: its events count in `all` and per type only.
    let g = this.groups.get(`provider:${provider}`);
    if (g === undefined) this.groups.set(ownCopy(`provider:${provider}`), (g = -1));
    if (g >= 0) this.spill.addLine(g, text);
  }

  /** Seals the range's events for the stage that pages them. */
  finish(): GroupSpillHandle {
    this.spill.seal();
    return this.spill.handle();
  }
}

/** Every range's events, read stream by stream. */
export class ChangeEvents {
  private readonly spills: GroupSpill[];
  private readonly groups: Map<string, number>;

  /** `providers` as given to each range's writer; `ranges` their sealed events, in range order. */
  constructor(providers: readonly string[], ranges: readonly GroupSpillHandle[]) {
    this.groups = streamGroupsOf(providers);
    this.spills = ranges.map((h) => GroupSpill.open(h));
  }

  /** The streams, by name. */
  streams(): string[] {
    return [...this.groups.keys()].sort();
  }

  /** Events in `stream`, over every range. */
  count(stream: string): number {
    const g = this.groups.get(stream)!;
    return this.spills.reduce((n, spill) => n + spill.count(g), 0);
  }

  /**
   * Calls `use` for each event text of `stream`, ranges in order, so the stream reads as if one thread had built
   * every partition in turn; each range's part is deleted once read.
   */
  forEach(stream: string, use: (event: string) => void): void {
    const g = this.groups.get(stream)!;
    for (const spill of this.spills) {
      for (const event of spill.readLines(g)) use(event);
      spill.release(g);
    }
  }

  dispose(): void {
    for (const spill of this.spills) spill.dispose();
  }
}
