// A team's published matches over GET /matches: pick the team (search, a register ID or provider:namespace:id), an
// optional window, and read a table of matches with links to every entity it names. "More matches" follows
// next_cursor through the client's matchPages iterator, appending rows in place (each page is one lookup).
import type { MatchRow, RegisterClient } from '../client/register-client.ts';
import type { Route, ViewContext } from './context.ts';
import { entityLink, h, labelledForm, numberFormat } from './dom.ts';
import { searchBox } from './search-box.ts';

/** Rows per page of the matches view. */
export const MATCHES_PAGE_SIZE = 25;
/**
 * The earliest date the view asks for when no window is given: the server's own default is the 30 days ending on the
 * release's date, which hides a team's history; one open-ended bound asks for everything up to now and beyond.
 */
export const ALL_DATES_FROM = '1850-01-01';

const REGISTER_ID = /^r[a-z][0-9a-f]{14}$/;
const PROVIDER_REF = /^[^:\s]+:[^:\s]*:\S+$/;

/** `#/matches?team=…&from=…&to=…` for a team (a register ID or provider reference). */
export function matchesHash(team: string, from = '', to = ''): string {
  const q = new URLSearchParams({ team });
  if (from) q.set('from', from);
  if (to) q.set('to', to);
  return `#/matches?${q}`;
}

export async function matchesView(ctx: ViewContext, route: Route, go: (hash: string) => void): Promise<HTMLElement> {
  const team = (route.params.get('team') ?? '').trim();
  const from = route.params.get('from') ?? '';
  const to = route.params.get('to') ?? '';

  const teamInput = h('input', { id: 'matches-team', name: 'team', value: team, required: true, spellcheck: 'false', autocomplete: 'off', 'aria-describedby': 'matches-team-hint', placeholder: 'rt… or provider:namespace:id' });
  const fromInput = h('input', { id: 'matches-from', name: 'from', type: 'date', value: from });
  const toInput = h('input', { id: 'matches-to', name: 'to', type: 'date', value: to });
  const form = labelledForm(
    { class: 'window-form matches-form', 'aria-label': 'Choose a team and dates' },
    [['Team', teamInput], ['From', fromInput], ['to', toInput]],
    'Show matches',
    () => go(matchesHash(teamInput.value.trim(), fromInput.value, toInput.value)),
  );
  const finder = searchBox(() => ctx.client, (id) => go(matchesHash(id, fromInput.value, toInput.value)), {
    id: 'matches-search',
    label: 'Find a team',
    placeholder: 'Type a team name',
    type: 'team',
  });
  const hint = h('p', { id: 'matches-team-hint', class: 'hint' }, 'A register ID (rt…) or a provider reference such as transfermarkt:verein:11. Dates are inclusive; without dates every published date is shown.');
  const chooser = [finder, form, hint];

  if (!team) return h('article', { class: 'matches' }, h('h1', {}, 'Matches'), ...chooser, h('p', {}, 'Choose a team to list its published matches.'));
  if (!REGISTER_ID.test(team) && !PROVIDER_REF.test(team)) {
    return h('article', { class: 'matches' }, h('h1', {}, 'Matches'), ...chooser, h('p', { class: 'notice error', role: 'alert' }, `"${team}" is neither a register ID nor provider:namespace:id.`));
  }

  const title = REGISTER_ID.test(team) ? await teamTitle(ctx.client, team) : team;
  const pages = ctx.client.matchPages({ team: [team], ...(from || to ? {} : { from: ALL_DATES_FROM }), ...(from ? { from } : {}), ...(to ? { to } : {}), limit: MATCHES_PAGE_SIZE });
  const first = await pages.next();
  const body = first.done ? null : first.value.data;
  const rows = h('tbody', {});
  const status = h('p', { id: 'matches-count', role: 'status', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', id: 'matches-more' }, 'More matches');
  let shown = 0;
  const add = (page: { matches: MatchRow[]; next_cursor: string | null }) => {
    rows.append(...page.matches.map(matchRow));
    shown += page.matches.length;
    more.hidden = page.next_cursor === null;
    status.dataset.rows = String(shown);
    status.textContent = `${numberFormat.format(shown)} match${shown === 1 ? '' : 'es'} shown${page.next_cursor === null ? '; that is all' : '; more are available'}.`;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const next = await pages.next();
      if (next.done) more.hidden = true;
      else add(next.value.data);
    } catch (e) {
      status.textContent = `Could not load more: ${(e as Error).message}`;
    } finally {
      more.disabled = false;
    }
  });
  if (body) add(body);

  const unresolved = body?.unresolved.length
    ? h('p', { class: 'notice', role: 'status' }, `No entity in this release answers to ${body.unresolved.join(', ')}.`)
    : null;
  const window = from || to ? `${from || 'the earliest date'} to ${to || 'the latest date'}` : 'all dates';
  const none = body && body.matches.length === 0 && !body.unresolved.length ? await whyNone(ctx.client, title, from || to ? window : null) : null;
  return h(
    'article',
    { class: 'matches' },
    h('h1', {}, `Matches of ${title}`),
    ...chooser,
    h('p', {}, 'Team: ', REGISTER_ID.test(team) ? entityLink(team, title) : h('code', {}, team), `; ${window}; newest first.`),
    unresolved,
    none,
    h(
      'table',
      { class: 'matches-table' },
      h('caption', {}, `Published matches of ${title}, ${window}`),
      h(
        'thead',
        {},
        h('tr', {}, ...['Date', 'Home', 'Away', 'Score', 'Competition / season', 'State'].map((c) => h('th', { scope: 'col' }, c))),
      ),
      rows,
    ),
    status,
    more,
  );
}

