// What a release says, as the published register says it, in process against compiled hand-made releases: the
// scoreline (`match`) on every match and nothing else, its values outside the published enums dropped and counted
// (refused under --strict, file and row named), each changelog event a successor emits with its fields, an ID the
// successor lacks answering 410 with `entity_removed`, the stamp-order warning and `serve --stamp`.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import type { CompileReport } from '../../compiler/compile-release.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { runToExit } from '../helpers/run-command.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';

const FIRST = '20261001T000000Z';
const SECOND = '20261008T000000Z';
const ID = {
  home: 'rt00000000000a01',
  away: 'rt00000000000a02',
  gone: 'rt00000000000a03',
  merged: 'rt00000000000a04',
  player: 'rp00000000000b01',
  cup: 'rm00000000000c01',
  league: 'rm00000000000c02',
  bad: 'rm00000000000c03',
  nowhere: 'rt00000000000fff',
};

const entity = (id: string, type: string, label: string): string[] => [id, type, 'active', label, '', '', '', '', ''];
const team = (id: string, label: string): string[] => [id, 'active', label, '', ''];
/** A matches row in the published column order (generator/tables.ts). */
const matchRow = (id: string, label: string, m: Partial<Record<string, string>>): string[] =>
  [id, 'active', label, m.home_score ?? '', m.away_score ?? '', m.result_form ?? '', m.shootout_home ?? '', m.shootout_away ?? '', m.score_basis ?? '',
    m.home_id ?? '', m.away_id ?? '', m.played_on ?? '', m.leg ?? '', m.aggregate_of ?? '', m.match_state ?? ''];

const CUP = { home_score: '1', away_score: '1', result_form: 'penalties', shootout_home: '4', shootout_away: '3', score_basis: 'corroborated', home_id: ID.home, away_id: ID.away, played_on: '2026-09-20', leg: '2', match_state: 'played' };
const LEAGUE = { home_score: '2', away_score: '0', result_form: 'regular', score_basis: 'single_source', home_id: ID.away, away_id: ID.home, played_on: '2026-09-27', match_state: 'played' };
/** Every scoreline cell of this row is outside what the published service admits. */
const BAD = { home_score: '-1', away_score: '1.5', result_form: 'ft', shootout_home: 'x', shootout_away: '', score_basis: 'full_time', home_id: ID.nowhere, away_id: 'not-an-id', played_on: '2026-02-30', match_state: 'played' };

function firstRelease(): Record<string, Rows> {
  return {
    entities: [
      entity(ID.home, 'team', 'Home FC'), entity(ID.away, 'team', 'Away FC'), entity(ID.gone, 'team', 'Gone FC'), entity(ID.merged, 'team', 'Home Football Club'),
      entity(ID.player, 'player', 'Pat Player'), entity(ID.cup, 'match', 'Home v Away'), entity(ID.league, 'match', 'Away v Home'), entity(ID.bad, 'match', 'Bad v Row'),
    ],
    teams: [team(ID.home, 'Home FC'), team(ID.away, 'Away FC'), team(ID.gone, 'Gone FC'), team(ID.merged, 'Home Football Club')],
    matches: [matchRow(ID.cup, 'Home v Away', CUP), matchRow(ID.league, 'Away v Home', LEAGUE), matchRow(ID.bad, 'Bad v Row', BAD)],
    bridges: [['opta', '', 't1', ID.home, ''], ['opta', '', 't3', ID.gone, ''], ['opta', '', 'm1', ID.cup, '']],
  };
}

/**
 * The successor: the cup match's score corrected and moved a day, the league match's state changed, Gone FC left out
 * altogether (no row, no redirect), Home Football Club merged into Home FC.
 */
