// Check a contribution file: drop a CSV (or choose one), and it goes to POST /contributions/check in requests of at
// most 1,000 records, one after another, while a progress line counts them; the results join into one table, paged,
// with filters per status and band (counts shown), and download as a CSV report. A refused request (its Error body's
// message shown) stops the run and keeps the rows checked before it. The run is kept for the tab, so following a
// row's entity link and coming back loses nothing.
import { bytesOf, RegisterApiError } from '../client/register-client.ts';
import { checkedRow, csvChunks, reportLines, STATUSES, withFileLines, type CheckedRow } from './check-csv.ts';
import type { ViewContext } from './context.ts';
import { entityLink, h, numberFormat } from './dom.ts';

/** Rows per page of the result table: a page is drawn, never the whole file. */
export const CHECK_PAGE_SIZE = 100;

/** The bands, as the route gives them (null: no write), in the order the view lists them. */
const BANDS: { key: string; value: number | null; label: string }[] = [
  { key: '1', value: 1, label: '1.0 direct bridge' },
  { key: '0.95', value: 0.95, label: '0.95 cross-ID and name' },
  { key: '0.9', value: 0.9, label: '0.90 review' },
  { key: '0.8', value: 0.8, label: '0.80 candidate only' },
  { key: 'none', value: null, label: 'none (no write)' },
];
const bandKey = (band: number | null): string => BANDS.find((b) => b.value === band)?.key ?? String(band);

/** A check of one file: what it found so far, where it is, and the table's filters and page. */
interface CheckRun {
  file: string;
  rows: CheckedRow[];
  statusCounts: Map<CheckedRow['status'], number>;
  bandCounts: Map<string, number>;
  stamp: string | null;
  requests: number;
  state: 'running' | 'done' | 'failed' | 'stopped';
  progress: string;
  error: string | null;
  stop: boolean;
  hiddenStatuses: Set<string>;
  hiddenBands: Set<string>;
  page: number;
}

let run: CheckRun | null = null;
/** Redraws the check view last built (the run goes on while the reader is on another view). */
let repaint = (): void => {};

export function checkView(ctx: ViewContext): HTMLElement {
  const input = h('input', { id: 'check-file', type: 'file', accept: '.csv,text/csv', 'aria-describedby': 'check-hint' });
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void start(ctx, file);
    input.value = '';
  });
  const drop = h(
    'div',
    { id: 'check-drop', class: 'drop-zone' },
    h('p', {}, h('strong', {}, 'Drop a CSV file here'), ', or choose one: '),
    h('label', { for: 'check-file' }, 'Contribution file (CSV)'),
    ' ',
    input,
  );
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const file = e.dataTransfer?.files[0];
    if (file) void start(ctx, file);
  });
  const results = h('div', { id: 'check-results' });
  const article = h(
    'article',
    { class: 'check' },
    h('h1', {}, 'Check a contribution file'),
    h(
      'p',
      { id: 'check-hint', class: 'hint' },
      'A CSV with a header row: provider, external_id, and where known name, date_of_birth, type, nationality, namespace and cross-ID columns such as transfermarkt_id; other columns are passed through to the report. Each row is checked against the release this namespace serves, and charged as one lookup unless it is invalid.',
    ),
    drop,
    results,
  );
  repaint = () => {
    // The control in use keeps the focus across the redraw (a filter box toggled by keyboard, a pager button).
    const focused = document.activeElement?.id;
    results.replaceChildren(...(run ? runParts(run) : []));
    if (focused && results.querySelector(`#${focused}`)) (results.querySelector(`#${focused}`) as HTMLElement).focus();
  };
  repaint();
  return article;
}

