// Stage 2, change events: each ID of a range against the predecessor, written as change events; and this release's
// own diff base, which the next release's compile compares against (compiler/write/diff-base.ts).
import { ENTITY_TYPES } from '../../../common/ids.ts';
import { NO_STORED_BRIDGES, parseStoredBridges } from '../../../common/shard-format.ts';
import { RegisterError } from '../../../common/errors.ts';
import { noteSlack, type CompileContext } from '../../context.ts';
import { PriorShards, type PriorEntity } from '../../read/prior-shards.ts';
import {
  DiffBaseWriter, fingerprint, matchDiffBase, priorPlace, readDiffBasePartition, sameFingerprint, type DiffBasePartition, type DiffBaseSource, type ShardPlace,
} from '../../write/diff-base.ts';
import type { ContentFile } from '../../write/content-file.ts';
import type { PlacedShard } from '../../write/shard-pack-writer.ts';
import {
  entityAdded, entityRemoved, fixtureUpdated, labelUpdated, providerUpdated, redirectChanged, scoreUpdated, statusChanged, type BridgeRef,
  type ChangeEventWriter,
} from '../../records/change-events.ts';
import { fixtureDiffers, matchFactsOf, scoresDiffer, type MatchFacts } from '../../../common/scoreline.ts';
import type { RedirectInfo } from '../../records/tables-read.ts';
import type { PartitionRows } from './gather-rows.ts';
import type { Bridge, EntityRows } from '../../records/entity-rows.ts';
import { dedupeBridges } from './short-lists.ts';

/** What comparing a range against the predecessor needs. */
export interface ChangesSetup {
  /** Whether there is a predecessor to compare against (without one, only the diff base is written). */
  hasPrior: boolean;
  /** The predecessor's diff base, read instead of its tables when there is one. */
  priorDiffBase: DiffBaseSource | null;
  priorRedirects: Map<string, RedirectInfo>;
  /** Where this release's diff base goes (under private/). */
  privateDir: string;
  /** How slack names the entities and redirects tables (their paths in the release). */
  entitiesLabel: string;
  redirectsLabel: string;
}

/** The predecessor's values of one chunk of IDs (positions as in the chunk), and the reads still filling them in. */
export interface PriorChunk {
  /** Position of the chunk's first ID in its partition. */
  first: number;
  /** [status, label] in the predecessor, or null when it had no such live ID. */
  states: ([string, string] | null)[];
  /** Bridges section in the predecessor, from its diff base or shard; null when its tables (or nothing) tell. */
  sections: (string | null)[];
  /** A match's scoreline and fixture in the predecessor; null when it was no live match there (or its tables do not tell). */
  facts: (MatchFacts | null)[];
  /** Positions whose values are read back from the predecessor's shards, because their fingerprint changed. */
  changed: number[];
  reads: Promise<Map<string, PriorEntity>> | null;
}

export class EntityChanges {
  private readonly diffBase: DiffBaseWriter;
  private readonly priorShards: PriorShards | null;
  private p = -1;
  private priorBase: DiffBasePartition | null = null;
  /** By position in the partition's IDs: where the ID's fingerprint starts in the predecessor's diff base (-1: not live there). */
  private fingerprintAt = new Int32Array(0);
  /** By position: the ID's ordinal among the diff base's live lines (see priorPlace). */
  private ordinal = new Int32Array(0);
  /** By position: the bridges section of an ID the predecessor had merged, as its diff base kept it. */
  private mergedSection: (string | null)[] = [];
  /** By position: the predecessor tombstoned the ID because its own tables lacked it (a diff base line of kind 2). */
  private retiredBefore = new Uint8Array(0);

  constructor(
    private readonly setup: ChangesSetup,
    private readonly events: ChangeEventWriter,
    private readonly ctx: Pick<CompileContext, 'slack'>,
  ) {
    this.diffBase = new DiffBaseWriter(setup.privateDir);
    this.priorShards = setup.priorDiffBase ? new PriorShards(setup.priorDiffBase.publicDir) : null;
  }

  /**
   * Starts partition `p`: walks the predecessor's diff base beside the partition's sorted IDs. An ID only the
   * predecessor had (no line now, not even a redirect: noted as missing when compared) is added to `rows`.
   */
  startPartition(p: number, rows: PartitionRows): void {
    this.p = p;
    const source = this.setup.priorDiffBase;
    this.priorBase = source ? readDiffBasePartition(source, p) : null;
    this.walk(rows);
    if (!this.priorBase) return;
    const absent = matchDiffBase(this.priorBase, rows.ids, this.live, this.merged, this.retired);
    if (absent.length === 0) return;
    rows.addIds(absent);
    this.walk(rows);
    const still = matchDiffBase(this.priorBase, rows.ids, this.live, this.merged, this.retired);
    if (still.length) throw new RegisterError('compile', `lists ${still[0]} out of order; recompile the prior release (or remove its folder) and retry`, this.priorBase.textFile);
  }

