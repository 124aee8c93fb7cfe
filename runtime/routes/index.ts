// The route table: every path the API answers, in one list (compared against the OpenAPI paths by a test).
import type { RouteDef } from '../route.ts';
import { batchRoutes, type BatchOptions } from './batch.ts';
import { changesRoutes } from './changes.ts';
import { entityRoutes } from './entities.ts';
import { keyRoutes, type KeyRouteOptions } from './key.ts';
import { matchesRoutes, type MatchesOptions } from './matches.ts';
import { metadataRoutes } from './metadata.ts';
import { noticeRoutes } from './notices.ts';
import { resolveRoutes } from './resolve.ts';
import { searchRoutes } from './search.ts';

/** Every route. `openapiJson`: the bytes GET /openapi.json serves (contract/openapi-json.ts's openapiJsonBytes). */
export function allRoutes(openapiJson: () => Uint8Array, maxBodyBytes: number, batch: BatchOptions = {}, key: KeyRouteOptions = {}, matches: MatchesOptions = {}): RouteDef[] {
  return [
    ...metadataRoutes(openapiJson), ...keyRoutes(key), ...searchRoutes, ...resolveRoutes, ...batchRoutes(maxBodyBytes, batch), ...entityRoutes, ...noticeRoutes(maxBodyBytes), ...changesRoutes,
    ...matchesRoutes(matches),
  ];
}
