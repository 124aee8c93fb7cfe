// Search as you type over /search: a combobox with a listbox of results (WAI-ARIA pattern), arrow keys to move,
// Enter to open, Escape to close. Only the newest query's answer is shown.
import type { RegisterClient } from '../client/register-client.ts';
import { h, numberFormat } from './dom.ts';

const MIN_CHARS = 3;
const DEBOUNCE_MS = 200;

/** Where a search box sits: its element ID (the results list and options derive theirs), label and placeholder. */
export interface SearchBoxOptions {
  id?: string;
  label?: string;
  placeholder?: string;
  /** Only results of this entity type are offered (e.g. `team`). */
  type?: NonNullable<Parameters<RegisterClient['search']>[1]>['type'];
}

export function searchBox(client: () => RegisterClient, open: (reepId: string) => void, opts: SearchBoxOptions = {}): HTMLElement {
  const id = opts.id ?? 'search';
  const input = h('input', {
    id,
    type: 'search',
    role: 'combobox',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': `${id}-results`,
    placeholder: opts.placeholder ?? 'Search players, teams, matches, competitions',
  });
  const list = h('ul', { id: `${id}-results`, class: 'search-results', role: 'listbox', 'aria-label': `${opts.label ?? 'Search'} results`, hidden: true });
  const status = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  let items: { reep_id: string }[] = [];
  let active = -1;
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function setActive(i: number): void {
    active = i;
    list.querySelectorAll('[role=option]').forEach((li, j) => li.setAttribute('aria-selected', String(j === i)));
    if (i >= 0) input.setAttribute('aria-activedescendant', `${id}-option-${i}`);
    else input.removeAttribute('aria-activedescendant');
  }
  function close(): void {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    setActive(-1);
  }
  function choose(i: number): void {
    const item = items[i];
    if (!item) return;
    close();
    input.value = '';
    open(item.reep_id);
  }

  async function run(q: string): Promise<void> {
    const mine = ++asked;
    try {
      const r = await client().search(q, opts.type ? { limit: 10, type: opts.type } : { limit: 10 });
      if (mine !== asked) return;
      items = r.data.results;
      // Which query the list answers: typing may pause mid-word, and an earlier word's results show meanwhile.
      list.dataset.query = q;
      list.replaceChildren(
        ...r.data.results.map((x, i) =>
          h(
            'li',
            { id: `${id}-option-${i}`, role: 'option', 'aria-selected': 'false', onmousedown: (e: Event) => (e.preventDefault(), choose(i)) },
            h('span', { class: 'label' }, x.label),
            h('span', { class: 'meta' }, `${x.entity_type} · ${numberFormat.format(x.bridge_count)} bridges`),
          ),
        ),
      );
      list.hidden = items.length === 0;
      input.setAttribute('aria-expanded', String(items.length > 0));
      status.textContent = `${items.length} result${items.length === 1 ? '' : 's'}`;
      setActive(items.length > 0 ? 0 : -1);
    } catch (e) {
      if (mine !== asked) return;
      items = [];
      close();
      status.textContent = (e as Error).message;
    }
  }

  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (q.length < MIN_CHARS) {
      asked++;
      close();
      return;
    }
    timer = setTimeout(() => void run(q), DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' && items.length) setActive((active + 1) % items.length);
    else if (e.key === 'ArrowUp' && items.length) setActive((active - 1 + items.length) % items.length);
    else if (e.key === 'Enter' && active >= 0) choose(active);
    else if (e.key === 'Escape') close();
    else return;
    e.preventDefault();
  });
  input.addEventListener('blur', () => close());

  return h('div', { class: 'search', role: 'search', 'aria-label': opts.label ?? 'Search' }, h('label', { for: id }, opts.label ?? 'Search'), input, list, status);
}
