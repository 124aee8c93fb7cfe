// The check of many rows, written as it goes: the route's body and the CLI's output are the same bytes for the
// same rows, because both are this function's text. Rows are checked one after another, in order.
import type { Release } from '../release/open-release.ts';
import { checkRow, CheckSummary, ProviderNamespaces, resultJson, type CheckResult } from './check-row.ts';
import type { ContributionRow } from './contribution-file.ts';

/**
 * Checks `rows` against `release`, handing `write` the response's JSON in pieces: its head, each result (as soon
 * as it is checked), then the count and summary. `each` sees every result (the CLI's CSV). Returns the counts.
 */
export async function writeCheck(
  release: Release,
  rows: AsyncIterable<ContributionRow> | Iterable<ContributionRow>,
  write: (text: string) => void | Promise<void>,
  each?: (r: CheckResult) => void | Promise<void>,
): Promise<CheckSummary> {
  const namespaces = new ProviderNamespaces(release);
  const summary = new CheckSummary();
  await write(`{"stamp":${JSON.stringify(release.stamp)},"results":[`);
  for await (const row of rows) {
    const r = await checkRow(release, namespaces, row);
    const w = write(summary.count ? `,${resultJson(r)}` : resultJson(r));
    if (w) await w;
    summary.add(r);
    if (each) await each(r);
  }
  await write(`],"count":${summary.count},"summary":${summary.json()}}`);
  return summary;
}
