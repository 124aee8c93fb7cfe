// matchDiffBase: the successor walks its predecessor's diff base lines beside its own sorted IDs. Every line must
// land on its ID with the right ordinal, whatever IDs are new, gone or merged, and a bad partition must be refused.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { matchDiffBase, type DiffBasePartition } from '../../compiler/write/diff-base.ts';

const PLACE_BYTES = 40;

/** A partition as a predecessor's compile would write it: one line per ID in String order, a place per live one. */
function partition(lines: [id: string, live: boolean][], places = lines.filter(([, live]) => live).length): DiffBasePartition {
  const text = lines.map(([id, live], i) => (live ? `${id}\t1\t${i.toString(16).padStart(16, '0')}` : `${id}\t0\t,"bridges":[{"provider":"p","namespace":"","external_id":"${i}"\u0001}]`)).join('\n');
  return { text: lines.length ? `${text}\n` : '', places: Buffer.alloc(places * PLACE_BYTES), textFile: 'p0000.tsv', placesFile: 'p0000.loc' };
}

/** What a walk reports: per ID of `ids`, its line's kind and ordinal (or section), and the IDs `ids` lacks. */
function walk(part: DiffBasePartition, ids: string[]) {
  const seen = new Map<string, string>();
  const absent = matchDiffBase(
    part, ids,
    (i, at, ordinal) => seen.set(ids[i], `live ${ordinal} ${part.text.slice(at, part.text.indexOf('\n', at))}`),
    (i, section) => seen.set(ids[i], `merged ${section}`),
    (i) => seen.set(ids[i], 'retired'),
  );
  return { seen, absent };
}

describe('matchDiffBase', () => {
  it('finds each line of the IDs it is walked beside, steps over new IDs and returns the ones it lacks', () => {
    const part = partition([['ra1', true], ['ra2', false], ['ra3', true], ['rb', true], ['rc1', true]]);
    const { seen, absent } = walk(part, ['ra0', 'ra2', 'ra3', 'ra30', 'rb', 'rc', 'rd']);
    expect(absent).toEqual(['ra1', 'rc1']);
    expect([...seen]).toEqual([
      ['ra2', 'merged ,"bridges":[{"provider":"p","namespace":"","external_id":"1"\u0001}]'],
      ['ra3', 'live 1 0000000000000002'],
      ['rb', 'live 2 0000000000000003'],
    ]);
  });

  it('agrees with a lookup by ID for any mix of kept, new and gone IDs', () => {
    const id = fc.stringMatching(/^r[a-z0-9]{0,6}$/);
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(id, fc.boolean(), fc.constantFrom('kept', 'gone')), { selector: ([x]) => x, maxLength: 40 }), fc.uniqueArray(id, { maxLength: 20 }), (rows, extra) => {
        const lines = rows.map(([x, live]): [string, boolean] => [x, live]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        const part = partition(lines);
        const kept = new Set(rows.filter(([, , k]) => k === 'kept').map(([x]) => x));
        const ids = [...new Set([...kept, ...extra.filter((x) => !rows.some(([r]) => r === x))])].sort();
        const { seen, absent } = walk(part, ids);
        let ordinal = 0;
        const wantAbsent: string[] = [];
        for (const [x, live] of lines) {
          if (!kept.has(x)) wantAbsent.push(x);
          else expect(seen.get(x)).toMatch(live ? new RegExp(`^live ${ordinal} [0-9a-f]{16}$`) : /^merged ,"bridges":\[/);
          if (live) ordinal++;
        }
        expect(absent).toEqual(wantAbsent);
        expect(seen.size).toBe(kept.size);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves lines out of order unmatched, and refuses a partition whose places do not match its live lines', () => {
    // Out of order, a second walk beside every ID still misses one: build-entities refuses the diff base then.
    const unordered = partition([['rb', true], ['ra', true]]);
    expect(walk(unordered, ['ra', 'rb']).absent).toEqual(['ra']);
    expect(() => walk(partition([['ra', true], ['rb', false]], 2), ['ra', 'rb'])).toThrow(/p0000\.loc: holds 2 shard places for 1 live IDs/);
    expect(walk(partition([]), ['ra']).absent).toEqual([]);
  });
});
