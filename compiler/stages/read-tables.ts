// Stage 1: stream every table once and hash-partition its rows by register ID onto disk, checking IDs as they pass.
// Redirects and the set of live IDs stay in memory (a few bytes per ID); every other row goes to its partition.
import { columnIndex, readCsv } from '../read/csv-reader.ts';
import { RegisterError } from '../../common/errors.ts';
import { REGISTER_ID, isEntityType, ENTITY_TYPES, type EntityType } from '../../common/ids.ts';
import { bucketOf } from '../../common/hash.ts';
import { GroupSpill } from '../write/group-spill.ts';
import { resolveKey } from '../../common/dist-layout.ts';

/** Groups of the resolve spill (by the top bits of the key hash). */
export const RESOLVE_GROUPS = 256;
import { noteSlack, type CompileContext } from '../context.ts';
import type { ReleaseInput, TableName } from '../read/release-input.ts';
import { join } from 'node:path';

/** What the redirects table says about one retired ID. */
export interface RedirectInfo {
  /** Final survivor (chains followed), or null for a tombstone. */
  to: string | null;
  reason: string;
}

export interface TablesRead {
  spill: GroupSpill;
  /** [resolve key, reep_id, typeIndex] grouped by resolve key hash, written straight from the bridges pass. */
  resolve: GroupSpill;
  /** Live entity IDs of the current release → index of their type in ENTITY_TYPES. */
  live: Map<string, number>;
  redirects: Map<string, RedirectInfo>;
  priorRedirects: Map<string, RedirectInfo>;
  /** provider → role from csv/providers.csv.gz. */
  providerRoles: Map<string, string>;
  /** Every provider seen in bridges or overlay IDs. */
  providers: Set<string>;
  coverage: [string, string, string][];
}

// Per-type tables repeat reep_id/status/label; everything else in them is a sourced attribute.
const TYPE_TABLES: [TableName, EntityType][] = [
  ['players', 'player'], ['coaches', 'coach'], ['referees', 'referee'], ['teams', 'team'],
  ['competitions', 'competition'], ['seasons', 'season'], ['stages', 'stage'], ['matches', 'match'],
];
const NOT_ATTRIBUTES = new Set(['reep_id', 'status', 'label', 'entity_type']);

export const partitionOf = (id: string, partitions: number): number => bucketOf(id, partitions);

