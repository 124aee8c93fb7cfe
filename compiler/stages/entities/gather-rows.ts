// Stage 2, gathering: a partition's lines grouped by register ID, each ID's rows kept as numbers until its entity is
// built, then read into one EntityRows.
import { ENTITY_TYPES, type EntityType } from '../../../common/ids.ts';
import { scanRecords, splitPlain } from '../../read/csv-reader.ts';
import type { GroupSpill } from '../../write/group-spill.ts';
import {
  BRIDGE_CHAR, COMMA, DROPPED_LAYOUT, LineReader, lineField, PRIOR_RETIRED_CODE, REL_CHAR, REL_FROM_CHAR, REL_TO_CHAR, RETIRED_CODE, TAG, tagCode,
  type LineLayout,
} from '../../records/partition-lines.ts';
import type { EntityRows } from '../../records/entity-rows.ts';

/** No rows (yet): shared and frozen, so a push to it, instead of to the list `own` makes, throws. */
const NONE: never[] = Object.freeze([]) as unknown as never[];

/** A row's spill index sits this many bits up; below it, the line's offset in that spill's text. */
const ROW_SPILL_SHIFT = 28;
const ROW_OFFSETS = 1 << ROW_SPILL_SHIFT;

/** What gathering keeps of one ID until it is built. */
interface Gathered {
  /** A plain line as (spill << ROW_SPILL_SHIFT | offset); a line with a quote, parsed at once, as -1 - its index in `parsed`. */
  rows: number[];
  priorRetired: boolean;
}

/** Reads lines into EntityRows with the layouts stage 1 recorded, each looked up once per range. */
export class RowReader {
  readonly lines: LineReader;
  // The layout of each table whose columns `apply` reads by name: this release's tables, then the predecessor's.
  private readonly entities: LineLayout | undefined;
  private readonly aliases: LineLayout | undefined;
  private readonly bridges: LineLayout | undefined;
  private readonly relationships: LineLayout | undefined;
  private readonly overlayLinks: LineLayout | undefined;
  private readonly overlayAliases: LineLayout | undefined;
  private readonly overlayXids: LineLayout | undefined;
  private readonly priorEntities: LineLayout | undefined;
  private readonly priorBridges: LineLayout | undefined;

  constructor(layouts: ReadonlyMap<string, LineLayout>) {
    this.lines = new LineReader(layouts);
    this.entities = layouts.get(TAG.entity);
    this.aliases = layouts.get(TAG.alias);
    this.bridges = layouts.get(TAG.bridge);
    this.relationships = layouts.get(TAG.relFrom);
    this.overlayLinks = layouts.get(TAG.link);
    this.overlayAliases = layouts.get(TAG.overlayAlias);
    this.overlayXids = layouts.get(TAG.xid);
    this.priorEntities = layouts.get(TAG.priorEntity);
    this.priorBridges = layouts.get(TAG.priorBridge);
  }

  /**
   * Reads partition `p` of every spill (deleting each once read) and groups its lines by ID. A line is kept as one
   * number and split only when its entity is built: a partition's rows as split fields outlived the young
   * generation and were promoted wholesale, while as numbers they are one small array per ID.
   */
  gather(spills: readonly GroupSpill[], p: number): PartitionRows {
    if (spills.length > 1 << (31 - ROW_SPILL_SHIFT)) throw new Error(`${spills.length} spills, more than rows can address`);
    const texts: string[] = [];
    const parsed: string[][] = [];
    const byId = new Map<string, Gathered>();
    const gather = (id: string): Gathered => {
      let g = byId.get(id);
      if (!g) byId.set(id, (g = { rows: [], priorRetired: false }));
      return g;
    };
    /** Marks the ID of a retired ID's line; false for a line of any other tag. */
    const retired = (code: number, id: string): boolean => {
      if (code !== RETIRED_CODE && code !== PRIOR_RETIRED_CODE) return false;
      const g = gather(id);
      if (code === PRIOR_RETIRED_CODE) g.priorRetired = true;
      return true;
    };
    const lines = this.lines;
    for (let si = 0; si < spills.length; si++) {
      const text = spills[si].readText(p);
      spills[si].release(p);
      if (text.length >= ROW_OFFSETS) throw new Error(`spill partition ${p} holds ${text.length} characters, more than rows can address`);
      texts.push(text);
      const spillBits = si << ROW_SPILL_SHIFT;
      scanRecords(
        text,
        (start, end) => {
          const comma = text.indexOf(',', start);
          const code = tagCode(text, start, comma);
          const idAt = lines.idAt(code);
          if (idAt === undefined) throw new Error(`partition ${p}: unknown line ${JSON.stringify(text.slice(start, Math.min(end, start + 40)))}`);
          const id = lineField(text, comma, end, idAt);
          if (!retired(code, id)) gather(id).rows.push(spillBits | start);
        },
        (f) => {
          const code = tagCode(f[0]);
          const idAt = lines.idAt(code);
          if (idAt === undefined) throw new Error(`partition ${p}: unknown line ${JSON.stringify(f.slice(0, 3))}`);
          if (!retired(code, f[idAt])) gather(f[idAt]).rows.push(-1 - (parsed.push(f) - 1));
        },
      );
    }
    return new PartitionRows(this, texts, parsed, byId);
  }