/**
 * Why a team has no matches to list: most often because the release holds few (the v0 data links about fifty matches
 * to its thousands of teams), so it says how many the release holds, from the free /meta counts; or the window.
 */
async function whyNone(client: RegisterClient, title: string, window: string | null): Promise<HTMLElement> {
  const counts = await client.meta().then((r) => r.data.counts, () => ({}) as Record<string, number>);
  const matches = counts.entities_match;
  const teams = counts.entities_team;
  const held =
    matches === undefined
      ? 'A team has matches here only where the release links a match to it.'
      : `This release holds ${numberFormat.format(matches)} match${matches === 1 ? '' : 'es'} in all` +
        (teams !== undefined ? ` for its ${numberFormat.format(teams)} team${teams === 1 ? '' : 's'}` : '') +
        ', and lists a team only in the matches it links to that team, so a real team may well have none.';
  return h(
    'p',
    { id: 'matches-none', class: 'notice', role: 'status' },
    window ? `No published matches of ${title} from ${window}. Without dates there may be more. ` : `No published matches of ${title}. `,
    held,
  );
}

/** The team's name for the heading; the ID itself when the lookup fails (a tombstone, an unknown ID). */
async function teamTitle(client: RegisterClient, id: string): Promise<string> {
  try {
    return (await client.entity(id)).data.name_en;
  } catch {
    return id;
  }
}

function ref(r: MatchRow['home']): HTMLElement | string {
  return r ? entityLink(r.reep_id, r.label ?? r.reep_id) : 'not published';
}

/** The score in words and figures; a shootout in brackets; absent scores say so rather than show a blank. */
function score(m: MatchRow): string {
  if (m.home_score === null || m.away_score === null) return 'no score';
  const pens = m.shootout_home !== null && m.shootout_away !== null ? ` (${m.shootout_home}–${m.shootout_away} on penalties)` : '';
  return `${m.home_score}–${m.away_score}${pens}`;
}

function matchRow(m: MatchRow): HTMLTableRowElement {
  const context = [m.competition ? ref(m.competition) : null, m.season ? ref(m.season) : null].filter((x) => x !== null);
  return h(
    'tr',
    { 'data-match': m.reep_id },
    h('td', {}, entityLink(m.reep_id, m.played_on ?? 'undated')),
    h('td', {}, ref(m.home)),
    h('td', {}, ref(m.away)),
    h('td', { class: 'num' }, score(m)),
    h('td', {}, context.length ? context.flatMap((c, i) => (i ? [' · ', c] : [c])) : 'not published'),
    h('td', {}, m.state ?? 'no state'),
  );
}