export async function readTables(ctx: CompileContext): Promise<TablesRead> {
  const P = ctx.options.partitions;
  const spill = new GroupSpill({ dir: join(ctx.scratchDir, 'partitions'), groups: P });
  const rel = ctx.release;
  const out: TablesRead = {
    spill,
    resolve: new GroupSpill({ dir: join(ctx.scratchDir, 'resolve'), groups: RESOLVE_GROUPS }),
    live: new Map(),
    redirects: await readRedirects(rel, ctx),
    priorRedirects: ctx.prior ? await readRedirects(ctx.prior, null) : new Map(),
    providerRoles: new Map(),
    providers: new Set(),
    coverage: [],
  };
  const put = (id: string, rec: unknown[]) => spill.add(partitionOf(id, P), rec);

  // Entities first: every other table is checked against the live set.
  await table(ctx, rel, 'entities', ['reep_id', 'entity_type', 'status', 'label'], (f, c, row, label) => {
    const id = f[c.reep_id];
    checkId(id, label, row);
    const type = f[c.entity_type];
    if (!isEntityType(type)) throw new RegisterError('compile', `unknown entity_type ${JSON.stringify(type)}`, label, row);
    if (out.live.has(id)) throw new RegisterError('compile', `duplicate register ID ${id}`, label, row);
    if (out.redirects.has(id)) throw new RegisterError('compile', `register ID ${id} is live and also in redirects`, label, row);
    out.live.set(id, ENTITY_TYPES.indexOf(type));
    const attrs: Record<string, string> = {};
    if (c.gender !== undefined && f[c.gender]) attrs.gender = f[c.gender];
    if (c.country !== undefined && f[c.country]) attrs.country = f[c.country];
    put(id, ['E', id, ENTITY_TYPES.indexOf(type), f[c.status], f[c.label], attrs]);
  });
  for (const [id, r] of out.redirects) {
    if (r.to && !out.live.has(r.to)) {
      throw new RegisterError('compile', `redirect from ${id} leads to ${r.to}, which is not a live entity`, 'csv/redirects.csv.gz');
    }
    // Every retired ID gets its stub even when no other row names it.
    put(id, ['D', id]);
  }
  for (const id of out.priorRedirects.keys()) put(id, ['d', id]);

  const known = (id: string, label: string, row: number): boolean => {
    checkId(id, label, row);
    if (out.live.has(id)) return true;
    noteSlack(ctx, label, 'unknown register ID', `row ${row}: ${id}`);
    return false;
  };

  for (const [name, type] of TYPE_TABLES) {
    await table(ctx, rel, name, ['reep_id'], (f, c, row, label, header) => {
      const id = f[c.reep_id];
      if (!known(id, label, row)) return;
      const attrs: Record<string, string> = {};
      for (let i = 0; i < header.length; i++) if (!NOT_ATTRIBUTES.has(header[i]) && f[i] !== '') attrs[header[i]] = f[i];
      put(id, ['T', id, ENTITY_TYPES.indexOf(type), attrs]);
    });
  }
  await table(ctx, rel, 'aliases', ['reep_id', 'alias', 'kind', 'rank', 'language'], (f, c, row, label) => {
    const id = f[c.reep_id];
    if (known(id, label, row)) put(id, ['A', id, f[c.alias], f[c.kind], f[c.rank], f[c.language]]);
  });
  await table(ctx, rel, 'providers', ['provider', 'role'], (f, c, row, label) => {
    const role = f[c.role];
    if (role !== 'canonical_bridge' && role !== 'bridge_only' && role !== 'overlay_only') {
      throw new RegisterError('compile', `unknown provider role ${JSON.stringify(role)}`, label, row);
    }
    out.providerRoles.set(f[c.provider], role);
  });
  await table(ctx, rel, 'bridges', ['provider', 'namespace', 'external_id', 'reep_id', 'rung'], (f, c, row, label) => {
    const id = f[c.reep_id];
    checkId(id, label, row);
    const provider = f[c.provider];
    if (!provider) throw new RegisterError('compile', 'empty provider', label, row);
    if (f[c.external_id] === '') throw new RegisterError('compile', 'empty external_id', label, row);
    const final = out.live.has(id) ? id : out.redirects.get(id)?.to;
    if (final) {
      out.providers.add(provider);
      put(id, ['B', id, provider, f[c.namespace], f[c.external_id]]);
      // The resolve index needs no per-entity grouping, only the final entity's type: group it by key now.
      const key = resolveKey(provider, f[c.namespace], f[c.external_id]);
      out.resolve.add(bucketOf(key, RESOLVE_GROUPS), [key, id, out.live.get(final)!]);
    } else if (out.redirects.has(id)) {
      noteSlack(ctx, label, 'bridge to a tombstoned register ID', `row ${row}: ${id}`);
    } else {
      noteSlack(ctx, label, 'unknown register ID', `row ${row}: ${id}`);
    }
  });
  await table(ctx, rel, 'relationships', ['from_id', 'to_id', 'kind'], (f, c, row, label) => {
    const from = f[c.from_id];
    const to = f[c.to_id];
    checkId(from, label, row);
    checkId(to, label, row);
    if (!out.live.has(from) || !out.live.has(to)) {
      noteSlack(ctx, label, 'unknown register ID', `row ${row}: ${out.live.has(from) ? to : from}`);
      return;
    }
    put(from, ['R', from, f[c.kind], 'o']);
    put(to, ['R', to, f[c.kind], 'i']);
  });
  await table(ctx, rel, 'overlay_links', ['reep_id', 'qid', 'confidence', 'dob_check'], (f, c, row, label) => {
    const id = f[c.reep_id];
    if (!known(id, label, row)) return;
    put(id, ['L', id, f[c.qid], f[c.confidence], f[c.dob_check], c.inherited === undefined ? '' : f[c.inherited]]);
  });
  await table(ctx, rel, 'overlay_aliases', ['reep_id', 'name'], (f, c, row, label) => {
    const id = f[c.reep_id];
    if (!known(id, label, row)) return;
    const opt = (k: string) => (c[k] === undefined ? '' : f[c[k]]);
    put(id, ['OA', id, f[c.name], opt('language'), opt('confidence'), opt('qid')]);
  });
  await table(ctx, rel, 'overlay_xids', ['reep_id', 'provider', 'property', 'external_id'], (f, c, row, label) => {
    const id = f[c.reep_id];
    if (!known(id, label, row)) return;
    const opt = (k: string) => (c[k] === undefined ? '' : f[c[k]]);
    out.providers.add(f[c.provider]);
    put(id, ['X', id, f[c.provider], f[c.property], f[c.external_id], opt('confidence'), opt('qid')]);
  });
  await table(ctx, rel, 'observed_clubs', ['reep_id'], (f, c, row, label, header) => {
    const id = f[c.reep_id];
    if (!known(id, label, row)) return;
    const attrs: Record<string, string> = {};
    for (let i = 0; i < header.length; i++) if (!NOT_ATTRIBUTES.has(header[i]) && f[i] !== '') attrs[header[i]] = f[i];
    put(id, ['T', id, -1, attrs]);
  });
  await table(ctx, rel, 'coverage', ['section', 'key', 'value'], (f, c) => {
    out.coverage.push([f[c.section], f[c.key], f[c.value]]);
  });

  // The predecessor, for the changelog: only what the diff compares (state, label, bridges).
  if (ctx.prior) {
    await table(ctx, ctx.prior, 'entities', ['reep_id', 'entity_type', 'status', 'label'], (f, c) => {
      const id = f[c.reep_id];
      put(id, ['e', id, f[c.status], f[c.label]]);
    });
    await table(ctx, ctx.prior, 'bridges', ['provider', 'namespace', 'external_id', 'reep_id'], (f, c) => {
      const id = f[c.reep_id];
      put(id, ['b', id, f[c.provider], f[c.namespace], f[c.external_id]]);
    });
  }
  spill.seal();
  out.resolve.seal();
  return out;
}

