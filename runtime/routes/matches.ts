// GET /matches: discovery of published matches by team, competition or season, pinned to one generation of the
// compiled match index. One lookup per page. prepare() checks every parameter and the cursor (400s cost nothing);
// run() resolves the anchors in the same release, walks the smallest anchor's lists (up to five merged) from the
// cursor's position and checks the other anchors and filters on each row.
import { sha256, toBase64url } from '#platform/crypto';
import { ENTITY_TYPES, REGISTER_ID } from '../../common/ids.ts';
import { jsonString } from '../../common/json-string.ts';
import { dayOf, MATCH_REF, MATCH_ROW, metaHome, metaState, MATCH_STATES, STATE_FILTER_NAMES, type MatchRowValue } from '../../common/match-index.ts';
import { ApiError } from '../api-error.ts';
import type { MatchIndex } from '../release/match-index.ts';
import type { Release } from '../release/open-release.ts';
import { MATCHES_BAD_REQUEST_CODES } from '../contract/error-codes.ts';
import { costingErrors, COST_HEADERS, errorResponse, ok, STAMP_IF_LOADED } from '../contract/http-parts.ts';
import { intQuery, textQuery, type Parameter } from '../contract/parameters.ts';
import { MatchesPage, ref } from '../contract/schemas.ts';
import { oneOfValues } from '../contract/schema-kit.ts';
import { defineRoute, type RequestContext, type RouteDef } from '../route.ts';
import { Type } from '@sinclair/typebox';
import { CursorSigner, MAX_CURSOR_CHARS, type CursorPosition } from './match-cursor.ts';
import { MatchWalk, type AnchorList, type WalkEntry } from './match-walk.ts';

/** Options of the /matches route. */
export interface MatchesOptions {
  /**
   * The deployment's secret that signs cursors (at least 32 characters), shared by every instance. Required: without
   * it /matches answers 503 and the rest of the API is served as usual. Default none.
   */
  cursorSecret?: string | null;
  /** Largest page body in bytes, envelope and cursor included (default 262,144; tests set it lower). */
  maxPageBytes?: number;
}

const MAX_PAGE_BYTES = 262_144;
/** Values one anchor parameter may carry. */
const MAX_ANCHOR_VALUES = 5;
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;
/** Days of the default window, ending on the release's own date. */
const DEFAULT_WINDOW_DAYS = 30;
/**
 * List entries one page may examine. Rows are read only for entries that pass the state filter, so a page's reads
 * stay bounded whatever the filters; a selective filter may give a short (even empty) page with a next_cursor.
 */
const MAX_EXAMINED = 1000;

const ANCHORS = ['team', 'competition', 'season'] as const;
type AnchorKind = (typeof ANCHORS)[number];
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_VALUE_CHARS = 600;

/** A parsed anchor or opponent value: a register ID, or a provider reference. */
type Reference = { text: string; id: string } | { text: string; provider: string; namespace: string; externalId: string };

/** The request, checked and normalised. */
interface MatchQuery {
  anchors: Record<AnchorKind, Reference[]>;
  opponent: Reference | null;
  venue: 'home' | 'away' | 'any';
  fromDay: number | null;
  toDay: number | null;
  /** State codes allowed, or null for all. */
  states: Set<number> | null;
  providers: string[] | null;
  require: string[];
  missing: string[];
  sort: 'asc' | 'desc';
  limit: number;
  /** Digest of the normalised filters (what a cursor is bound to). */
  filters: string;
  after: CursorPosition | null;
}

/**
 * The parameters as the document states them. parseQuery reads them by hand: each failure has a code of its own
 * (CONTRACT-DECISIONS.md), and anchors and filters are parsed into references and sets no schema describes.
 */
