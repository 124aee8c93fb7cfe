// GET /resolve/{provider}/{external_id}: provider ID → entities; the answer is made in runtime/resolve-answer.ts,
// which batch items share.
import { allowOnly, oneParam, parseEntityType, parseInclude } from '../params.ts';
import { checkResolveArgs, resolveItem, type ResolveArgs } from '../resolve-answer.ts';
import type { RouteDef } from '../route.ts';

export const resolveRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/resolve/{provider}/{external_id}',
    auth: true,
    costing: true,
    perStamp: true,
    prepare(c) {
      allowOnly(c.query, ['namespace', 'type', 'include', 'lang']);
      const args: ResolveArgs = {
        provider: c.params.provider,
        externalId: c.params.external_id,
        namespace: oneParam(c.query, 'namespace') ?? '',
        type: parseEntityType(oneParam(c.query, 'type')),
        include: parseInclude(oneParam(c.query, 'include')),
        lang: oneParam(c.query, 'lang'),
      };
      checkResolveArgs(c.release, args.provider, args.externalId);
      return {
        cost: 1,
        run: () => resolveItem(c.release, args),
      };
    },
  },
];
