// Every endpoint, in process, against a compiled hand-made world: success shapes, documented errors, costs,
// redirects and tombstones wherever an ID is accepted, 409 with all candidates, both namespaces.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, revokeKey } from '../../runtime/keys/key-file.ts';
import { client } from '../helpers/api-client.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { ID, STAMPS, makeHandWorld, type World } from '../fixtures/hand-world.ts';

let world: World;
let rt: InProcessRuntime;
let call: ReturnType<typeof client>;
const keys: Record<string, string> = {};

beforeAll(async () => {
  world = await makeHandWorld();
  const file = join(world.root, 'keys.json');
  keys.partner = (await addKey({ file, name: 'partner', quota: 1000, rate: 1000 })).key;
  keys.opta = (await addKey({ file, name: 'opta', quota: 1000, rate: 1000, provider: 'opta' })).key;
  keys.fbref = (await addKey({ file, name: 'fbref', quota: 1000, rate: 1000, provider: 'fbref' })).key;
  keys.tiny = (await addKey({ file, name: 'tiny', quota: 2, rate: 1000 })).key;
  const revoked = await addKey({ file, name: 'revoked' });
  keys.revoked = revoked.key;
  await revokeKey(revoked.record.id, { file });
  rt = await openInProcess({ dist: world.dist, keys: file, state: join(world.root, 'state') });
  call = client(rt.url + '/api/v1', keys.partner);
});
afterAll(async () => {
  await rt?.close();
});

const credits = (r: { headers: Headers }) => Number(r.headers.get('x-register-credits-remaining'));

describe('metadata', () => {
  it('GET / needs no key and reports the v1 release', async () => {
    const r = await call('/', { key: null });
    expect(r.status).toBe(200);
    expect(r.json.namespace).toBe('v1');
    expect(r.json.release.stamp).toBe(STAMPS[1]);
    expect(r.headers.get('x-register-release-stamp')).toBe(STAMPS[1]);
  });
  it('/api/next serves the newest release, staging included', async () => {
    const next = client(rt.url + '/api/next', keys.partner);
    const r = await next('/meta');
    expect(r.json).toMatchObject({ namespace: 'next', api_schema: 'public-bridge-register-v2', release: { stamp: STAMPS[2], publishable: false } });
    expect(r.json.counts.entities).toBe(7);
  });
  it('/meta, /providers, /coverage, /provider-notices/summary, /key cost nothing', async () => {
    const before = (await call('/key')).json.key.credits_remaining;
    const meta = await call('/meta');
    expect(meta.json.counts).toMatchObject({ entities: 6, redirects: 2, tombstones: 1 });
    const providers = await call('/providers');
    const tm = providers.json.providers.find((p: { name: string }) => p.name === 'transfermarkt');
    expect(tm).toEqual({ name: 'transfermarkt', bridge_count: 4, overlay_count: 0, entity_types: { team: 4 }, role: 'canonical_bridge' });
    expect(providers.json.provider_roles.wyscout).toBe('bridge_only');
    expect((await call('/coverage')).json.stamp).toBe(STAMPS[1]);
    const summary = await call('/provider-notices/summary');
    expect(summary.json.summary).toMatchObject({ findings: 4, by_provider: { fbref: 1, opta: 3 } });
    expect(summary.text).not.toMatch(/Check opta|ref-0|payload_hash/);
    expect((await call('/key')).json.key.credits_remaining).toBe(before);
  });
  it('GET /openapi.json needs no key', async () => {
    const r = await call('/openapi.json', { key: null });
    expect(r.json.openapi).toBe('3.1.0');
  });
});

