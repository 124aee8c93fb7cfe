// GET /entities/{reep_id} and its /bridges, /overlay and /relationships views: the answers are made in
// runtime/entity-answer.ts, which batch items share.
import { costingErrors, ok, responseRef, TAGGED_COST_HEADERS, type RouteOperation } from '../contract/http-parts.ts';
import { IncludeParam, Lang, ReepId, RelationshipFamily, RelationshipLimit, type Parameter, type ParameterValues } from '../contract/parameters.ts';
import type { ErrorCode } from '../contract/error-codes.ts';
import { parameterReader } from '../contract/request-check.ts';
import { EntityBridgesResponse, Entity, EntityOverlayResponse, EntityRelationshipsResponse, ref, type Schema } from '../contract/schemas.ts';
import { bridgesBody, entityAnswer, entityQuestion, overlayBody, relationshipsBody, withLive } from '../entity-answer.ts';
import type { LiveEntity } from '../release/open-release.ts';
import { defineRoute, type RouteDef } from '../route.ts';

/** The statuses of every entity lookup: those of a costing endpoint, then 404 and 410. */
const entityResponses = (what: string, body: Schema, badRequestCodes: readonly ErrorCode[]): RouteOperation['responses'] => ({
  '200': ok(what, ref(body), TAGGED_COST_HEADERS),
  '304': responseRef('LookupNotModified'),
  ...costingErrors(badRequestCodes),
  '404': responseRef('EntityNotFound'),
  '410': responseRef('EntityGone'),
});

const SAME_AS_ENTITY = 'Redirects, tombstones and unknown IDs behave as on `/entities/{reep_id}`.';

/** A sub-resource of an entity: its own query parameters, one lookup, one body (`answer`: what and its schema). */
function view<const P extends readonly Parameter[]>(
  name: string,
  operation: { operationId: string; summary: string; about?: string },
  answer: [string, Schema],
  parameters: P,
  parse: (p: ParameterValues<P>) => (e: LiveEntity) => Uint8Array,
): RouteDef {
  const readParameters = parameterReader(parameters);
  return defineRoute({
    method: 'GET',
    path: `/entities/{reep_id}/${name}`,
    auth: true,
    perStamp: true,
    operation: {
      operationId: operation.operationId,
      tag: 'lookup',
      summary: operation.summary,
      description: `One lookup. ${operation.about ?? ''}${SAME_AS_ENTITY}`,
      cost: 1,
      parameters,
      responses: entityResponses(answer[0], answer[1], readParameters.codes),
    },
    prepare(c) {
      const p = readParameters(c);
      const id = (p as { reep_id: string }).reep_id;
      const body = parse(p);
      return {
        run: () => withLive(c.release, id, (e) => ({ status: 200, body: body(e) })),
      };
    },
  });
}

const ENTITY_PARAMETERS = [ReepId, IncludeParam, Lang] as const;
const readEntityParameters = parameterReader(ENTITY_PARAMETERS);

export const entityRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/entities/{reep_id}',
    auth: true,
    perStamp: true,
    operation: {
      operationId: 'getEntity',
      tag: 'lookup',
      summary: 'An entity by register ID',
      description:
        'One lookup. A merged ID answers 200 with the final survivor plus `requested_id` and `redirected_to`; a ' +
        'tombstoned ID answers 410 `gone`; an unpublished ID 404 `not_found` (both charged).',
      cost: 1,
      parameters: ENTITY_PARAMETERS,
      responses: entityResponses('The entity.', Entity, readEntityParameters.codes),
    },
    prepare(c) {
      const { reep_id: id, include, lang } = readEntityParameters(c);
      const q = entityQuestion(c.release, id, include, lang);
      return {
        run: () => entityAnswer(c.release, q),
      };
    },
  }),
  view('bridges', { operationId: 'getEntityBridges', summary: 'Provider bridges of an entity' }, ['The bridges.', EntityBridgesResponse], [ReepId], () => (e) =>
    bridgesBody(e),
  ),
  view('overlay', { operationId: 'getEntityOverlay', summary: 'Knowledge-base overlay of an entity' }, ['The overlay.', EntityOverlayResponse], [ReepId], () => (e) =>
    overlayBody(e),
  ),
  view(
    'relationships',
    {
      operationId: 'getEntityRelationships',
      summary: 'Grouped relationship summary of an entity',
      about:
        'Only structural relationships are summarised (competition, season, stage, match, and which teams ' +
        'participate in which competition-seasons). ',
    },
    ['The relationship summary.', EntityRelationshipsResponse],
    [ReepId, RelationshipFamily, RelationshipLimit],
    (p) => (e) => relationshipsBody(e, p.family, p.limit),
  ),
];
