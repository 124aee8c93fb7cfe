// The exact answers of GET /matches, kept: status, every header and the body of a fixed request set (every
// parameter, every error code, errors given together, cursors followed, HEAD) on the sample releases and the real
// v0 data, recorded once in matches-bytes.json and replayed here, so a change to how /matches reads its request
// cannot change a byte a client sees. Record again (only when an answer is meant to change) with
// RECORD_MATCH_BYTES=1. Requests go through the app in process; each answer is still checked against the document.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { openRuntime, type OpenedRuntime } from '../../runtime/server.ts';
import { compiledRealData, compiledSamples, type Compiled } from '../fixtures/compiled-fixtures.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';

const GOLDEN = join(import.meta.dirname, 'matches-bytes.json');
const RECORD = process.env.RECORD_MATCH_BYTES === '1';
const SAMPLES = resolve(import.meta.dirname, '../../releases');
const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const REAL_STAMP = '20260401T000000Z';
const SECRET = 'a test deployment secret of at least 32 characters';
const NOW = Date.parse('2026-10-09T10:20:00Z');
const HOUR = 3_600_000;

/** One request as kept: which server, when (hours after NOW), method and path. */
interface Asked {
  server: string;
  at: number;
  method: 'GET' | 'HEAD';
  path: string;
  key?: false;
}
interface Answer extends Asked {
  status: number;
  headers: [string, string][];
  /** The body, whole for errors and small pages; sha256 and length for large pages. */
  body: string;
  /** A page's next_cursor (a summarised body does not show it), for the requests that follow it. */
  next?: string | null;
}

let root: string;
let key: string;
let now = NOW;
let samples: Compiled;
let real: Compiled;
const runtimes = new Map<string, OpenedRuntime>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-matches-bytes-'));
  const keys = join(root, 'keys.json');
  key = (await addKey({ file: keys, name: 'bytes', quota: 1_000_000, rate: 1_000_000 })).key;
  // The run's shared compiles (compiled-fixtures.ts) of the samples and of the v0 data as REAL_STAMP: read only.
  [samples, real] = await Promise.all([compiledSamples(), compiledRealData(V0, REAL_STAMP)]);
});

