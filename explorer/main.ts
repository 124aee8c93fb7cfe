// The release explorer at `/`: the page shell (key, namespace, search, navigation) and a hash router over the views.
// The key is typed in once and kept in sessionStorage for this tab; it goes only into the Authorization header.
import { createRegisterClient, RegisterApiError, type RegisterClient } from '../client/register-client.ts';
import { changesView } from './changes-view.ts';
import { checkView } from './check-view.ts';
import type { CheckAnswer, ProviderInfo, Route, ViewContext } from './context.ts';
import { h } from './dom.ts';
import { entityView } from './entity-view.ts';
import { matchesView } from './matches-view.ts';
import { releaseView } from './release-view.ts';
import { resolveView } from './resolve-view.ts';
import { searchBox } from './search-box.ts';
import './explorer.css';

const KEY_ITEM = 'identity-register.key';
const NAMESPACE_ITEM = 'identity-register.namespace';

let key = sessionStorage.getItem(KEY_ITEM);
let namespace = sessionStorage.getItem(NAMESPACE_ITEM) === 'next' ? 'next' : 'v1';
let context: ViewContext = makeContext();

function makeContext(): ViewContext {
  const client: RegisterClient = createRegisterClient({ baseUrl: `/api/${namespace}`, key });
  let providers: Promise<ProviderInfo[]> | null = null;
  return {
    client,
    namespace,
    providers: () =>
      (providers ??= client.providers().then(
        (r) => r.data.providers.map((p) => ({ name: p.name, role: p.role, bridgeCount: p.bridge_count })),
        (e: unknown) => {
          providers = null;
          throw e;
        },
      )),
    checkCsv: (csv, firstRow) => checkCsv(namespace, key, csv, firstRow),
  };
}

/**
 * One contributions check of CSV bytes. Not retried: a refusal (a 429 too) is shown with its message and the run
 * stops, keeping the rows already checked.
 */
async function checkCsv(ns: string, apiKey: string | null, csv: Uint8Array<ArrayBuffer>, firstRow: number): Promise<CheckAnswer> {
  const path = '/contributions/check';
  const res = await fetch(`/api/${ns}${path}?first_row=${firstRow}`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'text/csv; charset=utf-8', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    body: csv,
    redirect: 'error',
  });
  const body = await res.json().catch(() => null);
  if (res.ok && body) return body as CheckAnswer;
  const error = body?.error ? body : { error: 'unexpected_response', message: `status ${res.status} without an Error body` };
  const header = (name: string) => res.headers.get(name);
  const number = (name: string) => (header(name) === null ? null : Number(header(name)));
  throw new RegisterApiError('POST', path, error, {
    status: res.status,
    stamp: header('x-register-release-stamp'),
    creditsRemaining: number('x-register-credits-remaining'),
    keyExpires: header('x-register-key-expires'),
    keyDaysRemaining: number('x-register-key-days-remaining'),
    etag: header('etag'),
    retries: 0,
  });
}

const main = h('main', { id: 'main', tabindex: '-1' });
const keyForm = buildKeyForm();
const nsSelect = h('select', { id: 'namespace', 'aria-label': 'Namespace' }, h('option', { value: 'v1', selected: namespace === 'v1' }, 'v1 (published)'), h('option', { value: 'next', selected: namespace === 'next' }, 'next (staging)'));
nsSelect.addEventListener('change', () => {
  namespace = nsSelect.value === 'next' ? 'next' : 'v1';
  sessionStorage.setItem(NAMESPACE_ITEM, namespace);
  context = makeContext();
  void render();
});

document.body.append(
  h('a', { class: 'skip', href: '#main', onclick: (e: Event) => (e.preventDefault(), main.focus()) }, 'Skip to content'),
  h(
    'header',
    {},
    h('p', { class: 'brand' }, h('a', { href: '#/' }, 'Identity Register explorer')),
    h('nav', { 'aria-label': 'Views' }, h('a', { href: '#/' }, 'Release'), h('a', { href: '#/resolve' }, 'Resolve'), h('a', { href: '#/changes' }, 'Changes'), h('a', { href: '#/matches' }, 'Matches'), h('a', { href: '#/check' }, 'Check a file'), h('a', { href: '/docs' }, 'API reference')),
    searchBox(() => context.client, (id) => go(`#/entity/${id}`)),
    nsSelect,
    keyForm,
  ),
  main,
);

function buildKeyForm(): HTMLFormElement {
  const input = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'the key npm start printed' });
  const form = h('form', { class: 'key-form', 'aria-label': 'API key' });
  const paint = () => {
    form.replaceChildren(
      ...(key
        ? [h('span', {}, 'Key set for this tab'), h('button', { type: 'button', id: 'forget-key', onclick: () => setKey(null) }, 'Forget key')]
        : [h('label', { for: 'api-key' }, 'API key'), input, h('button', { type: 'submit' }, 'Use key')]),
    );
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const value = input.value.trim();
    input.value = '';
    if (value) setKey(value);
  });
  paint();
  (form as HTMLFormElement & { paint: () => void }).paint = paint;
  return form;
}

function setKey(value: string | null): void {
  key = value;
  if (value) sessionStorage.setItem(KEY_ITEM, value);
  else sessionStorage.removeItem(KEY_ITEM);
  context = makeContext();
  (keyForm as HTMLFormElement & { paint: () => void }).paint();
  void render();
}

function go(hash: string): void {
  if (location.hash === hash) void render();
  else location.hash = hash;
}

function routeOf(hash: string): Route {
  const [path, query] = hash.replace(/^#\/?/, '').split('?', 2);
  return { path: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query ?? '') };
}

let rendering = 0;
async function render(): Promise<void> {
  const mine = ++rendering;
  const route = routeOf(location.hash);
  if (!key) {
    main.replaceChildren(h('h1', {}, 'Welcome'), h('p', {}, 'Type the API key that ', h('code', {}, 'npm start'), ' printed into the key box above. It is kept for this tab only.'));
    return;
  }
  main.setAttribute('aria-busy', 'true');
  let view: HTMLElement;
  try {
    const [first] = route.path;
    if (first === 'entity' && route.path[1]) view = await entityView(context, route.path[1]);
    else if (first === 'resolve') view = await resolveView(context, route, go);
    else if (first === 'changes') view = await changesView(context, route, go);
    else if (first === 'matches') view = await matchesView(context, route, go);
    else if (first === 'check') view = checkView(context);
    else view = await releaseView(context);
  } catch (e) {
    view = h('div', { class: 'notice error', role: 'alert' }, h('h1', {}, 'That did not work'), h('p', {}, explain(e)));
  }
  if (mine !== rendering) return;
  main.replaceChildren(view);
  main.removeAttribute('aria-busy');
  document.title = `${view.querySelector('h1')?.textContent ?? 'Explorer'} · Identity Register`;
}

function explain(e: unknown): string {
  if (e instanceof RegisterApiError) {
    if (e.status === 401) return `The server refused the key (${e.code}). Forget it and type the current one.`;
    return `${e.status} ${e.code}: ${e.body.message ?? ''}`;
  }
  return (e as Error)?.message ?? String(e);
}

window.addEventListener('hashchange', () => void render());
void render();