describe('entities', () => {
  it('answers core fields by default and every expansion on request, in any include order', async () => {
    const core = await call(`/entities/${ID.arsenal}`);
    expect(core.json).toEqual({ reep_id: ID.arsenal, entity_type: 'team', name_en: 'Arsenal F.C.', lifecycle_state: 'active', canonical_reep_id: ID.arsenal });
    const a = await call(`/entities/${ID.arsenal}?include=overlay,relationships,bridges,attributes,aliases`);
    const b = await call(`/entities/${ID.arsenal}?include=aliases,attributes,bridges,relationships,overlay,aliases`);
    expect(a.text).toBe(b.text);
    expect(a.json.aliases.map((x: { name: string }) => x.name)).toEqual(['Arsenal', 'The Gunners']); // ranked first, unranked last
    expect(a.json.names).toEqual(['Arsenal', 'The Gunners']);
    expect(a.json.attributes).toEqual({ country: ['England'], gender: ['male'] });
    expect(a.json.bridges).toContainEqual({ provider: 'transfermarkt', namespace: 'verein', external_id: '11', entity_type: 'team', role: 'canonical_bridge' });
    expect(a.json.relationships).toEqual([{ family: 'participates_in', count: 1, roles: { outgoing: 1 }, source_providers: [], expansion: 'summary_only' }]);
    expect(a.json.overlay.kb).toMatchObject({ source: 'kb', source_tier: 'kb-originated', qid: 'Q9617', link_confidence: 0.98 });
    expect(a.json.overlay.kb.ids).toEqual([
      { provider: 'opta', property: 'P8737', external_id: 't3', confidence: 0.9 },
      { provider: 'sofascore', property: 'P1', external_id: '42', confidence: 0.8 },
    ]);
  });
  it('a match carries its scoreline as `match` whatever include says, nulls never zeros, keys in contract order', async () => {
    const match = { home_score: 2, away_score: null, result_form: 'regular', shootout_home: null, shootout_away: null, score_basis: 'single_source', home_id: ID.arsenal, away_id: ID.chelsea, played_on: '2024-10-01' };
    for (const include of ['', '?include=attributes', '?include=overlay,aliases']) {
      const r = await call(`/entities/${ID.match}${include}`);
      expect(r.json.match).toEqual(match);
      // `match` comes after every expansion (overlay last of them) and its own keys in contract order.
      expect(Object.keys(r.json).at(-1)).toBe('match');
      expect(r.text.slice(r.text.indexOf('"match":'))).toBe(`"match":${JSON.stringify(match)}}`);
    }
    expect((await call(`/entities/${ID.arsenal}?include=attributes`)).json).not.toHaveProperty('match');
  });
  it('lang filters aliases (language is null today, so nothing matches)', async () => {
    const r = await call(`/entities/${ID.arsenal}?include=aliases&lang=en`);
    expect(r.json.aliases).toEqual([]);
    expect(r.json.names).toEqual([]);
  });
  it('a merged ID answers 200 with the final survivor, chains followed, on every entity view', async () => {
    for (const path of ['', '/bridges', '/overlay', '/relationships']) {
      const r = await call(`/entities/${ID.mergedOld}${path}`);
      expect(r.status).toBe(200);
      expect(r.json.reep_id).toBe(ID.arsenal);
      expect(r.json.requested_id).toBe(ID.mergedOld);
      expect(r.json.redirected_to).toBe(ID.arsenal);
    }
  });
  it('a tombstone answers 410 gone on every entity view and costs one lookup', async () => {
    for (const path of ['', '/bridges', '/overlay', '/relationships']) {
      const before = credits(await call(`/entities/${ID.arsenal}`));
      const r = await call(`/entities/${ID.tomb}${path}`);
      expect(r.status).toBe(410);
      expect(r.json).toEqual({ error: 'gone', message: `Register ID ${ID.tomb} was retired and is never reused.`, detail: ID.tomb });
      expect(credits(r)).toBe(before - 1);
    }
  });
  it('never published: 404 charged; malformed: 400 free; v0 IDs refused', async () => {
    const before = credits(await call(`/entities/${ID.arsenal}`));
    const miss = await call(`/entities/${ID.never}`);
    expect(miss.status).toBe(404);
    expect(credits(miss)).toBe(before - 1);
    for (const bad of ['reep_t0871097b', 'RT00000000000A01', 'rt00000000000a0', 'x%00y']) {
      const r = await call(`/entities/${bad}`);
      expect(r.status).toBe(400);
      expect(r.json.error === 'invalid_id' || r.json.error === 'invalid_parameter').toBe(true);
      expect(credits(r)).toBe(before - 1);
    }
  });
  it('bridges, overlay and relationships views', async () => {
    const br = await call(`/entities/${ID.arsenal}/bridges`);
    expect(br.json.count).toBe(br.json.bridges.length);
    const ov = await call(`/entities/${ID.chelsea}/overlay`);
    expect(ov.json).toEqual({ reep_id: ID.chelsea, overlay: {}, count: 0 });
    const rel = await call(`/entities/${ID.season}/relationships?family=season_of`);
    expect(rel.json.relationships).toEqual([{ family: 'season_of', count: 1, roles: { outgoing: 1 }, source_providers: [], expansion: 'summary_only' }]);
    const one = await call(`/entities/${ID.season}/relationships?limit=1`);
    expect(one.json.relationships).toHaveLength(1);
    expect((await call(`/entities/${ID.palmer}/relationships`)).json.relationships).toEqual([]);
    expect((await call(`/entities/${ID.season}/relationships?limit=0`)).status).toBe(400);
    expect((await call(`/entities/${ID.arsenal}?include=nope`)).json.error).toBe('unknown_include');
  });
});