const PARAMETERS: Parameter[] = [
  ...ANCHORS.map((name) => ({
    name,
    in: 'query' as const,
    required: false,
    description: `A ${name}: register ID or \`provider:namespace:id\`; repeat for up to ${MAX_ANCHOR_VALUES} values (a comma does not separate values). At least one anchor is required.`,
    schema: Type.Array(Type.String({ minLength: 1 }), { maxItems: MAX_ANCHOR_VALUES }),
    style: 'form' as const,
    explode: true,
  })),
  textQuery('opponent', 'Only matches against this team (needs exactly one `team`).', Type.String({ minLength: 1 })),
  textQuery('venue', 'The `team` at home, away, or either (needs exactly one `team`).', oneOfValues(['home', 'away', 'any'], { default: 'any' })),
  textQuery('from', 'First date, inclusive.', Type.String({ format: 'date' })),
  textQuery('to', 'Last date, inclusive.', Type.String({ format: 'date' })),
  textQuery('state', `Comma list of ${[...MATCH_STATES, 'none'].join(', ')}; default all.`),
  textQuery('providers', 'Comma list of providers whose bridges are returned (default all).'),
  textQuery('require', 'Comma list of providers that must each bridge the match.'),
  textQuery('missing', 'Comma list of providers none of which may bridge the match.'),
  textQuery('sort', 'By date; ties by `reep_id` ascending either way.', oneOfValues(['desc', 'asc'], { default: 'desc' })),
  intQuery('limit', 'Rows per page.', 1, MAX_LIMIT, DEFAULT_LIMIT),
  textQuery(
    'cursor',
    '`next_cursor` of the previous page. Changed filters, another generation, expired (24 hours) or altered: 400 `stale_cursor`.',
    Type.String({ minLength: 1 }),
  ),
];

/** The parameters /matches knows, and those that may be given once (all but the repeatable anchors). */
const KNOWN = new Set(PARAMETERS.map((p) => p.name));
const SINGLE = new Set(PARAMETERS.filter((p) => !p.explode).map((p) => p.name));

export function matchesRoutes(opts: MatchesOptions = {}): RouteDef[] {
  const signer = opts.cursorSecret ? new CursorSigner(opts.cursorSecret) : null;
  const maxPageBytes = opts.maxPageBytes ?? MAX_PAGE_BYTES;
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
          'One lookup per page. Anchors (`team`, `competition`, `season`, each repeated for up to 5 values) are register ' +
          'IDs or `provider:namespace:id` references resolved in the same release (merges followed); values of one anchor ' +
          'are ORed, different anchors intersect. A reference that resolves to nothing is listed in `unresolved` and the ' +
          "page is empty. Without `season`, `from` or `to`, the window is the 30 calendar days ending on the release's own " +
          'date. Sorted by date (`desc` by default), ties by `reep_id` ascending; undated matches are left out whenever a ' +
          'date bound applies, and otherwise sort last. A page examines at most 1,000 list entries, so a selective filter ' +
          'may give a short page with a `next_cursor`. Byte-identical pages for the same request and stamp within a clock ' +
          'hour (the cursor records the hour it was issued in).',
        cost: 1,
        parameters: PARAMETERS,
        responses: {
          '200': ok('A page of matches.', ref(MatchesPage), COST_HEADERS),
          ...costingErrors(MATCHES_BAD_REQUEST_CODES),
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
        const q = parseQuery(c);
        const index = c.release.matchIndex();
        if (!index) throw new ApiError(503, 'index_unavailable', 'This release was compiled without a match index; recompile it to serve /matches.');
        if (!signer) throw new ApiError(503, 'index_unavailable', 'This server has no cursor secret configured (REGISTER_CURSOR_SECRET), which /matches needs.');
        const generation = index.generation;
        const cursor = c.query.get('cursor');
        if (cursor !== null) q.after = signer.open(cursor, generation, q.filters, c.now);
        return {
          cost: 1,
          run: async () => ({ status: 200, body: await page(c.release, index, generation, q, signer, c.now, maxPageBytes) }),
        };
      },
    }),
  ];
}