  /** Adds one line (split fields, tag first) of `a`'s ID to `a`. */
  apply(a: EntityRows, f: string[]): void {
    const tag = f[0];
    switch (tag) {
      case TAG.entity: {
        const c = this.entities!.c;
        a.live = true;
        a.type = ENTITY_TYPES.indexOf(f[c.entity_type] as EntityType);
        a.status = f[c.status];
        a.label = f[c.label];
        if (c.gender !== undefined && f[c.gender]) addAttr(a, 'gender', f[c.gender]);
        if (c.country !== undefined && f[c.country]) addAttr(a, 'country', f[c.country]);
        break;
      }
      case TAG.alias: {
        const c = this.aliases!.c;
        own(a, 'aliases').push([f[c.alias], f[c.kind], f[c.rank], f[c.language]]);
        break;
      }
      case TAG.bridge: {
        const c = this.bridges!.c;
        a.bridges.push([f[c.provider], f[c.namespace], f[c.external_id]]);
        break;
      }
      case TAG.relFrom:
      case TAG.relTo:
        addRelation(a, f[this.relationships!.c.kind], tag === TAG.relFrom);
        if (tag === TAG.relFrom) own(a, 'relTo').push(f[this.relationships!.c.to_id]);
        break;
      case TAG.link: {
        const c = this.overlayLinks!.c;
        a.link = [f[c.qid], f[c.confidence], f[c.dob_check], opt(f, c.inherited)];
        break;
      }
      case TAG.overlayAlias: {
        const c = this.overlayAliases!.c;
        own(a, 'oaliases').push([f[c.name], opt(f, c.language), opt(f, c.confidence), opt(f, c.qid)]);
        break;
      }
      case TAG.xid: {
        const c = this.overlayXids!.c;
        own(a, 'xids').push([f[c.provider], f[c.property], f[c.external_id], opt(f, c.confidence), opt(f, c.qid)]);
        break;
      }
      case TAG.dropped:
        (a.dropped ??= new Set()).add(f[DROPPED_LAYOUT.c.field]);
        break;
      case TAG.priorEntity:
        a.prior = [f[this.priorEntities!.c.status], f[this.priorEntities!.c.label]];
        a.priorMatch = f[this.priorEntities!.c.entity_type] === 'match';
        break;
      case TAG.priorMatch:
        for (const [name, at] of this.lines.layout(tag).attrs) if (f[at] !== '') addAttrTo((a.priorAttrs ??= new Map()), name, f[at]);
        break;
      case TAG.priorBridge: {
        const c = this.priorBridges!.c;
        own(a, 'priorBridges').push([f[c.provider], f[c.namespace], f[c.external_id]]);
        break;
      }
      default:
        // Type tables and observed clubs: every non-empty sourced column is an attribute.
        for (const [name, at] of this.lines.layout(tag).attrs) if (f[at] !== '') addAttr(a, name, f[at]);
    }
  }
}

