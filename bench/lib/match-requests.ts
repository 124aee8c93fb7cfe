// The /matches requests the benchmark loads the runtime with: the row issue 41 sets a target for (a team's first
// page over one season) and the worst filters a client can send, each of which must cost about what a normal page
// does: five values of every anchor whose intersection is empty, a required provider no bridge names, and the
// widest date range on a competition (the longest lists).
//
// The runtime keeps finished first pages (runtime/routes/match-pages.ts), so the team row measures pages asked
// again, as popular pages are. The worst-filter rows must measure the page made, never a kept one: each of their
// requests is distinct (its `from` date moves one day per request, all before the first dated match, so every one
// has the same work to do), and a row's list is longer than the requests a load sends.
import type { Samples } from './sample-keys.ts';

/** One season of the generator's calendar (its seasons start on 1 August). */
const MATCH_WINDOW = ['2024-08-01', '2025-07-31'] as const;
/** The widest range the `from` and `to` parameters take. */
const WIDEST_FROM = Date.parse('0001-01-01T00:00:00Z');
const WIDEST_TO = '9999-12-31';
const DAY_MS = 86_400_000;
/** Values of one anchor a request may carry (runtime/routes/match-query.ts MATCH_ANCHOR_VALUES). */
const FIVE = 5;
/** Distinct requests per worst-filter row: more than a 10 s load sends (~4,000 req/s at best). */
const DISTINCT_WORST = 60_000;

export const MATCH_ROWS = ['matches', 'matches-5x3-anchors', 'matches-unknown-provider', 'matches-widest'] as const;
export type MatchRow = (typeof MATCH_ROWS)[number];

/** `from=…&to=…` of request `i` of a worst-filter row: the widest range, less `i` days at its start (year 1 still). */
const widest = (i: number): string => `from=${new Date(WIDEST_FROM + i * DAY_MS).toISOString().slice(0, 10)}&to=${WIDEST_TO}`;

/**
 * Each row's paths (under /api/v1) over the sampled teams, competitions and seasons; empty without teams. The
 * worst-filter rows hold `distinct` requests each (cycling over the samples), all different.
 */
export function matchRows(s: Pick<Samples, 'teams' | 'competitions' | 'seasons'>, distinct = DISTINCT_WORST): Record<MatchRow, string[]> {
  const { teams, competitions, seasons } = s;
  const five = (ids: string[], i: number, kind: string) => Array.from({ length: FIVE }, (_, k) => `${kind}=${ids[(i * FIVE + k) % ids.length]}`).join('&');
  const some = teams.length > 0 && competitions.length > 0 && seasons.length > 0;
  const worst = (path: (i: number) => string): string[] => (some ? Array.from({ length: distinct }, (_, i) => path(i)) : []);
  return {
    matches: teams.map((id) => `/api/v1/matches?team=${id}&from=${MATCH_WINDOW[0]}&to=${MATCH_WINDOW[1]}`),
    // Teams, competitions and seasons drawn independently: a match of five random teams in five random
    // competitions and five random seasons is rare enough that the intersection is empty, the walk's worst case.
    'matches-5x3-anchors': worst((i) => `/api/v1/matches?${five(teams, i, 'team')}&${five(competitions, i, 'competition')}&${five(seasons, i, 'season')}&${widest(i)}`),
    'matches-unknown-provider': worst((i) => `/api/v1/matches?competition=${competitions[i % competitions.length]}&require=no_such_provider&${widest(i)}`),
    'matches-widest': worst((i) => `/api/v1/matches?competition=${competitions[i % competitions.length]}&${widest(i)}`),
  };
}

/**
 * `count` first pages of a team's season like the `matches` row's, all different (`from` moves back a day per pass
 * over the teams: the same newest 20 matches, another cursor): pages made, never kept, for a cold page's cost.
 */
export function coldMatchPaths(teams: readonly string[], count: number): string[] {
  const start = Date.parse(`${MATCH_WINDOW[0]}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => {
    const from = new Date(start - Math.floor(i / teams.length) * DAY_MS).toISOString().slice(0, 10);
    return `/api/v1/matches?team=${teams[i % teams.length]}&from=${from}&to=${MATCH_WINDOW[1]}`;
  });
}
