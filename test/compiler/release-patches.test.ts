// The successor's zstd patches against its predecessor (compiler/write/release-patches.ts), over the repo's sample
// releases: listed in patches.json and the manifest, each under half its file and giving that file back when applied
// by zstd itself; the same bytes when compiled again; none, with a warning and a compile that still succeeds, when
// zstd is not installed or the predecessor is not compiled beside it. In the sockets tier: the compile runs zstd.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAll } from '../../compiler/compile.ts';
import { compileRelease } from '../../compiler/compile-release.ts';
import { openRelease } from '../../compiler/read/release-input.ts';
import { verifyStamp } from '../../compiler/dist-manifest.ts';
import { MIN_PATCHED_BYTES } from '../../compiler/write/release-patches.ts';
import { PATCHES_FILE, type PatchesDoc } from '../../common/zstd-patch.ts';
import { compiledSamplesWithPatches, copyCompiled, type Compiled } from '../fixtures/compiled-fixtures.ts';

type Files = Record<string, { bytes: number; sha256: string }>;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const manifestOf = (dist: string, stamp: string): Files => JSON.parse(readFileSync(join(dist, stamp, 'public', 'manifest.json'), 'utf8')).files as Files;
const prefixOf = (path: string): string | undefined => /^(.+)-[0-9a-f]{16}\.[A-Za-z0-9]+$/.exec(path)?.[1];

let compiled: Compiled;
let root: string;
let S1: string;
let S2: string;

