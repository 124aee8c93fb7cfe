// POST /contributions/check in process, on the repo's sample releases and on the real v0 data: every status from
// rows whose IDs are read off the release's own CSV files, the same results from CSV and JSON bodies, the charge per
// row that is not `invalid`, the refusals that charge nothing (docs/contributions.md), and the ETag per stamp and
// body. Every answer is validated against the OpenAPI document (test/helpers/api-client.ts).
import { join, resolve } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { MAX_CHECK_ROWS } from '../../common/request-limits.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { compiledRealData, compiledSamples } from '../fixtures/compiled-fixtures.ts';

let samples: InProcessRuntime;
let real: InProcessRuntime;
let call: ReturnType<typeof client>;
let callReal: ReturnType<typeof client>;
let key: string;

beforeAll(async () => {
  const [s, r] = await Promise.all([compiledSamples(), compiledRealData(resolve(process.cwd(), '../shared/real-data/v0-register'), '20260401T000000Z')]);
  const root = mkdtempSync(join(tmpdir(), 'contrib-check-'));
  const keys = join(root, 'keys.json');
  key = (await addKey({ file: keys, name: 'contributor', quota: 100_000, rate: 100_000 })).key;
  samples = await openInProcess({ dist: s.dist, keys, state: 'memory:' });
  real = await openInProcess({ dist: r.dist, keys, state: 'memory:' });
  call = client(`${samples.url}/api/v1`, key);
  callReal = client(`${real.url}/api/v1`, key);
}, 120_000);
afterAll(async () => {
  await samples?.close();
  await real?.close();
});

const csv = (text: string) => ({ rawBody: text, headers: { 'content-type': 'text/csv' }, method: 'POST' });
const credits = (r: { headers: Headers }) => Number(r.headers.get('x-register-credits-remaining'));

/**
 * Rows of the newest sample release (releases/20261008T120000Z/csv/bridges.csv.gz and redirects.csv.gz): Marcus
 * Foden (rp10d88a6570bb3f) is transfermarkt spieler 8155472 and fotmob 4196709; Son Min-jae (rp3e34f5c22f1f5b) is
 * transfermarkt 7381724 and fotmob 3243261; fbref a2ae0994 is on two players; rpd8e4e243f9af6d was merged (twice)
 * into rp65082fe878fa37, which has no zerozero ID; rpcea49c744a377e was retired.
 */
const SAMPLE_ROWS = `Provider,External_ID,Name,Type,Transfermarkt_ID,reep_id,note
transfermarkt,8155472,Marcus Foden,player,,,a
kicker,k-1,Marcus Foden,player,8155472,,b
fotmob,4196709,,player,7381724,,c
fotmob,9999999,,player,7381724,,d
fbref,a2ae0994,,player,,,e
nosuch,1,,,,,f
zerozero,z-2,,,,rpd8e4e243f9af6d,g
kicker,k-3,,,,rpcea49c744a377e,h
kicker,k-4,,,,,i
`;

