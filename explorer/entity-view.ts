// An entity's page: core, scoreline, aliases by rank, attributes, bridges grouped by provider (each ID copyable),
// the knowledge-base overlay marked lower-confidence, and the relationship summary. A merged ID shows the redirect;
// a tombstone says the ID is retired.
import { RegisterApiError, type Entity } from '../client/register-client.ts';
import type { ViewContext } from './context.ts';
import { entityLink, facts, h, section } from './dom.ts';
import { matchesHash } from './matches-view.ts';

type Bridge = NonNullable<Entity['bridges']>[number];
type Scoreline = NonNullable<Entity['match']>;

export async function entityView(ctx: ViewContext, reepId: string): Promise<HTMLElement> {
  let result;
  try {
    result = await ctx.client.entity(reepId, { include: ['aliases', 'attributes', 'bridges', 'relationships', 'overlay'] });
  } catch (e) {
    if (e instanceof RegisterApiError && e.code === 'gone') {
      return h(
        'article',
        { class: 'entity retired' },
        h('h1', {}, reepId),
        h('p', { class: 'notice retired-notice', role: 'status' }, h('strong', {}, 'Retired. '), e.body.message ?? 'This ID was retired and is never reused.'),
      );
    }
    if (e instanceof RegisterApiError && e.code === 'not_found') {
      return h('article', { class: 'entity' }, h('h1', {}, reepId), h('p', { class: 'notice', role: 'status' }, 'No entity was ever published under this ID.'));
    }
    throw e;
  }
  const entity = result.data;
  const roles = new Map((await ctx.providers()).map((p) => [p.name, p.role]));
  const scoreline = scorelineOf(entity);
  return h(
    'article',
    { class: 'entity' },
    result.redirect
      ? h(
          'p',
          { class: 'notice redirect-notice', role: 'status' },
          h('strong', {}, 'Redirected. '),
          `${result.redirect.requested_id} was merged into `,
          entityLink(result.redirect.redirected_to),
          '; store the survivor.',
        )
      : null,
    h('h1', {}, entity.name_en),
    entity.entity_type === 'team' ? h('p', { class: 'entity-links' }, h('a', { href: matchesHash(entity.reep_id), id: 'team-matches' }, 'Matches of this team')) : null,
    section(
      'Core',
      facts([
        ['Register ID', h('code', {}, entity.reep_id)],
        ['Type', entity.entity_type],
        ['Lifecycle', entity.lifecycle_state],
        ['Canonical ID', entity.canonical_reep_id ? entityLink(entity.canonical_reep_id) : null],
        ['Release', result.meta.stamp],
      ]),
    ),
    scoreline ? section('Scoreline', scorelineFacts(scoreline)) : null,
    aliasSection(entity),
    attributeSection(entity),
    bridgeSection(entity.bridges ?? [], roles),
    overlaySection(entity),
    relationshipSection(entity),
  );
}

/** A match's scoreline (`match`, in every match's core envelope); other entity types have none. */
function scorelineOf(entity: Entity): Scoreline | null {
  return entity.match ?? null;
}

function scorelineFacts(s: Scoreline): HTMLElement {
  const score = s.home_score !== null && s.away_score !== null ? `${s.home_score} – ${s.away_score}` : 'not published';
  const shootout = s.shootout_home !== null && s.shootout_away !== null ? `${s.shootout_home} – ${s.shootout_away}` : null;
  return facts([
    ['Home', s.home_id ? entityLink(s.home_id) : null],
    ['Away', s.away_id ? entityLink(s.away_id) : null],
    ['Score', score],
    ['Shoot-out', shootout],
    ['Result form', s.result_form],
    ['Basis', s.score_basis],
    ['Played on', s.played_on],
  ]);
}

