// The anchors of a /matches request resolved in the release the page is answered from: merges followed, a
// provider reference looked up, the kind checked against the match index.
import { ENTITY_TYPES } from '../../common/ids.ts';
import { MATCH_REF, type MatchRefValue } from '../../common/match-index.ts';
import { ApiError } from '../api-error.ts';
import type { MatchIndex } from '../release/match-index.ts';
import type { Release } from '../release/open-release.ts';
import type { AnchorList } from './match-walk.ts';
import type { AnchorKind, Reference } from './match-query.ts';

/** An anchor resolved in the release: its register ID and its lists. */
export interface Resolved {
  id: string;
  list: AnchorList;
}

/**
 * Resolves one value to a live entity of `kind`, following merges; null when it names nothing live (a never published
 * or retired ID, a provider reference without a mapping). 409 when a reference names two entities, 422 for a live
 * entity of another kind.
 */
export async function resolveAnchor(release: Release, index: MatchIndex, kind: AnchorKind, r: Reference): Promise<Resolved | null> {
  let id: string | null = null;
  if ('id' in r) {
    // The refs hold live teams, competitions, seasons and stages only: an ID found there is live and its kind is
    // known, so the entity itself need not be read. Anything else (merged, retired, unknown, another kind) takes
    // the entity lookup below, which follows merges and tells the cases apart.
    const own = await index.ref(r.id);
    if (own !== undefined) return resolvedRef(r.id, own, kind, r);
    const e = await release.entity(r.id);
    if (e?.kind === 'live') id = e.id;
  } else {
    const finals = new Set<string>();
    for (const [candidate] of (await release.resolve(r.provider, r.namespace, r.externalId)) ?? []) {
      const e = await release.entity(candidate);
      if (e?.kind === 'live') finals.add(e.id);
    }
    if (finals.size > 1) {
      throw new ApiError(409, 'ambiguous_provider_id', `The ${kind} reference on /matches names ${finals.size} entities: use a register ID.`, { detail: r.text });
    }
    id = finals.size ? [...finals][0] : null;
  }
  if (id === null) return null;
  return resolvedRef(id, await index.ref(id), kind, r);
}

/** The live entity `id` as an anchor of `kind` (its refs entry), or 422 when it is not one. */
function resolvedRef(id: string, ref: MatchRefValue | undefined, kind: AnchorKind, r: Reference): Resolved {
  if (!ref || ENTITY_TYPES[ref[MATCH_REF.typeIndex]] !== kind) {
    throw new ApiError(422, 'wrong_entity_type', `The ${kind} value on /matches names an entity that is not a ${kind}.`, { detail: r.text });
  }
  return { id, list: { start: ref[MATCH_REF.start], count: ref[MATCH_REF.count], rows: ref[MATCH_REF.rows] } };
}

