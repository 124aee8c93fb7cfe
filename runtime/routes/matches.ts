// GET /matches: discovery of published matches by team, competition or season, pinned to one generation of the
// compiled match index. One lookup per page. prepare() reads every parameter (match-query.ts) and opens the cursor
// (400s cost nothing); run() answers the page (match-page.ts).
import { ApiError } from '../api-error.ts';
import { costingErrors, COST_HEADERS, errorResponse, ok, STAMP_IF_LOADED } from '../contract/http-parts.ts';
import { MatchesPage, ref } from '../contract/schemas.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { cursorHour, CursorSigner } from './match-cursor.ts';
import { KEPT_PAGE_BYTES, KeptPages } from './match-pages.ts';
import { MAX_EXAMINED, matchPage } from './match-page.ts';
import { MATCH_ANCHOR_VALUES, MATCH_PARAMETERS, MATCH_QUERY_CODES, MATCH_WINDOW_DAYS, readMatchQuery } from './match-query.ts';

/** Options of the /matches route. */
export interface MatchesOptions {
  /**
   * The deployment's secret that signs cursors (at least 32 characters), shared by every instance. Required: without
   * it /matches answers 503 and the rest of the API is served as usual. Default none.
   */
  cursorSecret?: string | null;
  /** Largest page body in bytes, envelope and cursor included (default 262,144; tests set it lower). */
  maxPageBytes?: number;
  /** Bytes of first pages kept (default KEPT_PAGE_BYTES; the composition gives the pages' share of the cache budget). */
  keptPageBytes?: number;
}

const MAX_PAGE_BYTES = 262_144;
const utf8 = new TextEncoder();

export function matchesRoutes(opts: MatchesOptions = {}): RouteDef[] {
  const signer = opts.cursorSecret ? new CursorSigner(opts.cursorSecret) : null;
  const maxPageBytes = opts.maxPageBytes ?? MAX_PAGE_BYTES;
  // Pages are kept only where cursors are signed: without a secret every page is a 503.
  const pages = signer ? new KeptPages(opts.keptPageBytes ?? KEPT_PAGE_BYTES) : null;
  return [
    defineRoute({
      method: 'GET',
      path: '/matches',
      auth: true,
      operation: {
        operationId: 'listMatches',
        tag: 'lookup',
        summary: 'Published matches of teams, competitions or seasons, by date',
        description:
          `One lookup per page. Anchors (\`team\`, \`competition\`, \`season\`, each repeated for up to ${MATCH_ANCHOR_VALUES} values) are register ` +
          'IDs or `provider:namespace:id` references resolved in the same release (merges followed); values of one anchor ' +
          'are ORed, different anchors intersect. A reference that resolves to nothing is listed in `unresolved` and the ' +
          `page is empty. Without \`season\`, \`from\` or \`to\`, the window is the ${MATCH_WINDOW_DAYS} calendar days ending on the release's own ` +
          'date. Sorted by date (`desc` by default), ties by `reep_id` ascending; undated matches are left out whenever a ' +
          `date bound applies, and otherwise sort last. A page examines at most ${MAX_EXAMINED.toLocaleString('en')} list entries, so a selective filter ` +
          'may give a short page with a `next_cursor`. Byte-identical pages for the same request and stamp within a clock ' +
          'hour (the cursor records the hour it was issued in).',
        cost: 1,
        parameters: MATCH_PARAMETERS,
        responses: {
          '200': ok('A page of matches.', ref(MatchesPage), COST_HEADERS),
          ...costingErrors(MATCH_QUERY_CODES),
          '409': errorResponse('A provider reference names more than one entity. Charged as one lookup.', ['ambiguous_provider_id'], COST_HEADERS),
          '422': errorResponse('An anchor names an entity of another kind (a player as `team`). Charged as one lookup.', ['wrong_entity_type'], COST_HEADERS),
          '503': errorResponse(
            'As every costing endpoint (components/responses/IndexUnavailable: nothing charged), and `match_response_too_large`: ' +
              'a single row is larger than the page cap. `index_unavailable` also when the release has no match index or the ' +
              'server has no cursor secret configured.',
            ['index_unavailable', 'artefact_corrupt', 'upstream_unavailable', 'state_unavailable', 'match_response_too_large'],
            STAMP_IF_LOADED,
          ),
        },
      },
      prepare(c) {
        // A first page asked before in this release and hour: the same request answers the same bytes (a 200 only
        // is kept, so a request that was refused is read and refused again). Follow-on pages are seldom asked twice.
        let scope: string | null = null;
        let search = '';
        if (pages && !c.query.has('cursor')) {
          scope = `${c.release.answerScope}${cursorHour(c.now)}`;
          const url = c.request.url;
          const at = url.indexOf('?');
          search = at < 0 ? '' : url.slice(at + 1);
          const kept = pages.get(scope, search);
          if (kept !== undefined) return { run: () => ({ status: 200, body: kept }) };
        }
        const q = readMatchQuery(c, c.release.stamp);
        const index = c.release.matchIndex();
        if (!index) throw new ApiError(503, 'index_unavailable', 'This release was compiled without a match index; recompile it to serve /matches.');
        if (!signer) throw new ApiError(503, 'index_unavailable', 'This server has no cursor secret configured (REGISTER_CURSOR_SECRET), which /matches needs.');
        const generation = index.generation;
        if (q.cursor !== null) q.after = signer.open(q.cursor, generation, q.filters(), c.now);
        return {
          run: async () => {
            const body = await matchPage(c.release, index, generation, q, signer, c.now, maxPageBytes);
            if (scope === null) return { status: 200, body };
            return { status: 200, body: pages!.keep(scope, search, typeof body === 'string' ? utf8.encode(body) : body) };
          },
        };
      },
    }),
  ];
}
