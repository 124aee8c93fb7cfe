// /reconcile: the register as a reconciliation service (the W3C Entity Reconciliation Community Group's Service API,
// version 0.2, which OpenRefine speaks). One endpoint: GET without `queries` is the service manifest (no key, no
// cost); GET with `queries`, or POST (the form field `queries`, or the batch as a JSON body), answers a batch of
// queries, one lookup per query that can be asked. Candidates come from the release's compiled name keys
// (release/name-match.ts) and from provider IDs given as properties, resolved exactly as /resolve does.
import { ENTITY_TYPES, isEntityType, REGISTER_ID, type EntityType } from '../../common/ids.ts';
import { MAX_RECONCILE_QUERIES } from '../../common/request-limits.ts';
import { ApiError } from '../api-error.ts';
import { costingErrors, COST_HEADERS, errorResponse, headers, ok } from '../contract/http-parts.ts';
import { ExternalId, type Parameter } from '../contract/parameters.ts';
import { bodyChecker, valueChecker } from '../contract/request-check.ts';
import { ReconcileForm, ReconcileManifest, ReconcileQuery, ReconcileQueryBatch, ReconcileResults, ref } from '../contract/schemas.ts';
import { isClearMatch, matchNames, nameScorer, CLEAR_LEAD, MATCH_SCORE, type NameCandidate, type NameFeatures } from '../release/name-match.ts';
import type { LiveEntity, Release } from '../release/open-release.ts';
import { readBodyBytes } from '../read-body.ts';
import { defineRoute, type AppRequest, type Reply, type RequestContext, type RouteDef } from '../route.ts';
import { Type } from '@sinclair/typebox';

/** Candidates a query gets when it names no `limit`, and the most it may get. */
const DEFAULT_CANDIDATES = 5;
const MAX_CANDIDATES = 25;
/** Provider-ID values one query may give (each one resolve). */
const MAX_ID_VALUES = 10;
/** The property that gives a country rather than a provider ID. */
const COUNTRY = 'country';

const TYPE_NAMES: Record<EntityType, string> = {
  coach: 'Coach', competition: 'Competition', match: 'Match', player: 'Player', referee: 'Referee', season: 'Season', stage: 'Stage', team: 'Team',
};
const FEATURE_ORDER: readonly (keyof NameFeatures)[] = ['exact', 'normalised', 'alias', 'token_overlap', 'initials', 'type', 'country'];

const checkQuery = bodyChecker(ReconcileQuery);
const checkExternalId = valueChecker(ExternalId);

// The parameters, read by this route itself (the batch is JSON, judged per query), stated for the document.
const QUERIES: Parameter<'queries', string | null> = {
  name: 'queries',
  in: 'query',
  required: false,
  description: 'A reconciliation query batch as JSON (0.2, "Sending Reconciliation Queries"). Absent: the manifest.',
  schema: Type.String({ 'x-error': 'invalid_body' }),
};
const KEY: Parameter<'key', string | null> = {
  name: 'key',
  in: 'query',
  required: false,
  description:
    'The API key, for a client that cannot send `Authorization` (OpenRefine), on /reconcile only; a header, when ' +
    'sent, is used instead. It is logged nowhere: the access log names the path without its query.',
  schema: Type.String(),
};

/** What one query asks, checked. */
interface Question {
  name: string | null;
  type: EntityType | null;
  country: string | null;
  limit: number;
  ids: { provider: string; namespace: string; externalId: string }[];
}
type Planned = { qid: string; question: Question } | { qid: string; error: ApiError };

/**
 * A query as the service reads it, or its 400 in place. A property is a provider (`transfermarkt`: its IDs with
 * no namespace), a provider and namespace (`transfermarkt:verein`), or `country`; a value is a string, a number,
 * or a reconciled value's `id`.
 */
