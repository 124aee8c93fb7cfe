// A stamp's binary patches against its predecessor: for each public file that changed and has exactly one
// counterpart in the predecessor (the same name before `-<hash16>`), a zstd patch from that file, kept when it is
// less than half the file, written as patches/…zst and listed in patches.json. A mirror holding the predecessor then
// fetches the patches instead of the files (mirror/pull.ts). Patches only save transfer: a stamp served is the same
// bytes with or without them, so no zstd (or no compiled predecessor) means no patches, and a warning.
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { PUBLIC_DIR } from '../../common/dist-layout.ts';
import { makePatch, applyPatch, patchTool, zstdVersion, PATCHES_DIR, PATCHES_FILE, type PatchesDoc, type PatchEntry } from '../../common/zstd-patch.ts';
import type { CompileContext } from '../context.ts';
import { sha256File } from '../read/release-input.ts';
import { writeContentFile } from './content-file.ts';

/**
 * Files smaller than this get no patch: what one saves is then about what its patches.json entry and the zstd run
 * cost, and the small files (documents, directories of a few KiB) change whole anyway.
 */
export const MIN_PATCHED_BYTES = 4096;

/** zstd runs at once: each holds its reference file in memory and takes a core; the compile machine has two. */
const LANES = 2;

/** Where the name's hash starts: `resolve/keys-<hash16>.pack` → `resolve/keys`. */
const HASHED_NAME = /^(.+)-[0-9a-f]{16}\.[A-Za-z0-9]+$/;

interface Pair {
  to: string;
  bytes: number;
  from: string;
  fromSha256: string;
}

/**
 * Writes the stamp's patches against `prior` (its compiled folder under `distDir`) once every public content file is
 * in ctx.written; returns the warning that says why there are none, if that is not simply that nothing changed.
 */
export async function writeReleasePatches(ctx: CompileContext, distDir: string): Promise<string | null> {
  if (!ctx.prior || !ctx.options.patches) return null; // the first release has nothing to patch from
  const priorDir = join(distDir, ctx.prior.stamp);
  const priorFiles = ctx.priorPublicFiles;
  if (!priorFiles) return `no patches against ${ctx.prior.stamp}: it is not compiled in ${distDir}/ in this format, so a mirror fetches ${ctx.release.stamp}'s changed files whole`;
  const pairs = pairFiles(ctx.written, priorFiles);
  if (pairs.length === 0) return null;
  const version = await zstdVersion();
  if (!version) return `no patches against ${ctx.prior.stamp}: zstd is not installed (apt-get install zstd), so a mirror fetches ${ctx.release.stamp}'s changed files whole`;

  const scratch = join(ctx.scratchDir, PATCHES_DIR);
  await mkdir(scratch, { recursive: true });
  const files: Record<string, PatchEntry> = {};
  const skipped: string[] = [];
  let next = 0;
  const lane = async (n: number): Promise<void> => {
    while (next < pairs.length) {
      const pair = pairs[next++];
      const entry = await patchOne(ctx, join(priorDir, PUBLIC_DIR, pair.from), pair, join(scratch, `${n}`), skipped);
      if (entry) files[pair.to] = entry;
    }
  };
  await Promise.all(Array.from({ length: Math.min(LANES, pairs.length) }, (_, n) => lane(n)));
  if (skipped.length) return `${skipped.length} patch(es) against ${ctx.prior.stamp} not written: ${skipped.join('; ')}`;
  if (Object.keys(files).length === 0) return null;

  const doc: PatchesDoc = { format: 1, prior: ctx.prior.stamp, tool: patchTool(version), files: {} };
  for (const k of Object.keys(files).sort()) doc.files[k] = files[k];
  // Keys in order at every level, so the same patches always list as the same bytes.
  const bytes = Buffer.from(JSON.stringify({ files: doc.files, format: doc.format, prior: doc.prior, tool: doc.tool }));
  await writeFile(join(ctx.publicDir, PATCHES_FILE), bytes);
  ctx.written.set(PATCHES_FILE, { path: PATCHES_FILE, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  return null;
}

/**
 * The files worth a patch, largest first (so the two lanes end together): changed, not a shard pack (those are
 * shared whole between stamps, or wholly new), not a patch, and named by exactly one file of the predecessor.
 */
function pairFiles(written: CompileContext['written'], prior: Record<string, { bytes: number; sha256: string }>): Pair[] {
  const priorShas = new Set(Object.values(prior).map((f) => f.sha256));
  const byPrefix = new Map<string, string[]>();
  for (const path of Object.keys(prior)) {
    const prefix = HASHED_NAME.exec(path)?.[1];
    if (prefix) byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), path]);
  }
  const pairs: Pair[] = [];
  for (const f of written.values()) {
    if (f.bytes < MIN_PATCHED_BYTES || priorShas.has(f.sha256)) continue;
    if (f.path.startsWith('shards/pack-') || f.path.startsWith(`${PATCHES_DIR}/`)) continue;
    const prefix = HASHED_NAME.exec(f.path)?.[1];
    const from = prefix ? byPrefix.get(prefix) : undefined;
    if (from?.length !== 1) continue;
    pairs.push({ to: f.path, bytes: f.bytes, from: from[0], fromSha256: prior[from[0]].sha256 });
  }
  return pairs.sort((a, b) => b.bytes - a.bytes || (a.to < b.to ? -1 : 1));
}

/**
 * One patch: made, kept only when under half the file, and applied once here so that no patch is published that does
 * not give the file back. A predecessor file that is not its manifest's bytes gets none (a mirror holds the real ones).
 */
async function patchOne(ctx: CompileContext, fromPath: string, pair: Pair, tmp: string, skipped: string[]): Promise<PatchEntry | null> {
  const patchTmp = `${tmp}.zst`;
  const backTmp = `${tmp}.back`;
  try {
    if ((await sha256File(fromPath).catch(() => null)) !== pair.fromSha256) {
      skipped.push(`${ctx.prior!.stamp}/${PUBLIC_DIR}/${pair.from} is missing or not the bytes its manifest lists`);
      return null;
    }
    const toPath = join(ctx.publicDir, pair.to);
    await makePatch(fromPath, toPath, patchTmp);
    const size = (await stat(patchTmp)).size;
    if (size * 2 >= pair.bytes) return null;
    await applyPatch(fromPath, patchTmp, backTmp);
    if ((await sha256File(backTmp)) !== ctx.written.get(pair.to)!.sha256) {
      skipped.push(`${pair.to}: its patch does not give the file back`);
      return null;
    }
    const prefix = HASHED_NAME.exec(pair.to)![1];
    // Named after the file it makes, so a listing of patches/ reads like the tree it patches.
    const patch = await writeContentFile({ root: ctx.publicDir, tmpDir: dirname(tmp), ledger: ctx.written }, `${PATCHES_DIR}/${prefix}`, 'zst', await readFile(patchTmp));
    return { from: pair.from, from_sha256: pair.fromSha256, patch: patch.path };
  } catch (e) {
    skipped.push(`${pair.to}: ${(e as Error).message}`);
    return null;
  } finally {
    await rm(patchTmp, { force: true });
    await rm(backTmp, { force: true });
  }
}