/** Starts checking `file`, replacing any earlier run (one still going is told to stop). */
async function start(ctx: ViewContext, file: File): Promise<void> {
  if (run) run.stop = true;
  const mine: CheckRun = {
    file: file.name,
    rows: [],
    statusCounts: new Map(),
    bandCounts: new Map(),
    stamp: null,
    requests: 0,
    state: 'running',
    progress: `Reading ${file.name}…`,
    error: null,
    stop: false,
    hiddenStatuses: new Set(),
    hiddenBands: new Set(),
    page: 1,
  };
  run = mine;
  repaint();
  try {
    for await (const chunk of csvChunks(bytesOf(file.stream()))) {
      if (mine.stop) {
        mine.state = 'stopped';
        break;
      }
      const last = chunk.firstRow + chunk.rows - 1;
      mine.progress = `Checking rows ${numberFormat.format(chunk.firstRow)}–${numberFormat.format(last)} of ${file.name} (${percent(chunk.bytesRead, file.size)} of the file read)…`;
      repaint();
      let answer;
      try {
        answer = await ctx.checkCsv(chunk.body, chunk.firstRow);
      } catch (e) {
        mine.state = 'failed';
        const these = chunk.rows === 1 ? `Row ${numberFormat.format(chunk.firstRow)} was` : `Rows ${numberFormat.format(chunk.firstRow)}–${numberFormat.format(last)} were`;
        const kept = mine.rows.length ? ` The ${numberFormat.format(mine.rows.length)} rows checked before ${chunk.rows === 1 ? 'it' : 'them'} are kept below.` : '';
        mine.error = `${these} not checked: ${withFileLines(reason(e), chunk)}.${kept}`;
        break;
      }
      if (mine.stamp !== null && answer.stamp !== mine.stamp) {
        // Every row of one report is checked against one release.
        mine.state = 'failed';
        mine.error = `The server moved from release ${mine.stamp} to ${answer.stamp} during the check, so rows from ${numberFormat.format(chunk.firstRow)} on are not shown. Check the file again for a report against ${answer.stamp}.`;
        break;
      }
      mine.stamp = answer.stamp;
      mine.requests++;
      for (const r of answer.results) {
        const row = checkedRow(r, chunk);
        mine.rows.push(row);
        mine.statusCounts.set(row.status, (mine.statusCounts.get(row.status) ?? 0) + 1);
        const band = bandKey(row.band);
        mine.bandCounts.set(band, (mine.bandCounts.get(band) ?? 0) + 1);
      }
      repaint();
    }
    if (mine.state === 'running') mine.state = 'done';
  } catch (e) {
    mine.state = 'failed';
    mine.error = `${file.name} could not be read: ${(e as Error).message}`;
  }
  const n = numberFormat.format(mine.rows.length);
  const against = mine.stamp ? ` against release ${mine.stamp}` : '';
  const requests = `${mine.requests} request${mine.requests === 1 ? '' : 's'}`;
  mine.progress =
    mine.state === 'done'
      ? mine.rows.length === 0
        ? `${file.name} holds no rows to check (a header row, then one row per contribution).`
        : `Checked all ${n} rows of ${file.name}${against}, in ${requests}.`
      : mine.rows.length === 0
        ? `Nothing of ${file.name} was checked.`
        : `Stopped after ${n} rows of ${file.name}${against}, in ${requests}.`;
  repaint();
}

function percent(part: number, whole: number): string {
  return whole ? `${Math.min(100, Math.floor((100 * part) / whole))}%` : '100%';
}

function reason(e: unknown): string {
  const said = e instanceof RegisterApiError ? `${e.status} ${e.code}${e.body.message ? `: ${e.body.message}` : ''}` : ((e as Error)?.message ?? String(e));
  return said.replace(/\.$/, '');
}

/** The rows the filters let through. */
function shownRows(r: CheckRun): CheckedRow[] {
  if (r.hiddenStatuses.size === 0 && r.hiddenBands.size === 0) return r.rows;
  return r.rows.filter((row) => !r.hiddenStatuses.has(row.status) && !r.hiddenBands.has(bandKey(row.band)));
}