function question(release: Release, raw: unknown): Question {
  const q = checkQuery(raw);
  const name = q.query?.trim() ? q.query.trim() : null;
  const types = q.type === undefined ? [] : [...new Set(Array.isArray(q.type) ? q.type : [q.type])];
  for (const t of types) if (!isEntityType(t)) throw new ApiError(400, 'unknown_entity_type', 'type: not an entity type of the register.', { detail: t.slice(0, 64) });
  const ids: Question['ids'] = [];
  let country: string | null = null;
  for (const p of q.properties ?? []) {
    const values = (Array.isArray(p.v) ? p.v : [p.v]).map((v) => (typeof v === 'object' ? v.id : typeof v === 'boolean' ? null : String(v).trim()));
    if (values.some((v) => v === null)) throw new ApiError(400, 'invalid_query', `properties: ${p.pid} takes text, numbers or reconciled values.`);
    if (p.pid === COUNTRY) {
      country ??= values.find((v) => v !== '') ?? null;
      continue;
    }
    const at = p.pid.indexOf(':');
    const provider = at < 0 ? p.pid : p.pid.slice(0, at);
    if (!release.providers.has(provider)) throw new ApiError(400, 'unknown_provider', 'properties: a pid is a provider key, `<provider>:<namespace>` or `country`.', { detail: p.pid.slice(0, 64) });
    for (const v of values) ids.push({ provider, namespace: at < 0 ? '' : p.pid.slice(at + 1), externalId: checkExternalId(v!) });
  }
  if (ids.length > MAX_ID_VALUES) throw new ApiError(400, 'invalid_query', `properties: at most ${MAX_ID_VALUES} provider IDs a query.`, { detail: `limit ${MAX_ID_VALUES}` });
  if (name === null && ids.length === 0) throw new ApiError(400, 'invalid_query', 'A query needs a non-empty `query` or a provider ID property.');
  return { name, type: types.length === 1 ? (types[0] as EntityType) : null, country, limit: Math.min(q.limit ?? DEFAULT_CANDIDATES, MAX_CANDIDATES), ids };
}

/** The queries of a batch in its order, each checked, or the whole request refused (400, 413; nothing charged). */
function plan(release: Release, text: string | null): Planned[] {
  if (text === null) throw new ApiError(400, 'invalid_body', 'Send the query batch as `queries` (a form field or query parameter) or as a JSON body.');
  let batch: unknown;
  try {
    batch = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_body', '`queries` is not valid JSON.');
  }
  if (batch === null || typeof batch !== 'object' || Array.isArray(batch)) throw new ApiError(400, 'invalid_body', 'A query batch is an object of queries by ID.');
  const entries = Object.entries(batch as Record<string, unknown>);
  if (entries.length === 0) throw new ApiError(400, 'empty_batch', 'The query batch holds no query.');
  if (entries.length > MAX_RECONCILE_QUERIES) {
    throw new ApiError(413, 'payload_too_large', `At most ${MAX_RECONCILE_QUERIES} queries a request (the manifest's batchSize).`, { detail: `limit ${MAX_RECONCILE_QUERIES}` });
  }
  return entries.map(([qid, raw]): Planned => {
    try {
      return { qid, question: question(release, raw) };
    } catch (e) {
      if (e instanceof ApiError) return { qid, error: e };
      throw e;
    }
  });
}

/** A candidate as 0.2 writes it, keys in the document's order. */
function candidate(c: NameCandidate, score: number, match: boolean, hit: 'provider_id' | 'register_id' | null): string {
  const features: { id: string; value: number }[] = FEATURE_ORDER.map((k) => ({ id: k, value: c.features[k] }));
  if (hit) features.push({ id: hit, value: 1 });
  return JSON.stringify({ id: c.reep_id, name: c.label, type: [{ id: c.entity_type, name: TYPE_NAMES[c.entity_type] }], score, match, features });
}

