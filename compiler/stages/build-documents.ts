// Stage 6: the small metadata documents (/, /meta, /providers, /coverage, the redacted notice summary) as exact
// response bytes, and the private notice batches, kept under private/ where nothing public can reach them.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { API_NAME, API_SCHEMA, API_VERSION, NAMESPACES, type Namespace } from '../../common/ids.ts';
import type { NoticeBatch, NoticeFindingRecord, ProviderInfo, ReleaseDoc, ReleaseSummary } from '../../common/dist-layout.ts';
import type { CompileContext } from '../context.ts';
import type { EntitiesBuilt } from './build-entities.ts';
import type { TablesRead } from './read-tables.ts';

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

export async function buildDocuments(ctx: CompileContext, read: TablesRead, built: EntitiesBuilt): Promise<{ documents: ReleaseDoc['documents']; providers: ProviderInfo[] }> {
  const dir = join(ctx.publicDir, 'documents');
  await mkdir(dir, { recursive: true });
  const write = async (name: string, value: unknown) => {
    await writeFile(join(dir, name), JSON.stringify(value));
    return `documents/${name}`;
  };
  const summary = releaseSummary(ctx);
  const counts = sortedObject(ctx.counts);
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

  const names = new Set([...read.providers, ...read.providerRoles.keys(), ...built.rollup.keys()]);
  const providers: ProviderInfo[] = [...names].sort().map((name) => {
    const r = built.rollup.get(name);
    const listed = read.providerRoles.get(name);
    // A provider that only relays overlay IDs and is not listed is overlay data, never a canonical bridge.
    const role = (listed ?? (r && r.bridges === 0 ? 'overlay_only' : 'canonical_bridge')) as ProviderInfo['role'];
    return { name, role };
  });
  const rollups = providers.map(({ name, role }) => {
    const r = built.rollup.get(name);
    const types: Record<string, number> = {};
    if (r) for (const t of [...r.types.keys()].sort()) types[t] = r.types.get(t)!;
    return { name, bridge_count: r?.bridges ?? 0, overlay_count: r?.overlay ?? 0, entity_types: types, role };
  });
  const roles: Record<string, string> = {};
  for (const p of providers) roles[p.name] = p.role;
  const providersDoc = await write('providers.json', { providers: rollups, provider_roles: roles, count: rollups.length });

  const sections: Record<string, Record<string, string | number>> = {};
  if (read.coverage.length) {
    for (const [section, key, value] of read.coverage.slice().sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]))) {
      (sections[section] ??= {})[key] = /^-?\d{1,15}$/.test(value) ? Number(value) : value;
    }
  } else {
    // No coverage.csv: report what the release itself holds.
    sections.entities = {};
    for (const k of Object.keys(counts)) if (k.startsWith('entities_')) sections.entities[k.slice(9)] = counts[k];
    sections.bridges = {};
    for (const r of rollups) if (r.bridge_count) sections.bridges[r.name] = r.bridge_count;
  }
  const coverage = await write('coverage.json', { stamp: ctx.release.stamp, sections });

  const notices_summary = await buildNotices(ctx, write);
  return { documents: { root, meta, providers: providersDoc, coverage, notices_summary }, providers };
}

async function buildNotices(ctx: CompileContext, write: (name: string, value: unknown) => Promise<string>): Promise<string | null> {
  if (ctx.release.notices.length === 0) return null;
  const privateDir = join(ctx.privateDir, 'notices');
  await mkdir(privateDir, { recursive: true });
  const byProvider: Record<string, number> = {};
  const bySeverity: Record<string, number> = {};
  const byKind: Record<string, number> = {};
  let findings = 0;
  const batches = [];
  for (const file of ctx.release.notices.slice().sort((a, b) => cmp(a.label, b.label))) {
    const batch = parseBatch(JSON.parse(await readFile(file.path, 'utf8')), file.label);
    batches.push(batch);
    await writeFile(join(privateDir, `${encodeURIComponent(batch.provider)}.json`), JSON.stringify(batch));
    byProvider[batch.provider] = batch.findings.length;
    for (const f of batch.findings) {
      findings++;
      bySeverity[f.severity] = (bySeverity[f.severity] ?? 0) + 1;
      byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
    }
  }
  // Counts only: titles, provider refs, sources and payloads never leave private/.
  return write('provider-notices-summary.json', {
    summary: {
      providers: batches.length,
      findings,
      by_provider: sortedObject(byProvider),
      by_severity: sortedObject(bySeverity),
      by_kind: sortedObject(byKind),
    },
    redaction: { titles: true, provider_refs: true, sources: true, payloads: true, observed_values: true },
  });
}

function parseBatch(raw: unknown, label: string): NoticeBatch {
  const fail = (msg: string): never => {
    throw new RegisterError('compile', msg, label);
  };
  if (!raw || typeof raw !== 'object') fail('notice batch must be a JSON object');
  const b = raw as Record<string, unknown>;
  if (typeof b.provider !== 'string' || !b.provider) fail('provider must be a non-empty string');
  if (!Number.isInteger(b.batch_id)) fail('batch_id must be an integer');
  if (!Array.isArray(b.findings)) fail('findings must be an array');
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const seen = new Set<string>();
  const findings: NoticeFindingRecord[] = (b.findings as Record<string, unknown>[]).map((f, i) => {
    if (!f || typeof f.finding_id !== 'string' || !f.finding_id) fail(`finding ${i} has no finding_id`);
    if (seen.has(f.finding_id as string)) fail(`finding_id ${f.finding_id} appears twice`);
    seen.add(f.finding_id as string);
    if (f.provider !== undefined && f.provider !== b.provider) fail(`finding ${f.finding_id} belongs to provider ${String(f.provider)}, not ${b.provider}`);
    return {
      finding_id: f.finding_id as string,
      provider: b.provider as string,
      kind: str(f.kind) ?? 'unspecified',
      title: str(f.title) ?? '',
      provider_ref: str(f.provider_ref),
      source: obj(f.source),
      observed: str(f.observed),
      expected: str(f.expected),
      severity: str(f.severity) ?? 'medium',
      suggested_action: str(f.suggested_action),
      payload: obj(f.payload),
      payload_hash: str(f.payload_hash) ?? '',
      first_seen_at: str(f.first_seen_at),
      last_seen_at: str(f.last_seen_at),
    };
  });
  findings.sort((x, y) => cmp(x.finding_id, y.finding_id));
  return { provider: b.provider as string, batch_id: b.batch_id as number, generated_at: str(b.generated_at), findings };
}

function sortedObject<V>(o: Record<string, V>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
