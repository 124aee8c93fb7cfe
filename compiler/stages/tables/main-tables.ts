// Stage 1 on the compile's own thread: every table of the release but bridges, entities first, then what is checked
// against the live IDs they make.
import type { CsvRecord } from '../../read/csv-reader.ts';
import { RegisterError } from '../../../common/errors.ts';
import { isEntityType, type EntityType } from '../../../common/ids.ts';
import { noteSlack } from '../../context.ts';
import type { ReleaseInput, TableName } from '../../read/release-input.ts';
import { addRetiredLine, addRowLine, DROPPED_LAYOUT, layoutOf, TAG } from '../../records/partition-lines.ts';
import { RegisterIdTable } from '../../read/register-id-table.ts';
import { FieldInterner } from '../../read/field-interner.ts';
import type { TablesRead } from '../../records/tables-read.ts';
import { checkId, partitionIn, partitionOf, readSpilled, readTable, type Reader } from './table-reader.ts';
import { checkScoreline } from './scoreline-checks.ts';

/** The per-type tables, read in this order: a row's tag is TAG.typed(its table's index here). */
const TYPE_TABLES: [TableName, EntityType][] = [
  ['players', 'player'], ['coaches', 'coach'], ['referees', 'referee'], ['teams', 'team'],
  ['competitions', 'competition'], ['seasons', 'season'], ['stages', 'stage'], ['matches', 'match'],
];

/** Every table of the release but bridges, on the main thread: entities first, then what is checked against them. */
export async function readMainTables(r: Reader, rel: ReleaseInput, out: TablesRead, live: RegisterIdTable): Promise<void> {
  // A row's own bytes go to its partition: copied as read, never decoded and encoded again.
  const put = (p: number, tag: string, f: CsvRecord) => addRowLine(r.spill, p, tag, f);
  const retired = new RegisterIdTable();
  for (const id of out.redirects.keys()) retired.set(id, 0);
  const types = new FieldInterner();
  await readSpilled(r, { release: rel, table: 'entities', tag: TAG.entity, columns: ['reep_id', 'entity_type', 'status', 'label'], row: (f, c, row, label) => {
    const k = c.reep_id;
    if (!live.fitsIn(f, k)) checkId(f.text(k), label, row);
    const type = types.values[types.indexIn(f, c.entity_type)];
    if (!isEntityType(type)) throw new RegisterError('compile', `unknown entity_type ${JSON.stringify(type)}`, label, row);
    if (retired.getIn(f, k) >= 0) throw new RegisterError('compile', `register ID ${f.text(k)} is live and also in redirects`, label, row);
    const p = partitionIn(f, k, r.partitions);
    if (!live.addIn(f, k, p)) throw new RegisterError('compile', `duplicate register ID ${f.text(k)}`, label, row);
    put(p, TAG.entity, f);
  } });
  for (const [id, red] of out.redirects) {
    if (red.to && !live.has(red.to)) {
      throw new RegisterError('compile', `redirect from ${id} leads to ${red.to}, which is not a live entity`, rel.tables.redirects!.label);
    }
    // Every retired ID gets its stub even when no other row names it.
    addRetiredLine(r.spill, partitionOf(id, r.partitions), TAG.retired, id);
  }
  for (const id of out.priorRedirects.keys()) addRetiredLine(r.spill, partitionOf(id, r.partitions), TAG.priorRetired, id);

  /** The partition of a live ID; -1 (the row noted and dropped) for any other. */
  const known = (f: CsvRecord, k: number, label: string, row: number): number => {
    const p = live.getIn(f, k);
    // A live ID was checked when the entities table was read; only another one needs the pattern test.
    if (p >= 0) return p;
    const id = f.text(k);
    checkId(id, label, row);
    noteSlack(r, label, 'unknown register ID', `row ${row}: ${id}`);
    return -1;
  };

  for (let i = 0; i < TYPE_TABLES.length; i++) {
    const tag = TAG.typed(i);
    const matches = TYPE_TABLES[i][0] === 'matches';
    await readSpilled(r, { release: rel, table: TYPE_TABLES[i][0], tag, columns: ['reep_id'], attributes: true, row: (f, c, row, label) => {
      const p = known(f, c.reep_id, label, row);
      if (p < 0) return;
      put(p, tag, f);
      if (matches) checkScoreline(r, live, f, c, row, label, p);
    } });
  }
  r.layouts.set(TAG.dropped, DROPPED_LAYOUT);
  await readSpilled(r, { release: rel, table: 'aliases', tag: TAG.alias, columns: ['reep_id', 'alias', 'kind', 'rank', 'language'], row: (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.alias, f);
  } });
  await readTable(r, { release: rel, table: 'providers', columns: ['provider', 'role'], row: (f, c, row, label) => {
    const role = f.text(c.role);
    if (role !== 'canonical_bridge' && role !== 'bridge_only' && role !== 'overlay_only') {
      throw new RegisterError('compile', `unknown provider role ${JSON.stringify(role)}`, label, row);
    }
    out.providerRoles.set(f.text(c.provider), role);
  } });
  await readTable(r, {
    release: rel, table: 'relationships', columns: ['from_id', 'to_id', 'kind'],
    row: (f, c, row, label) => {
      const fromAt = live.getIn(f, c.from_id);
      const toAt = live.getIn(f, c.to_id);
      if (fromAt < 0) checkId(f.text(c.from_id), label, row);
      if (toAt < 0) checkId(f.text(c.to_id), label, row);
      if (fromAt < 0 || toAt < 0) {
        noteSlack(r, label, 'unknown register ID', `row ${row}: ${f.text(fromAt >= 0 ? c.to_id : c.from_id)}`);
        return;
      }
      put(fromAt, TAG.relFrom, f);
      put(toAt, TAG.relTo, f);
    },
    onHeader: (header, c) => {
      r.layouts.set(TAG.relFrom, layoutOf(header, c, 'from_id', false));
      r.layouts.set(TAG.relTo, layoutOf(header, c, 'to_id', false));
    },
  });
  await readSpilled(r, { release: rel, table: 'overlay_links', tag: TAG.link, columns: ['reep_id', 'qid', 'confidence', 'dob_check'], row: (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.link, f);
  } });
  await readSpilled(r, { release: rel, table: 'overlay_aliases', tag: TAG.overlayAlias, columns: ['reep_id', 'name'], row: (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.overlayAlias, f);
  } });
  await readSpilled(r, { release: rel, table: 'overlay_xids', tag: TAG.xid, columns: ['reep_id', 'provider', 'property', 'external_id'], row: (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p < 0) return;
    const provider = f.text(c.provider);
    if (!out.providers.has(provider)) out.providers.add(provider);
    put(p, TAG.xid, f);
  } });
  await readSpilled(r, { release: rel, table: 'observed_clubs', tag: TAG.observed, columns: ['reep_id'], attributes: true, row: (f, c, row, label) => {
    const p = known(f, c.reep_id, label, row);
    if (p >= 0) put(p, TAG.observed, f);
  } });
  await readTable(r, { release: rel, table: 'coverage', columns: ['section', 'key', 'value'], row: (f, c) => {
    out.coverage.push([f.text(c.section), f.text(c.key), f.text(c.value)]);
  } });
}