/** The live entities (survivors of merged IDs) a query's register ID or provider IDs name, of its type if it has one. */
async function hitsOf(release: Release, q: Question): Promise<{ entities: LiveEntity[]; kind: 'provider_id' | 'register_id' | null }> {
  const entities: LiveEntity[] = [];
  const add = async (id: string): Promise<void> => {
    const e = await release.entity(id);
    if (e?.kind === 'live' && (q.type === null || e.entityType === q.type) && !entities.some((h) => h.id === e.id)) entities.push(e);
  };
  if (q.ids.length) {
    for (const { provider, namespace, externalId } of q.ids) for (const [id] of (await release.resolve(provider, namespace, externalId)) ?? []) await add(id);
    return { entities, kind: 'provider_id' };
  }
  if (q.name !== null && REGISTER_ID.test(q.name)) {
    await add(q.name);
    return { entities, kind: 'register_id' };
  }
  return { entities, kind: null };
}

/**
 * One query's candidates, best first. Entities its provider IDs (or, as its `query`, its register ID) name come
 * first with score 1, and one such entity alone is the match; otherwise the names' candidates follow, and the first
 * is a match only when it is clear (isClearMatch: MATCH_SCORE and a lead of CLEAR_LEAD).
 */
async function answerQuery(release: Release, q: Question): Promise<string> {
  const nameQuery = { name: q.name ?? '', type: q.type, country: q.country };
  const hits = await hitsOf(release, q);
  const out: string[] = [];
  const scoreOf = nameScorer(nameQuery);
  for (const e of hits.entities) out.push(candidate(scoreOf(e), 1, hits.entities.length === 1, hits.kind));
  if (q.name !== null && hits.kind !== 'register_id' && out.length < q.limit) {
    const named = (await matchNames(release, { ...nameQuery, name: q.name, limit: q.limit })).filter((c) => !hits.entities.some((h) => h.id === c.reep_id));
    const clear = hits.entities.length === 0 && isClearMatch(named);
    for (let i = 0; i < named.length && out.length < q.limit; i++) out.push(candidate(named[i], named[i].score, clear && i === 0, null));
  }
  return `{"result":[${out.join(',')}]}`;
}

async function answerBatch(release: Release, planned: Planned[]): Promise<Reply> {
  const parts: string[] = [];
  for (const p of planned) {
    const body = 'error' in p ? `{"result":[],"error":${p.error.bodyText()}}` : await answerQuery(release, p.question);
    parts.push(`${JSON.stringify(p.qid)}:${body}`);
  }
  return { status: 200, body: `{${parts.join(',')}}` };
}

/** The manifest, its URLs made from the URL it was asked at (the explorer's entity page, this namespace's paths). */
function manifest(c: RequestContext): string {
  const origin = new URL(c.request.url).origin;
  const api = `${origin}/api/${c.ns}`;
  return JSON.stringify({
    versions: ['0.2'],
    name: `Identity Register (${c.ns}, release ${c.release.stamp})`,
    identifierSpace: `${api}/entities/`,
    schemaSpace: `${api}/openapi.json#/components/schemas/Entity`,
    defaultTypes: ENTITY_TYPES.map((t) => ({ id: t, name: TYPE_NAMES[t] })),
    view: { url: `${origin}/#/entity/{{id}}` },
    batchSize: MAX_RECONCILE_QUERIES,
    authentication: { type: 'apiKey', name: 'key', in: 'query', description: 'Your register API key (or send Authorization: Bearer <key>).' },
    documentation: `${origin}/docs#/lookup/reconcile`,
  });
}

const decoder = new TextDecoder();

/** The query batch of a POST: the `queries` field of a form, or the JSON body itself. */
async function postedBatch(request: AppRequest, maxBytes: number): Promise<string | null> {
  const type = request.headers.get('content-type') ?? '';
  const form = /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type);
  if (!form && !/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError(400, 'invalid_body', 'Send the form field `queries` (application/x-www-form-urlencoded) or the batch as application/json.');
  }
  const text = decoder.decode(await readBodyBytes(request, maxBytes));
  return form ? new URLSearchParams(text).get('queries') : text;
}

/** The 200 headers of GET, whose manifest is answered without a key: the cost headers come with queries only. */
const optional = (name: string) => ({ ...(headers[name] as object), required: false });
const GET_HEADERS = { ...COST_HEADERS, 'X-Register-Credits-Remaining': optional('CreditsRemaining'), 'RateLimit-Policy': optional('RateLimitPolicy'), RateLimit: optional('RateLimit') };

