// The /matches requests the benchmark loads the runtime with: the row issue 41 sets a target for (a team's first
// page over one season) and the worst filters a client can send, each of which must cost about what a normal page
// does: five values of every anchor whose intersection is empty, a required provider no bridge names, and the
// widest date range on a competition (the longest lists).
import type { Samples } from './sample-keys.ts';

/** One season of the generator's calendar (its seasons start on 1 August). */
const MATCH_WINDOW = ['2024-08-01', '2025-07-31'] as const;
/** The widest range the `from` and `to` parameters take. */
const WIDEST = 'from=0001-01-01&to=9999-12-31';
/** Values of one anchor a request may carry (runtime/routes/match-query.ts MATCH_ANCHOR_VALUES). */
const FIVE = 5;

export const MATCH_ROWS = ['matches', 'matches-5x3-anchors', 'matches-unknown-provider', 'matches-widest'] as const;
export type MatchRow = (typeof MATCH_ROWS)[number];

/** Each row's paths (under /api/v1) over the sampled teams, competitions and seasons; empty without teams. */
export function matchRows(s: Pick<Samples, 'teams' | 'competitions' | 'seasons'>): Record<MatchRow, string[]> {
  const { teams, competitions, seasons } = s;
  const five = (ids: string[], i: number, kind: string) => Array.from({ length: FIVE }, (_, k) => `${kind}=${ids[(i * FIVE + k) % ids.length]}`).join('&');
  const some = teams.length > 0 && competitions.length > 0 && seasons.length > 0;
  return {
    matches: teams.map((id) => `/api/v1/matches?team=${id}&from=${MATCH_WINDOW[0]}&to=${MATCH_WINDOW[1]}`),
    // Teams, competitions and seasons drawn independently: a match of five random teams in five random
    // competitions and five random seasons is rare enough that the intersection is empty, the walk's worst case.
    'matches-5x3-anchors': some ? teams.map((_, i) => `/api/v1/matches?${five(teams, i, 'team')}&${five(competitions, i, 'competition')}&${five(seasons, i, 'season')}&${WIDEST}`) : [],
    'matches-unknown-provider': some ? competitions.map((id) => `/api/v1/matches?competition=${id}&require=no_such_provider&${WIDEST}`) : [],
    'matches-widest': some ? competitions.map((id) => `/api/v1/matches?competition=${id}&${WIDEST}`) : [],
  };
}