afterAll(async () => {
  for (const r of runtimes.values()) await r.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function ask(a: Asked): Promise<Answer> {
  now = NOW + a.at * HOUR;
  const sent: Record<string, string> = a.key === false ? {} : { authorization: `Bearer ${key}` };
  const res = await runtimes.get(a.server)!.app.fetch(new Request(`http://127.0.0.1${a.path}`, { method: a.method, headers: sent }));
  const text = await res.text();
  validateResponse({ method: a.method, path: a.path, status: res.status, headers: res.headers, body: text });
  const body = text.length <= 2048 ? text : `sha256:${createHash('sha256').update(text).digest('hex')} length:${text.length}`;
  const next = res.status === 200 && a.method === 'GET' ? (JSON.parse(text).next_cursor as string | null) : undefined;
  const headers: [string, string][] = [];
  res.headers.forEach((v, k) => void headers.push([k, v]));
  return { ...a, status: res.status, headers: headers.sort((x, y) => (x[0] < y[0] ? -1 : 1)), body, ...(next === undefined ? {} : { next }) };
}

/** Rows of a release's CSV table, and a column's index by name. */
async function table(dir: string, name: string): Promise<string[][] & { column(name: string): number }> {
  const out: string[][] = [];
  let header: string[] = [];
  const file = existsSync(join(dir, 'csv', `${name}.csv.gz`)) ? join(dir, 'csv', `${name}.csv.gz`) : join(dir, 'csv', `${name}.csv`);
  await readCsv(file, name, { header: (h) => void (header = [...h]), row: (f) => void out.push([...f]) });
  return Object.assign(out, { column: (c: string) => header.indexOf(c) });
}

/**
 * The request set for one release, from its own tables: its busiest team, that team's most frequent opponent, a
 * competition and a season of the team's matches, a provider reference of the team, one shared by two teams, a
 * player; then each parameter given well and badly, errors given together, and the cursors followed.
 */
async function requestsFor(server: string, release: string): Promise<Asked[]> {
  const entities = await table(release, 'entities');
  const kind = new Map(entities.map((r) => [r[0], r[1]]));
  const matches = await table(release, 'matches');
  const [H, A] = [matches.column('home_id'), matches.column('away_id')];
  const count = new Map<string, number>();
  for (const m of matches) for (const t of [m[H], m[A]]) if (kind.get(t) === 'team') count.set(t, (count.get(t) ?? 0) + 1);
  const team = [...count].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0][0];
  const met = new Map<string, number>();
  for (const m of matches) {
    const other = m[H] === team ? m[A] : m[A] === team ? m[H] : null;
    if (other && kind.get(other) === 'team') met.set(other, (met.get(other) ?? 0) + 1);
  }
  // Real data names one side of most matches only: any other busy team then stands in.
  if (!met.size) for (const [t, n] of count) if (t !== team) met.set(t, n);
  const opponent = [...met].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0][0];
  const bridges = await table(release, 'bridges');
  const own = bridges.filter((b) => b[3] === team).sort()[0];
  const teamRef = `${own[0]}:${own[1]}:${own[2]}`;
  const holders = new Map<string, Set<string>>();
  for (const b of bridges) if (kind.get(b[3]) === 'team') holders.set(`${b[0]}:${b[1]}:${b[2]}`, (holders.get(`${b[0]}:${b[1]}:${b[2]}`) ?? new Set()).add(b[3]));
  const shared = [...holders].filter(([, ids]) => ids.size > 1).map(([r]) => r).sort()[0];
  // An entity of another kind: a player, or in the real data (no players) a competition.
  const player = (entities.find((r) => r[1] === 'player') ?? entities.find((r) => r[1] === 'competition'))![0];
  const wide = `team=${team}&from=1900-01-01`;
  // A competition and a season of the team's matches, as the API names them.
  type Row = { competition: { reep_id: string } | null; season: { reep_id: string } | null };
  const full = (await fullJson(server, `/api/v1/matches?${wide}&limit=100`)).matches as Row[];
  const competition = full.find((r) => r.competition)?.competition?.reep_id ?? team;
  const season = full.find((r) => r.season)?.season?.reep_id ?? team;
  const q = (s: string) => `/api/v1/matches?${s}`;
  const get = (s: string, at = 0): Asked => ({ server, at, method: 'GET', path: q(s) });
  const list: Asked[] = [
    get(`team=${team}`),
    get(wide),
    get(`${wide}&limit=100`),
    get(`team=${teamRef}&from=1900-01-01&limit=7`),
    get(`team=${team}&team=${opponent}&from=1900-01-01&limit=5`),
    get(`team=${opponent}&team=${team}&from=1900-01-01&limit=5`),
    get(`competition=${competition}&from=1900-01-01&limit=9`),
    get(`season=${season}`),
    get(`season=${season}&limit=3&sort=asc`),
    get(`team=${team}&competition=${competition}&season=${season}&from=1900-01-01`),
    get(`${wide}&opponent=${opponent}`),
    get(`${wide}&opponent=${opponent}&venue=home`),
    get(`${wide}&venue=away&limit=4`),
    get(`${wide}&venue=any&limit=4`),
    get(`team=${team}&from=2025-01-01&to=2025-12-31`),
    get(`team=${team}&to=2025-06-30&limit=6`),
    get(`team=${team}&from=2025-06-01&to=2025-06-01`),
    get(`${wide}&state=played`),
    get(`${wide}&state=scheduled,postponed,none&limit=8`),
    get(`${wide}&providers=transfermarkt&limit=6`),
    get(`${wide}&providers=transfermarkt,espn,transfermarkt&limit=6`),
    get(`${wide}&require=transfermarkt&limit=6`),
    get(`${wide}&missing=transfermarkt&limit=6`),
    get(`${wide}&require=nosuchprovider`),
    get(`${wide}&sort=asc&limit=10`),
    get(`${wide}&sort=desc&limit=1`),
    get(`${wide}&limit=0005`),
    get(`team=rtffffffffffffff&from=1900-01-01`),
    get(`team=nosuch:ns:1&team=${team}`),
    get(`team=${shared}`),
    get(`team=${player}`),
    get(`competition=${team}`),
    get(`opponent=${player}&team=${team}`),
    // Each 400.
    get(''),
    get('limit=5'),
    get(`team=${team}&team=a:b:1&team=a:b:2&team=a:b:3&team=a:b:4&team=a:b:5`),
    get('team=nocolon'),
    get('team=:ns:1'),
    get('team=p:ns:'),
    get('team=p:only'),
    get(`team=p:ns:${'x'.repeat(700)}`),
    get('team=p:ns:a%00b'),
    get(`opponent=${opponent}`),
    get(`venue=home&team=${team}&team=${opponent}`),
    get(`team=${team}&venue=sideways`),
    get(`team=${team}&from=2025-02-30`),
    get(`team=${team}&to=yesterday`),
    get(`team=${team}&from=2025-05-01&to=2025-04-01`),
    get(`team=${team}&state=played,won`),
    get(`team=${team}&state=`),
    get(`team=${team}&providers=bad key`),
    get(`team=${team}&require=`),
    get(`team=${team}&missing=a,,b`),
    get(`team=${team}&sort=up`),
    get(`team=${team}&limit=0`),
    get(`team=${team}&limit=101`),
    get(`team=${team}&limit=1.5`),
    get(`team=${team}&limit=`),
    get(`team=${team}&cursor=`),
    get(`team=${team}&cursor=not-a-cursor`),
    get(`team=${team}&colour=red`),
    get(`team=${team}&sort=asc&sort=desc`),
    get(`team=${team}&limit=1&limit=2`),
    get(`team=${team}&cursor=a&cursor=b`),
    // Errors given together: which one answers is part of the bytes.
    get(`colour=red&sort=asc&sort=desc`),
    get(`sort=asc&sort=desc&colour=red`),
    get(`venue=home&from=bad&sort=up`),
    get(`team=${team}&opponent=nocolon&limit=0`),
    get(`team=${team}&from=bad&to=worse&state=won&providers=%20&sort=up&limit=0`),
    get(`team=${team}&state=won&require=%20&sort=up`),
    get(`team=nocolon&competition=${team}&team=a:b:1&team=a:b:2&team=a:b:3&team=a:b:4&team=a:b:5`),
    get(`competition=nocolon&team=p:ns:`),
    get(`opponent=${opponent}&venue=home&limit=0`),
    get(`team=${team}&limit=0&cursor=junk`),
    { ...get(`team=${team}`), key: false },
    { ...get(`team=${team}&limit=0`), key: false },
    { ...get(`${wide}&limit=2`), method: 'HEAD' },
    { ...get(`team=${team}&sort=up`), method: 'HEAD' },
  ];
  if (server === 'sample') {
    list.push({ ...get(`team=${team}`), server: 'sample-no-secret' }, { ...get(`team=${team}&limit=0`), server: 'sample-no-secret' });
    list.push({ ...get(`${wide}&limit=20`), server: 'sample-small-pages' }, { ...get(`${wide}&limit=1`), server: 'sample-small-pages' });
  }
  return list;
}

