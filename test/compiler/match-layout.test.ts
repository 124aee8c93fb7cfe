// The match index's layout (common/match-index.ts), read back from compiled releases: every anchor's row copies lie
// together in its ascending order and are the rows its list entries name, each entry's digests are those of its
// row's anchors, the descending run holds the same matches, and a season that is one block of its competition's
// copies points into them instead of holding its own.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { ENTITY_TYPES } from '../../common/ids.ts';
import { entryDigests, MATCH_REF, MATCH_ROW, metaDay } from '../../common/match-index.ts';
import { createBucketCache } from '../../runtime/release/bucket-family-reader.ts';
import { loadRelease } from '../../runtime/release/open-release.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { compiledRealData, compiledSamples, type Compiled } from '../fixtures/compiled-fixtures.ts';

const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const ANCHOR_TYPES = new Set(['team', 'competition', 'season']);

/** The anchors of a compiled stamp's release, read from its entities table: [register ID, type]. */
async function anchorsOf(compiled: Compiled, stamp: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  let id = -1;
  let type = -1;
  await readCsv(join(compiled.releases, stamp, 'csv', 'entities.csv.gz'), 'entities', {
    header: (h) => {
      id = h.indexOf('reep_id');
      type = h.indexOf('entity_type');
    },
    row: (f) => {
      if (ANCHOR_TYPES.has(f[type])) out.push([f[id], f[type]]);
    },
  });
  return out;
}

async function checkLayout(compiled: Compiled, stamp: string): Promise<{ anchors: number; copies: number; sharedSeasons: number }> {
  const source = createFsSource({ root: compiled.dist, reads: 'sync' });
  try {
    const manifest = createHash('sha256').update(readFileSync(join(compiled.dist, stamp, 'public', 'manifest.json'))).digest('hex');
    const release = await loadRelease(source, stamp, manifest, createBucketCache(1 << 22));
    const index = release.matchIndex()!;
    const competitionCopies: [number, number][] = [];
    const seasons: [number, number][] = [];
    let anchors = 0;
    for (const [id, type] of await anchorsOf(compiled, stamp)) {
      const ref = await index.ref(id);
      // A merged or retired anchor has no ref; a live one with no matches has an empty list.
      if (ref === undefined || ref[MATCH_REF.count] === 0) continue;
      expect(ENTITY_TYPES[ref[MATCH_REF.typeIndex]]).toBe(type);
      anchors++;
      const [start, count, rows] = [ref[MATCH_REF.start], ref[MATCH_REF.count], ref[MATCH_REF.rows]];
      if (type === 'competition') competitionCopies.push([rows, rows + count]);
      if (type === 'season') seasons.push([rows, rows + count]);
      const ascending: number[] = [];
      let last: [number, number] = [0, -1];
      for (let i = 0; i < count; i++) {
        const [ordinal, meta, sides, structure] = await index.entry(start + i);
        const row = await index.row(rows + i);
        const home = row[MATCH_ROW.home];
        const away = row[MATCH_ROW.away];
        const competition = row[MATCH_ROW.competition];
        const season = row[MATCH_ROW.season];
        // The copy is a match of this anchor, its digests are those of the row's anchors, in ascending order.
        expect([home, away, competition, season], `${type} ${id} entry ${i}`).toContain(id);
        expect([sides, structure]).toEqual(entryDigests(home, away, competition, season));
        const day = metaDay(meta);
        const key: [number, number] = [day === 0 ? Infinity : day, ordinal];
        expect(key[0] > last[0] || (key[0] === last[0] && key[1] > last[1]), `${type} ${id} entry ${i} in order`).toBe(true);
        last = key;
        ascending.push(ordinal);
      }
      const descending: number[] = [];
      for (let i = 0; i < count; i++) descending.push((await index.entry(start + count + i))[0]);
      expect(descending.sort((a, b) => a - b)).toEqual(ascending);
    }
    // A season's copies either lie inside one competition's or are its own (outside every competition's).
    let sharedSeasons = 0;
    for (const [from, to] of seasons) {
      const inside = competitionCopies.find(([a, b]) => from >= a && to <= b);
      if (inside) sharedSeasons++;
      else expect(competitionCopies.some(([a, b]) => from < b && to > a)).toBe(false);
    }
    return { anchors, copies: index.doc.rows.entries, sharedSeasons };
  } finally {
    await source.close();
  }
}

describe('the match index laid out by anchor', () => {
  it('keeps each anchor\'s row copies together, named by its list entries and their digests (the samples)', async () => {
    const samples = await compiledSamples();
    for (const { stamp } of samples.reports) {
      const { anchors, copies, sharedSeasons } = await checkLayout(samples, stamp);
      expect(anchors).toBeGreaterThan(0);
      // Seasons of one competition share its copies: fewer than a copy per team, competition and season of each match.
      expect(sharedSeasons).toBeGreaterThan(0);
      const count = (await loadCount(samples, stamp));
      expect(copies).toBeLessThan(4 * count);
    }
  });

  it('does the same on the real v0 data', async () => {
    const real = await compiledRealData(V0, '20260401T000000Z');
    const { anchors } = await checkLayout(real, '20260401T000000Z');
    expect(anchors).toBeGreaterThan(0);
  });
});

/** Live matches indexed, as release.json states it. */
async function loadCount(compiled: Compiled, stamp: string): Promise<number> {
  const doc = JSON.parse(readFileSync(join(compiled.dist, stamp, 'public', 'release.json'), 'utf8')) as { matches: { count: number } };
  return doc.matches.count;
}
