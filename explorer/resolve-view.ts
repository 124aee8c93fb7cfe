// Resolve a provider's ID: pick the provider, type its ID (and namespace), land on the entity. An ID that names
// several entities (409) lists every candidate.
import type { ResolveOutcome } from '../client/register-client.ts';
import type { Route, ViewContext } from './context.ts';
import { entityLink, h, labelledForm } from './dom.ts';

export async function resolveView(ctx: ViewContext, route: Route, go: (hash: string) => void): Promise<HTMLElement> {
  const providers = await ctx.providers();
  const given = { provider: route.params.get('provider') ?? '', namespace: route.params.get('namespace') ?? '', id: route.params.get('id') ?? '' };
  const select = h('select', { id: 'resolve-provider', name: 'provider', required: true }, providers.map((p) => h('option', { value: p.name, selected: p.name === given.provider }, p.name)));
  const namespace = h('input', { id: 'resolve-namespace', name: 'namespace', value: given.namespace, placeholder: 'empty for none' });
  const externalId = h('input', { id: 'resolve-id', name: 'id', required: true, value: given.id, autocomplete: 'off' });
  const form = labelledForm(
    { class: 'resolve-form', 'aria-label': 'Resolve a provider ID' },
    [['Provider', select], ['Namespace', namespace], ['Provider ID', externalId]],
    'Resolve',
    () => go(`#/resolve?${new URLSearchParams({ provider: select.value, namespace: namespace.value.trim(), id: externalId.value.trim() })}`),
  );
  const out = h('div', { class: 'resolve-result', role: 'status' });
  if (given.provider && given.id) {
    const outcome = await ctx.client.resolve(given.provider, given.id, { namespace: given.namespace });
    const shown = describe(outcome, given);
    if (shown === null && outcome.kind === 'found') {
      // One entity: its page is the answer.
      go(`#/entity/${outcome.entity.reep_id}`);
    } else if (shown) out.append(shown);
  }
  return h('article', { class: 'resolve' }, h('h1', {}, 'Resolve a provider ID'), form, out);
}

function describe(outcome: ResolveOutcome, given: { provider: string; namespace: string; id: string }): HTMLElement | null {
  const what = `${given.provider}${given.namespace ? ` ${given.namespace}` : ''} ${given.id}`;
  if (outcome.kind === 'none') return h('p', {}, `No entity carries ${what}.`);
  if (outcome.kind === 'ambiguous') {
    return h(
      'div',
      { class: 'candidates' },
      h('p', {}, h('strong', {}, `${what} names ${outcome.candidates.length} entities. `), 'Pick the one you mean:'),
      h('ul', {}, outcome.candidates.map((c) => h('li', {}, entityLink(c.reep_id, c.name_en), ` (${c.entity_type}, ${c.reep_id})`))),
    );
  }
  return null;
}