function secondRelease(): Record<string, Rows> {
  const r = firstRelease();
  r.entities = r.entities.filter((e) => e[0] !== ID.gone && e[0] !== ID.merged);
  r.teams = r.teams.filter((t) => t[0] !== ID.gone && t[0] !== ID.merged);
  r.bridges = r.bridges.filter((b) => b[3] !== ID.gone);
  r.matches = [
    matchRow(ID.cup, 'Home v Away', { ...CUP, home_score: '2', result_form: 'regular', shootout_home: '', shootout_away: '', played_on: '2026-09-21' }),
    matchRow(ID.league, 'Away v Home', { ...LEAGUE, match_state: 'awarded' }),
    matchRow(ID.bad, 'Bad v Row', BAD),
  ];
  r.redirects = [[ID.merged, ID.home, 'merged']];
  return r;
}

const SCORELINE_KEYS = ['home_score', 'away_score', 'result_form', 'shootout_home', 'shootout_away', 'score_basis', 'home_id', 'away_id', 'played_on'];

let root: string;
let releases: string;
let dist: string;
let reports: CompileReport[];
let rt: InProcessRuntime;
let call: ReturnType<typeof client>;
let keysFile: string;
let key: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ir-semantics-'));
  releases = join(root, 'releases');
  dist = join(root, 'dist');
  writeHandRelease(releases, FIRST, firstRelease());
  writeHandRelease(releases, SECOND, secondRelease());
  reports = await compileAll({ releases, dist, progress: false });
  keysFile = join(root, 'keys.json');
  key = (await addKey({ file: keysFile, name: 'semantics', quota: 100000, rate: 100000 })).key;
  rt = await openInProcess({ dist, keys: keysFile, state: 'memory:' });
  call = client(rt.url + '/api/v1', key);
});
afterAll(async () => {
  await rt?.close();
});

describe('the scoreline', () => {
  it('every match carries `match` last, its keys in contract order, whatever include says; other types have none', async () => {
    const cup = { home_score: 2, away_score: 1, result_form: 'regular', shootout_home: null, shootout_away: null, score_basis: 'corroborated', home_id: ID.home, away_id: ID.away, played_on: '2026-09-21' };
    for (const include of ['', '?include=attributes', '?include=overlay,bridges,aliases,relationships,attributes']) {
      const r = await call(`/entities/${ID.cup}${include}`);
      expect(r.status).toBe(200);
      expect(Object.keys(r.json).at(-1)).toBe('match');
      expect(Object.keys(r.json.match)).toEqual(SCORELINE_KEYS);
      expect(r.json.match).toEqual(cup);
    }
    for (const id of [ID.home, ID.away, ID.player, ID.merged]) {
      const r = await call(`/entities/${id}?include=attributes,bridges`);
      expect(r.json, id).not.toHaveProperty('match');
    }
    const batch = await call('/batch', { body: { requests: [{ type: 'entity', id: ID.league }, { type: 'entity', id: ID.player }] } });
    expect(batch.json.results[0].body.match.result_form).toBe('regular');
    expect(batch.json.results[1].body).not.toHaveProperty('match');
  });

  it('a value outside the published types, enums or IDs is null, and the compile counts it per table with its row', async () => {
    const r = await call(`/entities/${ID.bad}`);
    expect(r.json.match).toEqual({
      home_score: null, away_score: null, result_form: null, shootout_home: null, shootout_away: null, score_basis: null, home_id: null, away_id: null, played_on: null,
    });
    // The attributes still say what the release said.
    expect((await call(`/entities/${ID.bad}?include=attributes`)).json.attributes.result_form).toEqual(['ft']);
    const slack = Object.fromEntries(reports[0].slack.map((s) => [s.what, `${s.count} ${s.example}`]));
    expect(slack).toEqual({
      'csv/matches.csv: home_score not a whole number of goals (0 or more)': '1 row 3: "-1"',
      'csv/matches.csv: away_score not a whole number of goals (0 or more)': '1 row 3: "1.5"',
      'csv/matches.csv: result_form not one of regular, extra_time, penalties, golden_goal, awarded, abandoned, unknown': '1 row 3: "ft"',
      'csv/matches.csv: shootout_home not a whole number of goals (0 or more)': '1 row 3: "x"',
      'csv/matches.csv: score_basis not one of corroborated, single_source, operator_ruling': '1 row 3: "full_time"',
      'csv/matches.csv: home_id not a live register ID': `1 row 3: "${ID.nowhere}"`,
      'csv/matches.csv: away_id not a register ID': '1 row 3: "not-an-id"',
      'csv/matches.csv: played_on not a date (YYYY-MM-DD)': '1 row 3: "2026-02-30"',
    });
  });

  it('--strict refuses a release with such a value, naming the file and the row', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ir-semantics-strict-'));
    writeHandRelease(join(d, 'releases'), FIRST, { ...firstRelease(), matches: [matchRow(ID.cup, 'Home v Away', { ...CUP, result_form: 'aet' })] });
    await expect(compileAll({ releases: join(d, 'releases'), dist: join(d, 'dist'), strict: true, progress: false })).rejects.toThrow(
      /csv\/matches\.csv: result_form not one of regular, .* \(1 rows, e\.g\. row 1: "aet"\); refused under --strict/,
    );
  });
});

