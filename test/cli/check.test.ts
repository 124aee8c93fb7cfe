// `register check` as a user runs it (bin/register.mjs, a child process): its JSON is byte for byte the body
// POST /contributions/check answers for the same rows and stamp, from a dist folder and from an HTTP origin; the
// CSV report; the summary on stderr; the exit codes (0 ran, 1 a file that cannot be read, naming the line, 2 a bad
// command line); and the bad inputs of issue 48, a 2 GB file among them, each refused in bounded time and memory.
import { closeSync, mkdtempSync, openSync, writeFileSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { compiledSamples, type Compiled } from '../fixtures/compiled-fixtures.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { runToExit } from '../helpers/run-command.ts';
import { serveDir, type ServedDir } from '../helpers/serve-dir.ts';

const BIN = resolve(import.meta.dirname, '../../bin/register.mjs');
const STAMP = '20261008T120000Z';
let samples: Compiled;
let rt: InProcessRuntime;
let origin: ServedDir;
let call: ReturnType<typeof client>;
let dir: string;

beforeAll(async () => {
  samples = await compiledSamples();
  dir = mkdtempSync(join(tmpdir(), 'cli-check-'));
  const keys = join(dir, 'keys.json');
  const key = (await addKey({ file: keys, name: 'cli', quota: 100_000, rate: 100_000 })).key;
  rt = await openInProcess({ dist: samples.dist, keys, state: 'memory:', stamp: STAMP });
  call = client(`${rt.url}/api/v1`, key);
  origin = await serveDir(samples.dist);
}, 120_000);
afterAll(async () => {
  await rt?.close();
  await origin?.close();
});

const check = (args: string[]) => runToExit(process.execPath, [BIN, 'check', ...args], { timeoutMs: 60_000 });
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

/** Rows of every kind (see test/runtime/contributions-check.test.ts for what each says of the sample release). */
const ROWS = `provider,external_id,name,type,transfermarkt_id,reep_id,note
transfermarkt,8155472,Marcus Foden,player,,,a
kicker,k-1,Marcus Foden,player,8155472,,b
fotmob,4196709,,player,7381724,,"c, quoted"
fbref,a2ae0994,,player,,,e
nosuch,1,,,,,f
zerozero,z-2,,,,rpd8e4e243f9af6d,g
kicker,k-3,,,,rpcea49c744a377e,h
`;

describe('register check', () => {
  it('writes the bytes the route answers, from a dist folder and from an HTTP origin, and the counts on stderr', async () => {
    const input = file('rows.csv', ROWS);
    const route = await call('/contributions/check', { method: 'POST', rawBody: ROWS, headers: { 'content-type': 'text/csv' } });
    expect(route.status).toBe(200);
    const local = await check([input, '--stamp', STAMP, '--dist', samples.dist]);
    expect(local.status, local.stderr).toBe(0);
    expect(local.stdout).toBe(route.text);
    const remote = await check([input, '--stamp', STAMP, '--origin', origin.baseUrl]);
    expect(remote.status, remote.stderr).toBe(0);
    expect(remote.stdout).toBe(route.text);
    expect(local.stderr).toMatch(/^\[check\] 7 row\(s\): already_bridged 1, new_bridge 1, conflict 1, redirected 1, retired 1, ambiguous 1, invalid 1; bands: /m);
  });

  it('writes a CSV report of the same results, the pass-through columns last', async () => {
    const r = await check([file('rows.csv', ROWS), '--stamp', STAMP, '--dist', samples.dist, '--format', 'csv']);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('row,line,status,reep_id,band,reasons,provider,namespace,external_id,candidates,note');
    expect(lines).toHaveLength(8);
    expect(lines[3]).toMatch(/^3,4,conflict,rp10d88a6570bb3f,,provider_id_on_other_entity,fotmob,,4196709,rp10d88a6570bb3f:[\d.]+ rp3e34f5c22f1f5b:[\d.]+,"c, quoted"$/);
  });

  it('exits 2 on a bad command line, running nothing', async () => {
    const input = file('rows.csv', ROWS);
    for (const args of [[input], [input, '--stamp', 'yesterday', '--dist', samples.dist], [input, '--stamp', STAMP, '--format', 'xml'], [input, '--stamp', STAMP, '--dist', samples.dist, '--origin', origin.baseUrl], ['--stamp', STAMP]]) {
      const r = await check(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
  });

  it('exits 1 naming the line for each bad input, and for a stamp or file it cannot open', async () => {
    const bad: [string, string | Buffer, RegExp][] = [
      ['no-provider.csv', 'external_id,name\n1,x\n', /line 1: the header has no provider column/],
      ['not-utf8.csv', Buffer.concat([Buffer.from('provider,external_id\nkicker,1\n\nkicker,'), Buffer.from([0xff]), Buffer.from('\n')]), /line 4: not valid UTF-8/],
      ['ten-mb.csv', `provider,external_id,name\nkicker,1,x\nkicker,2,${'y'.repeat(10 * 1024 * 1024)}\n`, /line 3: a record runs past 65536 characters/],
      ['open-quote.csv', 'provider,external_id,name\nkicker,1,"never closed\nkicker,2,x\n', /line 2: unterminated quoted field/],
      ['empty.csv', '', /line 1: no header row/],
    ];
    for (const [name, content, message] of bad) {
      const r = await check([file(name, content), '--stamp', STAMP, '--dist', samples.dist]);
      expect(r.status, name).toBe(1);
      expect(r.stderr, name).toMatch(message);
    }
    const missing = await check([join(dir, 'nope.csv'), '--stamp', STAMP, '--dist', samples.dist]);
    expect([missing.status, missing.stderr]).toEqual([1, expect.stringMatching(/nope\.csv: cannot read the file \(ENOENT\)/)]);
    const unknownStamp = await check([file('rows.csv', ROWS), '--stamp', '20990101T000000Z', '--dist', samples.dist]);
    expect([unknownStamp.status, unknownStamp.stderr]).toEqual([1, expect.stringMatching(/cannot open release 20990101T000000Z/)]);
  });

  it('refuses a 2 GB file with no line end as soon as its first record is too long, reading a few MiB of it', async () => {
    const path = join(dir, 'two-gb.csv');
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 2 * 1024 ** 3); // sparse: 2 GB of NUL bytes, none of them a line end
    closeSync(fd);
    const r = await check([path, '--stamp', STAMP, '--dist', samples.dist]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/two-gb\.csv: line 1: a record runs past 65536 characters/);
  });
});
