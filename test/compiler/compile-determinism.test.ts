// The same release compiles to the same bytes: another output folder, another working directory, manifest entries
// listed in another order, another TZ and locale; the whole dist folder (index.json, every stamp's public and
// private parts, the compile reports) is the same files with the same bytes. Also checks the golden shape.
import { mkdtempSync, readFileSync, writeFileSync, cpSync, rmSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { verifyStamp } from '../../compiler/dist-manifest.ts';
import { REPORTS_DIR, writeCompileReport } from '../../compiler/compile-report.ts';
import { compiledSamples, copyCompiled } from '../fixtures/compiled-fixtures.ts';
import { writeHandRelease } from '../fixtures/hand-release.ts';
import { ENTITY_RANGES } from '../../compiler/stages/entities/build-entities.ts';
import { PRIOR_READS_IN_FLIGHT } from '../../compiler/read/prior-shards.ts';

const A = 'rt000000000000a1';
const B = 'rt000000000000b2';
const C = 'rp000000000000c3';

function makeReleases(root: string): string {
  const releases = join(root, 'releases');
  writeHandRelease(releases, '20261001T000000Z', {
    entities: [[A, 'team', 'active', 'Łódź Athletic', '', 'Poland', '', '', ''], [B, 'team', 'active', 'Beta United', '', '', '', '', ''], [C, 'player', 'active', 'Zoë Müller', 'female', '', '', '', '']],
    aliases: [[A, 'ŁKS', 'short', '1', ''], [C, 'Z. Müller', 'short', '', '']],
    bridges: [['opta', '', 't1', A, ''], ['opta', '', 't2', B, ''], ['transfermarkt', 'spieler', '77', C, 'exact']],
    relationships: [[A, B, 'participates_in']],
    redirects: [['rt000000000000d4', A, 'merged']],
  }, { gzip: true });
  writeHandRelease(releases, '20261008T000000Z', {
    entities: [[A, 'team', 'active', 'LKS Lodz', '', 'Poland', '', '', ''], [C, 'player', 'inactive', 'Zoë Müller', 'female', '', '', '', '']],
    bridges: [['opta', '', 't1', A, ''], ['transfermarkt', 'spieler', '78', C, 'exact']],
    redirects: [['rt000000000000d4', A, 'merged'], [B, A, 'merged']],
  }, { gzip: true, prior: '20261001T000000Z' });
  return releases;
}

/** Every file under `dir` (relative path → sha256 of its bytes), nothing left out. */
function treeHashes(dir: string, under = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, under), { withFileTypes: true })) {
    const rel = under ? `${under}/${e.name}` : e.name;
    if (e.isDirectory()) Object.assign(out, treeHashes(dir, rel));
    else out[rel] = createHash('sha256').update(readFileSync(join(dir, rel))).digest('hex');
  }
  return out;
}

const digests = (dist: string) =>
  ['20261001T000000Z', '20261008T000000Z'].map((s) => JSON.parse(readFileSync(join(dist, s, 'manifest.json'), 'utf8')).digest as string);

/**
 * The two releases compiled in-process into `root/dist`, with each release's report beside the stamps as `register
 * compile` writes it: once per file, read by the tests that only read it.
 */
let compiledOnce: Promise<{ root: string; releases: string; dist: string }> | undefined;
function compiledHand(): Promise<{ root: string; releases: string; dist: string }> {
  compiledOnce ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-det1-'));
    const releases = makeReleases(root);
    const dist = join(root, 'dist');
    await compileAll({ releases, dist, progress: false, onCompiled: (r) => writeCompileReport(dist, r) });
    return { root, releases, dist };
  })();
  return compiledOnce;
}

