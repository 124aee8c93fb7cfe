// Words that name Object.prototype's members (`constructor`, `__proto__`, `toString`) are data like any other
// wherever the compiler counts or keys by data: provider names, notice kinds and severities, relationship
// families, alias kinds, coverage sections. A release using them everywhere is compiled and served, and every
// answer counts them as ordinary words.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { writeHandRelease } from '../fixtures/hand-release.ts';

const TEAM = 'rt000000000000a1';
const LEAGUE = 'rl000000000000b2';
const SEASON = 'rs000000000000c3';
const STAMP = '20261001T000000Z';
const WORDS = ['__proto__', 'constructor', 'toString'] as const;

const finding = (provider: string, id: string, kind: string, severity: string) => ({
  finding_id: id, provider, kind, title: 't', provider_ref: null, source: {}, observed: null, expected: null, severity, suggested_action: null,
  payload: {}, payload_hash: 'h', first_seen_at: null, last_seen_at: null,
});

let rt: InProcessRuntime;
let call: ReturnType<typeof client>;
beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), 'ir-words-'));
  const e = (id: string, type: string, label: string) => [id, type, 'active', label, '', '', '', '', ''];
  writeHandRelease(
    join(root, 'releases'),
    STAMP,
    {
      entities: [e(TEAM, 'team', 'Alpha'), e(LEAGUE, 'competition', 'League'), e(SEASON, 'season', 'Season')],
      aliases: WORDS.map((w, i) => [TEAM, `Alpha ${i}`, w, String(i + 1), '']),
      bridges: WORDS.flatMap((w) => [[w, '', 'x1', TEAM, ''], [w, '', 'x2', LEAGUE, '']]),
      providers: [['__proto__', 'bridge_only']],
      relationships: [[SEASON, LEAGUE, '__proto__'], [SEASON, LEAGUE, 'constructor'], [TEAM, SEASON, 'constructor']],
      coverage: [['__proto__', 'constructor', '3'], ['toString', '__proto__', 'x']],
    },
    {
      notices: Object.fromEntries(
        WORDS.map((w) => [w, { provider: w, batch_id: 1, generated_at: null, findings: [finding(w, `${w}-1`, 'constructor', '__proto__'), finding(w, `${w}-2`, '__proto__', 'toString')] }]),
      ),
    },
  );
  await compileAll({ releases: join(root, 'releases'), dist: join(root, 'dist'), progress: false });
  const keys = join(root, 'keys.json');
  const { key } = await addKey({ file: keys, name: 'words', quota: 1000, rate: 1000 });
  rt = await openInProcess({ dist: join(root, 'dist'), keys, state: join(root, 'state') });
  call = client(rt.url + '/api/v1', key);
});
afterAll(async () => {
  await rt?.close();
});

describe('words of Object.prototype as data', () => {
  it('count as notice kinds, severities and providers in the public summary', async () => {
    const r = await call('/provider-notices/summary');
    expect(r.status).toBe(200);
    // As text: in an object literal, `__proto__: 2` would set a prototype rather than make a key.
    expect(JSON.stringify(r.json.summary)).toBe(
      '{"providers":3,"findings":6,"by_provider":{"__proto__":2,"constructor":2,"toString":2},"by_severity":{"__proto__":3,"toString":3},' +
        '"by_kind":{"__proto__":3,"constructor":3}}',
    );
  });

  it('are providers with their roles, rollups and coverage', async () => {
    const r = await call('/providers');
    expect(r.json.providers.map((p: { name: string }) => p.name)).toEqual([...WORDS]);
    expect(Object.keys(r.json.provider_roles)).toEqual([...WORDS]);
    expect(r.json.provider_roles.__proto__).toBe('bridge_only');
    expect(r.json.providers[0]).toEqual({ name: '__proto__', bridge_count: 2, overlay_count: 0, entity_types: { competition: 1, team: 1 }, role: 'bridge_only' });
    expect(r.json.providers[1]).toEqual({ name: 'constructor', bridge_count: 2, overlay_count: 0, entity_types: { competition: 1, team: 1 }, role: 'canonical_bridge' });
    const coverage = await call('/coverage');
    expect(coverage.text).toBe(`{"stamp":"${STAMP}","sections":{"__proto__":{"constructor":3},"toString":{"__proto__":"x"}}}`);
  });

  it('are relationship families and alias kinds of an entity, and resolve as provider keys', async () => {
    const league = await call(`/entities/${LEAGUE}?include=relationships`);
    expect(league.json.relationships.map((f: { family: string; count: number }) => [f.family, f.count])).toEqual([['__proto__', 1], ['constructor', 1]]);
    const team = await call(`/entities/${TEAM}?include=aliases,bridges`);
    expect(team.json.aliases.map((a: { type: string }) => a.type)).toEqual([...WORDS]);
    expect(team.json.bridges.map((b: { provider: string }) => b.provider)).toEqual([...WORDS]);
    for (const w of WORDS) {
      const r = await call(`/resolve/${w}/x1`);
      expect(r.status, w).toBe(200);
      expect(r.json.results[0].reep_id).toBe(TEAM);
    }
  });
});
