// GET /search: bounded discovery over the compiled token buckets. Each query token loads one bucket; candidates are
// intersected as integers (ordinals), scored, and only the shown results' docs are read.
import { ENTITY_TYPES } from '../../common/ids.ts';
import { foldText, MAX_CANDIDATES_PER_TOKEN, MAX_PREFIX, MAX_QUERY_TOKENS, MIN_PREFIX, MIN_QUERY_CHARS, tokenize } from '../../common/normalise.ts';
import { ApiError } from '../api-error.ts';
import { costingErrors, ok, responseRef, TAGGED_COST_HEADERS } from '../contract/http-parts.ts';
import { EntityTypeFilter, SearchLimit, SearchQuery, SearchSort } from '../contract/parameters.ts';
import { parameterReader } from '../contract/request-check.ts';
import { ref, SearchResponse } from '../contract/schemas.ts';
import { defineRoute, type Reply, type RouteDef } from '../route.ts';

const utf8 = new TextEncoder();

/** Score per matched token by source: canonical label, canonical alias, overlay alias; a prefix-only match scores least. */
const SOURCE_SCORE = [0, 10, 20, 30];
const PREFIX_SCORE = 5;

function undelta(list: number[]): number[] {
  const out = new Array(list.length);
  let acc = 0;
  for (let i = 0; i < list.length; i++) out[i] = acc += list[i];
  return out;
}

const PARAMETERS = [SearchQuery, EntityTypeFilter, SearchSort, SearchLimit] as const;
const readParameters = parameterReader(PARAMETERS);

export const searchRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET',
    path: '/search',
    auth: true,
    perStamp: true,
    operation: {
      operationId: 'search',
      tag: 'lookup',
      summary: 'Search entities by canonical label or safe alias',
      description:
        'One lookup. Normalisation: Unicode NFKD, combining marks removed, case folded, Latin letters that NFKD ' +
        'leaves whole folded to their base (ł→l, ø→o, đ→d, ß→ss, æ→ae, œ→oe); every run of non-letters/digits ' +
        `separates tokens; nothing else is lost. At most ${MAX_CANDIDATES_PER_TOKEN} candidates per normalised token (best by bridge ` +
        'count, then register ID). Ties of `relevance` break by bridge count, then register ID.',
      cost: 1,
      parameters: PARAMETERS,
      responses: {
        '200': ok('Search results.', ref(SearchResponse), TAGGED_COST_HEADERS),
        '304': responseRef('LookupNotModified'),
        ...costingErrors(readParameters.codes),
      },
    },
    prepare(c) {
      const { q, type, sort, limit } = readParameters(c);
      const release = c.release;
      // The answer is a function of the release and these four alone: kept like an entity answer (body-cache.ts),
      // under a key with `q` last, the only free text in it. A cached answer's `q` passed the checks below when it
      // was made, so it is answered without them.
      const key = release.answers ? `${release.answerScope}s${sort}\u0000${limit}\u0000${type ?? ''}\u0000${q}` : '';
      const kept = release.answers?.get(key);
      if (kept) return { run: () => ({ status: 200, body: kept }) };
      // What a schema cannot say: the limits count normalised letters and digits and the query's tokens as
      // written (a repeated word counts each time); lookups use distinct tokens.
      const written = foldText(q).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
      const tokens = tokenize(q);
      const chars = written.reduce((n, t) => n + [...t].length, 0);
      if (chars < MIN_QUERY_CHARS) throw new ApiError(400, 'invalid_query', `q needs at least ${MIN_QUERY_CHARS} letters or digits after normalisation.`);
      if (written.length > MAX_QUERY_TOKENS) throw new ApiError(400, 'invalid_query', `q may have at most ${MAX_QUERY_TOKENS} tokens.`);
      return { run: answer };
      async function answer(): Promise<Reply> {
        // score per ordinal; an ordinal must match every token to stay.
        let scores: Map<number, number> | null = null;
        const values = await Promise.all(tokens.map((t) => release.searchKey(t)));
        const last = tokens[tokens.length - 1];
        const lastPrefixKey = [...last].length >= MIN_PREFIX ? last.slice(0, MAX_PREFIX) : null;
        const prefixValue = lastPrefixKey ? (lastPrefixKey === last ? values[values.length - 1] : await release.searchKey(lastPrefixKey)) : undefined;
        for (let i = 0; i < tokens.length; i++) {
          const here = new Map<number, number>();
          for (const v of undelta(values[i]?.[0] ?? [])) here.set(v >> 2, SOURCE_SCORE[v & 3]);
          if (i === tokens.length - 1 && prefixValue) {
            for (const o of undelta(prefixValue[1])) if (!here.has(o)) here.set(o, PREFIX_SCORE);
          }
          if (scores === null) scores = here;
          else {
            const next = new Map<number, number>();
            for (const [o, s] of scores) {
              const t = here.get(o);
              if (t !== undefined) next.set(o, s + t);
            }
            scores = next;
          }
          if (scores.size === 0) break;
        }
        // Ordinals already order by (bridge count desc, register ID asc), the contract's tie-break.
        let ranked = [...(scores ?? new Map<number, number>())];
        ranked.sort(sort === 'relevance' ? (a, b) => b[1] - a[1] || a[0] - b[0] : (a, b) => a[0] - b[0] || b[1] - a[1]);
        const results: string[] = [];
        for (const [ordinal, relevance] of ranked) {
          if (results.length >= limit) break;
          const doc = await release.searchDoc(ordinal);
          if (!doc) continue;
          if (type !== null && ENTITY_TYPES[doc[1]] !== type) continue;
          results.push(JSON.stringify({ reep_id: doc[0], entity_type: ENTITY_TYPES[doc[1]], label: doc[2], bridge_count: doc[3], relevance }));
        }
        ranked = [];
        const body =
          `{"query":${JSON.stringify(q)},"normalised_query":${JSON.stringify(tokens.join(' '))},"sort":${JSON.stringify(sort)},` +
          `"type":${JSON.stringify(type)},"results":[${results.join(',')}],"count":${results.length},"limit":${limit},` +
          `"bounded":true,"max_candidates_per_token":${MAX_CANDIDATES_PER_TOKEN}}`;
        const bytes = utf8.encode(body);
        return { status: 200, body: release.answers?.keep(key, [bytes]) ?? bytes };
      }
    },
  }),
];