function parseQuery(c: RequestContext): MatchQuery {
  const query = c.query;
  for (const k of new Set(query.keys())) {
    if (!KNOWN.has(k)) throw new ApiError(400, 'unknown_parameter', `Unknown query parameter ${JSON.stringify(k.slice(0, 64))} on /matches.`);
    if (SINGLE.has(k) && query.getAll(k).length > 1) {
      throw new ApiError(400, 'repeated_parameter', `The /matches parameter ${k} may be given once.`);
    }
  }
  const anchors = {} as Record<AnchorKind, Reference[]>;
  let given = 0;
  for (const kind of ANCHORS) {
    const values = [...new Set(query.getAll(kind))].sort();
    if (values.length > MAX_ANCHOR_VALUES) {
      throw new ApiError(400, 'invalid_anchor', `At most ${MAX_ANCHOR_VALUES} ${kind} values on /matches (repeat the parameter; a comma does not separate values).`);
    }
    anchors[kind] = values.map((v) => reference(kind, v));
    given += values.length;
  }
  if (given === 0) throw new ApiError(400, 'anchor_required', '/matches needs at least one team, competition or season.');
  const opponentText = query.get('opponent');
  const venue = query.get('venue') ?? 'any';
  if (venue !== 'home' && venue !== 'away' && venue !== 'any') throw new ApiError(400, 'invalid_parameter', 'venue on /matches must be home, away or any.');
  if ((opponentText !== null || query.has('venue')) && anchors.team.length !== 1) {
    throw new ApiError(400, 'single_team_required', 'opponent and venue on /matches need exactly one team.');
  }
  const fromText = query.get('from');
  const toText = query.get('to');
  let fromDay = dateParam('from', fromText);
  let toDay = dateParam('to', toText);
  if (fromDay !== null && toDay !== null && fromDay > toDay) throw new ApiError(400, 'invalid_date_range', `from ${fromText} is after to ${toText} on /matches.`);
  if (fromDay === null && toDay === null && anchors.season.length === 0) {
    // The 30 calendar days ending on the release's own date: the same window for every request against this stamp.
    toDay = dayOf(`${c.release.stamp.slice(0, 4)}-${c.release.stamp.slice(4, 6)}-${c.release.stamp.slice(6, 8)}`);
    fromDay = toDay - (DEFAULT_WINDOW_DAYS - 1);
  }
  const states = stateParam(query.get('state'));
  const providers = listParam('providers', query.get('providers'));
  const require = listParam('require', query.get('require')) ?? [];
  const missing = listParam('missing', query.get('missing')) ?? [];
  const sort = query.get('sort') ?? 'desc';
  if (sort !== 'asc' && sort !== 'desc') throw new ApiError(400, 'invalid_sort', 'sort on /matches must be asc or desc.');
  const limitText = query.get('limit');
  const limit = limitText === null ? DEFAULT_LIMIT : /^\d{1,3}$/.test(limitText) ? Number(limitText) : 0;
  if (limit < 1 || limit > MAX_LIMIT) throw new ApiError(400, 'invalid_limit', `limit on /matches must be an integer from 1 to ${MAX_LIMIT}.`);
  const opponent = opponentText === null ? null : reference('opponent', opponentText);
  // The filters a cursor is bound to, in one fixed shape: values sorted, defaults written out.
  const normal = JSON.stringify([
    ANCHORS.map((k) => anchors[k].map((r) => r.text)), opponent?.text ?? null, venue, fromDay, toDay,
    states ? [...states].sort() : null, providers, require, missing, sort, limit,
  ]);
  const filters = toBase64url(sha256(normal)).slice(0, 22);
  return { anchors, opponent, venue, fromDay, toDay, states, providers, require, missing, sort, limit, filters, after: null };
}

/** An anchor or opponent value: a register ID, or `provider:namespace:id` (the namespace may be empty). */
function reference(param: string, text: string): Reference {
  if (REGISTER_ID.test(text)) return { text, id: text };
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (first < 0) throw new ApiError(400, 'invalid_id', `${param} on /matches is neither a register ID nor provider:namespace:id.`, { detail: text.slice(0, 64) });
  const provider = text.slice(0, first);
  const externalId = second < 0 ? '' : text.slice(second + 1);
  if (second < 0 || provider === '' || externalId === '' || text.length > MAX_VALUE_CHARS || text.includes('\u0000')) {
    throw new ApiError(400, 'invalid_anchor', `${param} on /matches must be a register ID or provider:namespace:id (namespace may be empty).`, { detail: text.slice(0, 64) });
  }
  return { text, provider, namespace: text.slice(first + 1, second), externalId };
}

function dateParam(name: string, text: string | null): number | null {
  if (text === null) return null;
  const day = DATE.test(text) ? dayOf(text) : 0;
  if (day === 0) throw new ApiError(400, 'invalid_date', `${name} on /matches must be a calendar date YYYY-MM-DD.`, { detail: text.slice(0, 32) });
  return day;
}

function stateParam(text: string | null): Set<number> | null {
  if (text === null) return null;
  const out = new Set<number>();
  for (const s of text.split(',')) {
    const code = STATE_FILTER_NAMES.indexOf(s);
    if (code < 0) throw new ApiError(400, 'invalid_state', `state on /matches is a comma list of ${STATE_FILTER_NAMES.join(', ')}.`, { detail: text.slice(0, 64) });
    out.add(code);
  }
  return out;
}

/** A comma list of provider keys, sorted and deduplicated; an unknown key is fine (it matches no bridge). */
function listParam(name: string, text: string | null): string[] | null {
  if (text === null) return null;
  const items = text.split(',');
  if (!items.every((p) => PROVIDER_NAME.test(p))) throw new ApiError(400, 'invalid_filter', `${name} on /matches is a comma list of provider keys.`, { detail: text.slice(0, 64) });
  return [...new Set(items)].sort();
}

