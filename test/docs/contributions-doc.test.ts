// docs/contributions.md's tables are run: every example row of its statuses, bands and reasons is checked against the
// sample release it names and must give what its table says, and the reasons it lists are exactly the check's own
// (runtime/contributions/check-row.ts REASONS), so neither can change without the other.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASONS } from '../../runtime/contributions/check-row.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { compiledSamples } from '../fixtures/compiled-fixtures.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';

const DOC = readFileSync(resolve(import.meta.dirname, '../../docs/contributions.md'), 'utf8');
const HEADER = 'provider,external_id,name,type,date_of_birth,transfermarkt_id,reep_id';

/** The rows of the markdown table under `heading`, as cells (the header row and its rule left out). */
function table(heading: string): string[][] {
  const at = DOC.indexOf(`\n### ${heading}\n`);
  expect(at, heading).toBeGreaterThan(0);
  const lines = DOC.slice(at).split('\n').slice(2);
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.slice(1, -1).split(' | ').map((c) => c.trim()));
  }
  return rows;
}
const code = (cell: string) => /^`([^`]*)`/.exec(cell)?.[1] ?? null;

let rt: InProcessRuntime;
let call: ReturnType<typeof client>;
beforeAll(async () => {
  const { dist } = await compiledSamples();
  const keys = join(mkdtempSync(join(tmpdir(), 'contrib-doc-')), 'keys.json');
  const key = (await addKey({ file: keys, name: 'doc', quota: 100_000, rate: 100_000 })).key;
  rt = await openInProcess({ dist, keys, state: 'memory:', stamp: '20261008T120000Z' });
  call = client(`${rt.url}/api/v1`, key);
}, 120_000);
afterAll(async () => {
  await rt?.close();
});

/** What the check says of one example row. */
async function checked(row: string): Promise<{ status: string; reep_id: string | null; band: number | null; reasons: string[] }> {
  const r = await call('/contributions/check', { method: 'POST', rawBody: `${HEADER}\n${row}\n`, headers: { 'content-type': 'text/csv' } });
  expect(r.status, row).toBe(200);
  return r.json.results[0];
}

describe('docs/contributions.md', () => {
  it('gives each status its example row', async () => {
    const rows = table('Statuses');
    expect(rows.map((r) => code(r[0]))).toEqual(['already_bridged', 'new_bridge', 'conflict', 'redirected', 'retired', 'ambiguous', 'no_candidate', 'invalid']);
    for (const [status, , example, reepId] of rows) {
      const r = await checked(code(example)!);
      expect(r.status, example).toBe(code(status));
      expect(r.reep_id, example).toBe(reepId === 'null' ? null : code(reepId));
    }
  });

  it('gives each band its example row', async () => {
    for (const [band, , example] of table('Bands')) expect((await checked(code(example)!)).band, example).toBe(Number(band));
  });

  it('lists every reason the check gives, each with an example row that gives it', async () => {
    const rows = table('Reasons');
    expect(rows.map((r) => code(r[0])).sort()).toEqual(Object.keys(REASONS).sort());
    for (const [reason, , example] of rows) {
      if (example.startsWith('—')) continue; // said in the table: no sample release can show it
      expect((await checked(code(example)!)).reasons, example).toContain(code(reason));
    }
  });
});
