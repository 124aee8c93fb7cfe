// Partition lines: how stage 1 (stages/tables/) hands each row to stage 2 (build-entities). A row goes to its register
// ID's partition as one line, `<tag>,<the CSV record as read>`, or `<tag>,<id>` for a retired ID. Copying a record's
// bytes is far cheaper than encoding it, and stage 2 splits the line with the same CSV reader.
import type { CsvRecord } from '../read/csv-reader.ts';
import type { GroupSpill } from '../write/group-spill.ts';

/** Tags of partition lines, by the table (or predecessor's table) the row came from. */
export const TAG = {
  entity: 'E', alias: 'A', bridge: 'B', relFrom: 'Ro', relTo: 'Ri', link: 'L', overlayAlias: 'OA', xid: 'X',
  observed: 'OC', retired: 'D', priorRetired: 'd', priorEntity: 'e', priorBridge: 'b',
  /** A match's scoreline field that stage 1 found naming no live entity: `S,<id>,<field>` (see DROPPED_LAYOUT). */
  dropped: 'S',
  /** The predecessor's matches rows, read when its diff base is not there. */
  priorMatch: 'm',
  /** Type tables: `T<index in stages/tables/main-tables.ts' TYPE_TABLES>`. */
  typed: (i: number) => `T${i}`,
} as const;

/**
 * Columns of one tag's lines, as stage 1 found them in its table's header. Indexes already count the leading tag
 * field, so `f[c.reep_id]` works on the fields of a line as split.
 */
export interface LineLayout {
  header: string[];
  c: Record<string, number>;
  /** Field of the register ID the line is grouped by. */
  idAt: number;
  /** Sourced attributes of a type table: [column name, field], empty cells skipped when read. */
  attrs: [string, number][];
}

// Per-type tables repeat reep_id/status/label; everything else in them is a sourced attribute.
const NOT_ATTRIBUTES = new Set(['reep_id', 'status', 'label', 'entity_type']);

/** The layout of a table's lines: `c` its column indexes, `idColumn` the ID they are grouped by. */
export function layoutOf(header: string[], c: Record<string, number>, idColumn: string, withAttrs: boolean): LineLayout {
  const shifted: Record<string, number> = Object.create(null);
  for (const k of Object.keys(c)) shifted[k] = c[k] + 1;
  const attrs: [string, number][] = [];
  if (withAttrs) header.forEach((h, i) => !NOT_ATTRIBUTES.has(h) && attrs.push([h, i + 1]));
  return { header, c: shifted, idAt: shifted[idColumn], attrs };
}

/** How TAG.dropped lines read: the match's ID, then the field whose value is dropped. */
export const DROPPED_LAYOUT: LineLayout = { header: ['reep_id', 'field'], c: { reep_id: 1, field: 2 }, idAt: 1, attrs: [] };

/** Writes record `f` to partition `p` under `tag`, its bytes copied as read. */
export const addRowLine = (spill: GroupSpill, p: number, tag: string, f: CsvRecord): void => spill.addTaggedBytes(p, tag, f.buf, f.start, f.end);

/** Writes the line of a retired ID: retired in this release (TAG.retired) or in the predecessor (TAG.priorRetired). */
export const addRetiredLine = (spill: GroupSpill, p: number, tag: typeof TAG.retired | typeof TAG.priorRetired, id: string): void => spill.addTaggedLine(p, tag, id);

/** A tag as a number, its characters `text[start, end)` in base 128: a line is routed without cutting its tag out. */
export const tagCode = (text: string, start = 0, end = text.length): number => {
  let code = 0;
  for (let i = start; i < end; i++) code = code * 128 + text.charCodeAt(i);
  return code;
};
export const RETIRED_CODE = tagCode(TAG.retired);
export const PRIOR_RETIRED_CODE = tagCode(TAG.priorRetired);

