// GET /entities/{reep_id} and its /bridges, /overlay and /relationships views; batch items run `liveEntity` and `entityParts` too.
import type { Include } from '../../common/ids.ts';
import { ApiError } from '../api-error.ts';
import { bridgesBody, entityBodyKey, entityParts, overlayBody, relationshipsBody } from '../compose-entity.ts';
import { concatToSend } from '../../common/bytes.ts';
import { allowOnly, checkRegisterId, intParam, oneParam, parseInclude } from '../params.ts';
import type { EntityLookup, Release, LiveEntity } from '../release/open-release.ts';
import { NOT_AT_HAND } from '../interfaces.ts';
import type { RequestContext, RouteDef, Reply } from '../route.ts';

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

const ENTITY_QUERY = ['include', 'lang'] as const;

function idParam(c: RequestContext): string {
  return checkRegisterId(c.params.reep_id);
}

/** A sub-resource of an entity: its own query parameters (validated in `parse`), one lookup, one body. */
function view(name: string, query: string[], parse: (c: RequestContext) => (e: LiveEntity) => Uint8Array): RouteDef {
  return {
    method: 'GET',
    path: `/entities/{reep_id}/${name}`,
    auth: true,
    costing: true,
    perStamp: true,
    prepare(c) {
      allowOnly(c.query, query);
      const id = idParam(c);
      const body = parse(c);
      return {
        cost: 1,
        run() {
          return withLive(c.release, id, (e) => ({ status: 200, body: body(e) }));
        },
      };
    },
  };
}

export const entityRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/entities/{reep_id}',
    auth: true,
    costing: true,
    perStamp: true,
    prepare(c) {
      allowOnly(c.query, ENTITY_QUERY);
      const id = idParam(c);
      const include = parseInclude(oneParam(c.query, 'include'));
      const lang = oneParam(c.query, 'lang');
      return {
        cost: 1,
        run() {
          return entityItem(c.release, id, include, lang);
        },
      };
    },
  },
  view('bridges', [], () => (e) => bridgesBody(e)),
  view('overlay', [], () => (e) => overlayBody(e)),
  view('relationships', ['family', 'limit'], (c) => {
    const family = oneParam(c.query, 'family');
    const limit = intParam(c.query, 'limit', 1, 100, 25);
    return (e) => relationshipsBody(e, family, limit);
  }),
];
