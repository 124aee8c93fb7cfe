// What changed between two releases: counts by event type and by provider as charts, then the events, paged, with
// links to the entities. The window is any two published releases (`from` exclusive, `to` inclusive).
import type { ChangeEvent } from '../client/register-client.ts';
import { barChart } from './charts.ts';
import { CHANGES_PAGE_SIZE, type Route, type ViewContext } from './context.ts';
import { entityLink, h, labelledForm, numberFormat, section } from './dom.ts';

/** Cursors of pages already reached, by window: `#/changes?…&page=3` comes from page 2's `next_cursor`. */
const cursors = new Map<string, (string | null)[]>();

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
      h(
        'table',
        { class: 'events' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'type'), h('th', { scope: 'col' }, 'entity'), h('th', { scope: 'col' }, 'what'))),
        h('tbody', {}, events.events.map((e) => h('tr', {}, h('td', {}, e.type), h('td', {}, entityLink(e.reep_id)), h('td', {}, eventDetail(e))))),
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

/** What an event says beyond its type and ID; fields it does not know are shown as they come. */
function eventDetail(e: ChangeEvent): HTMLElement | string {
  const fields = e as unknown as Record<string, unknown>;
  if ('redirected_to' in fields && typeof fields.redirected_to === 'string') return h('span', {}, 'now ', entityLink(fields.redirected_to));
  if (e.type === 'provider_updated') return `${e.provider}: ${e.added.length} added, ${e.removed.length} removed`;
  if (e.type === 'entity_added') return `${e.entity_type} ${e.label}`;
  if (e.type === 'label_updated' || e.type === 'entity_status_changed') return `${e.from} → ${e.to}`;
  const rest = Object.entries(fields).filter(([k]) => k !== 'type' && k !== 'reep_id');
  return rest.length ? JSON.stringify(Object.fromEntries(rest)) : '';
}
