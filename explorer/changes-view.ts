// What changed between two releases: counts by event type and by provider as charts, then the events, paged, each in
// words with a link to its entity and the entity's name. The window is any two published releases (`from` exclusive,
// `to` inclusive). The changelog is free but carries a name only where the event is about one (`entity_added`,
// `label_updated`); every other name is one lookup, so the reader asks for a page's names with a button that says what
// they cost, and names once learnt are kept for the tab.
import type { ChangeEvent, RegisterClient } from '../client/register-client.ts';
import { barChart } from './charts.ts';
import { CHANGES_PAGE_SIZE, type Route, type ViewContext } from './context.ts';
import { entityLink, h, labelledForm, numberFormat, section } from './dom.ts';

/** Cursors of pages already reached, by window: `#/changes?…&page=3` comes from page 2's `next_cursor`. */
const cursors = new Map<string, (string | null)[]>();

/** What the explorer knows of an ID's name: its name, the survivor it is merged into, or that it is served no more. */
type Known = { name: string } | { mergedInto: string } | { gone: true };
/** Names learnt in this tab, by namespace and its newest release (a batch answers from the served release). */
const namesByRelease = new Map<string, Map<string, Known>>();

export async function changesView(ctx: ViewContext, route: Route, go: (hash: string) => void): Promise<HTMLElement> {
  const releases = (await ctx.client.releases()).data.releases;
  if (releases.length < 2) {
    return h('article', {}, h('h1', {}, 'What changed'), h('p', {}, 'This namespace has one release; there is nothing to compare yet.'));
  }
  const stamps = releases.map((r) => r.stamp);
  const to = route.params.get('to') ?? stamps[0];
  const from = route.params.get('from') ?? releases.find((r) => r.stamp === to)?.prior ?? stamps[1];
  const page = Math.max(1, Number(route.params.get('page') ?? '1') | 0);

  const fromSelect = h('select', { id: 'changes-from', name: 'from' }, stamps.map((s) => h('option', { value: s, selected: s === from }, s)));
  const toSelect = h('select', { id: 'changes-to', name: 'to' }, stamps.map((s) => h('option', { value: s, selected: s === to }, s)));
  const form = labelledForm(
    { class: 'window-form', 'aria-label': 'Choose two releases' },
    [['After', fromSelect], ['up to', toSelect]],
    'Compare',
    () => go(`#/changes?${new URLSearchParams({ from: fromSelect.value, to: toSelect.value })}`),
  );

  const summary = (await ctx.client.changesSummary({ from, to })).data;
  const total = Object.values(summary.counts).reduce((a, b) => a + b, 0);
  const pages = Math.max(1, Math.ceil(total / CHANGES_PAGE_SIZE));
  const byType = Object.entries(summary.counts).map(([label, value]) => ({ label, value }));
  // Per provider: one free page of one event each, for its `matched` count.
  const providers = await ctx.providers();
  const perProvider = await Promise.all(providers.map(async (p) => ({ label: p.name, value: (await ctx.client.changes({ from, to, provider: p.name, limit: 1 })).data.matched })));
  const byProvider = perProvider.filter((r) => r.value > 0).sort((a, b) => b.value - a.value || (a.label < b.label ? -1 : 1));

  const windowKey = `${ctx.namespace}|${from}|${to}`;
  const known = cursors.get(windowKey) ?? [null];
  cursors.set(windowKey, known);
  const shownPage = page <= known.length ? page : 1;
  const events = (await ctx.client.changes({ from, to, limit: CHANGES_PAGE_SIZE, ...(known[shownPage - 1] ? { cursor: known[shownPage - 1]! } : {}) })).data;
  if (events.next_cursor !== null) known[shownPage] = events.next_cursor;
  const link = (p: number) => `#/changes?${new URLSearchParams({ from, to, page: String(p) })}`;

  const names = namesByRelease.get(`${ctx.namespace}|${stamps[0]}`) ?? new Map<string, Known>();
  namesByRelease.set(`${ctx.namespace}|${stamps[0]}`, names);
  learnFromEvents(names, events.events);
  const rows = h('tbody', {});
  const namesBar = h('div', { class: 'names-bar' });
  const paint = () => {
    rows.replaceChildren(...events.events.map((e) => eventRow(e, names)));
    const missing = unnamed(events.events, names);
    namesBar.replaceChildren(
      missing.length === 0
        ? h('p', { class: 'hint' }, 'Every entity on this page is named.')
        : h(
            'p',
            { class: 'hint' },
            `${missing.length} ${missing.length === 1 ? 'entity' : 'entities'} on this page ${missing.length === 1 ? 'is' : 'are'} shown by ID: the changelog is free but names only what it renames or adds. `,
            h('button', { type: 'button', id: 'changes-names', onclick: () => void fetchNames(missing) }, `Show names (${missing.length} lookup${missing.length === 1 ? '' : 's'})`),
          ),
      nameStatus,
    );
  };
  const nameStatus = h('p', { id: 'changes-names-status', role: 'status', 'aria-live': 'polite', class: 'hint' });
  const fetchNames = async (ids: string[]) => {
    nameStatus.textContent = 'Fetching names…';
    try {
      const credits = await lookUpNames(ctx.client, ids, names);
      paint();
      nameStatus.textContent = `Names fetched: ${ids.length} lookup${ids.length === 1 ? '' : 's'}${credits !== null ? `; ${numberFormat.format(credits)} credits left` : ''}.`;
    } catch (e) {
      nameStatus.textContent = `Could not fetch the names: ${(e as Error).message}`;
    }
  };
  paint();

  return h(
    'article',
    { class: 'changes' },
    h('h1', {}, 'What changed'),
    form,
    h('p', {}, `${numberFormat.format(total)} events after ${from} up to ${to} (releases walked: ${summary.chain.join(', ')}).`),
    section('By event type', barChart('Events by type', byType, { valueName: 'events' })),
    section('By provider', byProvider.length ? barChart('Bridge changes by provider', byProvider, { valueName: 'events' }) : h('p', {}, 'No provider bridges changed.')),
    section(
      'Events',
      h('p', { id: 'changes-page-count', 'data-page': shownPage, 'data-pages': pages }, `Page ${shownPage} of ${pages}`),
      namesBar,
      h(
        'table',
        { class: 'events' },
        h('caption', { class: 'visually-hidden' }, `Events, page ${shownPage} of ${pages}`),
        h('colgroup', {}, h('col', { class: 'c-type' }), h('col', { class: 'c-entity' }), h('col', { class: 'c-what' })),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'Entity'), h('th', { scope: 'col' }, 'What changed'))),
        rows,
      ),
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Event pages' },
        shownPage > 1 ? h('a', { href: link(shownPage - 1) }, 'Previous page') : null,
        events.next_cursor !== null ? h('a', { href: link(shownPage + 1) }, 'Next page') : null,
      ),
    ),
  );
}