  /** Clears the per-position values for `rows`' IDs before a walk of the diff base fills them. */
  private walk(rows: PartitionRows): void {
    const n = rows.ids.length;
    this.fingerprintAt = new Int32Array(n).fill(-1);
    this.ordinal = new Int32Array(n).fill(-1);
    this.mergedSection = new Array<string | null>(n).fill(null);
    this.retiredBefore = new Uint8Array(n);
  }

  private readonly live = (i: number, at: number, ordinal: number): void => {
    this.fingerprintAt[i] = at;
    this.ordinal[i] = ordinal;
  };

  private readonly merged = (i: number, section: string): void => {
    this.mergedSection[i] = section;
  };

  private readonly retired = (i: number): void => {
    this.retiredBefore[i] = 1;
  };

  /**
   * A chunk of the partition's IDs from position `first`, with their bridges and the bridges sections their shards
   * are written with: writes each ID's line of this release's diff base, takes the predecessor's values of the IDs
   * whose fingerprint is unchanged (nearly all) to be the current ones, and starts reading the others' from the
   * predecessor's shards (see PriorShards), which `settle` awaits. `facts` are the matches' (null for other types);
   * `redirected` says which IDs this release's redirects table names.
   */
  prepare(
    first: number, entities: readonly EntityRows[], bridgeLists: readonly Bridge[][], sections: readonly string[],
    facts: readonly (MatchFacts | null)[], redirected: (id: string) => boolean,
  ): PriorChunk {
    const n = entities.length;
    const chunk: PriorChunk = { first, states: new Array(n), sections: new Array(n), facts: new Array(n), changed: [], reads: null };
    for (let i = 0; i < n; i++) {
      const a = entities[i];
      const section = sections[i];
      chunk.states[i] = a.prior;
      chunk.sections[i] = this.mergedSection[first + i];
      // Read from the predecessor's tables (no diff base): its matches row, if it was a live match.
      chunk.facts[i] = a.priorMatch ? matchFactsOf(a.priorAttrs, null) : null;
      // Bridges are only ever kept for live or merged IDs; a merged ID's rows are diffed under that ID next time.
      const fp = a.live ? fingerprint(a.status, a.label, section, facts[i] ? JSON.stringify(facts[i]) : '') : '';
      if (a.live) this.diffBase.addLive(a.id, fp);
      else if (bridgeLists[i].length) this.diffBase.addMerged(a.id, section);
      else if (!redirected(a.id) && this.vanishes(chunk, i, a)) this.diffBase.addRetired(a.id);
      const at = this.fingerprintAt[first + i];
      if (at < 0) continue;
      if (a.live && sameFingerprint(this.priorBase!, at, fp)) {
        chunk.states[i] = [a.status, a.label];
        chunk.sections[i] = section;
        chunk.facts[i] = facts[i];
      } else chunk.changed.push(i);
    }
    if (chunk.changed.length) {
      const source = this.setup.priorDiffBase!;
      chunk.reads = this.priorShards!.entities(
        chunk.changed.map((i): [string, ShardPlace] => [entities[i].id, priorPlace(source, this.priorBase!, this.p, this.ordinal[first + i])]),
      );
      chunk.reads.catch(() => {}); // awaited by settle; this only keeps an early failure from counting as unhandled
    }
    return chunk;
  }

  /** Fills in the values `prepare` started reading. */
  async settle(chunk: PriorChunk, entities: readonly EntityRows[]): Promise<void> {
    if (!chunk.reads) return;
    const old = await chunk.reads;
    for (const i of chunk.changed) {
      const w = old.get(entities[i].id);
      if (w === undefined) continue;
      chunk.states[i] = [w.status, w.label];
      chunk.sections[i] = w.bridgesSection;
      chunk.facts[i] = w.match;
    }
  }

  /**
   * Whether chunk position `i`, an ID with no line in this release (not live, not redirected), was published by the
   * predecessor: live, merged or tombstoned there. Such an ID is tombstoned here rather than left to vanish.
   */
  vanishes(chunk: PriorChunk, i: number, a: EntityRows): boolean {
    const at = chunk.first + i;
    return !a.live && (chunk.states[i] !== null || a.priorRetired || this.fingerprintAt[at] >= 0 || this.retiredBefore[at] === 1);
  }

  /** Where the last live ID's shard went: `cuts` as ShardPackWriter.addParts reported them. */
  placed(loc: PlacedShard, cuts: readonly number[]): void {
    this.diffBase.place(loc.pack, loc.offset, loc.length, loc.checksum, cuts, loc);
  }