/** A plain bridge line starts with these two characters (see LineReader.bridgeOf). */
export const BRIDGE_CHAR = TAG.bridge.charCodeAt(0);
export const COMMA = 44;
if (TAG.bridge.length !== 1) throw new Error('the bridge tag must be one character (see LineReader.bridgeOf)');
/** Relationship lines start with `R`, then `o` (from this ID) or `i` (to it), then the comma. */
export const REL_CHAR = TAG.relFrom.charCodeAt(0);
export const REL_FROM_CHAR = TAG.relFrom.charCodeAt(1);
export const REL_TO_CHAR = TAG.relTo.charCodeAt(1);
if (TAG.relFrom.length !== 2 || TAG.relTo.length !== 2 || TAG.relTo.charCodeAt(0) !== REL_CHAR || REL_FROM_CHAR === REL_TO_CHAR) {
  throw new Error('relationship tags must be two characters sharing the first (see LineReader)');
}

/**
 * Field `k` (the tag being field 0) of the plain line `text[.., end)` whose tag ends at `comma`. Stage 1 writes only
 * rows as wide as their header, so the field is on this line.
 */
export function lineField(text: string, comma: number, end: number, k: number): string {
  let from = comma + 1;
  for (let i = 1; i < k; i++) from = text.indexOf(',', from) + 1;
  const to = text.indexOf(',', from);
  return text.slice(from, to === -1 || to > end ? end : to);
}

/** Reads partition lines with the layouts stage 1 recorded for their tags. */
export class LineReader {
  /** Where each tag's lines hold their ID, by tag code; a retired ID's line is the ID alone. */
  private readonly idAtByCode = new Map<number, number>([[RETIRED_CODE, 1], [PRIOR_RETIRED_CODE, 1]]);
  private readonly pAt: number;
  private readonly nAt: number;
  private readonly xAt: number;
  private readonly bridgeLast: number;
  /** Field of a relationship line's kind. */
  readonly relKindAt: number;
  /** Field of a relationship line's to_id. */
  readonly relToAt: number;

  constructor(readonly layouts: ReadonlyMap<string, LineLayout>) {
    for (const [tag, l] of layouts) this.idAtByCode.set(tagCode(tag), l.idAt);
    const b = layouts.get(TAG.bridge);
    this.pAt = b ? b.c.provider : 0;
    this.nAt = b ? b.c.namespace : 0;
    this.xAt = b ? b.c.external_id : 0;
    this.bridgeLast = Math.max(this.pAt, this.nAt, this.xAt);
    this.relKindAt = layouts.get(TAG.relFrom)?.c.kind ?? 0;
    this.relToAt = layouts.get(TAG.relFrom)?.c.to_id ?? 0;
  }

  /** The field of the register ID in lines of the tag whose code is `code`; undefined for a tag stage 1 never wrote. */
  idAt(code: number): number | undefined {
    return this.idAtByCode.get(code);
  }

  /** The layout of `tag`'s lines. */
  layout(tag: string): LineLayout {
    const l = this.layouts.get(tag);
    if (!l) throw new Error(`unknown partition line tag ${JSON.stringify(tag)}`);
    return l;
  }

  /**
   * The [provider, namespace, external_id] of the plain bridge line `text[start, end)`, its tag's comma at
   * `start + 1`. Bridges are over half of all lines, so only these three fields are cut out, not the whole line.
   */
  bridgeOf(text: string, start: number, end: number): [string, string, string] {
    let provider = '';
    let namespace = '';
    let externalId = '';
    let from = start + 2;
    for (let k = 1; k <= this.bridgeLast; k++) {
      let to = text.indexOf(',', from);
      if (to === -1 || to > end) to = end;
      if (k === this.pAt) provider = text.slice(from, to);
      else if (k === this.nAt) namespace = text.slice(from, to);
      else if (k === this.xAt) externalId = text.slice(from, to);
      from = to + 1;
    }
    return [provider, namespace, externalId];
  }
}