describe('compile is deterministic', () => {
  it('gives the same tree digest in another folder, cwd, manifest order, TZ and locale', async () => {
    const { root: root1, releases } = await compiledHand();
    const first = digests(join(root1, 'dist'));

    // Copy the releases, reverse the order of release.json's file entries, compile from another cwd in a child
    // process with another TZ and locale.
    const root2 = mkdtempSync(join(tmpdir(), 'ir-det2-'));
    cpSync(releases, join(root2, 'releases'), { recursive: true });
    for (const s of ['20261001T000000Z', '20261008T000000Z']) {
      const p = join(root2, 'releases', s, 'release.json');
      const m = JSON.parse(readFileSync(p, 'utf8'));
      m.files = Object.fromEntries(Object.entries(m.files).reverse());
      writeFileSync(p, JSON.stringify(m, null, 4));
    }
    execFileSync(process.execPath, [join(process.cwd(), 'bin/register.mjs'), 'compile', '--releases', 'releases', '--out', 'out'], {
      cwd: root2,
      env: { ...process.env, TZ: 'Pacific/Kiritimati', LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' },
      stdio: 'pipe',
    });
    expect(digests(join(root2, 'out'))).toEqual(first);
    // Not only the digests: every file of the dist, the reports included, has the same bytes.
    const tree = treeHashes(join(root1, 'dist'));
    expect(Object.keys(tree)).toContain(`${REPORTS_DIR}/20261008T000000Z.html`);
    expect(treeHashes(join(root2, 'out'))).toEqual(tree);
    for (const s of ['20261001T000000Z', '20261008T000000Z']) expect(await verifyStamp(join(root2, 'out', s))).toEqual([]);
  });

  it('gives the same bytes whether the ranges run in worker threads or one after another', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-threads-'));
    const releases = makeReleases(root);
    await compileAll({ releases, dist: join(root, 'threads'), progress: false, threads: true });
    await compileAll({ releases, dist: join(root, 'inline'), progress: false, threads: false });
    expect(digests(join(root, 'inline'))).toEqual(digests(join(root, 'threads')));
  });

  it("reads the predecessor's diff base or its tables to the same bytes, and refuses a diff base or a prior shard whose bytes are wrong", async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-diffbase-'));
    const releases = makeReleases(root);
    const dist = join(root, 'dist');
    // Shards written anew every time (shareShards false): only the changelog's source differs between the compiles.
    await compileAll({ releases, dist, progress: false, shareShards: false });
    const [, withBase] = digests(dist);

    // Without the predecessor's diff base, its tables are read instead.
    const base = join(dist, '20261001T000000Z', 'private', 'diff-base');
    const saved = join(root, 'saved-diff-base');
    cpSync(base, saved, { recursive: true });
    rmSync(base, { recursive: true });
    await compileAll({ releases, dist, stamp: '20261008T000000Z', progress: false, shareShards: false });
    expect(digests(dist)[1]).toBe(withBase);

    // A diff base whose bytes differ from its manifest is refused, naming the file.
    cpSync(saved, base, { recursive: true });
    const file = readdirSync(base).filter((f) => f.endsWith('.tsv')).find((f) => statSync(join(base, f)).size > 0)!;
    const bytes = readFileSync(join(base, file));
    bytes[0] ^= 1;
    writeFileSync(join(base, file), bytes);
    await expect(compileAll({ releases, dist, stamp: '20261008T000000Z', progress: false, shareShards: false })).rejects.toThrow(new RegExp(`${file}: does not match its manifest`));
    expect(digests(dist)[1]).toBe(withBase); // the published successor is untouched

    // So is a file of shard places (where a changed ID's old shard is read from).
    cpSync(saved, base, { recursive: true, force: true });
    const places = file.replace(/\.tsv$/, '.loc');
    const placeBytes = readFileSync(join(base, places));
    expect(placeBytes.length).toBeGreaterThan(0);
    placeBytes[4] ^= 1;
    writeFileSync(join(base, places), placeBytes);
    await expect(compileAll({ releases, dist, stamp: '20261008T000000Z', progress: false, shareShards: false })).rejects.toThrow(new RegExp(`${places}: does not match its manifest`));
    expect(digests(dist)[1]).toBe(withBase);

    // A diff base of another format (an older compiler's) is passed over: the tables are read, to the same bytes.
    // The bad place file stays, so reading this diff base would have failed.
    const meta = JSON.parse(readFileSync(join(base, 'meta.json'), 'utf8')) as { format: number };
    writeFileSync(join(base, 'meta.json'), JSON.stringify({ ...meta, format: meta.format - 1 }));
    rmSync(join(dist, '20261008T000000Z'), { recursive: true });
    await compileAll({ releases, dist, stamp: '20261008T000000Z', progress: false, shareShards: false });
    expect(digests(dist)[1]).toBe(withBase);

    // A changed ID's old values come from the predecessor's shard: bytes that fail their checksum are refused too.
    cpSync(saved, base, { recursive: true, force: true });
    const shards = join(dist, '20261001T000000Z', 'public', 'shards');
    // The team whose label changed (so its old label is read back from its shard).
    const pack = readdirSync(shards).find((f) => readFileSync(join(shards, f)).includes('Athletic'))!;
    const packBytes = readFileSync(join(shards, pack));
    const at = packBytes.indexOf('Athletic');
    packBytes[at] ^= 1;
    writeFileSync(join(shards, pack), packBytes);
    await expect(compileAll({ releases, dist, stamp: '20261008T000000Z', progress: false, shareShards: false })).rejects.toThrow(new RegExp(`${pack}: fails its checksum; recompile the prior release`));
    expect(digests(dist)[1]).toBe(withBase);
  });

  it("reads many changed IDs' old values from the predecessor to the same bytes as from its tables", async () => {
    // The committed generated releases (3,000 entities): enough changed IDs that the predecessor's shards are
    // read with several reads in flight (PriorShards.entities), unlike the hand release's two or three. Their
    // compile with the diff base is the run's shared one (compiled-fixtures.ts), copied to be changed here.
    const root = mkdtempSync(join(tmpdir(), 'ir-prior-reads-'));
    const { releases, dist } = copyCompiled(await compiledSamples(), root);
    const [first, second] = readdirSync(releases).sort();
    const doc = JSON.parse(readFileSync(join(dist, second, 'public', 'release.json'), 'utf8')) as { changes: { streams: Record<string, { total: number }> } };
    const changed = ['type:label_updated', 'type:entity_status_changed', 'type:provider_updated'].reduce((n, k) => n + (doc.changes.streams[k]?.total ?? 0), 0);
    expect(changed).toBeGreaterThan(3 * PRIOR_READS_IN_FLIGHT);
    // Shards written anew both times (shareShards false): only the changelog's source differs.
    await compileAll({ releases, dist, stamp: second, progress: false, shareShards: false, patches: false });
    const withBase = JSON.parse(readFileSync(join(dist, second, 'manifest.json'), 'utf8')).digest as string;
    rmSync(join(dist, first, 'private', 'diff-base'), { recursive: true });
    await compileAll({ releases, dist, stamp: second, progress: false, shareShards: false, patches: false }); // as the shared fixture was
    expect(JSON.parse(readFileSync(join(dist, second, 'manifest.json'), 'utf8')).digest).toBe(withBase);
    rmSync(root, { recursive: true, force: true });
  });

  it('writes the golden set of files', async () => {
    const { dist } = await compiledHand();
    const m = JSON.parse(readFileSync(join(dist, '20261008T000000Z', 'public', 'manifest.json'), 'utf8'));
    // Content-addressed names: strip the hash to compare the layout.
    const shape = Object.keys(m.files).map((f) => f.replace(/-[0-9a-f]{16}\./, '-<hash>.').replace(/-[0-9a-f]{8}-/, '-<id>-'));
    expect(shape.sort()).toEqual([
      'changes/all-<id>-<hash>.pack', 'changes/all-<id>-dir-<hash>.bin',
      'changes/provider-opta-<id>-<hash>.pack', 'changes/provider-opta-<id>-dir-<hash>.bin',
      'changes/provider-transfermarkt-<id>-<hash>.pack', 'changes/provider-transfermarkt-<id>-dir-<hash>.bin',
      'changes/type-entity_added-<id>-<hash>.pack', 'changes/type-entity_added-<id>-dir-<hash>.bin',
      'changes/type-entity_removed-<id>-<hash>.pack', 'changes/type-entity_removed-<id>-dir-<hash>.bin',
      'changes/type-entity_status_changed-<id>-<hash>.pack', 'changes/type-entity_status_changed-<id>-dir-<hash>.bin',
      'changes/type-fixture_updated-<id>-<hash>.pack', 'changes/type-fixture_updated-<id>-dir-<hash>.bin',
      'changes/type-label_updated-<id>-<hash>.pack', 'changes/type-label_updated-<id>-dir-<hash>.bin',
      'changes/type-provider_updated-<id>-<hash>.pack', 'changes/type-provider_updated-<id>-dir-<hash>.bin',
      'changes/type-redirect_changed-<id>-<hash>.pack', 'changes/type-redirect_changed-<id>-dir-<hash>.bin',
      'changes/type-score_updated-<id>-<hash>.pack', 'changes/type-score_updated-<id>-dir-<hash>.bin',
      'documents/coverage.json', 'documents/meta-next.json', 'documents/meta-v1.json', 'documents/providers.json',
      'documents/root-next.json', 'documents/root-v1.json',
      'entities/index-<hash>.pack', 'entities/index-dir-<hash>.bin',
      'matches/lists-<hash>.pack', 'matches/lists-dir-<hash>.bin', 'matches/refs-<hash>.pack', 'matches/refs-dir-<hash>.bin',
      'matches/rows-<hash>.pack', 'matches/rows-dir-<hash>.bin',
      'names/keys-<hash>.pack', 'names/keys-dir-<hash>.bin',
      'release.json',
      'resolve/keys-<hash>.pack', 'resolve/keys-dir-<hash>.bin',
      'search/docs-<hash>.pack', 'search/docs-dir-<hash>.bin', 'search/tokens-<hash>.pack', 'search/tokens-dir-<hash>.bin',
      // One pack per partition range (ENTITY_RANGES), each range's entities hashing into it: the predecessor's,
      // inherited (compiler/write/shared-shards.ts), then the successor's own.
      ...Array.from({ length: 2 * ENTITY_RANGES }, () => 'shards/pack-<hash>.jsonl'),
    ].sort());
    const doc = JSON.parse(readFileSync(join(dist, '20261008T000000Z', 'public', 'release.json'), 'utf8'));
    expect(doc.changes.counts).toEqual({ entity_added: 0, entity_status_changed: 1, label_updated: 1, entity_removed: 0, redirect_changed: 1, provider_updated: 2, fixture_updated: 0, score_updated: 0 });
    expect(doc.counts).toMatchObject({ entities: 2, redirects: 2, tombstones: 0, bridges: 2 });
  });
});