describe('resolve', () => {
  it('resolves a provider ID in a namespace', async () => {
    const r = await call('/resolve/transfermarkt/11?namespace=verein&include=bridges');
    expect(r.json.count).toBe(1);
    expect(r.json.results[0].reep_id).toBe(ID.arsenal);
    expect(r.json.results[0].bridges.length).toBeGreaterThan(1);
  });
  it('an encoded slash in an external ID works', async () => {
    const r = await call('/resolve/flashscore/palmer-cole%2Fh8agbDt7');
    expect(r.json.results.map((e: { reep_id: string }) => e.reep_id)).toEqual([ID.palmer]);
  });
  it('no mapping: 200 with an empty list (charged); wrong namespace too', async () => {
    expect((await call('/resolve/transfermarkt/11')).json).toEqual({ results: [], count: 0 });
  });
  it('an ID that maps to two entities is a 409 listing every candidate', async () => {
    const r = await call('/resolve/transfermarkt/500?namespace=verein');
    expect(r.status).toBe(409);
    expect(r.json.error).toBe('ambiguous_provider_id');
    expect(r.json.count).toBe(2);
    expect(r.json.results.map((e: { reep_id: string }) => e.reep_id).sort()).toEqual([ID.arsenal, ID.chelsea]);
  });
  it('a bridge on a merged ID resolves to the survivor with requested_id', async () => {
    const r = await call('/resolve/fbref/old1');
    expect(r.json.results[0]).toMatchObject({ reep_id: ID.arsenal, requested_id: ID.mergedOld, redirected_to: ID.arsenal });
  });
  it('type filter, unknown provider, unknown type', async () => {
    expect((await call('/resolve/transfermarkt/500?namespace=verein&type=player')).json.count).toBe(0);
    expect((await call('/resolve/nobody/1')).json.error).toBe('unknown_provider');
    expect((await call('/resolve/transfermarkt/11?type=dog')).json.error).toBe('unknown_entity_type');
  });
});

describe('search', () => {
  it('finds by label with diacritics folded either way, and by last-token prefix', async () => {
    const r = await call('/search?q=arsenal');
    expect(r.json.results[0]).toMatchObject({ reep_id: ID.arsenal, entity_type: 'team', label: 'Arsenal F.C.' });
    expect((await call('/search?q=COLE%20palm')).json.results[0].reep_id).toBe(ID.palmer);
    expect((await call('/search?q=gunners')).json.results[0].reep_id).toBe(ID.arsenal);
    const r1 = await call('/search?q=lodz&type=team');
    expect(r1.json).toMatchObject({ normalised_query: 'lodz', type: 'team', bounded: true, max_candidates_per_token: 500 });
  });
  it('sort, limit and type', async () => {
    const r = await call('/search?q=premier%20league&sort=bridges&limit=1');
    expect(r.json).toMatchObject({ sort: 'bridges', limit: 1, count: 1 });
    expect((await call('/search?q=arsenal&type=player')).json.count).toBe(0);
  });
  it('rejects short, long and unknown queries without cost', async () => {
    const before = credits(await call(`/entities/${ID.arsenal}`));
    for (const q of ['ab', 'a%20b', 'a%20b%20c%20d%20e%20f', '']) {
      const r = await call(`/search?q=${q}`);
      expect(r.status).toBe(400);
      expect(r.json.error).toBe('invalid_query');
    }
    expect((await call('/search?q=arsenal&limit=21')).json.error).toBe('invalid_parameter');
    expect((await call('/search?q=arsenal&sort=popularity')).json.error).toBe('invalid_parameter');
    expect(credits(await call('/key'.replace('/key', `/entities/${ID.arsenal}`)))).toBe(before - 1);
  });
});