function checkId(id: string, label: string, row: number): void {
  if (!REGISTER_ID.test(id)) throw new RegisterError('compile', `bad register ID ${JSON.stringify(id)}`, label, row);
}

type RowFn = (f: string[], c: Record<string, number>, row: number, label: string, header: string[]) => void;

async function table(ctx: CompileContext, rel: ReleaseInput, name: TableName, required: string[], fn: RowFn): Promise<void> {
  const t = rel.tables[name];
  if (!t) return;
  let c: Record<string, number> = {};
  let header: string[] = [];
  const stage = rel === ctx.release ? t.label : `${rel.stamp}/${t.label}`;
  ctx.progress.begin(`read ${stage}`);
  await readCsv(t.path, stage, {
    header: (h) => {
      header = h.map((x) => x.trim());
      c = columnIndex(header, required, stage);
    },
    row: (f, row) => {
      fn(f, c, row, stage, header);
      ctx.progress.tick(row);
    },
  });
  ctx.progress.end();
}

/** Reads redirects: merges (chains followed to the final survivor) and tombstones. A cycle is an error. */
async function readRedirects(rel: ReleaseInput, ctx: CompileContext | null): Promise<Map<string, RedirectInfo>> {
  const raw = new Map<string, { to: string; reason: string; row: number }>();
  const t = rel.tables.redirects;
  const label = ctx ? 'csv/redirects.csv.gz' : `${rel.stamp}/csv/redirects.csv.gz`;
  if (t) {
    let c: Record<string, number> = {};
    await readCsv(t.path, t.label, {
      header: (h) => (c = columnIndex(h, ['from_id', 'to_id', 'reason'], t.label)),
      row: (f, row) => {
        const from = f[c.from_id];
        const to = f[c.to_id];
        const reason = f[c.reason];
        if (ctx) {
          checkId(from, t.label, row);
          if (to !== '') checkId(to, t.label, row);
          if (reason === 'merged' && to === '') throw new RegisterError('compile', `merged redirect of ${from} has no to_id`, t.label, row);
          if (to === from) throw new RegisterError('compile', `redirect cycle: ${from} redirects to itself`, t.label, row);
          if (raw.has(from)) throw new RegisterError('compile', `register ID ${from} is redirected twice`, t.label, row);
        }
        raw.set(from, { to, reason, row });
      },
    });
  }
  const out = new Map<string, RedirectInfo>();
  for (const [from, r] of raw) {
    if (r.to === '') {
      out.set(from, { to: null, reason: r.reason });
      continue;
    }
    // Follow the chain; a repeat means a cycle, which would leave an ID resolving nowhere.
    const seen = new Set([from]);
    let to = r.to;
    let tomb = false;
    for (let next = raw.get(to); next; next = raw.get(to)) {
      if (seen.has(to)) throw new RegisterError('compile', `redirect cycle through ${[...seen].join(' → ')} → ${to}`, label, r.row);
      seen.add(to);
      if (next.to === '') {
        tomb = true;
        break;
      }
      to = next.to;
    }
    out.set(from, tomb ? { to: null, reason: r.reason } : { to, reason: r.reason });
  }
  return out;
}