describe('POST /contributions/check', () => {
  it('gives each row its status, band and reasons, in order, with lines and the pass-through column', async () => {
    const r = await call('/contributions/check', csv(SAMPLE_ROWS));
    expect(r.status).toBe(200);
    expect(r.json.stamp).toBe(r.headers.get('x-register-release-stamp'));
    const got = r.json.results.map((x: any) => [x.row, x.line, x.status, x.reep_id, x.band, x.reasons, x.namespace, x.extra.note]);
    expect(got).toEqual([
      [1, 2, 'already_bridged', 'rp10d88a6570bb3f', 1, ['name_agrees'], 'spieler', 'a'],
      [2, 3, 'new_bridge', 'rp10d88a6570bb3f', 0.95, ['name_agrees'], '', 'b'],
      [3, 4, 'conflict', 'rp10d88a6570bb3f', null, ['provider_id_on_other_entity'], '', 'c'],
      [4, 5, 'conflict', 'rp3e34f5c22f1f5b', null, ['two_ids_one_namespace'], '', 'd'],
      [5, 6, 'ambiguous', null, null, ['provider_id_on_several_entities'], '', 'e'],
      [6, 7, 'invalid', null, null, ['unknown_provider'], '', 'f'],
      [7, 8, 'redirected', 'rp65082fe878fa37', 0.9, ['merged', 'no_name'], '', 'g'],
      [8, 9, 'retired', 'rpcea49c744a377e', null, ['reep_id_retired'], '', 'h'],
      [9, 10, 'no_candidate', null, null, ['nothing_to_match'], '', 'i'],
    ]);
    // The conflict names both entities; the ambiguous row every holder.
    expect(r.json.results[2].candidates.map((c: any) => c.reep_id)).toEqual(['rp10d88a6570bb3f', 'rp3e34f5c22f1f5b']);
    expect(r.json.results[4].candidates.map((c: any) => c.reep_id).sort()).toEqual(['rp4805a4990f0d1d', 'rp6590ae3036be9a']);
    expect(r.json.count).toBe(9);
    expect(r.json.summary).toEqual({
      statuses: { already_bridged: 1, new_bridge: 1, conflict: 2, redirected: 1, retired: 1, ambiguous: 1, no_candidate: 1, invalid: 1 },
      bands: { '1': 1, '0.95': 1, '0.9': 1, '0.8': 0, none: 6 },
    });
  });

  it("finds name-only candidates from the release's name keys, and never picks one of two plausible ones", async () => {
    // Two sample players are both called Bruno Dias; one Marcus Foden; nobody Nobody Atall.
    const r = await call('/contributions/check', csv('provider,external_id,name,type\nkicker,k-5,Marcus Foden,player\nkicker,k-9,Bruno Dias,player\nkicker,k-7,Nobody Atall,player\n'));
    const [one, two, none] = r.json.results;
    expect(one).toMatchObject({ status: 'new_bridge', reep_id: 'rp10d88a6570bb3f', band: 0.8, reasons: ['name_only'] });
    expect(one.candidates[0]).toMatchObject({ reep_id: 'rp10d88a6570bb3f', entity_type: 'player', label: 'Marcus Foden' });
    expect(two).toMatchObject({ status: 'ambiguous', reep_id: null, band: null, reasons: ['candidates_tied'] });
    expect(two.candidates.slice(0, 2).map((c: any) => c.score)).toEqual([two.candidates[0].score, two.candidates[0].score]);
    expect(none).toMatchObject({ status: 'no_candidate', reep_id: null, band: null, reasons: ['below_match_score'] });
  });

  it('answers JSON rows as CSV rows, without lines, numbered from first_row', async () => {
    const [head, ...lines] = SAMPLE_ROWS.trim().split('\n');
    const names = head.split(',');
    const rows = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i], v])));
    const fromCsv = (await call('/contributions/check', csv(SAMPLE_ROWS))).json;
    const fromJson = (await call('/contributions/check', { body: { rows, first_row: 1001 } })).json;
    expect(fromJson.results.map((x: any) => ({ ...x, row: x.row - 1000 }))).toEqual(fromCsv.results.map(({ line: _, ...x }: any) => x));
    const chunk = await call('/contributions/check?first_row=41', csv(SAMPLE_ROWS));
    expect(chunk.json.results[0]).toMatchObject({ row: 41, line: 2 });
  });

  it('checks a JSON row that lacks external_id or names a column twice as invalid, missing_field (as documented)', async () => {
    const rows = [{ provider: 'kicker' }, { provider: 'kicker', Provider: 'kicker', external_id: 'k-1' }];
    const r = await call('/contributions/check', { body: { rows } });
    expect(r.json.results.map((x: any) => [x.status, x.reasons])).toEqual([['invalid', ['missing_field']], ['invalid', ['missing_field']]]);
  });

  it('charges one lookup per row that is not invalid, and nothing for a refused request', async () => {
    const before = credits(await call('/contributions/check', csv('provider,external_id\nkicker,k-9\n')));
    const r = await call('/contributions/check', csv(SAMPLE_ROWS));
    expect(credits(r)).toBe(before - 8);
    const refusals: [string, Record<string, string>, number, string][] = [
      ['provider,external_id\n', { 'content-type': 'text/csv' }, 400, 'empty_check'],
      ['name,external_id\nx,1\n', { 'content-type': 'text/csv' }, 400, 'invalid_csv'],
      ['provider,external_id\nkicker,"k\n', { 'content-type': 'text/csv' }, 400, 'invalid_csv'],
      ['provider,external_id\nkicker,k-1\n', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      ['{"rows":[]}', { 'content-type': 'application/json' }, 400, 'empty_check'],
      ['{"rows":[{"provider":{}}]}', { 'content-type': 'application/json' }, 400, 'invalid_body'],
      ['{"rows":', { 'content-type': 'application/json' }, 400, 'invalid_body'],
      [`provider,external_id\n${'kicker,k\n'.repeat(MAX_CHECK_ROWS + 1)}`, { 'content-type': 'text/csv' }, 400, 'check_too_large'],
    ];
    let last = credits(r);
    for (const [body, headers, status, code] of refusals) {
      const refused = await call('/contributions/check', { method: 'POST', rawBody: body, headers });
      expect([refused.status, refused.json.error], body.slice(0, 40)).toEqual([status, code]);
      const now = (await call('/key')).json.key.credits_remaining;
      expect(now, code).toBe(last);
      last = now;
    }
  });

  it('names the line of a file it cannot read: a header without provider, a byte that is not UTF-8', async () => {
    const noProvider = await call('/contributions/check', csv('external_id,name\n1,x\n'));
    expect(noProvider.json).toMatchObject({ error: 'invalid_csv', detail: 'line 1' });
    expect(noProvider.json.message).toMatch(/no provider column/);
    const bytes = Buffer.concat([Buffer.from('provider,external_id,name\r\nkicker,1,"a,\nb"\r\n\r\nkicker,2,'), Buffer.from([0xc3, 0x28]), Buffer.from('\r\n')]);
    const r = await call('/contributions/check', { method: 'POST', rawBody: bytes as unknown as string, headers: { 'content-type': 'text/csv' } });
    expect(r.json).toMatchObject({ error: 'invalid_csv', detail: 'line 5' });
  });

  it('reads a BOM, CRLF, quoted commas and newlines, empty lines and case-insensitive headers', async () => {
    const text = '\ufeffPROVIDER,External_Id,Name,Comment\r\n\r\nkicker,k-1,"Foden, Marcus","two\r\nlines"\r\n,,,\r\nkicker,k-2,,x';
    const r = await call('/contributions/check', csv(text));
    expect(r.json.results.map((x: any) => [x.row, x.line, x.external_id, x.extra.Comment])).toEqual([
      [1, 3, 'k-1', 'two\r\nlines'],
      [2, 6, 'k-2', 'x'],
    ]);
    const wrongWidth = await call('/contributions/check', csv('provider,external_id,name\nkicker,k-1\n'));
    expect(wrongWidth.json.results[0]).toMatchObject({ status: 'invalid', reasons: ['wrong_field_count'], line: 2 });
  });

  it('gives the same body the same ETag, and another body another', async () => {
    const a = await call('/contributions/check', csv(SAMPLE_ROWS));
    const b = await call('/contributions/check', csv(SAMPLE_ROWS));
    const c = await call('/contributions/check?first_row=2', csv(SAMPLE_ROWS));
    expect(a.headers.get('etag')).toMatch(/^"[\w-]+"$/);
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
    expect(b.text).toBe(a.text);
    expect(c.headers.get('etag')).not.toBe(a.headers.get('etag'));
  });

  it('is the same route under /api/next', async () => {
    const v1 = await call('/contributions/check', csv(SAMPLE_ROWS));
    const next = await client(`${samples.url}/api/next`, key)('/contributions/check', csv(SAMPLE_ROWS));
    expect(next.status).toBe(200);
    if (next.json.stamp === v1.json.stamp) expect(next.text).toBe(v1.text);
  });

  it('checks the real v0 data: Arsenal by its Transfermarkt club ID, the two Vukovar clubs sharing one', async () => {
    const r = await callReal('/contributions/check', csv('provider,external_id,name,type\ntransfermarkt,11,Arsenal,team\ntransfermarkt,456,,team\nfotmob,contrib-1,,team\n'));
    expect(r.status).toBe(200);
    const [arsenal, vukovar, unknown] = r.json.results;
    expect(arsenal).toMatchObject({ status: 'already_bridged', band: 1, namespace: 'verein' });
    expect(vukovar).toMatchObject({ status: 'ambiguous', reasons: ['provider_id_on_several_entities'], namespace: 'verein' });
    expect(vukovar.candidates).toHaveLength(2);
    expect(unknown).toMatchObject({ status: 'no_candidate', reasons: ['nothing_to_match'] });
  });
});
