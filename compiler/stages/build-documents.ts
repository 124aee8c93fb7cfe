// Stage 6: the small metadata documents (/, /meta, /providers, /coverage, the redacted notice summary) as exact
// response bytes, and the private notice batches, kept under private/ where nothing public can reach them. Stage 2
// hands each entity's bridges and overlay IDs to a ProviderRollup (compiler/records/provider-rollup.ts), which
// /providers and /coverage report.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_NAME, API_SCHEMA, API_VERSION, NAMESPACES, type Namespace } from '../../common/ids.ts';
import type { ProviderInfo, ReleaseDoc, ReleaseSummary } from '../../common/dist-layout.ts';
import { forEachNoticeBatch } from '../read/notice-batches.ts';
import type { CompileContext } from '../context.ts';
import type { TablesRead } from '../records/tables-read.ts';
import { namespacesByType, type ProviderRollup } from '../records/provider-rollup.ts';

/** What the documents are made from: stage 1's providers and coverage, and stage 2's rollup. */
export interface DocumentsInput {
  tables: Pick<TablesRead, 'providers' | 'providerRoles' | 'coverage'>;
  rollup: ProviderRollup;
}

/** The documents' paths (relative to public/) for release.json, and the providers with their roles. */
export interface DocumentsBuilt {
  documents: ReleaseDoc['documents'];
  providers: ProviderInfo[];
}

const ENDPOINTS = {
  meta: '/meta', providers: '/providers', provider_notices_summary: '/provider-notices/summary', coverage: '/coverage',
  search: '/search', resolve: '/resolve/{provider}/{external_id}', batch: '/batch', entity: '/entities/{reep_id}',
  entity_bridges: '/entities/{reep_id}/bridges', entity_overlay: '/entities/{reep_id}/overlay',
  entity_relationships: '/entities/{reep_id}/relationships', notices: '/notices', notices_ack: '/notices/ack',
  changes_summary: '/changes/summary', changes: '/changes', changes_releases: '/changes/releases', key: '/key', openapi: '/openapi.json',
};

export function releaseSummary(ctx: CompileContext): ReleaseSummary {
  const m = ctx.release.manifest;
  return {
    schema_version: m.schema_version,
    generated_at: m.generated_at,
    stamp: m.stamp,
    tier: m.tier,
    publishable: m.publishable,
    // The index is a pure function of the release, so its time is the release's, never the compile's clock.
    index_generated_at: m.generated_at,
  };
}

