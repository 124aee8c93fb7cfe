// The route table: every path the server answers, in one list: the API's, then the operational endpoints, the
// pages and the admin routes at the server root (compared against the OpenAPI paths by a test, and the document is
// built from it, the admin routes left out).
import { operationRoutes } from '../ops/ops-routes.ts';
import { pageRoutes } from '../pages/page-routes.ts';
import type { RouteDef } from '../route.ts';
import { adminRoutes, type AdminOptions } from './admin.ts';
import { batchRoutes, type BatchOptions } from './batch.ts';
import { changesRoutes } from './changes.ts';
import { contributionRoutes } from './contributions.ts';
import { entityRoutes } from './entities.ts';
import { keyRoutes, type KeyRouteOptions } from './key.ts';
import { matchesRoutes, type MatchesOptions } from './matches.ts';
import { metadataRoutes } from './metadata.ts';
import { noticeRoutes } from './notices.ts';
import { resolveRoutes } from './resolve.ts';
import { searchRoutes } from './search.ts';

/** Options of allRoutes. */
export interface RouteTableOptions {
  /** The bytes GET /openapi.json serves (openapi-json.ts): the document of this very table. */
  openapiJson: () => Uint8Array;
  maxBodyBytes: number;
  batch?: BatchOptions;
  key?: KeyRouteOptions;
  matches?: MatchesOptions;
  /** Whether the table holds the pages for people (`/`, `/docs`, `/assets/…`). Default true. */
  pages?: boolean;
  /** The admin routes (`/_admin/…`, never in the document) and what they act on; absent: none. */
  admin?: AdminOptions;
}

export function allRoutes(opts: RouteTableOptions): RouteDef[] {
  const { maxBodyBytes } = opts;
  return [
    ...metadataRoutes(opts.openapiJson), ...keyRoutes(opts.key ?? {}), ...searchRoutes, ...resolveRoutes, ...batchRoutes(maxBodyBytes, opts.batch ?? {}), ...contributionRoutes(maxBodyBytes), ...entityRoutes,
    ...noticeRoutes(maxBodyBytes), ...changesRoutes, ...matchesRoutes(opts.matches ?? {}),
    ...operationRoutes, ...(opts.pages === false ? [] : pageRoutes), ...(opts.admin ? adminRoutes(opts.admin) : []),
  ];
}