/** Names the events themselves carry: an added entity's label, a renamed one's new label. Free. */
function learnFromEvents(names: Map<string, Known>, events: readonly ChangeEvent[]): void {
  for (const e of events) {
    if (e.type === 'entity_added') names.set(e.reep_id, { name: e.label });
    else if (e.type === 'label_updated') names.set(e.reep_id, { name: e.to });
    else if (e.type === 'entity_removed') names.set(e.reep_id, { gone: true });
    else if (e.type === 'redirect_changed' && !names.has(e.reep_id)) names.set(e.reep_id, { mergedInto: e.redirected_to });
  }
}

/** The page's IDs with no name known yet, each once: one lookup apiece. A merged ID's lookup names its survivor. */
function unnamed(events: readonly ChangeEvent[], names: Map<string, Known>): string[] {
  const out = new Set<string>();
  for (const e of events) {
    const k = names.get(e.reep_id);
    if (!k) out.add(e.reep_id);
    else if ('mergedInto' in k && !names.has(k.mergedInto)) out.add(e.reep_id);
  }
  return [...out];
}

/** Looks the IDs up in one batch (the page holds at most 100 of them): one lookup each. Returns the credits left. */
async function lookUpNames(client: RegisterClient, ids: string[], names: Map<string, Known>): Promise<number | null> {
  const r = await client.batchAll(ids.map((id) => ({ type: 'entity' as const, id })));
  r.results.forEach((res, i) => {
    const id = ids[i];
    const body = res.body as { reep_id?: string; name_en?: string };
    if (res.status !== 200 || typeof body.name_en !== 'string' || !body.reep_id) {
      names.set(id, { gone: true });
      return;
    }
    names.set(body.reep_id, { name: body.name_en });
    if (body.reep_id !== id) names.set(id, { mergedInto: body.reep_id });
  });
  return r.requests.at(-1)?.creditsRemaining ?? null;
}

