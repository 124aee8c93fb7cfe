// Entity bodies composed from a shard whose bridges section is in the stored form (common/shard-format.ts) are byte
// for byte those composed from the same shard written in the full form, for every view that emits bridges.
import { describe, expect, it } from 'vitest';
import { INCLUDES, type EntityType, type Include } from '../../common/ids.ts';
import { fullBridgesSection, storedBridgesSection, type BridgeRow } from '../../common/shard-format.ts';
import { bridgesBody, entityBody, overlayBody, relationshipsBody } from '../../runtime/entity-answer.ts';
import { ArtefactError } from '../../runtime/read-errors.ts';
import type { LiveEntity } from '../../runtime/release/open-release.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A shard laid out as build-entities writes it, with cuts at the byte offsets where each section starts. */
function shardOf(id: string, type: EntityType, bridgesSection: string, bridgeCount: number, requestedId?: string): LiveEntity {
  const sections = [
    `{"reep_id":"${id}","entity_type":"${type}","name_en":"Zürich \\"FC\\"","lifecycle_state":"active","canonical_reep_id":"${id}"`,
    `,"aliases":[{"name":"Zürich","language":"de","type":null,"rank":1}],"names":["Zürich"]`,
    `,"attributes":{"country":["CH"]}`,
    bridgesSection,
    `,"relationships":[{"family":"squad","count":3,"roles":{"outgoing":3},"source_providers":[],"expansion":"summary_only"}]`,
    `,"overlay":{"kb":{"qid":"Q1"}}`,
  ];
  const bytes = sections.map((s) => enc.encode(s));
  const cuts: number[] = [];
  let at = 0;
  for (const b of bytes) cuts.push((at += b.length));
  const shard = enc.encode(sections.join('') + '}');
  return { kind: 'live', id, shard, cuts, bridgeCount, entityType: type, file: 'test shard', requestedId };
}

const subsets = (xs: readonly Include[]): Include[][] => xs.reduce<Include[][]>((acc, x) => [...acc, ...acc.map((s) => [...s, x])], [[]]);

describe('composing entities from stored bridges', () => {
  const bridges: BridgeRow[] = [
    ['transfermarkt', 'verein', '11', 'canonical_bridge'],
    ['fbref', '', 'a"}\u0001\\', 'bridge_only'],
    ['wikidata', '', 'Q1 😀', 'overlay_only'],
  ];

  for (const requestedId of [undefined, 'rt00000000000000f']) {
    it(`answers the same bytes as the full form${requestedId ? ' for a merged ID' : ''}`, () => {
      const full = shardOf('rt0123456789abcde', 'team', fullBridgesSection('team', bridges), bridges.length, requestedId);
      const stored = shardOf('rt0123456789abcde', 'team', storedBridgesSection('team', bridges), bridges.length, requestedId);
      expect(stored.shard.length).toBeLessThan(full.shard.length);
      for (const include of subsets(INCLUDES)) {
        for (const lang of [null, 'de']) {
          const want = dec.decode(entityBody(full, new Set(include), lang));
          expect(dec.decode(entityBody(stored, new Set(include), lang)), include.join(',')).toBe(want);
          JSON.parse(want); // the full form is plain JSON: a control byte left in would fail here
        }
      }
      expect(dec.decode(bridgesBody(stored))).toBe(dec.decode(bridgesBody(full)));
      expect(JSON.parse(dec.decode(bridgesBody(stored))).bridges[1]).toEqual({ provider: 'fbref', namespace: '', external_id: 'a"}\u0001\\', entity_type: 'team', role: 'bridge_only' });
      expect(dec.decode(overlayBody(stored))).toBe(dec.decode(overlayBody(full)));
      expect(dec.decode(relationshipsBody(stored, null, 25))).toBe(dec.decode(relationshipsBody(full, null, 25)));
    });
  }

  it('answers an entity without bridges', () => {
    const full = shardOf('rp0123456789abcde', 'player', fullBridgesSection('player', []), 0);
    const stored = shardOf('rp0123456789abcde', 'player', storedBridgesSection('player', []), 0);
    expect(dec.decode(bridgesBody(stored))).toBe(dec.decode(bridgesBody(full)));
    expect(dec.decode(bridgesBody(stored))).toContain('"bridges":[],"count":0');
  });

  it('refuses a bridges section that cannot be expanded, naming its file and ID (the core answers 503 artefact_corrupt)', () => {
    const broken = shardOf('rp0123456789abcde', 'player', ',"bridges":[{"provider":"p","namespace":"","external_id":"1"\u0009}]', 1);
    for (const body of [() => bridgesBody(broken), () => entityBody(broken, new Set<Include>(['bridges']), null)]) {
      let err: unknown;
      try {
        body();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ArtefactError);
      expect((err as ArtefactError).message).toMatch(/^test shard: the bridges section of rp0123456789abcde does not expand/);
      expect((err as ArtefactError).subject).toBe('rp0123456789abcde');
    }
    // Views that do not emit bridges never look at them.
    expect(() => entityBody(broken, new Set<Include>(['aliases']), null)).not.toThrow();
  });
});