describe('the changelog of a successor', () => {
  it('emits score_updated, fixture_updated, redirect_changed and entity_removed with their fields', async () => {
    // Events come partition by partition; sorted by ID here so the expectation does not depend on the hashing.
    const events = async (type: string) => ((await call(`/changes?type=${type}`)).json.events as { reep_id: string }[]).sort((a, b) => (a.reep_id < b.reep_id ? -1 : 1));
    expect(await events('score_updated')).toEqual([
      {
        type: 'score_updated', reep_id: ID.cup,
        match: { home_score: 2, away_score: 1, result_form: 'regular', shootout_home: null, shootout_away: null, score_basis: 'corroborated', home_id: ID.home, away_id: ID.away, played_on: '2026-09-21' },
      },
    ]);
    expect(await events('fixture_updated')).toEqual([
      { type: 'fixture_updated', reep_id: ID.cup, home_id: ID.home, away_id: ID.away, played_on: '2026-09-21', leg: '2', aggregate_of: null, state: 'played' },
      { type: 'fixture_updated', reep_id: ID.league, home_id: ID.away, away_id: ID.home, played_on: '2026-09-27', leg: null, aggregate_of: null, state: 'awarded' },
    ]);
    expect(await events('redirect_changed')).toEqual([{ type: 'redirect_changed', reep_id: ID.merged, redirected_to: ID.home }]);
    expect(await events('entity_removed')).toEqual([{ type: 'entity_removed', reep_id: ID.gone }]);
    // The one match whose values are all dropped did not change.
    const summary = await call(`/changes/summary?since=${FIRST}`);
    expect(summary.json).toMatchObject({ since: FIRST, from: FIRST, to: SECOND, chain: [SECOND] });
    expect(summary.json.counts).toEqual({
      entity_added: 0, entity_status_changed: 0, label_updated: 0, entity_removed: 1, redirect_changed: 1, provider_updated: 1, fixture_updated: 2, score_updated: 1,
    });
  });

  it('an ID the successor lacks answers 410 like any tombstone, is counted, and --strict refuses it naming the ID', async () => {
    const r = await call(`/entities/${ID.gone}`);
    expect(r.status).toBe(410);
    expect(r.json).toEqual({ error: 'gone', message: `Register ID ${ID.gone} was retired and is never reused.`, detail: ID.gone });
    expect((await call(`/resolve/opta/t3`)).json.count).toBe(0);
    expect((await call('/meta')).json.counts.tombstones).toBe(1);
    expect(reports[1].slack).toContainEqual({ what: 'csv/entities.csv: ID of the prior release missing without redirect or tombstone (tombstoned)', count: 1, example: ID.gone });
    // The same pair without the bad match row: the vanished ID is all --strict has to refuse.
    const d = mkdtempSync(join(tmpdir(), 'ir-semantics-strict-'));
    const clean = (r: Record<string, Rows>) => ({ ...r, entities: r.entities.filter((e) => e[0] !== ID.bad), matches: r.matches.filter((m) => m[0] !== ID.bad) });
    writeHandRelease(join(d, 'releases'), FIRST, clean(firstRelease()));
    writeHandRelease(join(d, 'releases'), SECOND, clean(secondRelease()));
    await expect(compileAll({ releases: join(d, 'releases'), dist: join(d, 'dist'), strict: true, progress: false })).rejects.toThrow(
      `csv/entities.csv: ID of the prior release missing without redirect or tombstone (tombstoned) (1 rows, e.g. ${ID.gone}); refused under --strict`,
    );
  });

  it('a third release that still lacks the ID keeps it a tombstone, with no second entity_removed', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ir-semantics-third-'));
    writeHandRelease(join(d, 'releases'), FIRST, firstRelease());
    writeHandRelease(join(d, 'releases'), SECOND, secondRelease());
    writeHandRelease(join(d, 'releases'), '20261015T000000Z', secondRelease());
    await compileAll({ releases: join(d, 'releases'), dist: join(d, 'dist'), progress: false });
    const doc = JSON.parse(readFileSync(join(d, 'dist', '20261015T000000Z', 'public', 'release.json'), 'utf8'));
    expect(doc.counts.tombstones).toBe(1);
    expect(doc.changes.counts.entity_removed).toBe(0);
    // Compiled twice, the same bytes.
    const digest = (dir: string) => JSON.parse(readFileSync(join(dir, SECOND, 'manifest.json'), 'utf8')).digest;
    expect(digest(join(d, 'dist'))).toBe(digest(dist));
  });
});

