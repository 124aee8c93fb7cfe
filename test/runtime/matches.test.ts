// GET /matches, in process, on a generated release (a few rows added by hand: a merged team ID, undated matches, an
// overlay-only provider's bridge): every answer is compared with lists computed here from the release's CSV tables,
// cursors are followed to the end, and the cap, charging, cursor checks and a damaged index file are exercised.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { generateRelease } from '../../generator/synthetic.ts';
import { TABLE_COLUMNS, type TableName } from '../../generator/tables.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { createBucketCache } from '../../runtime/release/bucket-family-reader.ts';
import { loadRelease } from '../../runtime/release/open-release.ts';
import { CursorSigner } from '../../runtime/routes/match-cursor.ts';
import { matchPage, MAX_EXAMINED } from '../../runtime/routes/match-page.ts';
import { KeptPages } from '../../runtime/routes/match-pages.ts';
import { readMatchQuery } from '../../runtime/routes/match-query.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { client, type ApiResponse } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';

const STAMP = '20260301T000000Z';
const SECRET = 'a test deployment secret of at least 32 characters';
const MERGED_TEAM = 'rt0000000000000a';
const NEVER_PUBLISHED = 'rtffffffffffffff';
const HOUR = 3_600_000;

let root: string;
let key: string;
let now = Date.parse('2026-03-02T10:20:00Z');
const clock = { now: () => now };
const runtimes: InProcessRuntime[] = [];
let call: (path: string) => Promise<ApiResponse>;

/** What the release says about one match, read here from its tables (not from anything the compiler wrote). */
interface Fact {
  id: string;
  date: string | null;
  state: string | null;
  home: string | null;
  away: string | null;
  competition: string | null;
  season: string | null;
  stage: string | null;
  /** Public bridges, sorted as the API lists them. */
  bridges: { provider: string; namespace: string; external_id: string }[];
}
let facts: Fact[];
let team: string; // the team with the most matches in the default window
let opponent: string;
let transfermarktOfTeam: string;
let ambiguousClubId: string;
let player: string;

