// The compile report: one small HTML file per compiled release, dist/reports/<stamp>.html, with the counts, the slack
// dropped per table and the changelog summary. It holds nothing of the run itself (no timings, paths or dates), so the
// whole dist folder, reports included, is a pure function of its releases: `register compile` prints the timings.
// It lives outside dist/<stamp>/ because it is not part of what a stamp's manifest covers or a mirror serves.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CompileReport } from './compile-release.ts';

/** Where the reports go, inside the dist folder but beside (never inside) the stamps and index.json. */
export const REPORTS_DIR = 'reports';

/** Writes the report of one compiled release (replacing an earlier one of the same stamp); returns its path. */
export function writeCompileReport(dist: string, report: CompileReport): string {
  const dir = join(dist, REPORTS_DIR);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${report.stamp}.html`);
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, compileReportHtml(report));
  renameSync(aside, path);
  return path;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const number = (n: number) => n.toLocaleString('en');

function table(caption: string, head: string[], rows: (string | number)[][], empty: string): string {
  if (rows.length === 0) return `<p>${escapeHtml(empty)}</p>`;
  const cell = (v: string | number) => (typeof v === 'number' ? `<td class="num">${number(v)}</td>` : `<td>${escapeHtml(v)}</td>`);
  return (
    `<table><caption>${escapeHtml(caption)}</caption><thead><tr>${head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map(cell).join('')}</tr>`).join('')}</tbody></table>`
  );
}

function compileReportHtml(r: CompileReport): string {
  const counts = Object.entries(r.counts).map(([k, v]) => [k, v]);
  const slack = r.slack.map((s) => [s.what, s.count, s.example]);
  const events = Object.entries(r.changes.counts).map(([k, v]) => [k, v]);
  const byProvider = Object.entries(r.changes.provider_counts).map(([k, v]) => [k, v]);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Compile report ${escapeHtml(r.stamp)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:900px;margin:20px auto;padding:0 16px;color:#1a1a1a}table{border-collapse:collapse;margin:6px 0 18px}caption{text-align:left;font-weight:600}th,td{text-align:left;padding:2px 14px 2px 0;border-bottom:1px solid #ddd}td.num{text-align:right;font-variant-numeric:tabular-nums}</style>
</head><body>
<h1>Compile report ${escapeHtml(r.stamp)}</h1>
<p>Tree digest <code>${escapeHtml(r.manifest.digest)}</code>. Changelog against ${r.changes.prior ? `<code>${escapeHtml(r.changes.prior)}</code>` : 'no predecessor (the first release)'}.</p>
<h2>Counts</h2>
${table('What the release holds', ['count', 'value'], counts, 'Nothing counted.')}
<h2>Slack dropped</h2>
${table('Rows naming an ID absent from the release, dropped per table (--strict refuses them)', ['what', 'rows', 'example'], slack, 'None: every row names an ID the release holds.')}
<h2>Changelog</h2>
${table('Events by type', ['type', 'events'], events, 'No events.')}
${table('Provider updates by provider', ['provider', 'events'], byProvider, 'No provider bridges changed.')}
<p>Timings are not kept here (they differ on every run, and the dist is the same bytes for the same releases):
<code>register compile</code> prints the total per release, and each stage's with <code>REGISTER_TIMINGS=1</code>.</p>
</body></html>
`;
}