describe('stamps', () => {
  it('compiling a stamp older than the newest in the dist warns, naming both, that the newest stays served', async () => {
    const d = mkdtempSync(join(tmpdir(), 'ir-semantics-order-'));
    writeHandRelease(join(d, 'releases'), SECOND, firstRelease());
    const args = ['bin/register.mjs', 'compile', '--releases', join(d, 'releases'), '--out', join(d, 'dist')];
    expect((await runToExit(process.execPath, args)).status).toBe(0);
    writeHandRelease(join(d, 'releases'), FIRST, firstRelease());
    const late = await runToExit(process.execPath, args);
    expect(late.status).toBe(0);
    expect(late.stderr).toContain(`[compile] warning: ${FIRST} is older than ${SECOND}, already compiled in ${join(d, 'dist')}/: ${SECOND} stays served`);
    const index = JSON.parse(readFileSync(join(d, 'dist', 'index.json'), 'utf8'));
    expect([index.v1, index.next]).toEqual([SECOND, SECOND]);
  });

  it('serve --stamp pins both namespaces to that stamp; an unknown stamp is refused at start naming the stamps there are', async () => {
    const pinned = await openInProcess({ dist, keys: keysFile, state: 'memory:', stamp: FIRST });
    try {
      for (const ns of ['v1', 'next']) {
        const r = await client(`${pinned.url}/api/${ns}`, key)(`/entities/${ID.gone}`);
        expect(r.status).toBe(200);
        expect(r.headers.get('x-register-release-stamp')).toBe(FIRST);
      }
      expect((await client(`${pinned.url}/api/v1`, key)(`/entities/${ID.cup}`)).json.match.home_score).toBe(1);
    } finally {
      await pinned.close();
    }
    const refused = await runToExit(process.execPath, ['bin/register.mjs', 'serve', '--dist', dist, '--keys', keysFile, '--state', 'memory:', '--port', '0', '--stamp', '20990101T000000Z']);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`--stamp 20990101T000000Z is not compiled in ${dist}; compiled stamps: ${FIRST}, ${SECOND}`);
  });
});