function aliasSection(entity: Entity): HTMLElement | null {
  const aliases = entity.aliases ?? [];
  if (aliases.length === 0) return section('Aliases', h('p', {}, 'None.'));
  // The server sends them rank-ordered, unranked last; sorted again here so the page never depends on it.
  const sorted = [...aliases].sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity));
  return section(
    'Aliases',
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'rank'), h('th', { scope: 'col' }, 'name'), h('th', { scope: 'col' }, 'type'), h('th', { scope: 'col' }, 'language'))),
      h('tbody', {}, sorted.map((a) => h('tr', {}, h('td', { class: 'num' }, a.rank ?? '–'), h('td', {}, a.name), h('td', {}, a.type ?? ''), h('td', {}, a.language ?? '')))),
    ),
  );
}

function attributeSection(entity: Entity): HTMLElement {
  const attrs = Object.entries(entity.attributes ?? {});
  return section('Attributes', attrs.length === 0 ? h('p', {}, 'None.') : facts(attrs.map(([k, v]) => [k, v.join(', ')])));
}

function bridgeSection(bridges: Bridge[], roles: Map<string, string>): HTMLElement {
  const byProvider = new Map<string, Bridge[]>();
  for (const b of bridges) byProvider.set(b.provider, [...(byProvider.get(b.provider) ?? []), b]);
  const groups = [...byProvider].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return section(
    'Bridges',
    groups.length === 0
      ? h('p', {}, 'No provider bridges this entity.')
      : h(
          'div',
          { class: 'bridges' },
          groups.map(([provider, list]) =>
            h(
              'div',
              { class: 'bridge-group', 'data-provider': provider },
              h('h3', {}, provider, ' ', h('span', { class: 'role' }, list[0].role ?? roles.get(provider) ?? 'unknown role')),
              h(
                'ul',
                {},
                list.map((b) =>
                  h(
                    'li',
                    { class: 'bridge', 'data-namespace': b.namespace ?? '', 'data-external-id': b.external_id },
                    b.namespace ? h('span', { class: 'namespace' }, b.namespace) : null,
                    h('code', {}, b.external_id),
                    copyButton(b.external_id, `Copy ${provider} ID ${b.external_id}`),
                  ),
                ),
              ),
            ),
          ),
        ),
  );
}

function copyButton(text: string, label: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'copy', 'aria-label': label }, 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed';
    }
  });
  return button;
}

function overlaySection(entity: Entity): HTMLElement | null {
  const kb = entity.overlay?.kb;
  if (!kb) return null;
  return section(
    'Knowledge-base overlay',
    h('p', { class: 'lower-confidence' }, h('strong', {}, 'Lower confidence. '), 'Hints relayed by the knowledge base; never canonical bridges.'),
    facts([
      ['Item', h('code', {}, kb.qid)],
      ['Link confidence', kb.link_confidence === null ? null : String(kb.link_confidence)],
      ['Birth-date check', kb.dob_check],
    ]),
    kb.ids.length
      ? h(
          'table',
          { class: 'lower-confidence-table' },
          h('caption', {}, 'Provider IDs the knowledge base relays'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'provider'), h('th', { scope: 'col' }, 'ID'), h('th', { scope: 'col' }, 'confidence'))),
          h('tbody', {}, kb.ids.map((x) => h('tr', {}, h('td', {}, x.provider), h('td', {}, h('code', {}, x.external_id)), h('td', { class: 'num' }, String(x.confidence))))),
        )
      : null,
    kb.aliases.length ? h('p', {}, 'Aliases: ', kb.aliases.map((a) => a.name).join(', ')) : null,
  );
}

function relationshipSection(entity: Entity): HTMLElement {
  const rels = entity.relationships ?? [];
  return section(
    'Relationships',
    rels.length === 0
      ? h('p', {}, 'No structural relationships.')
      : h(
          'table',
          {},
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'family'), h('th', { scope: 'col' }, 'count'), h('th', { scope: 'col' }, 'roles'), h('th', { scope: 'col' }, 'providers'))),
          h(
            'tbody',
            {},
            rels.map((r) =>
              h(
                'tr',
                {},
                h('td', {}, r.family),
                h('td', { class: 'num' }, r.count),
                h('td', {}, Object.entries(r.roles).map(([k, v]) => `${k} ${v}`).join(', ')),
                h('td', {}, r.source_providers.join(', ')),
              ),
            ),
          ),
        ),
  );
}