export async function buildDocuments(ctx: CompileContext, input: DocumentsInput): Promise<DocumentsBuilt> {
  const read = input.tables;
  const rollup = input.rollup.byProvider;
  const dir = join(ctx.publicDir, 'documents');
  await mkdir(dir, { recursive: true });
  const write = async (name: string, value: unknown) => {
    await writeFile(join(dir, name), JSON.stringify(value));
    return `documents/${name}`;
  };
  const summary = releaseSummary(ctx);
  const counts = sortedObject(new Map(Object.entries(ctx.counts)));
  const root = {} as Record<Namespace, string>;
  const meta = {} as Record<Namespace, string>;
  for (const ns of NAMESPACES) {
    const endpoints: Record<string, string> = {};
    for (const [k, v] of Object.entries(ENDPOINTS)) endpoints[k] = `/api/${ns}${v}`;
    root[ns] = await write(`root-${ns}.json`, { name: API_NAME, version: API_VERSION, namespace: ns, release: summary, endpoints });
    meta[ns] = await write(`meta-${ns}.json`, {
      api_version: API_VERSION, namespace: ns, api_schema: API_SCHEMA, index_generated_at: summary.index_generated_at, release: summary, counts,
    });
  }

  const names = new Set([...read.providers, ...read.providerRoles.keys(), ...rollup.keys()]);
  const providers: ProviderInfo[] = [...names].sort().map((name) => {
    const r = rollup.get(name);
    const listed = read.providerRoles.get(name);
    // A provider that only relays overlay IDs and is not listed is overlay data, never a canonical bridge.
    const role = (listed ?? (r && r.bridges === 0 ? 'overlay_only' : 'canonical_bridge')) as ProviderInfo['role'];
    return r && r.namespaces.size ? { name, role, namespaces: namespacesByType(r) } : { name, role };
  });
  const rollups = providers.map(({ name, role }) => {
    const r = rollup.get(name);
    return { name, bridge_count: r?.bridges ?? 0, overlay_count: r?.overlay ?? 0, entity_types: sortedObject(r?.types ?? new Map()), role };
  });
  const roles = sortedObject(new Map(providers.map((p) => [p.name, p.role])));
  const providersDoc = await write('providers.json', { providers: rollups, provider_roles: roles, count: rollups.length });

  // Sections and keys come from the release's coverage table (or are provider names): maps, as for the notices.
  const sections = new Map<string, Map<string, string | number>>();
  const section = (name: string) => {
    let s = sections.get(name);
    if (!s) sections.set(name, (s = new Map()));
    return s;
  };
  if (read.coverage.length) {
    for (const [name, key, value] of read.coverage) section(name).set(key, /^-?\d{1,15}$/.test(value) ? Number(value) : value);
  } else {
    // No coverage.csv: report what the release itself holds.
    const entities = section('entities');
    for (const k of Object.keys(counts)) if (k.startsWith('entities_')) entities.set(k.slice(9), counts[k]);
    const bridges = section('bridges');
    for (const r of rollups) if (r.bridge_count) bridges.set(r.name, r.bridge_count);
  }
  // Coverage rows by section, then key; the computed sections in the order above.
  const ordered = read.coverage.length ? [...sections.keys()].sort() : [...sections.keys()];
  const coverage = await write('coverage.json', { stamp: ctx.release.stamp, sections: objectOf(ordered.map((name) => [name, sortedObject(sections.get(name)!)])) });

  const notices_summary = await buildNotices(ctx, write);
  return { documents: { root, meta, providers: providersDoc, coverage, notices_summary }, providers };
}

async function buildNotices(ctx: CompileContext, write: (name: string, value: unknown) => Promise<string>): Promise<string | null> {
  if (ctx.release.notices.length === 0) return null;
  const privateDir = join(ctx.privateDir, 'notices');
  await mkdir(privateDir, { recursive: true });
  // Keyed by data (provider names, kinds, severities): maps, so `constructor` or `__proto__` is a word like any other.
  const byProvider = new Map<string, number>();
  const bySeverity = new Map<string, number>();
  const byKind = new Map<string, number>();
  let findings = 0;
  // Checked again as they are read here: stage 1 checked them before any table, but a file is trusted only as read.
  const providers = await forEachNoticeBatch(ctx.release.notices, async (batch) => {
    await writeFile(join(privateDir, `${encodeURIComponent(batch.provider)}.json`), JSON.stringify(batch));
    byProvider.set(batch.provider, batch.findings.length);
    for (const f of batch.findings) {
      findings++;
      bySeverity.set(f.severity, (bySeverity.get(f.severity) ?? 0) + 1);
      byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + 1);
    }
  });
  // Counts only: titles, provider refs, sources and payloads never leave private/.
  return write('provider-notices-summary.json', {
    summary: {
      providers,
      findings,
      by_provider: sortedObject(byProvider),
      by_severity: sortedObject(bySeverity),
      by_kind: sortedObject(byKind),
    },
    redaction: { titles: true, provider_refs: true, sources: true, payloads: true, observed_values: true },
  });
}

/**
 * A map as a JSON object in sorted key order. The object has no prototype, so a key such as `__proto__` is an own
 * property that JSON.stringify writes out like any other.
 */
function sortedObject<V>(m: ReadonlyMap<string, V>): Record<string, V> {
  return objectOf([...m.keys()].sort().map((k) => [k, m.get(k)!]));
}

/** Entries as a JSON object without a prototype (see sortedObject), in their order. */
function objectOf<V>(entries: Iterable<[string, V]>): Record<string, V> {
  const out: Record<string, V> = Object.create(null);
  for (const [k, v] of entries) out[k] = v;
  return out;
}