describe('batch', () => {
  it('runs each item like its single endpoint and charges per valid item', async () => {
    const before = credits(await call(`/entities/${ID.arsenal}`));
    const r = await call('/batch', {
      body: {
        include: 'bridges',
        requests: [
          { type: 'entity', id: ID.arsenal },
          { type: 'entity', id: ID.mergedOld },
          { type: 'entity', id: ID.tomb },
          { type: 'entity', id: ID.never },
          { type: 'entity', id: 'nope' },
          { type: 'resolve', provider: 'transfermarkt', namespace: 'verein', external_id: '500' },
          { type: 'resolve', provider: 'flashscore', id: 'palmer-cole/h8agbDt7' },
          { type: 'dance' },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.results.map((x: { status: number }) => x.status)).toEqual([200, 200, 410, 404, 400, 409, 200, 400]);
    expect(r.json.results[1].body.requested_id).toBe(ID.mergedOld);
    expect(r.json.results[0].body.bridges.length).toBeGreaterThan(0);
    expect(credits(r)).toBe(before - 6);
    const single = await call(`/entities/${ID.arsenal}?include=bridges`);
    expect(JSON.stringify(r.json.results[0].body)).toBe(single.text);
  });
  it('enforces both caps independently and rejects malformed batches without cost', async () => {
    const before = credits(await call(`/entities/${ID.arsenal}`));
    const many = Array.from({ length: 101 }, () => ({ type: 'entity', id: ID.arsenal }));
    expect((await call('/batch', { body: { requests: many } })).json.error).toBe('batch_too_large');
    const resolves = Array.from({ length: 21 }, () => ({ type: 'resolve', provider: 'fbref', external_id: 'x' }));
    expect((await call('/batch', { body: { requests: resolves } })).json.error).toBe('resolve_batch_too_large');
    expect((await call('/batch', { body: { requests: [...resolves.slice(0, 20), ...many.slice(0, 80)] } })).status).toBe(200);
    expect((await call('/batch', { body: { requests: [] } })).json.error).toBe('empty_batch');
    expect((await call('/batch', { rawBody: '{"requests":[' })).json.error).toBe('invalid_body');
    expect((await call('/batch', { body: { requests: [{ type: 'entity', id: ID.arsenal }], include: 'nope' } })).json.error).toBe('unknown_include');
    expect(credits(await call(`/entities/${ID.arsenal}`))).toBe(before - 100 - 1);
  });
  it('a batch larger than the credits left is 402 and charges nothing', async () => {
    const tiny = client(rt.url + '/api/v1', keys.tiny);
    const r = await tiny('/batch', { body: { requests: [{ type: 'entity', id: ID.arsenal }, { type: 'entity', id: ID.chelsea }, { type: 'entity', id: ID.palmer }] } });
    expect(r.status).toBe(402);
    expect(credits(r)).toBe(2);
  });
});

describe('authentication and errors', () => {
  it('missing, invalid and revoked keys get 401 with WWW-Authenticate', async () => {
    for (const [key, code] of [[null, 'missing_key'], ['rk_00000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'invalid_key'], [keys.revoked, 'revoked_key']] as const) {
      const r = await call(`/entities/${ID.arsenal}`, { key });
      expect(r.status).toBe(401);
      expect(r.json.error).toBe(code);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });
  it('unknown paths 404, wrong methods 405, and 401 comes before 400', async () => {
    expect((await call('/nowhere')).status).toBe(404);
    const r = await call('/batch', { method: 'GET' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect((await call('/entities/bad', { key: null })).status).toBe(401);
  });
});

describe('notices', () => {
  it('delivers the provider’s own batch, marks it seen, and acknowledges by IDs and by batch', async () => {
    const opta = client(rt.url + '/api/v1', keys.opta);
    const first = await opta('/notices?limit=2');
    expect(first.json).toMatchObject({ provider: 'opta', batch_id: 7, count: 2, total: 3, limit: 2, offset: 0, next_offset: 2 });
    expect(first.json.findings.every((f: { seen: boolean }) => !f.seen)).toBe(true);
    const again = await opta('/notices?limit=2');
    expect(again.json.findings.every((f: { seen: boolean; seen_at: string }) => f.seen && f.seen_at)).toBe(true);
    const ack = await opta('/notices/ack', { body: { finding_ids: ['opta-2'], actor: 'ops', note: 'checked' } });
    expect(ack.json).toEqual({ provider: 'opta', batch_id: 7, acknowledged: 1, finding_ids: ['opta-2'] });
    const all = await opta('/notices/ack', { body: { batch_id: 7 } });
    expect(all.json.acknowledged).toBe(3);
    const after = await opta('/notices');
    const f2 = after.json.findings.find((f: { finding_id: string }) => f.finding_id === 'opta-2');
    expect(f2.acknowledged).toBe(true);
  });
  it("another provider's findings and batches are refused without saying whether they exist", async () => {
    const fbref = client(rt.url + '/api/v1', keys.fbref);
    const r1 = await fbref('/notices/ack', { body: { finding_ids: ['opta-1'] } });
    const r2 = await fbref('/notices/ack', { body: { finding_ids: ['does-not-exist'] } });
    expect(r1.status).toBe(400);
    expect(r1.json.error).toBe('unknown_finding');
    expect(r2.json.error).toBe('unknown_finding');
    expect((await fbref('/notices/ack', { body: { batch_id: 7 } })).json.error).toBe('unknown_batch');
    expect((await fbref('/notices/ack', { body: { finding_ids: ['fb-1', 'opta-1'] } })).status).toBe(400);
    expect((await fbref('/notices')).json.findings.map((f: { finding_id: string }) => f.finding_id)).toEqual(['fb-1']);
  });
  it('a key without provider scope gets 403', async () => {
    expect((await call('/notices')).json.error).toBe('provider_scope_required');
    expect((await call('/notices/ack', { body: { batch_id: 7 } })).status).toBe(403);
  });
});

describe('changelog', () => {
  it('lists releases, summarises windows and pages events', async () => {
    const rel = await call('/changes/releases');
    expect(rel.json.latest).toBe(STAMPS[1]);
    expect(rel.json.releases.map((r: { stamp: string }) => r.stamp)).toEqual([STAMPS[1], STAMPS[0]]);
    const sum = await call(`/changes/summary?since=${STAMPS[0]}`);
    // since is another way to write from; to is always a stamp, the latest by default.
    expect(sum.json).toMatchObject({ since: STAMPS[0], from: STAMPS[0], to: STAMPS[1], until: STAMPS[1], chain: [STAMPS[1]] });
    expect((await call('/changes/summary')).json).toMatchObject({ since: null, from: null, to: STAMPS[1], chain: [STAMPS[1]] });
    expect((await call(`/changes/summary?from=${STAMPS[0]}&to=${STAMPS[0]}`)).json).toMatchObject({ since: null, from: STAMPS[0], to: STAMPS[0], chain: [] });
    // Łódź merged into Arsenal, and the ID merged into Łódź before now ends at Arsenal too: both redirects changed.
    expect(sum.json.counts).toMatchObject({ redirect_changed: 2, label_updated: 1 });
    expect((await call('/changes?type=redirect_changed')).json.events).toEqual([
      { type: 'redirect_changed', reep_id: ID.lodz, redirected_to: ID.arsenal },
      { type: 'redirect_changed', reep_id: ID.mergedOld, redirected_to: ID.arsenal },
    ].sort((a, b) => (a.reep_id < b.reep_id ? -1 : 1)));
    const page1 = await call('/changes?limit=2');
    expect(page1.json.events).toHaveLength(2);
    const page2 = await call(`/changes?limit=2&cursor=${page1.json.next_cursor}`);
    expect(page2.json.events[0]).not.toEqual(page1.json.events[0]);
    expect((await call(`/changes?limit=2&type=redirect_changed&cursor=${page1.json.next_cursor}`)).json.error).toBe('stale_cursor');
    const tm = await call('/changes?provider=transfermarkt');
    expect(tm.json.events.every((e: { type: string; provider: string }) => e.type === 'provider_updated' && e.provider === 'transfermarkt')).toBe(true);
    expect(tm.json.events).toContainEqual({ type: 'provider_updated', reep_id: ID.chelsea, provider: 'transfermarkt', added: [{ namespace: 'verein', external_id: '632' }], removed: [{ namespace: 'verein', external_id: '631' }] });
  });
  it('answers 304 to a matching If-None-Match, also weak and listed, at no cost', async () => {
    const first = await call('/changes/summary');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"/);
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const r = await call('/changes/summary', { headers: { 'if-none-match': inm } });
      expect(r.status).toBe(304);
      expect(r.headers.get('etag')).toBe(etag);
    }
    expect((await call('/changes/summary', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });
  it('rejects unknown stamps and inverted ranges', async () => {
    expect((await call('/changes/summary?since=20990101T000000Z')).json.error).toBe('unknown_stamp');
    expect((await call(`/changes/summary?from=${STAMPS[1]}&to=${STAMPS[0]}`)).json.error).toBe('invalid_range');
  });
});
