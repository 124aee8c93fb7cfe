// The request of GET /matches: its parameters as the document states them, each read by the shared parameter
// reader (contract/request-check.ts) through its own parse, every failure's code named by its schema's `x-error`;
// the checks over several parameters; and the normalised filters a cursor is bound to.
import { sha256, toBase64url } from '#platform/crypto';
import { Type } from '@sinclair/typebox';
import { REGISTER_ID } from '../../common/ids.ts';
import { dayOf, MATCH_STATES, STATE_FILTER_NAMES } from '../../common/match-index.ts';
import { parsedQuery, type Refuse } from '../contract/parameters.ts';
import { parameterReader, type ParameterCheck } from '../contract/request-check.ts';
import { oneOfValues } from '../contract/schema-kit.ts';
import { CURSOR_LIFETIME_HOURS, type CursorPosition } from './match-cursor.ts';

export const ANCHORS = ['team', 'competition', 'season'] as const;
export type AnchorKind = (typeof ANCHORS)[number];
const VENUES = ['home', 'away', 'any'] as const;
const SORTS = ['desc', 'asc'] as const;
/** Values one anchor parameter may carry. */
export const MATCH_ANCHOR_VALUES = 5;
const MATCH_LIMIT = { max: 100, default: 20 } as const;
/** Days of the default window, ending on the release's own date. */
export const MATCH_WINDOW_DAYS = 30;
/** Longest provider reference an anchor or the opponent may be (so it is whole in an error's detail). */
const MATCH_REFERENCE_CHARS = 600;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** An anchor or the opponent: not a reference at all is `invalid_id`; a malformed reference or too many, `invalid_anchor`. */
const REFERENCE_CODES = ['invalid_anchor', 'invalid_id'] as const;

/** A parsed anchor or opponent value: a register ID, or a provider reference. */
export type Reference = { text: string; id: string } | { text: string; provider: string; namespace: string; externalId: string };

/** An anchor or opponent value: a register ID, or `provider:namespace:id` (the namespace may be empty). */
function reference(param: string, text: string, refuse: Refuse): Reference {
  if (REGISTER_ID.test(text)) return { text, id: text };
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (first < 0) refuse(`${param} on /matches is neither a register ID nor provider:namespace:id.`, { code: 'invalid_id', detail: text.slice(0, 64) });
  const provider = text.slice(0, first);
  const externalId = second < 0 ? '' : text.slice(second + 1);
  if (second < 0 || provider === '' || externalId === '' || text.length > MATCH_REFERENCE_CHARS || text.includes('\u0000')) {
    refuse(`${param} on /matches must be a register ID or provider:namespace:id (namespace may be empty).`, { detail: text.slice(0, 64) });
  }
  return { text, provider, namespace: text.slice(first + 1, second), externalId };
}

const anchor = (kind: AnchorKind) =>
  parsedQuery(
    kind,
    `A ${kind}: register ID or \`provider:namespace:id\`; repeat for up to ${MATCH_ANCHOR_VALUES} values (a comma does not separate values). At least one anchor is required.`,
    Type.Array(Type.String({ minLength: 1 }), { maxItems: MATCH_ANCHOR_VALUES, 'x-error': REFERENCE_CODES }),
    (all, refuse): Reference[] => {
      const values = [...new Set(all)].sort();
      if (values.length > MATCH_ANCHOR_VALUES) {
        refuse(`At most ${MATCH_ANCHOR_VALUES} ${kind} values on /matches (repeat the parameter; a comma does not separate values).`);
      }
      return values.map((v) => reference(kind, v, refuse));
    },
    { explode: true },
  );

const date = (name: 'from' | 'to', description: string) =>
  parsedQuery(name, description, Type.String({ format: 'date', 'x-error': 'invalid_date' }), ([text], refuse): number | null => {
    if (text === undefined) return null;
    const day = DATE.test(text) ? dayOf(text) : 0;
    return day === 0 ? refuse(`${name} on /matches must be a calendar date YYYY-MM-DD.`, { detail: text.slice(0, 32) }) : day;
  });

/** A comma list of provider keys, sorted and deduplicated; an unknown key is fine (it matches no bridge). */
const providerList = (name: 'providers' | 'require' | 'missing', description: string) =>
  parsedQuery(name, description, Type.String({ 'x-error': 'invalid_filter' }), ([text], refuse): string[] | null => {
    if (text === undefined) return null;
    const items = text.split(',');
    if (!items.every((p) => PROVIDER_NAME.test(p))) refuse(`${name} on /matches is a comma list of provider keys.`, { detail: text.slice(0, 64) });
    return [...new Set(items)].sort();
  });

