// Stage 1 on a side thread (a worker, or inline without threads): the bridges table, which is half of all rows, with
// the resolve records built from it; or the predecessor's tables, when its diff base is not there to read instead.
import { join } from 'node:path';
import { RegisterError } from '../../../common/errors.ts';
import { ENTITY_TYPES, type EntityType } from '../../../common/ids.ts';
import { GroupSpill, type GroupSpillHandle } from '../../write/group-spill.ts';
import { noteSlack } from '../../context.ts';
import type { SharedCount } from '../../../common/progress.ts';
import type { ReleaseInput } from '../../read/release-input.ts';
import { addResolveRecord, addResolveRecordIn, RESOLVE_GROUPS } from '../../records/resolve-records.ts';
import { addRowLine, TAG, type LineLayout } from '../../records/partition-lines.ts';
import type { RedirectInfo } from '../../records/tables-read.ts';
import { RegisterIdTable } from '../../read/register-id-table.ts';
import { FieldInterner } from '../../read/field-interner.ts';
import type { CsvRecord } from '../../read/csv-reader.ts';
import { checkId, partitionIn, partitionOf, readSpilled, readTable, type Reader } from './table-reader.ts';

/** The bridges reader packs a live ID's type index into this many low bits beside its partition. */
const TYPE_BITS = 4;
if (ENTITY_TYPES.length > 1 << TYPE_BITS) throw new Error(`more entity types than ${TYPE_BITS} bits hold`);

/**
 * Young generation of a side thread, in MiB (larger than V8's default for a worker). The bridges thread is stage
 * 1's longer half and allocates a row's fields and keys for each of ten million rows at full size: with room to
 * die young they are not promoted and collected again in old space. The same size as stage 2's range workers; the
 * RSS it adds stays below stage 2's peak (bench/HISTORY.md has the measurements).
 */
export const SIDE_YOUNG_GENERATION_MB = 192;

/** One table read on a side thread: plain data in and out. */
export interface SideReadJob {
  /** `bridges`: the release's bridges (and, to check them, its live IDs); `prior`: the predecessor's tables. */
  kind: 'bridges' | 'prior';
  release: ReleaseInput;
  partitions: number;
  /** The release's redirects (read and checked on the main thread for `bridges`). */
  redirects: [string, RedirectInfo][];
  scratchDir: string;
  /** Advanced by the rows read, for the progress line. */
  rows?: SharedCount;
}

export interface SideReadResult {
  spill: GroupSpillHandle;
  resolve: GroupSpillHandle | null;
  resolveBytes: number;
  layouts: [string, LineLayout][];
  providers: string[];
  slack: [string, { count: number; example: string }][];
}

/** Reads one side job's tables (in a worker thread, or inline without threads). */
export async function readSide(job: SideReadJob): Promise<SideReadResult> {
  const r: Reader = {
    rows: job.rows,
    slack: new Map(),
    partitions: job.partitions,
    spill: new GroupSpill({ dir: join(job.scratchDir, 'partitions'), groups: job.partitions }),
    layouts: new Map(),
  };
  const put = (f: CsvRecord, k: number, tag: string) => addRowLine(r.spill, partitionIn(f, k, r.partitions), tag, f);
  const providers = new FieldInterner();
  let resolve: GroupSpill | null = null;
  let resolveBytes = 0;
  const rel = job.release;

  if (job.kind === 'prior') {
    // The predecessor, for the changelog: only what the diff compares (state, label, bridges), and only the
    // bridges its own compile kept (of live or merged IDs), as its diff base would hold them.
    const live = new RegisterIdTable();
    const redirects = new Map(job.redirects);
    await readSpilled(r, { release: rel, table: 'entities', tag: TAG.priorEntity, columns: ['reep_id', 'entity_type', 'status', 'label'], fromPrior: true, row: (f, c) => {
      // An ID of another shape cannot name anything in this release; its row is still the predecessor's.
      if (live.fitsIn(f, c.reep_id)) live.setIn(f, c.reep_id, 0);
      put(f, c.reep_id, TAG.priorEntity);
    } });
    await readSpilled(r, { release: rel, table: 'bridges', tag: TAG.priorBridge, columns: ['provider', 'namespace', 'external_id', 'reep_id'], fromPrior: true, row: (f, c) => {
      if (live.getIn(f, c.reep_id) >= 0 || redirects.get(f.text(c.reep_id))?.to) put(f, c.reep_id, TAG.priorBridge);
    } });
    // Matches' scorelines and fixtures, for score_updated and fixture_updated.
    await readSpilled(r, { release: rel, table: 'matches', tag: TAG.priorMatch, columns: ['reep_id'], fromPrior: true, attributes: true, row: (f, c) => {
      if (live.getIn(f, c.reep_id) >= 0) put(f, c.reep_id, TAG.priorMatch);
    } });
  } else {
    // Live IDs with their partition and type (packed: partition << TYPE_BITS | type index), read again here rather than
    // shipped across threads; the main thread checks the entities table, so a bad row there is reported from there.
    const live = new RegisterIdTable();
    const types = new FieldInterner();
    await readTable(r, { release: rel, table: 'entities', columns: ['reep_id', 'entity_type'], row: (f, c) => {
      const type = ENTITY_TYPES.indexOf(types.values[types.indexIn(f, c.entity_type)] as EntityType);
      if (type >= 0 && live.fitsIn(f, c.reep_id)) live.setIn(f, c.reep_id, (partitionIn(f, c.reep_id, r.partitions) << TYPE_BITS) | type);
    } });
    const redirects = new Map(job.redirects);
    resolve = new GroupSpill({ dir: join(job.scratchDir, 'resolve'), groups: RESOLVE_GROUPS });
    await readSpilled(r, { release: rel, table: 'bridges', tag: TAG.bridge, columns: ['provider', 'namespace', 'external_id', 'reep_id', 'rung'], row: (f, c, row, label) => {
      // This thread's live IDs are unchecked copies, but the main thread refuses a release with a bad one.
      const packed = live.getIn(f, c.reep_id);
      const id = packed >= 0 ? '' : f.text(c.reep_id);
      if (packed < 0) checkId(id, label, row);
      if (f.empty(c.provider)) throw new RegisterError('compile', 'empty provider', label, row);
      if (f.empty(c.external_id)) throw new RegisterError('compile', 'empty external_id', label, row);
      const final = packed >= 0 ? null : redirects.get(id)?.to;
      if (packed >= 0 || final) {
        const provider = providers.indexIn(f, c.provider);
        addRowLine(r.spill, packed >= 0 ? packed >> TYPE_BITS : partitionOf(id, r.partitions), TAG.bridge, f);
        // The resolve index needs no per-entity grouping, only the final entity's type: group it by key now.
        const type = (packed >= 0 ? packed : live.get(final!)) & ((1 << TYPE_BITS) - 1);
        resolveBytes +=
          !f.quoted && f.ascii
            ? addResolveRecordIn(resolve!, f, c.provider, c.namespace, c.external_id, c.reep_id, type)
            : addResolveRecord(resolve!, providers.values[provider], f.text(c.namespace), f.text(c.external_id), f.text(c.reep_id), type);
      } else if (redirects.has(id)) {
        noteSlack(r, label, 'bridge to a tombstoned register ID', `row ${row}: ${id}`);
      } else {
        noteSlack(r, label, 'unknown register ID', `row ${row}: ${id}`);
      }
    } });
    resolve.seal();
  }
  r.spill.seal();
  return { spill: r.spill.handle(), resolve: resolve?.handle() ?? null, resolveBytes, layouts: [...r.layouts], providers: providers.values, slack: [...r.slack] };
}