/** The progress line, any error, then (once rows are in) the filters, the downloads and the table. */
function runParts(r: CheckRun): HTMLElement[] {
  const parts: HTMLElement[] = [
    h('p', { id: 'check-progress', role: 'status', 'aria-live': 'polite', 'data-state': r.state, 'data-rows': r.rows.length }, r.progress, r.state === 'running' ? [' ', h('button', { type: 'button', id: 'check-stop', onclick: () => (r.stop = true) }, 'Stop')] : null),
  ];
  if (r.error) parts.push(h('p', { id: 'check-error', class: 'notice error', role: 'alert' }, r.error));
  if (r.rows.length === 0) return parts;
  const shown = shownRows(r);
  const pages = Math.max(1, Math.ceil(shown.length / CHECK_PAGE_SIZE));
  r.page = Math.min(r.page, pages);
  const first = (r.page - 1) * CHECK_PAGE_SIZE;
  const pageRows = shown.slice(first, first + CHECK_PAGE_SIZE);
  const toggle = (set: Set<string>, key: string) => () => {
    if (set.has(key)) set.delete(key);
    else set.add(key);
    r.page = 1;
    repaint();
  };
  const box = (group: string, key: string, label: string, count: number, hidden: Set<string>) => {
    const id = `check-${group}-${key.replace(/\W/g, '_')}`;
    return h(
      'span',
      { class: 'filter' },
      h('input', { type: 'checkbox', id, 'data-key': key, checked: !hidden.has(key), onchange: toggle(hidden, key) }),
      h('label', { for: id }, `${label} (${numberFormat.format(count)})`),
    );
  };
  parts.push(
    h(
      'fieldset',
      { id: 'check-status-filter', class: 'filters' },
      h('legend', {}, 'Status'),
      STATUSES.filter((s) => r.statusCounts.get(s)).map((s) => box('status', s, s.replaceAll('_', ' '), r.statusCounts.get(s)!, r.hiddenStatuses)),
    ),
    h(
      'fieldset',
      { id: 'check-band-filter', class: 'filters' },
      h('legend', {}, 'Band'),
      BANDS.filter((b) => r.bandCounts.get(b.key)).map((b) => box('band', b.key, b.label, r.bandCounts.get(b.key)!, r.hiddenBands)),
    ),
    h(
      'p',
      { class: 'downloads' },
      h('button', { type: 'button', id: 'check-download', onclick: () => download(r, r.rows, 'report') }, `Download report (${numberFormat.format(r.rows.length)} rows)`),
      ' ',
      shown.length !== r.rows.length
        ? h('button', { type: 'button', id: 'check-download-shown', onclick: () => download(r, shown, 'shown') }, `Download the ${numberFormat.format(shown.length)} rows shown`)
        : null,
    ),
    h(
      'table',
      { class: 'check-table' },
      h('caption', {}, `Rows ${shown.length ? numberFormat.format(first + 1) : 0}–${numberFormat.format(first + pageRows.length)} of the ${numberFormat.format(shown.length)} shown (of ${numberFormat.format(r.rows.length)} checked)`),
      h('thead', {}, h('tr', {}, ...['Row', 'Line', 'Status', 'Band', 'Register ID', 'Reasons', 'Provider ID', 'Best candidate'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, pageRows.map(resultRow)),
    ),
  );
  if (pages > 1) {
    const to = (p: number) => () => {
      r.page = p;
      repaint();
    };
    parts.push(
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Result pages' },
        h('button', { type: 'button', id: 'check-prev', disabled: r.page === 1, onclick: to(r.page - 1) }, 'Previous page'),
        h('span', { id: 'check-page', 'data-page': r.page }, `Page ${numberFormat.format(r.page)} of ${numberFormat.format(pages)}`),
        h('button', { type: 'button', id: 'check-next', disabled: r.page === pages, onclick: to(r.page + 1) }, 'Next page'),
      ),
    );
  }
  return parts;
}

function resultRow(r: CheckedRow): HTMLTableRowElement {
  const ref = `${r.provider}${r.namespace ? ` ${r.namespace}` : ''} ${r.external_id}`;
  return h(
    'tr',
    { 'data-row': r.row, 'data-status': r.status },
    h('td', { class: 'num' }, r.row),
    h('td', { class: 'num' }, r.line ?? ''),
    h('td', {}, r.status.replaceAll('_', ' ')),
    h('td', { class: 'num' }, r.band === null ? '—' : r.band.toFixed(2)),
    h('td', {}, r.reep_id ? entityLink(r.reep_id) : '—'),
    h('td', {}, r.reasons.join(', ')),
    h('td', {}, ref),
    h('td', {}, r.best ? [entityLink(r.best.reep_id, r.best.label || r.best.reep_id), ` (${r.best.score})`] : '—'),
  );
}

/** Saves the rows as the report CSV, named after the file and the release. */
function download(r: CheckRun, rows: readonly CheckedRow[], what: string): void {
  const blob = new Blob(reportLines(rows), { type: 'text/csv;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const stem = r.file.replace(/\.csv$/i, '');
  const a = h('a', { href: url, download: `${stem}.${what}${r.stamp ? `.${r.stamp}` : ''}.csv`, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // After the click has handed the URL to the download.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
