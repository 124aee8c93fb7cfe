// GET /resolve/{provider}/{external_id}: provider ID → entities. `resolveItem` is shared with batch.
import { ENTITY_TYPES, type EntityType, type Include } from '../../common/ids.ts';
import { ApiError } from '../api-error.ts';
import { concat, concatToSend } from '../../common/bytes.ts';
import { entityParts } from '../compose-entity.ts';
import { costingErrors, COST_HEADERS, jsonContent, ok, responseRef, TAGGED_COST_HEADERS } from '../contract/http-parts.ts';
import { EntityTypeFilter, ExternalId, IncludeParam, Lang, Namespace, Provider } from '../contract/parameters.ts';
import { parameterReader, valueChecker } from '../contract/request-check.ts';
import { AmbiguousResolveError, ref, ResolveResult } from '../contract/schemas.ts';
import type { Release } from '../release/open-release.ts';
import { defineRoute, type Reply, type RouteDef } from '../route.ts';

const enc = new TextEncoder();
const RESULTS_OPEN = enc.encode('{"results":[');
const COMMA = enc.encode(',');

export interface ResolveArgs {
  provider: string;
  externalId: string;
  namespace: string;
  type: EntityType | null;
  include: ReadonlySet<Include>;
  lang: string | null;
}

/** A batch item's external ID checked as the path's. */
const checkExternalId = valueChecker(ExternalId);

/** Validation shared by the route and batch items (400s, no cost): what a schema cannot know, the release's providers. */
export function checkResolveArgs(release: Release, provider: string, externalId: string): void {
  if (!release.providers.has(provider)) {
    throw new ApiError(400, 'unknown_provider', 'Unknown provider key.', { detail: provider.slice(0, 64) });
  }
  checkExternalId(externalId);
}

/** One resolve as /resolve answers it: 200 with results (maybe none), or 409 with every candidate. */
export async function resolveItem(release: Release, a: ResolveArgs): Promise<Reply> {
  const hits = (await release.resolve(a.provider, a.namespace, a.externalId)) ?? [];
  const parts: Uint8Array[] = [RESULTS_OPEN];
  let count = 0;
  for (const [id, typeIndex] of hits) {
    if (a.type !== null && ENTITY_TYPES[typeIndex] !== a.type) continue;
    const e = await release.entity(id);
    if (!e || e.kind !== 'live') continue; // the compiler only indexes live or merged IDs
    if (count++) parts.push(COMMA);
    entityParts(e, a.include, a.lang, parts);
  }
  if (count > 1) {
    const results = new TextDecoder().decode(concat(parts.slice(1)));
    const err = new ApiError(409, 'ambiguous_provider_id', 'This provider ID maps to more than one entity; every candidate is listed.', {
      detail: `${a.provider}/${a.namespace}/${a.externalId}`.slice(0, 600),
      extra: `"results":[${results}],"count":${count}`,
    });
    throw err;
  }
  parts.push(enc.encode(`],"count":${count}}`));
  return { status: 200, body: concatToSend(parts) };
}

const PARAMETERS = [Provider, ExternalId, Namespace, EntityTypeFilter, IncludeParam, Lang] as const;
const readParameters = parameterReader(PARAMETERS);

export const resolveRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/resolve/{provider}/{external_id}',
    auth: true,
    perStamp: true,
    operation: {
      operationId: 'resolve',
      tag: 'lookup',
      summary: "Resolve a provider's own ID to register entities",
      description:
        'One lookup. Empty results mean no mapping exists. Redirected IDs resolve to their survivor with ' +
        '`requested_id` and `redirected_to`. More than one entity: 409 with every candidate (charged).',
      cost: 1,
      parameters: PARAMETERS,
      responses: {
        '200': ok('The entities the provider ID maps to.', ref(ResolveResult), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...costingErrors(['invalid_id', 'unknown_provider', 'unknown_include', 'unknown_entity_type', 'invalid_parameter']),
        '409': {
          description: 'The provider ID maps to more than one entity. Charged as one lookup.',
          headers: COST_HEADERS,
          content: jsonContent(ref(AmbiguousResolveError)),
        },
      },
    },
    prepare(c) {
      const p = readParameters(c);
      const args: ResolveArgs = { provider: p.provider, externalId: p.external_id, namespace: p.namespace, type: p.type, include: p.include, lang: p.lang };
      checkResolveArgs(c.release, args.provider, args.externalId);
      return {
        cost: 1,
        run() {
          return resolveItem(c.release, args);
        },
      };
    },
  }),
];