/** An entity link whose text is its name when known, else its ID. */
function named(id: string, names: Map<string, Known>): HTMLAnchorElement {
  const k = names.get(id);
  return k && 'name' in k ? entityLink(id, k.name) : entityLink(id);
}

function eventRow(e: ChangeEvent, names: Map<string, Known>): HTMLTableRowElement {
  const k = names.get(e.reep_id);
  const who =
    k && 'name' in k
      ? [h('a', { href: `#/entity/${e.reep_id}`, class: 'entity-name' }, k.name), ' ', h('code', { class: 'entity-id' }, e.reep_id)]
      : [h('a', { href: `#/entity/${e.reep_id}` }, h('code', { class: 'entity-id' }, e.reep_id)), k ? h('span', { class: 'entity-note' }, 'mergedInto' in k ? ' (merged)' : ' (retired)') : null];
  return h('tr', { 'data-type': e.type }, h('td', {}, EVENT_NAMES[e.type] ?? e.type), h('td', { class: 'entity' }, who), h('td', {}, eventText(e, names)));
}

const EVENT_NAMES: Record<string, string> = {
  entity_added: 'added',
  entity_status_changed: 'status',
  label_updated: 'renamed',
  entity_removed: 'retired',
  redirect_changed: 'merged',
  provider_updated: 'bridges',
  fixture_updated: 'fixture',
  score_updated: 'score',
};

const RESULT_FORMS: Record<string, string> = {
  extra_time: 'after extra time',
  penalties: 'decided on penalties',
  golden_goal: 'by a golden goal',
  awarded: 'awarded',
  abandoned: 'abandoned',
  unknown: 'form unknown',
};

/** At most this many bridges are listed per side of a provider update; the rest are counted. */
const BRIDGES_LISTED = 5;

/** What an event says beyond its type and ID, in words, with links to the entities it names. */
function eventText(e: ChangeEvent, names: Map<string, Known>): (Node | string)[] {
  switch (e.type) {
    case 'entity_added':
      return [`new ${e.entity_type}: “${e.label}”`];
    case 'entity_status_changed':
      return [`status ${e.from} → ${e.to}`];
    case 'label_updated':
      return [`name “${e.from}” → “${e.to}”`];
    case 'entity_removed':
      return ['retired: the ID now answers 410 gone'];
    case 'redirect_changed':
      return ['merged into ', named(e.redirected_to, names)];
    case 'provider_updated': {
      const list = (verb: string, refs: { namespace: string; external_id: string }[]) => {
        if (refs.length === 0) return null;
        const shown = refs.slice(0, BRIDGES_LISTED).map((b) => (b.namespace ? `${b.namespace} ${b.external_id}` : b.external_id));
        return `${verb} ${shown.join(', ')}${refs.length > shown.length ? ` and ${refs.length - shown.length} more` : ''}`;
      };
      return [`${e.provider}: ${[list('added', e.added), list('removed', e.removed)].filter(Boolean).join('; ')}`];
    }
    case 'fixture_updated': {
      const out: (Node | string)[] = ['fixture now: '];
      out.push(e.home_id ? named(e.home_id, names) : 'home not published', ' v ', e.away_id ? named(e.away_id, names) : 'away not published');
      out.push(`, ${e.played_on ?? 'undated'}`);
      if (e.leg) out.push(`, leg ${e.leg}`);
      if (e.state) out.push(`, ${e.state}`);
      if (e.aggregate_of) out.push(', completing ', named(e.aggregate_of, names));
      return out;
    }
    case 'score_updated': {
      const m = e.match;
      if (m.home_score === null || m.away_score === null) return ['score withdrawn: none published now'];
      const pens = m.shootout_home !== null && m.shootout_away !== null ? ` (${m.shootout_home}–${m.shootout_away} on penalties)` : '';
      const form = m.result_form && RESULT_FORMS[m.result_form] && !pens ? `, ${RESULT_FORMS[m.result_form]}` : '';
      return [`score now ${m.home_score}–${m.away_score}${pens}${form}`];
    }
    default: {
      // A type this explorer does not know yet (a newer server): its plain fields, in words.
      const fields = Object.entries(e as Record<string, unknown>).filter(([k, v]) => k !== 'type' && k !== 'reep_id' && (typeof v !== 'object' || v === null));
      return [fields.map(([k, v]) => `${k.replaceAll('_', ' ')} ${String(v)}`).join(', ')];
    }
  }
}
