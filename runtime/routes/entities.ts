// GET /entities/{reep_id} and its /bridges, /overlay and /relationships views; batch items run `liveEntity` and `entityParts` too.
import type { Include } from '../../common/ids.ts';
import { ApiError } from '../api-error.ts';
import { bridgesBody, entityBodyKey, entityParts, overlayBody, relationshipsBody } from '../compose-entity.ts';
import { concatToSend } from '../../common/bytes.ts';
import { costingErrors, ok, responseRef, TAGGED_COST_HEADERS, type RouteOperation } from '../contract/http-parts.ts';
import { IncludeParam, Lang, ReepId, RelationshipFamily, RelationshipLimit, type Parameter, type ParameterValues } from '../contract/parameters.ts';
import { parameterReader } from '../contract/request-check.ts';
import { EntityBridgesResponse, Entity, EntityOverlayResponse, EntityRelationshipsResponse, ref, type Schema } from '../contract/schemas.ts';
import type { EntityLookup, Release, LiveEntity } from '../release/open-release.ts';
import { NOT_AT_HAND } from '../interfaces.ts';
import { defineRoute, type RouteDef, type Reply } from '../route.ts';

/** Looks up an ID for an entity endpoint: 404 when never published, 410 (stub body) when retired. */
export async function liveEntity(release: Release, id: string): Promise<LiveEntity> {
  return live(await release.entity(id), id);
}

/** liveEntity() without waiting (see Release.entityNow): the entity, or NOT_AT_HAND; throws the same 404 and 410. */
export function liveEntityNow(release: Release, id: string): LiveEntity | typeof NOT_AT_HAND {
  const found = release.entityNow(id);
  return found === NOT_AT_HAND ? found : live(found, id);
}

function live(found: EntityLookup, id: string): LiveEntity {
  if (!found) throw new ApiError(404, 'not_found', 'No entity has this register ID.', { detail: id });
  if (found.kind === 'gone') throw new GoneError(found.body);
  return found;
}

/** A 410 whose body is the compiler's tombstone stub, passed through byte for byte. */
export class GoneError extends ApiError {
  constructor(readonly stub: Uint8Array) {
    super(410, 'gone', 'retired');
  }
}

/**
 * `answer` applied to the live entity `id`: at once when its index entry and shard are at hand (no async frames,
 * which were three promise hops a lookup), else once they are read. Throws or rejects the same 404/410.
 */
function withLive<T>(release: Release, id: string, answer: (e: LiveEntity) => T): T | Promise<T> {
  const now = liveEntityNow(release, id);
  return now !== NOT_AT_HAND ? answer(now) : liveEntity(release, id).then(answer);
}

/**
 * One entity lookup as /entities/{id} answers it: the body the release kept for the same question, else composed
 * (and kept). Only 200 bodies are kept; a 404 or 410 is looked up each time.
 */
export function entityItem(release: Release, id: string, include: ReadonlySet<Include>, lang: string | null): Reply | Promise<Reply> {
  const key = entityBodyKey(id, include, lang);
  const kept = release.keptBody(key);
  if (kept) return { status: 200, body: kept };
  return withLive(release, id, (e) => {
    const parts = entityParts(e, include, lang);
    return { status: 200, body: release.keepBody(key, parts) ?? concatToSend(parts) };
  });
}

/** The statuses of every entity lookup: those of a costing endpoint, then 404 and 410. */
const entityResponses = (what: string, body: Schema, badRequestCodes: string[]): RouteOperation['responses'] => ({
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
      responses: entityResponses(answer[0], answer[1], ['invalid_id', 'invalid_parameter']),
    },
    prepare(c) {
      const p = readParameters(c);
      const id = (p as { reep_id: string }).reep_id;
      const body = parse(p);
      return {
        cost: 1,
        run() {
          return withLive(c.release, id, (e) => ({ status: 200, body: body(e) }));
        },
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
      responses: entityResponses('The entity.', Entity, ['invalid_id', 'unknown_include', 'invalid_parameter']),
    },
    prepare(c) {
      const { reep_id: id, include, lang } = readEntityParameters(c);
      return {
        cost: 1,
        run() {
          return entityItem(c.release, id, include, lang);
        },
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