const Team = anchor('team');
const Competition = anchor('competition');
const Season = anchor('season');
const Opponent = parsedQuery(
  'opponent',
  'Only matches against this team (needs exactly one `team`).',
  Type.String({ minLength: 1, 'x-error': REFERENCE_CODES }),
  ([text], refuse): Reference | null => (text === undefined ? null : reference('opponent', text, refuse)),
);
const Venue = parsedQuery(
  'venue',
  'The `team` at home, away, or either (needs exactly one `team`).',
  oneOfValues(VENUES, { default: 'any' }),
  ([text], refuse): (typeof VENUES)[number] | null =>
    text === undefined ? null : (VENUES as readonly string[]).includes(text) ? (text as (typeof VENUES)[number]) : refuse('venue on /matches must be home, away or any.'),
);
const From = date('from', 'First date, inclusive.');
const To = date('to', 'Last date, inclusive.');
const State = parsedQuery(
  'state',
  `Comma list of ${[...MATCH_STATES, 'none'].join(', ')}; default all.`,
  Type.String({ 'x-error': 'invalid_state' }),
  ([text], refuse): Set<number> | null => {
    if (text === undefined) return null;
    const out = new Set<number>();
    for (const s of text.split(',')) {
      const code = STATE_FILTER_NAMES.indexOf(s);
      if (code < 0) refuse(`state on /matches is a comma list of ${STATE_FILTER_NAMES.join(', ')}.`, { detail: text.slice(0, 64) });
      out.add(code);
    }
    return out;
  },
);
const Providers = providerList('providers', 'Comma list of providers whose bridges are returned (default all).');
const Require = providerList('require', 'Comma list of providers that must each bridge the match.');
const Missing = providerList('missing', 'Comma list of providers none of which may bridge the match.');
const Sort = parsedQuery(
  'sort',
  'By date; ties by `reep_id` ascending either way.',
  oneOfValues(SORTS, { default: 'desc', 'x-error': 'invalid_sort' }),
  ([text], refuse): (typeof SORTS)[number] =>
    text === undefined ? 'desc' : (SORTS as readonly string[]).includes(text) ? (text as (typeof SORTS)[number]) : refuse('sort on /matches must be asc or desc.'),
);
const Limit = parsedQuery(
  'limit',
  'Rows per page.',
  Type.Integer({ minimum: 1, maximum: MATCH_LIMIT.max, default: MATCH_LIMIT.default, 'x-error': 'invalid_limit' }),
  ([text], refuse): number => {
    const limit = text === undefined ? MATCH_LIMIT.default : /^\d{1,3}$/.test(text) ? Number(text) : 0;
    return limit < 1 || limit > MATCH_LIMIT.max ? refuse(`limit on /matches must be an integer from 1 to ${MATCH_LIMIT.max}.`) : limit;
  },
);
/** Opened (and refused as stale) by the route, once it knows the generation and the filters. */
const Cursor = parsedQuery(
  'cursor',
  `\`next_cursor\` of the previous page. Changed filters, another generation, expired (${CURSOR_LIFETIME_HOURS} hours) or altered: 400 \`stale_cursor\`.`,
  Type.String({ minLength: 1, 'x-error': 'stale_cursor' }),
  ([text]): string | null => text ?? null,
);

/** The parameters in the document's order. */
export const MATCH_PARAMETERS = [Team, Competition, Season, Opponent, Venue, From, To, State, Providers, Require, Missing, Sort, Limit, Cursor] as const;
/** The order they are read and checked in, which decides which failure answers a request that has several. */
const READ_ORDER = [Team, Competition, Season, Venue, From, To, State, Providers, Require, Missing, Sort, Limit, Opponent, Cursor] as const;

const CHECKS: ParameterCheck<typeof READ_ORDER>[] = [
  {
    after: 'season',
    code: 'anchor_required',
    check: (v) => (v.team.length + v.competition.length + v.season.length === 0 ? '/matches needs at least one team, competition or season.' : null),
  },
  {
    after: 'venue',
    code: 'single_team_required',
    check: (v, query) => ((query.has('opponent') || query.has('venue')) && v.team.length !== 1 ? 'opponent and venue on /matches need exactly one team.' : null),
  },
  {
    after: 'to',
    code: 'invalid_date_range',
    check: (v, query) => (v.from !== null && v.to !== null && v.from > v.to ? `from ${query.get('from')} is after to ${query.get('to')} on /matches.` : null),
  },
];

const readParameters = parameterReader(READ_ORDER, { unknown: 'unknown_parameter', repeated: 'repeated_parameter', where: '/matches', checks: CHECKS });
/** Every 400 the parameters can answer with: the route's 400 response lists these. */
export const MATCH_QUERY_CODES = readParameters.codes;

/** The request, checked and normalised. */
export interface MatchQuery {
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
  /** Digest of the normalised filters (what a cursor is bound to), worked out when a cursor is opened or issued. */
  filters(): string;
  /** The cursor as sent, opened by the route. */
  cursor: string | null;
  after: CursorPosition | null;
}

/** The request's parameters, read and checked (each failure its 400), with the default window of `stamp`. */
export function readMatchQuery(c: { params: Record<string, string>; query: URLSearchParams }, stamp: string): MatchQuery {
  const v = readParameters(c);
  const anchors = { team: v.team, competition: v.competition, season: v.season };
  const venue = v.venue ?? 'any';
  let fromDay = v.from;
  let toDay = v.to;
  if (fromDay === null && toDay === null && anchors.season.length === 0) {
    // The calendar days ending on the release's own date: the same window for every request against this stamp.
    toDay = dayOf(`${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}`);
    fromDay = toDay - (MATCH_WINDOW_DAYS - 1);
  }
  const { state: states, providers, sort, limit, opponent } = v;
  const require = v.require ?? [];
  const missing = v.missing ?? [];
  let digest: string | null = null;
  const filters = (): string => {
    // The filters a cursor is bound to, in one fixed shape: values sorted, defaults written out.
    digest ??= toBase64url(sha256(JSON.stringify([
      ANCHORS.map((k) => anchors[k].map((r) => r.text)), opponent?.text ?? null, venue, fromDay, toDay,
      states ? [...states].sort() : null, providers, require, missing, sort, limit,
    ]))).slice(0, 22);
    return digest;
  };
  return { anchors, opponent, venue, fromDay, toDay, states, providers, require, missing, sort, limit, filters, cursor: v.cursor, after: null };
}