const BATCH_CODES = ['invalid_body', 'empty_batch'] as const;
const DESCRIPTION =
  'The Reconciliation Service API 0.2 (W3C Entity Reconciliation Community Group), which OpenRefine speaks: ' +
  'add `<base>/api/v1/reconcile?key=<your key>` as a standard service (docs/reconcile.md). One lookup per query ' +
  'that can be asked; a query that cannot (an unknown type or provider, no name and no provider ID) answers ' +
  '`{"result":[],"error":…}` in place and costs nothing, and a batch refused whole (not JSON, no query, more than ' +
  `${MAX_RECONCILE_QUERIES} queries: 413) costs nothing. Candidates: the entities a provider-ID property names ` +
  '(`pid` a provider key for IDs without a namespace, or `<provider>:<namespace>` such as `transfermarkt:verein`; ' +
  'resolved exactly, merged IDs followed to their survivor), score 1, then candidates by name from the ' +
  "release's compiled name keys, scored 0..1 from the features listed. `match` is true for the one entity the " +
  'provider IDs name, when they name exactly one; or else for the best name candidate only when its score is at ' +
  `least ${MATCH_SCORE} and it leads the next candidate by at least ${CLEAR_LEAD}: two plausible candidates never ` +
  'match. A register ID as `query` answers that entity (score 1, a match). `country` (a property) weighs in the ' +
  'score. Players are not linked to teams in the release, so there is no `team` property. ' +
  `\`limit\` defaults to ${DEFAULT_CANDIDATES}, at most ${MAX_CANDIDATES}. JSONP is not offered (CORS is).`;

export function reconcileRoutes(maxBodyBytes: number): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/reconcile',
      auth: true,
      queryKey: true,
      keyless: (query) => !query.has('queries'),
      operation: {
        operationId: 'reconcile',
        tag: 'lookup',
        summary: 'Reconciliation service: the manifest, or a batch of queries',
        description: `Without \`queries\`: the service manifest, no key and no cost. With it: ${DESCRIPTION}`,
        cost: 'per_item',
        parameters: [QUERIES, KEY],
        responses: {
          '200': ok('The manifest, or one result per query under its ID.', { oneOf: [ref(ReconcileManifest), ref(ReconcileResults)] }, GET_HEADERS),
          ...costingErrors(BATCH_CODES),
          '413': errorResponse(`More than ${MAX_RECONCILE_QUERIES} queries (the manifest's batchSize; 0.2 names 413 for it). Not charged.`, ['payload_too_large']),
        },
      },
      prepare(c) {
        const text = c.query.get('queries');
        if (text === null) {
          const body = manifest(c);
          return { cost: 0, run: () => ({ status: 200, body }) };
        }
        const planned = plan(c.release, text);
        return { cost: planned.filter((p) => !('error' in p)).length, run: () => answerBatch(c.release, planned) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/reconcile',
      auth: true,
      queryKey: true,
      operation: {
        operationId: 'reconcilePost',
        tag: 'lookup',
        summary: 'Reconciliation service: a batch of queries (the form OpenRefine posts, or JSON)',
        description: `The form field \`queries\` (application/x-www-form-urlencoded), or the batch itself as application/json. ${DESCRIPTION}`,
        cost: 'per_item',
        parameters: [KEY],
        requestMedia: { 'application/x-www-form-urlencoded': ReconcileForm, 'application/json': ReconcileQueryBatch },
        responses: {
          '200': ok('One result per query, under its ID.', ref(ReconcileResults), COST_HEADERS),
          ...costingErrors(BATCH_CODES),
          '413': errorResponse(`More than ${MAX_RECONCILE_QUERIES} queries (the manifest's batchSize; 0.2 names 413 for it), or a body over the size cap. Not charged.`, ['payload_too_large']),
        },
      },
      async prepare(c) {
        const planned = plan(c.release, await postedBatch(c.request, maxBodyBytes));
        return { cost: planned.filter((p) => !('error' in p)).length, run: () => answerBatch(c.release, planned) };
      },
    }),
  ];
}