async function table(dir: string, name: TableName): Promise<Rows> {
  const out: Rows = [];
  await readCsv(join(dir, 'csv', `${name}.csv.gz`), name, { header: () => {}, row: (f) => void out.push([...f]) });
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-matches-'));
  const gen = join(root, 'gen', STAMP);
  await generateRelease({ out: gen, entities: 3000, seed: 11 });
  const names: TableName[] = ['entities', 'teams', 'competitions', 'seasons', 'stages', 'matches', 'players', 'bridges', 'relationships', 'redirects', 'providers'];
  const t = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await table(gen, n)] as const))) as Record<TableName, Rows>;
  const col = (n: TableName, c: string) => (TABLE_COLUMNS[n] as readonly string[]).indexOf(c);
  const M = (c: string) => col('matches', c);

  const type = new Map(t.entities.map((r) => [r[0], r[1]]));
  const countIn = (id: string, from: string, to: string) =>
    t.matches.filter((m) => (m[M('home_id')] === id || m[M('away_id')] === id) && m[M('played_on')] >= from && m[M('played_on')] <= to).length;
  const teams = t.entities.filter((r) => r[1] === 'team').map((r) => r[0]);
  team = teams.reduce((best, id) => (countIn(id, '2026-01-31', '2026-03-01') > countIn(best, '2026-01-31', '2026-03-01') ? id : best));
  player = t.entities.find((r) => r[1] === 'player')![0];

  // Hand-made additions: a merged ID of the team, three of its matches undated, an overlay-only provider's bridge.
  t.redirects.push([MERGED_TEAM, team, 'merged']);
  const own = t.matches.filter((m) => m[M('home_id')] === team || m[M('away_id')] === team);
  for (const m of own.slice(-3)) m[M('played_on')] = '';
  t.providers.push(['kbhint', 'overlay_only']);
  t.bridges.push(['kbhint', '', 'k1', own[0][0], '']);
  writeHandRelease(join(root, 'releases'), STAMP, t, { gzip: true });

  // The facts, from those same rows.
  const redirect = new Map(t.redirects.map((r) => [r[0], r[1]]));
  const final = (id: string): string | null => {
    let x: string | undefined = id;
    while (x && redirect.has(x)) x = redirect.get(x);
    return x && type.has(x) ? x : null;
  };
  const targets = new Map<string, string[]>();
  for (const [from, to] of t.relationships) targets.set(from, [...(targets.get(from) ?? []), to]);
  const up = (id: string | null, want: string) => (id === null ? null : (targets.get(id) ?? []).map(final).filter((x) => x !== null && type.get(x) === want).sort()[0] ?? null);
  const overlayOnly = new Set(t.providers.filter((p) => p[1] === 'overlay_only').map((p) => p[0]));
  const bridges = new Map<string, Fact['bridges']>();
  for (const [provider, namespace, external_id, id] of t.bridges) {
    if (!overlayOnly.has(provider)) bridges.set(id, [...(bridges.get(id) ?? []), { provider, namespace, external_id }]);
  }
  const asTeam = (id: string) => {
    const f = id ? final(id) : null;
    return f !== null && type.get(f) === 'team' ? f : null;
  };
  const STATES = ['played', 'scheduled', 'postponed', 'cancelled', 'awarded', 'abandoned'];
  facts = t.matches.map((m) => {
    const stage = up(m[0], 'stage');
    const season = up(m[0], 'season') ?? up(stage, 'season');
    return {
      id: m[0],
      date: m[M('played_on')] || null,
      state: STATES.includes(m[M('match_state')]) ? m[M('match_state')] : null,
      home: asTeam(m[M('home_id')]),
      away: asTeam(m[M('away_id')]),
      competition: up(m[0], 'competition') ?? up(season, 'competition') ?? up(stage, 'competition'),
      season,
      stage,
      bridges: (bridges.get(m[0]) ?? []).sort((a, b) => (a.provider + '\0' + a.namespace + '\0' + a.external_id < b.provider + '\0' + b.namespace + '\0' + b.external_id ? -1 : 1)),
    };
  });
  const met = new Map<string, number>();
  for (const f of facts) if (f.home === team && f.away) met.set(f.away, (met.get(f.away) ?? 0) + 1);
  opponent = [...met].sort((a, b) => b[1] - a[1])[0][0];
  transfermarktOfTeam = t.bridges.find((b) => b[0] === 'transfermarkt' && b[3] === team)![2];
  const clubs = new Map<string, Set<string>>();
  for (const [provider, namespace, ext, id] of t.bridges) if (provider === 'transfermarkt' && namespace === 'verein') clubs.set(ext, (clubs.get(ext) ?? new Set()).add(id));
  ambiguousClubId = [...clubs].find(([, ids]) => ids.size > 1)![0];

  await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false });
  key = (await addKey({ file: join(root, 'keys.json'), name: 'matches', quota: 1_000_000, rate: 1_000_000 })).key;
  call = await serve(join(root, 'dist'));
});

afterAll(async () => {
  for (const r of runtimes) await r.close();
  rmSync(root, { recursive: true, force: true });
});

/** Starts a runtime on `dist` (stopped in afterAll) and returns a validating client for it. */
async function serve(dist: string, matchPageBytes?: number): Promise<(path: string) => Promise<ApiResponse>> {
  const rt = await openInProcess({ dist, keys: join(root, 'keys.json'), state: 'memory:', clock, cursorSecret: SECRET, matchPageBytes });
  runtimes.push(rt);
  const c = client(rt.url + '/api/v1', key);
  return (path: string) => c(path);
}

/** Page order: date desc (asc), ties by reep_id ascending, undated last. */
function ordered(list: Fact[], sort: 'asc' | 'desc' = 'desc'): string[] {
  return list
    .slice()
    .sort((a, b) => {
      if ((a.date === null) !== (b.date === null)) return a.date === null ? 1 : -1;
      if (a.date !== b.date) return (a.date! < b.date! ? -1 : 1) * (sort === 'asc' ? 1 : -1);
      return a.id < b.id ? -1 : 1;
    })
    .map((f) => f.id);
}

