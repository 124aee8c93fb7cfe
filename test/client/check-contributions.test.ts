// The typed client's contribution check over a file larger than one request: read as a stream, sent in chunks of at
// most 1,000 rows, numbered across them, and the results exactly what `register check` writes for the whole file
// (the one writer, runtime/contributions/check-stream.ts), its CSV lines included. Against the app in process, every
// answer validated against the OpenAPI document.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegisterClient, RegisterApiError, type RegisterClient } from 'identity-register/client';
import { writeCheck } from '../../runtime/contributions/check-stream.ts';
import { readContributionCsv } from '../../runtime/contributions/contribution-file.ts';
import { ReleaseCatalog } from '../../runtime/release/catalog.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { compiledSamples } from '../fixtures/compiled-fixtures.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { validatingFetch } from '../helpers/validating-fetch.ts';

const STAMP = '20261008T120000Z';
let rt: InProcessRuntime;
let dist: string;
let client: RegisterClient;
const fetched = validatingFetch();

beforeAll(async () => {
  dist = (await compiledSamples()).dist;
  const keys = join(mkdtempSync(join(tmpdir(), 'client-check-')), 'keys.json');
  const key = (await addKey({ file: keys, name: 'client', quota: 100_000, rate: 100_000 })).key;
  rt = await openInProcess({ dist, keys, state: 'memory:', stamp: STAMP });
  client = createRegisterClient({ baseUrl: `${rt.url}/api/v1`, key, fetch: fetched });
}, 120_000);
afterAll(async () => {
  await rt?.close();
});

/** 2,345 rows of every kind, some records spanning two lines, blank lines and lines of empty fields between them (no rows). */
function bigFile(): string {
  const kinds = [
    'transfermarkt,8155472,Marcus Foden,player,',
    'kicker,k-{i},"Foden,\nMarcus",player,8155472',
    'fotmob,4196709,,player,7381724',
    'nosuch,{i},,,',
    'kicker,k-{i},Bruno Dias,player,',
  ];
  const lines = ['provider,external_id,name,type,transfermarkt_id'];
  for (let i = 0; i < 2345; i++) {
    lines.push(kinds[i % kinds.length].replace('{i}', String(i)));
    if (i % 400 === 0) lines.push(i % 800 === 0 ? '' : ',,"",,');
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** What `register check` writes for the whole file at once. */
async function wholeFile(text: string): Promise<any[]> {
  const catalog = new ReleaseCatalog({ source: createFsSource({ root: dist }), clock: { now: () => Date.now() } });
  const release = await catalog.release(STAMP, await catalog.current());
  const out: string[] = [];
  const bytes = new TextEncoder().encode(text);
  await writeCheck(release, readContributionCsv((async function* () { yield bytes; })(), release.providers), (t) => void out.push(t));
  return JSON.parse(out.join('')).results;
}

describe('the client checks a large file in chunks', () => {
  it('streams a CSV in requests of 1,000 rows and gives the results of the whole file, lines and all', async () => {
    const text = bigFile();
    const before = fetched.seen.length;
    const stream = new Blob([text]).stream();
    const results = [];
    for await (const r of client.checkCsv(stream)) results.push(r);
    const sent = fetched.seen.slice(before);
    expect(sent.map((s) => [s.path, s.query])).toEqual([
      ['/api/v1/contributions/check', '?first_row=1'],
      ['/api/v1/contributions/check', '?first_row=1001'],
      ['/api/v1/contributions/check', '?first_row=2001'],
    ]);
    expect(results).toEqual(await wholeFile(text));
    expect(results.at(-1)).toMatchObject({ row: 2345 });
  });

  it('sends JSON rows from any iterable in chunks, numbered across them', async () => {
    const rows = Array.from({ length: 1500 }, (_, i) => ({ provider: 'transfermarkt', external_id: i % 2 ? '8155472' : `x${i}`, type: 'player' }));
    const before = fetched.seen.length;
    const results = [];
    for await (const r of client.checkAll(rows, 600)) results.push(r);
    expect(fetched.seen.length - before).toBe(3);
    expect(results.map((r) => r.row)).toEqual(rows.map((_, i) => i + 1));
    expect(results[1]).toMatchObject({ status: 'already_bridged', reep_id: 'rp10d88a6570bb3f' });
    expect(results[1]).not.toHaveProperty('line');
  });

  it('stops at a refused chunk with its error', async () => {
    const run = async () => {
      for await (const _ of client.checkCsv('external_id,name\n1,x\n'));
    };
    await expect(run()).rejects.toThrow(RegisterApiError);
    await expect(run()).rejects.toMatchObject({ code: 'invalid_csv' });
  });
});
