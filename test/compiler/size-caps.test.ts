// The compiler refuses absurd sizes (common/limits.ts, docs/limits.md): a cell past its column's cap, a record too
// long to be a row, and an entity whose shard would be past MAX_SHARD_BYTES, naming the file, the row and the cap.
import { describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { MAX_CELL_BYTES, MAX_ID_BYTES, MAX_SHARD_BYTES, MAX_TEXT_BYTES } from '../../common/limits.ts';
import { writeHandRelease, type Rows } from '../fixtures/hand-release.ts';
import { fresh, refused } from '../fixtures/refusals.ts';

const A = 'rt000000000000a1';
const B = 'rt000000000000b2';
const STAMP = '20261001T000000Z';
const entity = (id: string, label: string) => [id, 'team', 'active', label, '', '', '', '', ''];
const good = (): Record<string, Rows> => ({
  entities: [entity(A, 'Alpha'), entity(B, 'Beta')],
  bridges: [['opta', '', 't1', A, ''], ['opta', '', 't2', B, '']],
});

describe('cells past their cap', () => {
  it('a label is held to MAX_TEXT_BYTES in bytes, not characters', async () => {
    // Two bytes a character: exactly at the cap compiles, one byte more is refused.
    const atCap = 'é'.repeat(MAX_TEXT_BYTES / 2);
    const ok = fresh();
    writeHandRelease(ok.releases, STAMP, { ...good(), entities: [entity(A, 'Alpha'), entity(B, atCap)] });
    const [report] = await compileAll({ ...ok, progress: false });
    expect(report.counts.entities).toBe(2);

    const d = fresh();
    writeHandRelease(d.releases, STAMP, { ...good(), entities: [entity(A, 'Alpha'), entity(B, atCap + 'x')] });
    expect(await refused(d)).toBe(`[compile] csv/entities.csv row 2: label is ${MAX_TEXT_BYTES + 1} bytes, over the ${MAX_TEXT_BYTES}-byte cap MAX_TEXT_BYTES (docs/limits.md)`);
  });

  it('a 5 MB label is refused while its row is read, before the row is held whole', async () => {
    const d = fresh();
    writeHandRelease(d.releases, STAMP, { ...good(), entities: [entity(A, 'Alpha'), entity(B, 'x'.repeat(5 << 20))] }, { gzip: true });
    expect(await refused(d)).toBe(`[compile] csv/entities.csv.gz row 2: label runs past ${MAX_TEXT_BYTES} bytes, the cap MAX_TEXT_BYTES (docs/limits.md)`);
  });

  it('a quoted cell is measured unquoted, and one past its cap is refused the same way', async () => {
    const d = fresh();
    // Quotes and commas force the quoted form; doubled quotes count once.
    writeHandRelease(d.releases, STAMP, { ...good(), aliases: [[A, 'a,"b"', 'short', '', ''], [B, '"'.repeat(MAX_TEXT_BYTES + 1), 'short', '', '']] });
    expect(await refused(d)).toBe(`[compile] csv/aliases.csv row 2: alias is ${MAX_TEXT_BYTES + 1} bytes, over the ${MAX_TEXT_BYTES}-byte cap MAX_TEXT_BYTES (docs/limits.md)`);
  });

  it('a provider-side ID is held to MAX_ID_BYTES', async () => {
    const d = fresh();
    writeHandRelease(d.releases, STAMP, { ...good(), bridges: [['opta', '', 't1', A, ''], ['opta', '', '7'.repeat(MAX_ID_BYTES + 1), B, '']] });
    expect(await refused(d)).toBe(`[compile] csv/bridges.csv row 2: external_id is ${MAX_ID_BYTES + 1} bytes, over the ${MAX_ID_BYTES}-byte cap MAX_ID_BYTES (docs/limits.md)`);
  });

  it("overlay_links.inherited, a JSON list, may pass a short text's cap but not MAX_CELL_BYTES", async () => {
    const inherited = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ provider: 'opta', property: 'P1', external_id: `x${i}`, confidence: 0.9 })));
    const long = inherited(40);
    expect(long.length).toBeGreaterThan(MAX_TEXT_BYTES);
    const ok = fresh();
    writeHandRelease(ok.releases, STAMP, { ...good(), overlay_links: [[A, 'Q1', '0.9', '', 'team', '40', long]] });
    const [report] = await compileAll({ ...ok, progress: false });
    expect(report.counts.overlay_links).toBe(1);

    const d = fresh();
    const tooLong = inherited(2000);
    expect(tooLong.length).toBeGreaterThan(MAX_CELL_BYTES);
    writeHandRelease(d.releases, STAMP, { ...good(), overlay_links: [[A, 'Q1', '0.9', '', 'team', '2000', tooLong]] });
    expect(await refused(d)).toBe(`[compile] csv/overlay_links.csv row 1: inherited is ${tooLong.length} bytes, over the ${MAX_CELL_BYTES}-byte cap MAX_CELL_BYTES (docs/limits.md)`);
  });
});

describe('shards past MAX_SHARD_BYTES', () => {
  it('an entity with so many bridges that its shard, as the runtime expands it, is past the cap', async () => {
    const d = fresh();
    const bridges = Array.from({ length: 3000 }, (_, i) => ['opta', '', `t${String(i).padStart(5, '0')}`, A, '']);
    writeHandRelease(d.releases, STAMP, { ...good(), bridges });
    const message = await refused(d);
    const m = /^\[compile\] csv\/entities\.csv: entity rt000000000000a1: its shard is (\d+) bytes, over the 262144-byte cap MAX_SHARD_BYTES \(docs\/limits\.md\); its largest section is bridges \(3000 bridges\), (\d+) bytes$/.exec(message);
    expect(m, message).not.toBeNull();
    // Stored, the shard is under the cap; the entity_type and role every bridge gets back in an answer push it over.
    const stored = Number(m![1]) - 3000 * (',"entity_type":"team","role":"canonical_bridge"'.length - 1);
    expect(stored).toBeLessThan(MAX_SHARD_BYTES);
    expect(Number(m![1])).toBeGreaterThan(MAX_SHARD_BYTES);
  });

  it('an entity with so many aliases that its shard is past the cap', async () => {
    const d = fresh();
    const aliases = Array.from({ length: 200 }, (_, i) => [B, `${i} ${'n'.repeat(900)}`, 'secondary', '', '']);
    writeHandRelease(d.releases, STAMP, { ...good(), aliases });
    expect(await refused(d)).toMatch(
      /^\[compile\] csv\/entities\.csv: entity rt000000000000b2: its shard is \d+ bytes, over the 262144-byte cap MAX_SHARD_BYTES \(docs\/limits\.md\); its largest section is aliases \(200 aliases\), \d+ bytes$/,
    );
  });
});