const within = (from: string | null, to: string | null) => (f: Fact) => (from === null && to === null) || (f.date !== null && (from === null || f.date >= from) && (to === null || f.date <= to));
const plays = (id: string) => (f: Fact) => f.home === id || f.away === id;

/** Every row of a query, following next_cursor to the end; no row may come twice, no page may pass the limit. */
async function walk(path: string, c = call): Promise<{ ids: string[]; rows: any[]; pages: ApiResponse[] }> {
  const rows: any[] = [];
  const pages: ApiResponse[] = [];
  let cursor: string | null = null;
  do {
    const r = await c(`${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status, r.text).toBe(200);
    pages.push(r);
    rows.push(...r.json.matches);
    cursor = r.json.next_cursor;
    expect(pages.length).toBeLessThan(500);
  } while (cursor);
  const ids = rows.map((m) => m.reep_id);
  expect(new Set(ids).size).toBe(ids.length);
  return { ids, rows, pages };
}

const credits = (r: ApiResponse) => Number(r.headers.get('x-register-credits-remaining'));

describe('GET /matches', () => {
  it('a team, followed to the end with cursors, gives exactly its matches in date order, each row as the release states it', async () => {
    const expected = facts.filter(plays(team)).filter(within('1900-01-01', null));
    const { ids, rows } = await walk(`/matches?team=${team}&from=1900-01-01&limit=7`);
    expect(ids).toEqual(ordered(expected));
    const byId = new Map(facts.map((f) => [f.id, f]));
    for (const m of rows) {
      const f = byId.get(m.reep_id)!;
      expect([m.played_on, m.state, m.home?.reep_id ?? null, m.away?.reep_id ?? null]).toEqual([f.date, f.state, f.home, f.away]);
      expect([m.competition?.reep_id ?? null, m.season?.reep_id ?? null, m.stage?.reep_id ?? null]).toEqual([f.competition, f.season, f.stage]);
      expect(m.bridges).toEqual(f.bridges);
    }
    // Ascending is the same set the other way round (ties still by reep_id ascending).
    expect((await walk(`/matches?team=${team}&from=1900-01-01&sort=asc&limit=100`)).ids).toEqual(ordered(expected, 'asc'));
  });

  it('without season or dates, the window is the 30 days ending on the stamp\'s date; a season lifts it, and undated matches sort last', async () => {
    const inWindow = facts.filter(plays(team)).filter(within('2026-01-31', '2026-03-01'));
    expect(inWindow.length).toBeGreaterThan(0);
    expect((await walk(`/matches?team=${team}&limit=100`)).ids).toEqual(ordered(inWindow));
    const undated = facts.filter(plays(team)).filter((f) => f.date === null);
    expect(undated.length).toBe(3);
    const season = undated[0].season!;
    const inSeason = facts.filter(plays(team)).filter((f) => f.season === season);
    const { ids } = await walk(`/matches?team=${team}&season=${season}&limit=5`);
    expect(ids).toEqual(ordered(inSeason));
    expect(ids.slice(-undated.filter((f) => f.season === season).length)).toEqual(ordered(undated.filter((f) => f.season === season)));
  });

  it('each filter alone and combined matches the lists computed from the CSV tables', async () => {
    const all = facts.filter(plays(team)).filter(within('1900-01-01', null));
    const cases: [string, Fact[], 'asc' | 'desc'][] = [
      ['state=scheduled,postponed,none', all.filter((f) => f.state === null || f.state === 'scheduled' || f.state === 'postponed'), 'desc'],
      ['venue=home', all.filter((f) => f.home === team), 'desc'],
      ['venue=away&sort=asc', all.filter((f) => f.away === team), 'asc'],
      [`opponent=${opponent}`, all.filter((f) => f.home === opponent || f.away === opponent), 'desc'],
      ['require=opta', all.filter((f) => f.bridges.some((b) => b.provider === 'opta')), 'desc'],
      ['missing=opta,fbref', all.filter((f) => !f.bridges.some((b) => b.provider === 'opta' || b.provider === 'fbref')), 'desc'],
      ['to=2025-12-31', all.filter(within(null, '2025-12-31')), 'desc'],
      [`opponent=${opponent}&venue=home&state=played&require=fotmob`, all.filter((f) => f.home === team && f.away === opponent && f.state === 'played' && f.bridges.some((b) => b.provider === 'fotmob')), 'desc'],
    ];
    for (const [q, expected, sort] of cases) {
      // Each case selects some matches and leaves some out, so it proves the filter applies.
      expect(expected.length, q).toBeGreaterThan(0);
      expect(expected.length, q).toBeLessThan(all.length);
      expect((await walk(`/matches?team=${team}&from=1900-01-01&limit=4&${q}`)).ids, q).toEqual(ordered(expected, sort));
    }
    // providers filters the bridges listed, not the matches; the overlay-only provider's bridge is never listed.
    const { rows } = await walk(`/matches?team=${team}&from=1900-01-01&limit=100&providers=opta,fbref,kbhint`);
    expect(rows.length).toBe(all.length);
    for (const m of rows) expect(m.bridges).toEqual(facts.find((f) => f.id === m.reep_id)!.bridges.filter((b) => b.provider === 'opta' || b.provider === 'fbref'));
    // Anchors intersect; values of one anchor are ORed (and a match of two listed teams comes once).
    const f0 = all.find((f) => f.competition !== null)!;
    const both = facts.filter(plays(team)).filter((f) => f.competition === f0.competition).filter(within('1900-01-01', null));
    expect((await walk(`/matches?competition=${f0.competition}&team=${team}&from=1900-01-01&limit=6`)).ids).toEqual(ordered(both));
    expect(both.length).toBeGreaterThan(0);
    expect(both.length).toBeLessThan(all.length);
    const either = facts.filter((f) => plays(team)(f) || plays(opponent)(f)).filter(within('1900-01-01', '2025-12-31'));
    expect(either.length).toBeGreaterThan(facts.filter(plays(team)).filter(within('1900-01-01', '2025-12-31')).length);
    expect((await walk(`/matches?team=${team}&team=${opponent}&from=1900-01-01&to=2025-12-31&limit=9`)).ids).toEqual(ordered(either));
    const seasons = [...new Set(all.map((f) => f.season).filter((s) => s !== null))].slice(0, 2) as string[];
    const inSeasons = facts.filter((f) => f.season !== null && seasons.includes(f.season));
    expect((await walk(`/matches?season=${seasons[0]}&season=${seasons[1]}&sort=asc&limit=100`)).ids).toEqual(ordered(inSeasons, 'asc'));
  });

  it('anchors by provider reference and by merged ID answer as the register ID does; unresolved, ambiguous and wrong-type values', async () => {
    const q = '&from=1900-01-01&limit=100';
    const byId = (await call(`/matches?team=${team}${q}`)).text;
    expect((await call(`/matches?team=transfermarkt:verein:${transfermarktOfTeam}${q}`)).text).toBe(byId);
    expect((await call(`/matches?team=${MERGED_TEAM}${q}`)).text).toBe(byId);
    for (const value of ['transfermarkt:verein:no-such-club', 'nosuchprovider::1', NEVER_PUBLISHED]) {
      const r = await call(`/matches?team=${team}&team=${encodeURIComponent(value)}${q}`);
      expect([r.status, r.json.matches, r.json.unresolved, r.json.next_cursor]).toEqual([200, [], [value], null]);
    }
    const ambiguous = await call(`/matches?team=transfermarkt:verein:${ambiguousClubId}`);
    expect([ambiguous.status, ambiguous.json.error]).toEqual([409, 'ambiguous_provider_id']);
    expect((await call(`/matches?team=${player}`)).json.error).toBe('wrong_entity_type');
    const asCompetition = await call(`/matches?competition=${team}`);
    expect([asCompetition.status, asCompetition.json.error]).toEqual([422, 'wrong_entity_type']);
  });

  it('refuses malformed requests with the decisions\' codes, free of charge', async () => {
    const before = credits(await call(`/matches?team=${team}`));
    const cases: [string, string][] = [
      ['', 'anchor_required'],
      [`team=${team}&team=a:b:1&team=a:b:2&team=a:b:3&team=a:b:4&team=a:b:5`, 'invalid_anchor'],
      ['team=reep_t0871097b', 'invalid_id'],
      ['team=fbref:only-one-colon', 'invalid_anchor'],
      [`team=${team}&team=${opponent}&venue=home`, 'single_team_required'],
      [`competition=${team}&opponent=${opponent}`, 'single_team_required'],
      [`team=${team}&from=2026-02-30`, 'invalid_date'],
      [`team=${team}&from=2026-03-01&to=2026-02-01`, 'invalid_date_range'],
      [`team=${team}&state=played,finished`, 'invalid_state'],
      [`team=${team}&require=opta,,fbref`, 'invalid_filter'],
      [`team=${team}&sort=newest`, 'invalid_sort'],
      [`team=${team}&limit=101`, 'invalid_limit'],
      [`team=${team}&limit=0`, 'invalid_limit'],
      [`team=${team}&colour=red`, 'unknown_parameter'],
      [`team=${team}&sort=asc&sort=desc`, 'repeated_parameter'],
      [`team=${team}&venue=middle`, 'invalid_parameter'],
      [`team=${team}&cursor=not-a-cursor`, 'stale_cursor'],
    ];
    for (const [q, code] of cases) {
      const r = await call(`/matches?${q}`);
      expect([r.status, r.json.error], q).toEqual([400, code]);
      expect(credits(r), q).toBe(before);
    }
  });

  it('cursors are refused when altered, reused with other filters, expired, or after the clock hour they were issued in has long passed', async () => {
    const path = `/matches?team=${team}&from=1900-01-01&limit=3`;
    const first = await call(path);
    const cursor: string = first.json.next_cursor;
    expect(cursor).toBeTruthy();
    const ok = await call(`${path}&cursor=${encodeURIComponent(cursor)}`);
    expect(ok.status).toBe(200);
    const stale = async (p: string) => {
      const r = await call(p);
      expect([r.status, r.json.error], p).toEqual([400, 'stale_cursor']);
    };
    const flipped = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11);
    await stale(`${path}&cursor=${encodeURIComponent(flipped)}`);
    await stale(`${path}&cursor=${encodeURIComponent(cursor.slice(0, -2))}`);
    await stale(`/matches?team=${team}&from=1900-01-01&limit=4&cursor=${encodeURIComponent(cursor)}`);
    await stale(`/matches?team=${team}&from=1900-01-02&limit=3&cursor=${encodeURIComponent(cursor)}`);
    await stale(`/matches?team=${team}&from=1900-01-01&limit=3&state=played&cursor=${encodeURIComponent(cursor)}`);
    // The signature as issued, and no other spelling of its bytes: `=` padding, standard base64's `+` and `/`.
    const [payload, signature] = cursor.split('.');
    const padded = `${payload}.${signature}=`;
    const standard = `${payload}.${Buffer.from(signature, 'base64url').toString('base64')}`;
    expect(standard).not.toBe(cursor);
    for (const other of [padded, standard, `${cursor}!`]) await stale(`${path}&cursor=${encodeURIComponent(other)}`);
    const saved = now;
    try {
      now = saved + 23 * HOUR;
      expect((await call(`${path}&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
      now = saved + 25 * HOUR;
      await stale(`${path}&cursor=${encodeURIComponent(cursor)}`);
      // Issued by this deployment's secret with a clock 1,000 hours ahead: refused.
      now = saved + 1000 * HOUR;
      const future: string = (await call(path)).json.next_cursor;
      now = saved;
      await stale(`${path}&cursor=${encodeURIComponent(future)}`);
      // …but an instance whose clock is a few seconds ahead, across an hour's start, is believed.
      const hourStart = Math.ceil(saved / HOUR) * HOUR;
      now = hourStart + 1000;
      const ahead: string = (await call(path)).json.next_cursor;
      now = hourStart - 2000;
      expect((await call(`${path}&cursor=${encodeURIComponent(ahead)}`)).status).toBe(200);
    } finally {
      now = saved;
    }
  });

  it('the same request against the same stamp answers the same bytes, cursor included, within the clock hour', async () => {
    const path = `/matches?team=${team}&from=1900-01-01&limit=5&providers=opta`;
    const a = await call(path);
    const later = now;
    now += 20 * 60_000;
    try {
      const b = await call(path);
      expect(b.text).toBe(a.text);
      const next = `${path}&cursor=${encodeURIComponent(a.json.next_cursor)}`;
      expect((await call(next)).text).toBe((await call(next)).text);
    } finally {
      now = later;
    }
  });

  it('costs one lookup per page (409 and 422 too); a page stays under the byte cap and a single row over it is 503 at no charge', async () => {
    let r = await call(`/matches?team=${team}`);
    let left = credits(r);
    r = await call(`/matches?team=${team}&from=1900-01-01&limit=2`);
    expect(credits(r)).toBe(--left);
    r = await call(`/matches?team=transfermarkt:verein:${ambiguousClubId}`);
    expect(credits(r)).toBe(--left);
    r = await call(`/matches?team=${player}`);
    expect(credits(r)).toBe(--left);

    const small = await serve(join(root, 'dist'), 3000);
    const expected = ordered(facts.filter(plays(team)).filter(within('1900-01-01', null)));
    const { ids, pages } = await walk(`/matches?team=${team}&from=1900-01-01&limit=100`, small);
    expect(ids).toEqual(expected);
    for (const p of pages) expect(Buffer.byteLength(p.text)).toBeLessThanOrEqual(3000);
    expect(pages.length).toBeGreaterThan(2);

    const tiny = await serve(join(root, 'dist'), 600);
    const before = credits(await tiny(`/matches?team=${team}&from=2100-01-01`));
    const over = await tiny(`/matches?team=${team}&from=1900-01-01`);
    expect([over.status, over.json.error]).toEqual([503, 'match_response_too_large']);
    expect(credits(over)).toBe(before);
  });

  it('a damaged match-index file answers 503 artefact_corrupt and costs nothing; other routes still answer', async () => {
    const copy = join(root, 'dist-damaged');
    cpSync(join(root, 'dist'), copy, { recursive: true });
    const dir = join(copy, STAMP, 'public', 'matches');
    const rowsPack = readdirSync(dir).find((f) => f.startsWith('rows-') && f.endsWith('.pack') && !f.includes('-dir-'))!;
    const bytes = readFileSync(join(dir, rowsPack));
    for (let i = 0; i < bytes.length; i += 64) bytes[i] ^= 0xff;
    writeFileSync(join(dir, rowsPack), bytes);
    const damaged = await serve(copy);
    const before = credits(await damaged(`/matches?team=${team}&from=2100-01-01`));
    const r = await damaged(`/matches?team=${team}&from=1900-01-01`);
    expect([r.status, r.json.error]).toEqual([503, 'artefact_corrupt']);
    expect(credits(r)).toBe(before);
    // A required provider that no row bridges passes no row, so the page reads none: the damage is never met.
    const none = await damaged(`/matches?team=${team}&from=1900-01-01&require=no_such_provider`);
    expect([none.status, none.json.matches]).toEqual([200, []]);
    expect((await damaged(`/entities/${team}`)).status).toBe(200);
  });
});

