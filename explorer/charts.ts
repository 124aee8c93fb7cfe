// Bar charts with Chart.js (only the bar parts are registered, so the bundle carries no other chart type). Every chart
// is drawn with its numbers beside it in a table and its categories named on the axis, so no reading depends on colour.
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { h, numberFormat } from './dom.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

export interface BarRow {
  label: string;
  value: number;
  /** A second category (a provider's role): named in the label and the table, and told apart by fill pattern too. */
  group?: string;
}

const FILLS = ['#1f5fa8', '#b8560b', '#2e7d32', '#6a1b9a', '#00838f'];

/** Hatched fills per group, so groups differ in pattern as well as in hue. */
function patternFor(index: number): CanvasPattern | string {
  const colour = FILLS[index % FILLS.length];
  const tile = document.createElement('canvas');
  tile.width = tile.height = 8;
  const g = tile.getContext('2d');
  if (!g) return colour;
  g.fillStyle = colour;
  g.fillRect(0, 0, 8, 8);
  if (index > 0) {
    g.strokeStyle = 'rgba(255,255,255,0.7)';
    g.lineWidth = 2;
    g.beginPath();
    if (index % 2 === 1) g.moveTo(0, 8), g.lineTo(8, 0);
    else g.moveTo(0, 4), g.lineTo(8, 4);
    g.stroke();
  }
  return g.createPattern(tile, 'repeat') ?? colour;
}

/** A figure: the caption, a horizontal bar chart, and the same numbers as a table. */
export function barChart(title: string, rows: BarRow[], opts: { valueName?: string } = {}): HTMLElement {
  const valueName = opts.valueName ?? 'count';
  const groups = [...new Set(rows.map((r) => r.group ?? ''))];
  const labels = rows.map((r) => (r.group ? `${r.label} (${r.group})` : r.label));
  const summary = rows.map((r, i) => `${labels[i]}: ${numberFormat.format(r.value)}`).join('; ');
  const canvas = h('canvas', { role: 'img', 'aria-label': `${title}. ${summary}` });
  const box = h('div', { class: 'chart-box', style: `height:${Math.max(120, rows.length * 26 + 48)}px` }, canvas);
  const table = h(
    'table',
    { class: 'chart-table' },
    h('caption', {}, `${title} (numbers)`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'category'), rows.some((r) => r.group) ? h('th', { scope: 'col' }, 'role') : null, h('th', { scope: 'col' }, valueName))),
    h('tbody', {}, rows.map((r) => h('tr', {}, h('th', { scope: 'row' }, r.label), r.group !== undefined ? h('td', {}, r.group) : null, h('td', { class: 'num' }, numberFormat.format(r.value))))),
  );
  const figure = h('figure', { class: 'chart' }, h('figcaption', {}, title), box, h('details', {}, h('summary', {}, 'Show the numbers'), table));
  const fills = groups.map((_, i) => patternFor(i));
  // Drawn once the canvas is in the document and has its size; no animation, so a screenshot is the finished chart.
  requestAnimationFrame(() => {
    new Chart(canvas, {
      type: 'bar',
      data: { labels, datasets: [{ label: valueName, data: rows.map((r) => r.value), backgroundColor: rows.map((r) => fills[groups.indexOf(r.group ?? '')]), borderColor: '#222', borderWidth: 1 }] },
      options: { indexAxis: 'y', animation: false, maintainAspectRatio: false, responsive: true, plugins: { tooltip: { enabled: true } }, scales: { x: { beginAtZero: true } } },
    });
  });
  return figure;
}
