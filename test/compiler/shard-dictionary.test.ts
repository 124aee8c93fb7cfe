// The shard dictionary (dist format 5, common/shard-format.ts): what the compiler stores must expand, byte for byte,
// to the text the API has always answered, with each section's cut moved to where it falls; and it must be what
// makes the shard packs small.
import fc from 'fast-check';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compiledSamples } from '../fixtures/compiled-fixtures.ts';
import type { ReleaseDoc } from '../../common/dist-layout.ts';
import { ENTITY_TYPES, PROVIDER_ROLES } from '../../common/ids.ts';
import { RESULT_FORMS, SCORE_BASES, scorelineSection, type Scoreline } from '../../common/scoreline.ts';
import {
  attributeKeyMarker, expandShard, expandShardText, SHARD_MARKERS as M, shardBridges, storedBridges, storedScorelineSection, typeMarker,
} from '../../common/shard-format.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { loadRelease } from '../../runtime/release/open-release.ts';
import { createBucketCache } from '../../runtime/release/bucket-family-reader.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const ID = 'rm0123456789abcd';
const text = fc.string({ unit: 'binary', maxLength: 12 });

describe('shard dictionary', () => {
  it('expands a stored scoreline and stored bridges to the texts a format-4 shard held', () => {
    const scoreline = fc.record<Scoreline>({
      home_score: fc.option(fc.nat(), { nil: null }), away_score: fc.option(fc.nat(), { nil: null }),
      result_form: fc.option(fc.constantFrom(...RESULT_FORMS), { nil: null }), shootout_home: fc.option(fc.nat(), { nil: null }),
      shootout_away: fc.option(fc.nat(), { nil: null }), score_basis: fc.option(fc.constantFrom(...SCORE_BASES), { nil: null }),
      home_id: fc.option(text, { nil: null }), away_id: fc.option(text, { nil: null }), played_on: fc.option(text, { nil: null }),
    });
    fc.assert(fc.property(scoreline, (s) => expandShardText(storedScorelineSection(s), ID) === scorelineSection(s)), { numRuns: 300 });
    const bridge = fc.tuple(text, fc.oneof(fc.constant(''), text), text, fc.constantFrom(...PROVIDER_ROLES));
    fc.assert(fc.property(fc.array(bridge, { maxLength: 6 }), (bridges) => {
      const stored = shardBridges(bridges, (b) => b[3]);
      return expandShardText(stored, ID) === storedBridges(bridges, (b) => b[3]) && dec.decode(expandShard(enc.encode(stored), ID, []).bytes) === storedBridges(bridges, (b) => b[3]);
    }), { numRuns: 300 });
  });

  it('moves every cut with the expansion and expands the type, canonical ID and attribute keys', () => {
    for (let t = 0; t < ENTITY_TYPES.length; t++) {
      const parts = [
        `{"reep_id":"${ID}"${typeMarker(t)}"Ünïcode \\"label\\""${M.active}${M.canonical}`, M.noAliases,
        `${M.attributes}${attributeKeyMarker('played_on')}["2021-05-08"],"unlisted":["x"]}`,
        shardBridges([['opta', '', 'g1', 'canonical_bridge'], ['tm', 'trainer', '7', 'bridge_only']], (b) => b[3]),
        `${M.relationships}${M.relationship}"match_in"${M.count}1${M.roles}${M.outgoing}1${M.summaryOnly},${M.relationship}"x"${M.count}2000${M.roles}${M.incoming}2000${M.highCardinality}]`,
        '', '}',
      ];
      const stored = enc.encode(parts.join(''));
      const cuts: number[] = [];
      for (let i = 0, at = 0; i < parts.length - 1; i++) cuts.push((at += enc.encode(parts[i]).length));
      const full = expandShard(stored, ID, cuts);
      const sections = [0, ...full.cuts, full.bytes.length].slice(0, -1).map((from, i, all) => dec.decode(full.bytes.subarray(from, i + 1 < all.length ? all[i + 1] : full.bytes.length)));
      expect(sections).toEqual(parts.map((p) => expandShardText(p, ID)));
      expect(sections[0]).toBe(`{"reep_id":"${ID}","entity_type":"${ENTITY_TYPES[t]}","name_en":"Ünïcode \\"label\\"","lifecycle_state":"active","canonical_reep_id":"${ID}"`);
      expect(sections[2]).toBe(',"attributes":{"played_on":["2021-05-08"],"unlisted":["x"]}');
      expect(sections[4]).toBe(',"relationships":[{"family":"match_in","count":1,"roles":{"outgoing":1},"source_providers":[],"expansion":"summary_only"},' +
        '{"family":"x","count":2000,"roles":{"incoming":2000},"source_providers":[],"expansion":"summary_only_high_cardinality"}]');
    }
  });

  it('passes bytes without a marker through and refuses a control byte that is none', () => {
    const plain = enc.encode('{"error":"gone","message":"x"}');
    expect(expandShard(plain, ID, [3]).bytes).toBe(plain);
    // Role markers are left for the bridges expansion.
    expect(dec.decode(expandShard(enc.encode('{"a":"b"\u0001}'), ID, []).bytes)).toBe('{"a":"b"\u0001}');
    for (const bad of ['{"a":\u0009}', '{"a":\u000a}', '{"a":\u001f', '{"a":\u001f\u0020', '{"a":\u001f\u007f}']) {
      expect(() => expandShard(enc.encode(bad), ID, [])).toThrow(/is no dictionary marker/);
    }
  });
});

describe('shard packs of a compiled sample', () => {
  let releases: string;
  let dist: string;
  let stamp: string;

  beforeAll(async () => {
    // The run's shared compile of the samples (read only): the first stamp's packs are what compiling it alone writes.
    ({ releases, dist } = await compiledSamples());
    [stamp] = readdirSync(releases).sort();
  });

  it('hold well under half the bytes of the shards the runtime reads from them', async () => {
    const doc = JSON.parse(readFileSync(join(dist, stamp, 'public', 'release.json'), 'utf8')) as ReleaseDoc;
    const stored = doc.shard_packs.reduce((n, p) => n + statSync(join(dist, stamp, 'public', p)).size, 0);
    const index = JSON.parse(readFileSync(join(dist, 'index.json'), 'utf8')) as { releases: { stamp: string; sha256: { public: string } }[] };
    const release = await loadRelease(createFsSource({ root: dist }), stamp, index.releases.find((r) => r.stamp === stamp)!.sha256.public, createBucketCache(1 << 20));
    const csv = readFileSync(join(releases, stamp, 'csv', 'entities.csv.gz'));
    const { gunzipSync } = await import('node:zlib');
    const ids = gunzipSync(csv).toString('utf8').split('\n').slice(1).filter(Boolean).map((l) => l.slice(0, l.indexOf(',')));
    let read = 0;
    for (const id of ids) {
      const e = await release.entity(id);
      if (e?.kind === 'live' && !e.requestedId) read += e.shard.length;
    }
    expect(read).toBeGreaterThan(0);
    // Format 4 stored the shards as read (a ratio of 1); the dictionary stores a match-heavy sample in ~0.3 of it.
    expect(stored / read).toBeLessThan(0.5);
  });
});