/** An anchor resolved in the release: its register ID and its lists. */
interface Resolved {
  id: string;
  list: AnchorList;
}

/**
 * Resolves one value to a live entity of `kind`, following merges; null when it names nothing live (a never published
 * or retired ID, a provider reference without a mapping). 409 when a reference names two entities, 422 for a live
 * entity of another kind.
 */
async function resolve(release: Release, index: MatchIndex, kind: AnchorKind, r: Reference): Promise<Resolved | null> {
  let id: string | null = null;
  if ('id' in r) {
    const e = await release.entity(r.id);
    if (e?.kind === 'live') id = e.id;
  } else {
    const finals = new Set<string>();
    for (const [candidate] of (await release.resolve(r.provider, r.namespace, r.externalId)) ?? []) {
      const e = await release.entity(candidate);
      if (e?.kind === 'live') finals.add(e.id);
    }
    if (finals.size > 1) {
      throw new ApiError(409, 'ambiguous_provider_id', `The ${kind} reference on /matches names ${finals.size} entities: use a register ID.`, { detail: r.text.slice(0, 600) });
    }
    id = finals.size ? [...finals][0] : null;
  }
  if (id === null) return null;
  const ref = await index.ref(id);
  if (!ref || ENTITY_TYPES[ref[MATCH_REF.typeIndex]] !== kind) {
    throw new ApiError(422, 'wrong_entity_type', `The ${kind} value on /matches names an entity that is not a ${kind}.`, { detail: r.text.slice(0, 600) });
  }
  return { id, list: { start: ref[MATCH_REF.start], count: ref[MATCH_REF.count] } };
}

const enc = new TextEncoder();

/** One page's body. */
async function page(release: Release, index: MatchIndex, generation: string, q: MatchQuery, signer: CursorSigner, now: number, maxBytes: number): Promise<string> {
  const unresolved: string[] = [];
  const resolved = {} as Record<AnchorKind, Resolved[]>;
  for (const kind of ANCHORS) {
    resolved[kind] = [];
    for (const r of q.anchors[kind]) {
      const a = await resolve(release, index, kind, r);
      if (a) resolved[kind].push(a);
      else unresolved.push(r.text);
    }
  }
  let opponent: string | null = null;
  if (q.opponent) {
    const o = await resolve(release, index, 'team', q.opponent);
    if (o) opponent = o.id;
    else unresolved.push(q.opponent.text);
  }
  const tail = (rows: string[], cursor: string | null) =>
    `{"matches":[${rows.join(',')}],"count":${rows.length},"generation":"${generation}","unresolved":${JSON.stringify(unresolved)},"next_cursor":${cursor === null ? 'null' : jsonString(cursor)}}`;
  // A value that resolves to nothing makes the page empty: the intersection with nothing is nothing.
  if (unresolved.length) return tail([], null);

  // The smallest anchor drives the walk; the others are checked on each row.
  const given = ANCHORS.filter((k) => resolved[k].length > 0);
  const size = (k: AnchorKind) => resolved[k].reduce((n, a) => n + a.list.count, 0);
  const driver = given.reduce((best, k) => (size(k) < size(best) ? k : best));
  const sets = Object.fromEntries(given.filter((k) => k !== driver).map((k) => [k, new Set(resolved[k].map((a) => a.id))])) as Partial<Record<AnchorKind, Set<string>>>;
  const team = resolved.team.length === 1 ? resolved.team[0].id : null;
  const walk = new MatchWalk(index, resolved[driver].map((a) => a.list), { sort: q.sort, fromDay: q.fromDay, toDay: q.toDay, after: q.after });
  await walk.open();

  const labels = new Map<string, string | null>();
  const providerWanted = (name: string) => q.providers === null || q.providers.includes(name);
  const rows: string[] = [];
  // Bytes of everything but the rows, with the longest cursor and count: a page never passes the cap.
  let bytes = enc.encode(tail([], '')).length + MAX_CURSOR_CHARS + 3;
  let last: WalkEntry | null = null;
  let examined = 0;
  let exhausted = false;
  let capped = false;
  while (rows.length < q.limit && examined < MAX_EXAMINED) {
    const e = await walk.next();
    if (e === null) {
      exhausted = true;
      break;
    }
    examined++;
    const previous = last;
    last = e;
    if (q.states && !q.states.has(metaState(e.meta))) continue;
    // On the team's own list the side is in the entry; otherwise the row says.
    if (driver === 'team' && team !== null && q.venue !== 'any' && metaHome(e.meta) !== (q.venue === 'home')) continue;
    const row = await index.row(e.ordinal);
    if (!rowPasses(row, sets, team, opponent, q, index)) continue;
    const text = await rowText(row, generation, index, labels, providerWanted);
    const size = enc.encode(text).length + (rows.length ? 1 : 0);
    if (bytes + size > maxBytes) {
      if (rows.length === 0) {
        const id = row[MATCH_ROW.id];
        throw new ApiError(503, 'match_response_too_large', `Match ${id} alone is larger than the ${maxBytes}-byte page cap; nothing was charged.`, { detail: id });
      }
      // This row starts the next page.
      last = previous;
      capped = true;
      break;
    }
    bytes += size;
    rows.push(text);
  }
  // A page that stopped early (limit, cap or examined budget) continues only if an entry is left.
  const more = !exhausted && last !== null && (capped || (await walk.more()));
  const cursor = more && last ? signer.issue(generation, q.filters, { day: last.day, ordinal: last.ordinal }, now) : null;
  return tail(rows, cursor);
}