async function fullJson(server: string, path: string): Promise<{ matches: unknown[] }> {
  now = NOW;
  const res = await runtimes.get(server)!.app.fetch(new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${key}` } }));
  return res.json();
}

/** The cursor requests that follow from answers: each next_cursor followed, later, altered, with other filters. */
function followUps(asked: Answer[]): Asked[] {
  const out: Asked[] = [];
  for (const a of asked) {
    const cursor = a.next;
    if (!cursor) continue;
    const c = encodeURIComponent(cursor);
    out.push({ ...a, path: `${a.path}&cursor=${c}` });
    if (out.length > 8) continue;
    out.push({ ...a, at: 2, path: `${a.path}&cursor=${c}` });
    out.push({ ...a, at: 25, path: `${a.path}&cursor=${c}` });
    out.push({ ...a, path: `${a.path}&cursor=${c.slice(0, -2)}${c.endsWith('AA') ? 'BB' : 'AA'}` });
    out.push({ ...a, path: `${a.path.replace(/&limit=\d+/, '')}&limit=99&cursor=${c}` });
  }
  return out.map(({ server, at, method, path, key }) => ({ server, at, method, path, ...(key === false ? { key } : {}) }));
}

describe('GET /matches answers', () => {
  it('are byte for byte, header for header, the recorded ones', async () => {
    if (RECORD) {
      await restart();
      const requests: Asked[] = [];
      for (const [server, release] of [['sample', join(SAMPLES, '20261008T120000Z')], ['real', join(real.releases, REAL_STAMP)]] as const) {
        requests.push(...(await requestsFor(server, release)));
      }
      // Finding the requests charged lookups: start again, so the credits headers are a function of this list alone.
      await restart();
      const asked: Answer[] = [];
      for (const r of requests) asked.push(await ask(r));
      for (const r of followUps(asked)) asked.push(await ask(r));
      writeFileSync(GOLDEN, JSON.stringify(asked, null, 1) + '\n');
    }
    const expected = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Answer[];
    // The set reaches every /matches code and status.
    const codes = new Set(expected.map((a) => (a.body.startsWith('{"error"') ? JSON.parse(a.body).error : a.status)));
    expect([...codes].sort()).toEqual(expect.arrayContaining([
      200, 'anchor_required', 'invalid_anchor', 'invalid_id', 'single_team_required', 'invalid_date', 'invalid_date_range', 'invalid_state',
      'invalid_filter', 'invalid_sort', 'invalid_limit', 'stale_cursor', 'unknown_parameter', 'repeated_parameter', 'invalid_parameter',
      'ambiguous_provider_id', 'wrong_entity_type', 'index_unavailable', 'match_response_too_large', 'missing_key',
    ]));
    await restart();
    for (const e of expected) {
      const { server, at, method, path, key: k } = e;
      const got = await ask({ server, at, method, path, ...(k === false ? { key: k } : {}) });
      expect({ status: got.status, headers: got.headers, body: got.body, next: got.next }, `${server} ${method} ${path} +${at}h`).toEqual({
        status: e.status, headers: e.headers, body: e.body, next: e.next,
      });
    }
  });
});

/** Each server the requests name: its dist and what its runtime options change. */
const SERVERS: Record<string, { dist: () => string; extra: { cursorSecret?: string | null; matchPageBytes?: number } }> = {
  sample: { dist: () => samples.dist, extra: {} },
  'sample-no-secret': { dist: () => samples.dist, extra: { cursorSecret: null } },
  'sample-small-pages': { dist: () => samples.dist, extra: { matchPageBytes: 700 } },
  real: { dist: () => real.dist, extra: {} },
};

/** (Re)starts every server with fresh state (the credits headers count from the list's start), same dists and clock. */
async function restart(): Promise<void> {
  const keys = join(root, 'keys.json');
  const clock = { now: () => now };
  for (const [name, { dist, extra }] of Object.entries(SERVERS)) {
    await runtimes.get(name)?.close();
    runtimes.set(name, await openRuntime({ dist: dist(), keys, state: 'memory:', clock, cursorSecret: SECRET, ...extra }));
  }
}
