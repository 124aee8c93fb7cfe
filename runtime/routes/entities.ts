// GET /entities/{reep_id} and its /bridges, /overlay and /relationships views: the answers are made in
// runtime/entity-answer.ts, which batch items share.
import { bridgesBody, entityAnswer, entityQuestion, overlayBody, relationshipsBody, withLive } from '../entity-answer.ts';
import { allowOnly, checkRegisterId, intParam, oneParam, parseInclude } from '../params.ts';
import type { LiveEntity } from '../release/open-release.ts';
import type { RequestContext, RouteDef } from '../route.ts';

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
        run: () => withLive(c.release, id, (e) => ({ status: 200, body: body(e) })),
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
      const q = entityQuestion(c.release, id, include, lang);
      return {
        cost: 1,
        run: () => entityAnswer(c.release, q),
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
