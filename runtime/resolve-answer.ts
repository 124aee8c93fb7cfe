// What /resolve answers for one provider ID, for the route and batch items alike: the provider check (400, no cost)
// and the lookup, 200 with every entity the ID bridges to (maybe none) or 409 listing each candidate.
import { ENTITY_TYPES, type EntityType, type Include } from '../common/ids.ts';
import { ApiError } from './api-error.ts';
import { concat, concatToSend } from '../common/bytes.ts';
import { entityParts, includeBits } from './entity-answer.ts';
import type { MaybePromise } from './interfaces.ts';
import type { Release } from './release/open-release.ts';
import type { Reply } from './route.ts';

const enc = new TextEncoder();
const RESULTS_OPEN = enc.encode('{"results":[');
const COMMA = enc.encode(',');
const ONE_CLOSE = enc.encode('],"count":1}');

export interface ResolveArgs {
  provider: string;
  externalId: string;
  namespace: string;
  type: EntityType | null;
  include: ReadonlySet<Include>;
  lang: string | null;
}

/**
 * What a schema cannot check of a resolve, for the route and batch items alike (400, no cost): the provider must be
 * one the release knows. The external ID is checked by its parameter schema (ExternalId), a batch item's as the path's.
 */
export function checkProvider(release: Release, provider: string): void {
  if (!release.providers.has(provider)) {
    throw new ApiError(400, 'unknown_provider', 'Unknown provider key.', { detail: provider.slice(0, 64) });
  }
}

/**
 * The key a resolve's answer is kept under in the release's answer cache (release.answers): everything its body
 * depends on. `r` sets it apart from the entity answers' keys (entity-answer.ts entityQuestion), which start with
 * a digit after the scope; the free-text parts are written as JSON, so no two questions share a key.
 */
function resolveKey(release: Release, a: ResolveArgs): string {
  return `${release.answerScope}r${includeBits(a.include)}${JSON.stringify([a.provider, a.namespace, a.externalId, a.type, a.lang])}`;
}

/**
 * One resolve as /resolve answers it: 200 with results (maybe none), or 409 with every candidate. A 200 naming an
 * entity is a pure function of the release and the question, so its bytes are kept (like an entity answer) and
 * the next request that asks the same is answered from them, at once; an empty result is one index lookup and is
 * not kept, so made-up IDs cannot flush the answers people ask for.
 */
export function resolveItem(release: Release, a: ResolveArgs): MaybePromise<Reply> {
  const key = release.answers ? resolveKey(release, a) : '';
  const kept = release.answers?.get(key);
  if (kept) return { status: 200, body: kept };
  return composeResolve(release, a, key);
}

async function composeResolve(release: Release, a: ResolveArgs, key: string): Promise<Reply> {
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
  parts.push(count === 1 ? ONE_CLOSE : enc.encode(`],"count":${count}}`));
  const kept = count === 1 && release.answers ? release.answers.keep(key, parts) : null;
  return { status: 200, body: kept ?? concatToSend(parts) };
}
