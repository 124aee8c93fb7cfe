// The compile report: one small HTML file per compiled release, dist/reports/<stamp>.html, with the counts, the slack
// dropped per table, the changelog summary and the time each stage took. It lives outside dist/<stamp>/ on purpose:
// timings differ on every run, and everything under a stamp is content-addressed and byte-identical per release.
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

export function compileReportHtml(r: CompileReport): string {
  const counts = Object.entries(r.counts).map(([k, v]) => [k, v]);
  const slack = r.slack.map((s) => [s.what, s.count, s.example]);
  const events = Object.entries(r.changes.counts).map(([k, v]) => [k, v]);
  const byProvider = Object.entries(r.changes.provider_counts).map(([k, v]) => [k, v]);
  const timings = r.timings.map((t) => [t.stage, t.wallMs, t.cpuMs, Math.round(t.peakRssBytes / 2 ** 20)]);
  const wall = r.timings.reduce((a, t) => a + t.wallMs, 0);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Compile report ${escapeHtml(r.stamp)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:900px;margin:20px auto;padding:0 16px;color:#1a1a1a}table{border-collapse:collapse;margin:6px 0 18px}caption{text-align:left;font-weight:600}th,td{text-align:left;padding:2px 14px 2px 0;border-bottom:1px solid #ddd}td.num{text-align:right;font-variant-numeric:tabular-nums}</style>
</head><body>
<h1>Compile report ${escapeHtml(r.stamp)}</h1>
<p>Tree digest <code>${escapeHtml(r.manifest.digest)}</code>. Changelog against ${r.changes.prior ? `<code>${escapeHtml(r.changes.prior)}</code>` : 'no predecessor (the first release)'}. Stages took ${number(wall)} ms of wall time in all.</p>
<h2>Counts</h2>
${table('What the release holds', ['count', 'value'], counts, 'Nothing counted.')}
<h2>Slack dropped</h2>
${table('Rows naming an ID absent from the release, dropped per table (--strict refuses them)', ['what', 'rows', 'example'], slack, 'None: every row names an ID the release holds.')}
<h2>Changelog</h2>
${table('Events by type', ['type', 'events'], events, 'No events.')}
${table('Provider updates by provider', ['provider', 'events'], byProvider, 'No provider bridges changed.')}
<h2>Timings</h2>
${table('Per stage (peak RSS is the process so far)', ['stage', 'wall ms', 'cpu ms', 'peak RSS MiB'], timings, 'No stage ran.')}
</body></html>
`;
}