/** One partition's IDs, sorted, with their rows still as numbers. */
export class PartitionRows {
  /** The partition's IDs in String order. */
  ids: string[];
  private gathered: Gathered[];

  constructor(
    private readonly reader: RowReader,
    private readonly texts: readonly string[],
    private readonly parsed: readonly string[][],
    private readonly byId: Map<string, Gathered>,
  ) {
    // The default sort, on the keys alone, then one lookup per ID: sorting [id, rows] entries with a comparator
    // cost more than the lookup (a key keeps its hash, so it is cheap).
    this.ids = [...byId.keys()].sort();
    this.gathered = this.ids.map((id) => byId.get(id)!);
  }

  /** Adds IDs that have no line (the predecessor's diff base names them) and sorts again. */
  addIds(ids: readonly string[]): void {
    for (const id of ids) if (!this.byId.has(id)) this.byId.set(id, { rows: [], priorRetired: false });
    this.ids = [...this.byId.keys()].sort();
    this.gathered = this.ids.map((id) => this.byId.get(id)!);
  }

  /** The rows of `ids[i]`, read and applied in the order they were written. */
  read(i: number): EntityRows {
    const g = this.gathered[i];
    const a: EntityRows = {
      id: this.ids[i], live: false, type: -1, status: '', label: '', attrs: null, aliases: NONE, bridges: [], rels: null, relTo: NONE, link: null,
      oaliases: NONE, xids: NONE, prior: null, priorBridges: NONE, priorRetired: g.priorRetired, dropped: null,
      priorMatch: false, priorAttrs: null,
    };
    const reader = this.reader;
    const rows = g.rows;
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      let f: string[];
      if (row < 0) f = this.parsed[-1 - row];
      else {
        const text = this.texts[row >>> ROW_SPILL_SHIFT];
        const start = row & (ROW_OFFSETS - 1);
        let end = text.indexOf('\n', start);
        if (end === -1) end = text.length;
        const c0 = text.charCodeAt(start);
        if (c0 === BRIDGE_CHAR && text.charCodeAt(start + 1) === COMMA) {
          a.bridges.push(reader.lines.bridgeOf(text, start, end));
          continue;
        }
        // A relationship line (4M at full size, one per end) counts toward its kind alone: only that field is cut.
        if (c0 === REL_CHAR && text.charCodeAt(start + 2) === COMMA) {
          const c1 = text.charCodeAt(start + 1);
          if (c1 === REL_FROM_CHAR || c1 === REL_TO_CHAR) {
            addRelation(a, lineField(text, start + 2, end, reader.lines.relKindAt), c1 === REL_FROM_CHAR);
            if (c1 === REL_FROM_CHAR) own(a, 'relTo').push(lineField(text, start + 2, end, reader.lines.relToAt));
            continue;
          }
        }
        f = splitPlain(text, start, end);
      }
      reader.apply(a, f);
    }
    return a;
  }
}

const opt = (f: string[], at: number | undefined) => (at === undefined ? '' : f[at]);

/** The EntityRows' own list under `key`, made on its first row. */
function own<K extends 'aliases' | 'oaliases' | 'xids' | 'priorBridges' | 'relTo'>(a: EntityRows, key: K): EntityRows[K] {
  let list = a[key];
  if (list === NONE) a[key] = list = [] as unknown as EntityRows[K];
  return list;
}

/** Counts one relationship of family `kind` on `a`: outgoing when `a` is its from_id, else incoming. */
function addRelation(a: EntityRows, kind: string, outgoing: boolean): void {
  const rels = (a.rels ??= new Map());
  let fam = rels.get(kind);
  if (!fam) rels.set(kind, (fam = { out: 0, in: 0 }));
  if (outgoing) fam.out++;
  else fam.in++;
}

function addAttr(a: EntityRows, name: string, value: string): void {
  addAttrTo((a.attrs ??= new Map()), name, value);
}

function addAttrTo(attrs: Map<string, string[]>, name: string, value: string): void {
  const list = attrs.get(name);
  if (!list) attrs.set(name, [value]);
  else if (!list.includes(value)) list.push(value);
}