/** The anchors other than the driver, the opponent, the venue and the provider filters, on one row. */
function rowPasses(row: MatchRowValue, sets: Partial<Record<AnchorKind, Set<string>>>, team: string | null, opponent: string | null, q: MatchQuery, index: MatchIndex): boolean {
  const home = row[MATCH_ROW.home];
  const away = row[MATCH_ROW.away];
  const competition = row[MATCH_ROW.competition];
  const season = row[MATCH_ROW.season];
  if (sets.team && !((home !== null && sets.team.has(home)) || (away !== null && sets.team.has(away)))) return false;
  if (sets.competition && (competition === null || !sets.competition.has(competition))) return false;
  if (sets.season && (season === null || !sets.season.has(season))) return false;
  if (team !== null && q.venue !== 'any' && (q.venue === 'home' ? home : away) !== team) return false;
  if (opponent !== null && (home === team ? away : away === team ? home : null) !== opponent) return false;
  if (q.require.length || q.missing.length) {
    const bridged = new Set<string>();
    const b = row[MATCH_ROW.bridges];
    for (let i = 0; i < b.length; i += 3) bridged.add(index.provider(b[i] as number));
    if (!q.require.every((p) => bridged.has(p))) return false;
    if (q.missing.some((p) => bridged.has(p))) return false;
  }
  return true;
}

/** A row as the contract lists its fields, in that order. */
async function rowText(row: MatchRowValue, generation: string, index: MatchIndex, labels: Map<string, string | null>, wanted: (provider: string) => boolean): Promise<string> {
  const ref = async (id: string | null): Promise<string> => {
    if (id === null) return 'null';
    let label = labels.get(id);
    if (label === undefined) {
      const r = await index.ref(id);
      labels.set(id, (label = r && r[MATCH_REF.label] !== '' ? r[MATCH_REF.label] : null));
    }
    return `{"reep_id":"${id}","label":${label === null ? 'null' : jsonString(label)}}`;
  };
  const [id, playedOn, state, home, away, competition, season, stage, hs, as, form, shH, shA, basis, leg, aggregateOf, b] = row;
  const str = (v: string | null) => (v === null ? 'null' : jsonString(v));
  const num = (v: number | null) => (v === null ? 'null' : String(v));
  let bridges = '';
  for (let i = 0; i < b.length; i += 3) {
    const provider = index.provider(b[i] as number);
    if (!wanted(provider)) continue;
    bridges += `${bridges ? ',' : ''}{"provider":${jsonString(provider)},"namespace":${jsonString(String(b[i + 1]))},"external_id":${jsonString(String(b[i + 2]))}}`;
  }
  return (
    `{"reep_id":"${id}","generation":"${generation}","played_on":${str(playedOn)},"state":${state < MATCH_STATES.length ? `"${MATCH_STATES[state]}"` : 'null'},` +
    `"home":${await ref(home)},"away":${await ref(away)},"competition":${await ref(competition)},"season":${await ref(season)},"stage":${await ref(stage)},` +
    `"home_score":${num(hs)},"away_score":${num(as)},"result_form":${str(form)},"shootout_home":${num(shH)},"shootout_away":${num(shA)},` +
    `"score_basis":${str(basis)},"leg":${str(leg)},"aggregate_of":${str(aggregateOf)},"bridges":[${bridges}]}`
  );
}
