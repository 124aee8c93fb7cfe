// Small DOM helpers for the explorer: elements are built from data with text nodes only (never innerHTML), so a
// label from a release cannot inject markup.
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

/** `<tag attrs>children</tag>`: `on…` attributes become listeners, `true` a bare attribute, `false`/undefined none. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

/** A definition list of the given pairs, leaving out empty values. */
export function facts(pairs: [string, Child][]): HTMLDListElement {
  return h('dl', { class: 'facts' }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== '').flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/**
 * A form of labelled controls and one submit button; `onSubmit` runs instead of a page load. Each label names its
 * control by the control's id.
 */
export function labelledForm(attrs: Attrs, fields: [string, HTMLElement][], submit: string, onSubmit: () => void): HTMLFormElement {
  const form = h('form', attrs, fields.flatMap(([label, control]) => [h('label', { for: control.id }, label), control]), h('button', { type: 'submit' }, submit));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    onSubmit();
  });
  return form;
}

/** A link to an entity's page. */
export function entityLink(reepId: string, label?: string): HTMLAnchorElement {
  return h('a', { href: `#/entity/${reepId}` }, label ?? reepId);
}

/** A section with a heading, for each part of a page. */
export function section(title: string, ...children: (Child | Child[])[]): HTMLElement {
  const id = `s-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

export const numberFormat = new Intl.NumberFormat('en');
