// The stored bridges section (common/shard-format.ts): the runtime's expansion of what the compiler stores must be
// byte for byte the section the API has always answered, whatever the IDs hold.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENTITY_TYPES, PROVIDER_ROLES, type EntityType } from '../../common/ids.ts';
import { expandBridges, fullBridgesSection, NO_STORED_BRIDGES, parseStoredBridges, storedBridges, storedBridgesSection, type BridgeRow } from '../../common/shard-format.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const expandText = (stored: string, type: string) => dec.decode(expandBridges(enc.encode(stored), type));

/** Today's section, written independently of the module: what build-entities wrote before the stored form. */
const today = (type: string, bridges: readonly BridgeRow[]) =>
  `,"bridges":${JSON.stringify(bridges.map(([provider, namespace, external_id, role]) => ({ provider, namespace, external_id, entity_type: type, role })))}`;

const AWKWARD_IDS = [
  '',
  '12345',
  'a"b',
  '"',
  '\\',
  'a\\"}',
  '}',
  '{"x":1}',
  '"},{"provider":"evil"',
  '\u0001',
  '\u0002}',
  '\u0000',
  '\n\r\t\b\f',
  '\u001f\u007f',
  'Zürich',
  '日本代表',
  '😀',
  '\uD800', // lone surrogate: JSON.stringify writes it as \ud800
  '\uDFFF\uD800',
  '\u2028\u2029',
  'x'.repeat(600),
];

describe('stored bridges section', () => {
  it('expands to exactly today’s text for awkward IDs, every role and every entity type', () => {
    for (const type of ENTITY_TYPES) {
      const bridges: BridgeRow[] = AWKWARD_IDS.map((id, i) => [i % 4 === 0 ? 'transfermarkt' : `p${i}"\\}`, i % 3 === 0 ? '' : `ns/${id.slice(0, 3)}`, id, PROVIDER_ROLES[i % PROVIDER_ROLES.length]]);
      const stored = storedBridgesSection(type, bridges);
      expect(fullBridgesSection(type, bridges)).toBe(today(type, bridges));
      expect(expandText(stored, type)).toBe(today(type, bridges));
      // The stored form is what saves the bytes: one marker byte where ~50 bytes of two fields were.
      expect(enc.encode(stored).length).toBeLessThan(enc.encode(today(type, bridges)).length - bridges.length * 40);
    }
  });

  it('expands any slice the runtime cuts (the value after "bridges":, single bridges)', () => {
    const bridges: BridgeRow[] = [['opta', '', 'g1', 'canonical_bridge'], ['fbref', 'squad', '}\u0001', 'overlay_only'], ['x', 'y', 'z', 'bridge_only']];
    const stored = enc.encode(storedBridgesSection('team', bridges));
    const full = today('team', bridges);
    const key = ',"bridges":'.length;
    expect(dec.decode(expandBridges(stored.subarray(key), 'team'))).toBe(full.slice(key));
    expect(expandText(storedBridgesSection('team', []), 'team')).toBe(',"bridges":[]');
  });

  it('expands a section of thousands of bridges (copied in one array, not sliced) to exactly today’s text', () => {
    for (const type of ['team', 'match'] as EntityType[]) {
      const bridges: BridgeRow[] = Array.from({ length: 3000 }, (_, i) => [i % 5 ? 'transfermarkt' : 'opta', i % 2 ? '' : 'verein', AWKWARD_IDS[i % AWKWARD_IDS.length] + i, PROVIDER_ROLES[i % PROVIDER_ROLES.length]]);
      const stored = enc.encode(storedBridgesSection(type, bridges));
      expect(stored.length).toBeGreaterThan(64 * 1024);
      expect(dec.decode(expandBridges(stored, type))).toBe(today(type, bridges));
      // And any slice of it, as the runtime cuts it.
      expect(dec.decode(expandBridges(stored.subarray(',"bridges":'.length), type))).toBe(today(type, bridges).slice(',"bridges":'.length));
    }
    const legacy = enc.encode(today('player', Array.from({ length: 500 }, (_, i) => ['opta', '', `p${i}`, 'canonical_bridge'] as BridgeRow)));
    expect(expandBridges(legacy, 'player')).toBe(legacy);
    const big = storedBridgesSection('team', Array.from({ length: 500 }, (_, i) => ['opta', '', `p${i}`, 'canonical_bridge'] as BridgeRow));
    expect(() => expandBridges(enc.encode(big), 'club')).toThrow(/unknown entity type "club"/);
    expect(() => expandBridges(enc.encode(big.replace('\u0001}', '\u0007}')), 'team')).toThrow(/no bridge marker/);
  });

  it('passes a section without markers through untouched (shards written before the stored form)', () => {
    const legacy = enc.encode(today('player', [['opta', '', 'p"1', 'canonical_bridge']]));
    expect(expandBridges(legacy, 'player')).toBe(legacy);
    const empty = new Uint8Array(0);
    expect(expandBridges(empty, 'player')).toBe(empty);
  });

  it('agrees with today’s text on arbitrary strings', () => {
    const str = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(
        fc.constantFrom(...ENTITY_TYPES),
        fc.array(fc.tuple(str, str, str, fc.constantFrom(...PROVIDER_ROLES)), { maxLength: 12 }),
        (type: EntityType, bridges) => expandText(storedBridgesSection(type, bridges), type) === today(type, bridges),
      ),
      { numRuns: 2000 },
    );
  });

  it('reads back the rows it was written from (what a successor compares), and a role from a function is the same as one in the row', () => {
    const str = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(fc.array(fc.tuple(str, str, str, fc.constantFrom(...PROVIDER_ROLES)), { maxLength: 12 }), (bridges) => {
        const stored = storedBridgesSection('team', bridges);
        const triples = bridges.map(([provider, namespace, externalId]) => [provider, namespace, externalId] as [string, string, string]);
        expect(storedBridges(triples, (b) => bridges[triples.indexOf(b)][3])).toBe(stored);
        expect(parseStoredBridges(stored)).toEqual(triples);
      }),
      { numRuns: 500 },
    );
    expect(storedBridges([], () => 'canonical_bridge')).toBe(NO_STORED_BRIDGES);
    expect(parseStoredBridges(NO_STORED_BRIDGES)).toEqual([]);
    expect(() => parseStoredBridges('[["p","","1"]]')).toThrow(/not a bridges section/);
  });

  it('refuses what the runtime could not expand', () => {
    expect(() => storedBridgesSection('team', [['p', '', '1', 'private']])).toThrow(/unknown provider role "private"/);
    expect(() => storedBridgesSection('club' as EntityType, [])).toThrow(/unknown entity type "club"/);
    const stored = enc.encode(storedBridgesSection('team', [['p', '', '1', 'bridge_only']]));
    expect(() => expandBridges(stored, 'club')).toThrow(/unknown entity type "club"/);
    // A control byte that is no marker means the bytes are not a stored section: refused, not passed on.
    expect(() => expandBridges(enc.encode(',"bridges":[{"provider":"p"\u0007}]'), 'team')).toThrow(/no bridge marker/);
  });
});