describe('how a /matches page is made', () => {
  it('asking the entries\' digests for the other anchors gives the pages and cursors of checking every row, and reads no row for an empty intersection', async () => {
    const dist = join(root, 'dist');
    const source = createFsSource({ root: dist, reads: 'sync' });
    try {
      const manifest = createHash('sha256').update(readFileSync(join(dist, STAMP, 'public', 'manifest.json'))).digest('hex');
      const release = await loadRelease(source, STAMP, manifest, createBucketCache(1 << 22));
      const index = release.matchIndex()!;
      const generation = index.generation;
      const signer = new CursorSigner(SECRET);
      // Rows read, counted on the index itself.
      let rowsRead = 0;
      const rowBytes = index.rowBytes.bind(index);
      index.rowBytes = (position) => (rowsRead++, rowBytes(position));
      const page = async (qs: string, digests: boolean, examined: number, cursor: string | null): Promise<string> => {
        const q = readMatchQuery({ params: {}, query: new URLSearchParams(`${qs}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`) }, STAMP);
        if (q.cursor !== null) q.after = signer.open(q.cursor, generation, q.filters(), now);
        const body = await matchPage(release, index, generation, q, signer, now, 262_144, { digests, examined });
        return typeof body === 'string' ? body : Buffer.from(body).toString();
      };
      /** Both ways, page by page to the end: the same bytes each time. Rows read by each, and the pages. */
      const both = async (qs: string, examined = MAX_EXAMINED) => {
        const pages: { matches: unknown[]; next_cursor: string | null }[] = [];
        const reads = { digests: 0, rows: 0 };
        let cursor: string | null = null;
        do {
          rowsRead = 0;
          const a = await page(qs, true, examined, cursor);
          reads.digests += rowsRead;
          rowsRead = 0;
          const b = await page(qs, false, examined, cursor);
          reads.rows += rowsRead;
          expect(a, `${qs} after ${pages.length} pages`).toBe(b);
          pages.push(JSON.parse(a));
          cursor = pages[pages.length - 1].next_cursor;
          expect(pages.length).toBeLessThan(3000);
        } while (cursor !== null);
        return { pages, reads, rows: pages.reduce((n, p) => n + p.matches.length, 0) };
      };

      // The five teams with the most matches; the competitions and seasons they play in (a non-empty intersection);
      // five seasons of one competition with another competition (an empty one: a season is of one competition).
      const pick = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => x !== null))].sort().slice(0, 5);
      const played = new Map<string, number>();
      for (const f of facts) for (const t of [f.home, f.away]) if (t) played.set(t, (played.get(t) ?? 0) + 1);
      const teams = [...played].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5).map(([t]) => t).sort();
      const theirs = facts.filter((f) => teams.some((t) => plays(t)(f)));
      const competitions = pick(theirs.map((f) => f.competition));
      const seasons = pick(theirs.map((f) => f.season));
      expect([teams.length, competitions.length, seasons.length]).toEqual([5, 2, 5]);
      const elsewhere = pick(facts.filter((f) => f.competition === competitions[0]).map((f) => f.season));
      expect(facts.some((f) => f.competition === competitions[1] && f.season !== null && elsewhere.includes(f.season))).toBe(false);
      const anchors = (kind: string, ids: string[]) => ids.map((id) => `${kind}=${id}`).join('&');
      const all = '&from=0001-01-01&to=9999-12-31';

      const empty = `${anchors('team', teams)}&competition=${competitions[1]}&${anchors('season', elsewhere)}${all}`;
      const none = await both(empty);
      // The row check met rows of the teams and competitions; the digests show at once that none is in those seasons.
      expect([none.pages.length, none.rows, none.reads.digests]).toEqual([1, 0, 0]);
      expect(none.reads.rows).toBeGreaterThan(0);
      // The same with a budget that ends pages early: empty pages with cursors, the same ones either way.
      const budgeted = await both(empty, 7);
      expect(budgeted.pages.length).toBeGreaterThan(1);
      expect(budgeted.reads.digests).toBe(0);

      const some = await both(`${anchors('team', teams)}&${anchors('competition', competitions)}&${anchors('season', seasons)}${all}&limit=7`);
      expect(some.rows).toBeGreaterThan(0);
      // Every row the digests let through is on the page (no filter but the anchors).
      expect(some.reads.digests).toBe(some.rows);
      // With a budget of five entries, so pages end early and are continued by cursor.
      for (const qs of [
        `${anchors('team', teams)}&${anchors('competition', competitions)}&${anchors('season', seasons)}${all}&limit=7`,
        `${anchors('team', teams.slice(0, 2))}&${anchors('competition', competitions.slice(0, 2))}&sort=asc&state=played,none&limit=5`,
        `team=${team}&${anchors('season', seasons)}&venue=away&require=opta&from=2020-01-01&limit=4`,
        `${anchors('competition', competitions)}&${anchors('season', seasons.slice(1))}&to=2025-12-31&limit=9`,
        // A required provider no row bridges: one list, ended without reading its entries; and several lists.
        `competition=${competitions[0]}&require=no_such_provider${all}`,
        `competition=${competitions[0]}&require=no_such_provider&sort=asc&from=2024-01-01&to=2025-06-30`,
        `${anchors('team', teams)}&require=no_such_provider${all}`,
      ]) {
        await both(qs, 5);
      }
    } finally {
      await source.close();
    }
  });

  it('a first page asked again is the page kept for its release and clock hour, the same bytes as made', async () => {
    const rt = await openInProcess({ dist: join(root, 'dist'), keys: join(root, 'keys.json'), state: 'memory:', clock, cursorSecret: SECRET });
    runtimes.push(rt);
    const ask = async (path: string) => {
      const a = await rt.app.answer(new Request(`${rt.url}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
      expect(a.status).toBe(200);
      return a.body as Uint8Array;
    };
    const path = `/matches?team=${team}&from=1900-01-01&limit=5`;
    const first = await ask(path);
    expect(JSON.parse(Buffer.from(first).toString()).next_cursor).not.toBeNull();
    // The same bytes object: kept, not made again.
    expect(await ask(path)).toBe(first);
    // A page with its cursor is made each time, the same bytes.
    const next = `${path}&cursor=${encodeURIComponent(JSON.parse(Buffer.from(first).toString()).next_cursor)}`;
    const second = await ask(next);
    expect(await ask(next)).not.toBe(second);
    expect(Buffer.from(await ask(next)).equals(Buffer.from(second))).toBe(true);
    // Another hour: its cursor records another hour, so another page, made and then kept in turn.
    const hour = now;
    now += HOUR;
    try {
      const later = await ask(path);
      expect(Buffer.from(later).equals(Buffer.from(first))).toBe(false);
      expect(await ask(path)).toBe(later);
      // And it is what a runtime that never kept a page answers.
      const fresh = await serve(join(root, 'dist'));
      expect((await fresh(path)).text).toBe(Buffer.from(later).toString());
    } finally {
      now = hour;
    }
  });

  it('kept pages answer only in the scope (release and hour) they were made in, within their budget', () => {
    const pages = new KeptPages(4096);
    const body = new TextEncoder().encode('{"matches":[]}');
    const kept = pages.keep('r1\u00001', 'team=a', body);
    expect(pages.get('r1\u00001', 'team=a')).toBe(kept);
    expect(pages.get('r2\u00001', 'team=a')).toBeUndefined();
    // A page of another scope drops the others: none of them can be asked for again.
    pages.keep('r2\u00001', 'team=b', body);
    expect([pages.get('r1\u00001', 'team=a'), pages.size]).toEqual([undefined, 1]);
    // Past the budget nothing more is kept, and the bytes are answered all the same.
    const large = new Uint8Array(4000);
    expect(pages.keep('r2\u00001', 'team=c', large)).toBe(large);
    expect(pages.get('r2\u00001', 'team=c')).toBeUndefined();
  });
});