beforeAll(async () => {
  compiled = await compiledSamplesWithPatches();
  [S1, S2] = compiled.reports.map((r) => r.stamp);
  root = mkdtempSync(join(tmpdir(), 'ir-patches-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('release patches', () => {
  it('lists a patch for the changed files, in patches.json and the manifest, each under half its file and giving it back', async () => {
    const { dist } = compiled;
    const m1 = manifestOf(dist, S1);
    const m2 = manifestOf(dist, S2);
    expect(m1[PATCHES_FILE]).toBeUndefined(); // the first release has nothing to patch from
    expect(compiled.reports.flatMap((r) => r.warnings)).toEqual([]);
    const text = readFileSync(join(dist, S2, 'public', PATCHES_FILE), 'utf8');
    expect(sha256(Buffer.from(text))).toBe(m2[PATCHES_FILE].sha256);
    const doc = JSON.parse(text) as PatchesDoc;
    expect(Object.keys(doc)).toEqual(['files', 'format', 'prior', 'tool']);
    expect(Object.keys(doc.files)).toEqual(Object.keys(doc.files).sort());
    expect(doc).toMatchObject({ format: 1, prior: S1 });
    expect(doc.tool).toMatch(/^zstd \d+\.\d+\.\d+ -4 --long=31 --patch-from$/);

    const targets = Object.keys(doc.files);
    // The sample successor changes every family a little: each of these gets a patch.
    for (const family of ['resolve/keys', 'entities/index', 'search/docs', 'names/keys', 'matches/rows']) {
      expect(targets.some((t) => prefixOf(t) === family), family).toBe(true);
    }
    const priorShas = new Set(Object.values(m1).map((f) => f.sha256));
    for (const [target, entry] of Object.entries(doc.files)) {
      expect(entry.from, target).toBe(Object.keys(m1).find((p) => prefixOf(p) === prefixOf(target)));
      expect(entry.from_sha256).toBe(m1[entry.from].sha256);
      expect(priorShas.has(m2[target].sha256), target).toBe(false);
      expect(entry.patch).toMatch(new RegExp(`^patches/${prefixOf(target)}-[0-9a-f]{16}\\.zst$`));
      expect(m2[entry.patch].bytes * 2, target).toBeLessThan(m2[target].bytes);
      // zstd itself, not the code under test, applies it.
      const made = execFileSync('zstd', ['-d', '-q', '-c', '--long=31', `--patch-from=${join(dist, S1, 'public', entry.from)}`, join(dist, S2, 'public', entry.patch)], { maxBuffer: 1 << 28 });
      expect(sha256(made), target).toBe(m2[target].sha256);
    }
    // Never a shard pack (shared whole, or new), a small file, or a patch of a patch.
    const changedPacks = Object.keys(m2).filter((p) => p.startsWith('shards/pack-') && !priorShas.has(m2[p].sha256));
    expect(changedPacks.length).toBeGreaterThan(0);
    for (const p of changedPacks) expect(doc.files[p]).toBeUndefined();
    for (const t of targets) expect(m2[t].bytes).toBeGreaterThanOrEqual(MIN_PATCHED_BYTES);
    // Every patch file is listed by patches.json: nothing stray under patches/.
    expect(Object.keys(m2).filter((p) => p.startsWith('patches/')).sort()).toEqual([...new Set(Object.values(doc.files).map((e) => e.patch))].sort());
    expect(await verifyStamp(join(dist, S2))).toEqual([]);
  });

  it('writes the same patches when the successor is compiled again', async () => {
    const again = copyCompiled(compiled, join(root, 'again'));
    rmSync(join(again.dist, S2), { recursive: true });
    const [report] = await compileAll({ releases: again.releases, dist: again.dist, stamp: S2, progress: false });
    expect(report.warnings).toEqual([]);
    const before = manifestOf(compiled.dist, S2);
    expect(manifestOf(again.dist, S2)).toEqual(before);
    for (const p of [PATCHES_FILE, ...Object.keys(before).filter((f) => f.startsWith('patches/'))]) {
      expect(readFileSync(join(again.dist, S2, 'public', p)).equals(readFileSync(join(compiled.dist, S2, 'public', p))), p).toBe(true);
    }
  });

  it('writes none, warning why, when zstd is not installed or the predecessor is not compiled beside it; the compile succeeds', async () => {
    const noZstd = copyCompiled(compiled, join(root, 'no-zstd'));
    const warnings: string[] = [];
    const path = process.env.PATH;
    // A PATH with nothing on it: no zstd to be found.
    process.env.PATH = mkdtempSync(join(root, 'empty-path-'));
    try {
      await compileAll({ releases: noZstd.releases, dist: noZstd.dist, stamp: S2, progress: false, onWarning: (l) => warnings.push(l) });
    } finally {
      process.env.PATH = path;
    }
    expect(warnings).toEqual([`${S2}: no patches against ${S1}: zstd is not installed (apt-get install zstd), so a mirror fetches ${S2}'s changed files whole`]);
    expect(existsSync(join(noZstd.dist, S2, 'public', PATCHES_FILE))).toBe(false);
    expect(existsSync(join(noZstd.dist, S2, 'public', 'patches'))).toBe(false);
    expect(await verifyStamp(join(noZstd.dist, S2))).toEqual([]);
    // The stamp is the patched one less patches.json and patches/: patches change nothing else.
    const patched = Object.entries(manifestOf(compiled.dist, S2)).filter(([p]) => p !== PATCHES_FILE && !p.startsWith('patches/'));
    expect(Object.entries(manifestOf(noZstd.dist, S2))).toEqual(patched);

    const noPrior = copyCompiled(compiled, join(root, 'no-prior'));
    rmSync(join(noPrior.dist, S1), { recursive: true });
    rmSync(join(noPrior.dist, S2), { recursive: true });
    // compileRelease itself: `register compile` compiles an uncompiled predecessor first (compiler/compile.ts).
    const report = await compileRelease(await openRelease(join(noPrior.releases, S2)), await openRelease(join(noPrior.releases, S1)), noPrior.dist, { progress: false });
    expect(report.warnings).toEqual([`no patches against ${S1}: it is not compiled in ${noPrior.dist}/ in this format, so a mirror fetches ${S2}'s changed files whole`]);
    expect(existsSync(join(noPrior.dist, S2, 'public', PATCHES_FILE))).toBe(false);
  });
});