  /**
   * Where the predecessor's shard of chunk position `i` sits, if the ID was live there: the place a shard found
   * unchanged is kept at when the packs are shared (see ShardPackWriter.addParts).
   */
  priorShard(chunk: PriorChunk, i: number): ShardPlace | null {
    const ordinal = this.ordinal[chunk.first + i];
    return ordinal < 0 || !this.priorBase ? null : priorPlace(this.setup.priorDiffBase!, this.priorBase, this.p, ordinal);
  }

  /**
   * Compares chunk position `i`, the ID `a` (its redirect, if retired; its bridges and their stored section; a
   * match's facts) with the predecessor and writes the events that tell the difference. An ID the predecessor
   * published that this release lacks altogether (see vanishes) is noted as slack under its table: the caller
   * tombstones it.
   */
  compare(chunk: PriorChunk, i: number, a: EntityRows, redirect: RedirectInfo | undefined, bridges: Bridge[], section: string, facts: MatchFacts | null): void {
    const id = a.id;
    const hasPrior = this.setup.hasPrior;
    const was = chunk.states[i];
    if (a.live) {
      if (hasPrior) {
        if (!was) {
          this.events.emit(entityAdded(id, ENTITY_TYPES[a.type], a.label));
        } else {
          if (was[0] !== a.status) this.events.emit(statusChanged(id, was[0], a.status));
          if (was[1] !== a.label) this.events.emit(labelUpdated(id, was[1], a.label));
          const before = chunk.facts[i];
          if (facts && before) {
            if (fixtureDiffers(before, facts)) this.events.emit(fixtureUpdated(id, facts));
            if (scoresDiffer(before.scoreline, facts.scoreline)) this.events.emit(scoreUpdated(id, facts.scoreline));
          }
        }
      }
    } else if (redirect) {
      if (hasPrior) {
        const before = this.setup.priorRedirects.get(id);
        if (redirect.to && before?.to !== redirect.to) this.events.emit(redirectChanged(id, redirect.to));
        if (!redirect.to && (!before || before.to)) this.events.emit(entityRemoved(id));
      }
    } else if (this.vanishes(chunk, i, a)) {
      // Published last time, absent now, and neither redirected nor tombstoned: tombstoned rather than let vanish.
      const before = this.setup.priorRedirects.get(id);
      const table = was || this.fingerprintAt[chunk.first + i] >= 0 ? this.setup.entitiesLabel : this.setup.redirectsLabel;
      noteSlack(this.ctx, table, 'ID of the prior release missing without redirect or tombstone (tombstoned)', id);
      const wasTombstone = (before && !before.to) || this.retiredBefore[chunk.first + i] === 1;
      if (!wasTombstone) this.events.emit(entityRemoved(id));
    }
    if (!hasPrior) return;
    const after = a.live || redirect?.to ? bridges : [];
    const before = chunk.sections[i];
    if (before !== null) {
      // Unchanged lists (nearly all) are equal sections: nothing to parse or compare.
      if (before !== (after === bridges ? section : NO_STORED_BRIDGES)) this.bridgeEvents(id, parseStoredBridges(before), after);
    } else if (a.priorBridges.length || bridges.length) {
      this.bridgeEvents(id, dedupeBridges(a.priorBridges), after);
    }
  }

  /** A provider_updated event per provider whose bridges to `id` differ; both lists sorted and deduplicated. */
  private bridgeEvents(id: string, before: Bridge[], after: Bridge[]): void {
    // Equal lists (nearly every entity) need no sets.
    if (before.length === after.length && before.every((b, i) => b[0] === after[i][0] && b[1] === after[i][1] && b[2] === after[i][2])) return;
    const key = (b: Bridge) => `${b[0]}\u0000${b[1]}\u0000${b[2]}`;
    const was = new Set(before.map(key));
    const now = new Set(after.map(key));
    const byProvider = new Map<string, { added: BridgeRef[]; removed: BridgeRef[] }>();
    const slot = (p: string) => {
      let s = byProvider.get(p);
      if (!s) byProvider.set(p, (s = { added: [], removed: [] }));
      return s;
    };
    for (const b of after) if (!was.has(key(b))) slot(b[0]).added.push({ namespace: b[1], external_id: b[2] });
    for (const b of before) if (!now.has(key(b))) slot(b[0]).removed.push({ namespace: b[1], external_id: b[2] });
    for (const p of [...byProvider.keys()].sort()) {
      const s = byProvider.get(p)!;
      this.events.emit(providerUpdated(id, p, s.added, s.removed), p);
    }
  }

  /** Writes the partition's diff base files; returns them for the private manifest. */
  finishPartition(p: number): ContentFile[] {
    return this.diffBase.finishPartition(p);
  }

  /** Closes the predecessor's packs once every read has settled. */
  async close(): Promise<void> {
    await this.priorShards?.close();
  }
}
