// The stored tuples the compiler writes and the runtime reads (index entries, match rows and refs) are built by the
// constructors in common/ and read by the named indices beside them: each name must find the field given under it.
import { describe, expect, it } from 'vitest';
import { ENTRY_LIVE, ENTRY_TOMBSTONE, LIVE_ENTRY, liveEntry, TOMBSTONE_ENTRY, tombstoneEntry } from '../../common/dist-layout.ts';
import { MATCH_REF, MATCH_ROW, matchRef, matchRow, type MatchRowFields } from '../../common/match-index.ts';

describe('stored records', () => {
  it('reads each field of an index entry back under its name', () => {
    const at = { pack: 7, offset: 1234, length: 567, checksum: 0xdeadbeef };
    const cuts = [11, 22, 33, 44, 55, 66];
    const live = liveEntry(at, cuts, 9, 3);
    expect(live[0]).toBe(ENTRY_LIVE);
    expect(live).toHaveLength(LIVE_ENTRY.checksum + 1);
    expect([live[LIVE_ENTRY.pack], live[LIVE_ENTRY.offset], live[LIVE_ENTRY.length], live[LIVE_ENTRY.checksum]]).toEqual([7, 1234, 567, 0xdeadbeef]);
    expect(live.slice(LIVE_ENTRY.cutsFrom, LIVE_ENTRY.cutsFrom + 6)).toEqual(cuts);
    expect([live[LIVE_ENTRY.bridgeCount], live[LIVE_ENTRY.typeIndex]]).toEqual([9, 3]);
    const tomb = tombstoneEntry(at);
    expect(tomb[0]).toBe(ENTRY_TOMBSTONE);
    expect(tomb).toHaveLength(TOMBSTONE_ENTRY.checksum + 1);
    expect([tomb[TOMBSTONE_ENTRY.pack], tomb[TOMBSTONE_ENTRY.offset], tomb[TOMBSTONE_ENTRY.length], tomb[TOMBSTONE_ENTRY.checksum]]).toEqual([7, 1234, 567, 0xdeadbeef]);
  });

  it('reads each field of a match row and ref back under its name', () => {
    // A distinct value per field, so a swapped position cannot pass.
    const fields = Object.fromEntries(Object.keys(MATCH_ROW).map((k, i) => [k, `v${i}`])) as unknown as MatchRowFields;
    const row = matchRow(fields);
    expect(row).toHaveLength(Object.keys(MATCH_ROW).length);
    for (const [name, at] of Object.entries(MATCH_ROW)) expect(row[at], name).toBe(fields[name as keyof MatchRowFields]);
    const ref = matchRef({ typeIndex: 4, label: 'L', start: 10, count: 20, rows: 30 });
    expect([ref[MATCH_REF.typeIndex], ref[MATCH_REF.label], ref[MATCH_REF.start], ref[MATCH_REF.count], ref[MATCH_REF.rows]]).toEqual([4, 'L', 10, 20, 30]);
  });
});
