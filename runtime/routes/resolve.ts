// GET /resolve/{provider}/{external_id}: provider ID → entities; the answer is made in runtime/resolve-answer.ts,
// which batch items share.
import { costingErrors, COST_HEADERS, jsonContent, ok, responseRef, TAGGED_COST_HEADERS } from '../contract/http-parts.ts';
import { EntityTypeFilter, ExternalId, IncludeParam, Lang, Namespace, Provider } from '../contract/parameters.ts';
import { parameterReader } from '../contract/request-check.ts';
import { AmbiguousResolveError, ref, ResolveResult } from '../contract/schemas.ts';
import { checkProvider, resolveItem, type ResolveArgs } from '../resolve-answer.ts';
import { defineRoute, type RouteDef } from '../route.ts';

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
        ...costingErrors([...readParameters.codes, 'unknown_provider']),
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
      checkProvider(c.release, args.provider);
      return {
        run: () => resolveItem(c.release, args),
      };
    },
  }),
];
