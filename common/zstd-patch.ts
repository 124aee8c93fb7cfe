// Binary patches from one version of a public file to the next, made by the compiler and applied by `register pull`
// with Debian's zstd CLI (`--patch-from`: the old file is the reference the new one is compressed against). The npm
// binding zstd-napi was tried and set aside: it has no reference prefix, and a dictionary instead gave patches a
// hundred times larger (issue 49). patches.json, beside the files, says which patch turns which old file into which.
import type { ProcessPromise, Shell } from 'zx';

/** The listing of a stamp's patches, in public/ and so in its signed public manifest (docs/dist-format.md). */
export const PATCHES_FILE = 'patches.json';
/** The folder of the patch files themselves (content-addressed, like every other public file). */
export const PATCHES_DIR = 'patches';

/** patches.json: for each file of this stamp that has a patch, the predecessor's file it is made from. */
export interface PatchesDoc {
  format: 1;
  /** The stamp whose files the patches are made from. */
  prior: string;
  /** The zstd that made them and how: another version may make other bytes (never other files once applied). */
  tool: string;
  files: Record<string, PatchEntry>;
}

export interface PatchEntry {
  /** The predecessor's file (its public path) the patch is applied to. */
  from: string;
  /** Its sha256: a mirror holding a file with these bytes, under any name, can apply the patch. */
  from_sha256: string;
  /** The patch file's public path, under PATCHES_DIR. */
  patch: string;
}

/**
 * How a patch is made: one thread and fixed flags, so the same two files give the same patch bytes. On the 100k
 * successor's changed files (shard packs aside) level 4 made 4.4 MB of patches for level 3's 5.6 MB at the same CPU
 * time (0.85 s against 0.75 s, all of them); 5 and 6 made more than 4, and 9 made 2.6 MB for twice the time.
 */
const PATCH_FLAGS = ['-4', '--long=31'] as const;

/**
 * zx, loaded on first use: this module's constants are read by every `register` command (verify, serve), and loading
 * zx cost each of them ~80 ms of start-up. Quiet: zx echoes nothing and collects the output, which an error quotes.
 */
let zx: Promise<{ zstd: Shell; which: typeof import('zx').which }> | null = null;
const shell = () => (zx ??= import('zx').then(({ $, which }) => ({ zstd: $({ quiet: true, verbose: false }), which })));

/** The installed zstd's version (`1.5.4`), or null when there is no zstd on the PATH. */
export async function zstdVersion(): Promise<string | null> {
  const { zstd, which } = await shell();
  if (!(await which('zstd', { nothrow: true }))) return null;
  const out = await zstd`zstd -V`.nothrow();
  return /v(\d+\.\d+\.\d+)/.exec(out.stdout)?.[1] ?? null;
}

/** What patches.json records as the tool, for `version` (zstdVersion's). */
export const patchTool = (version: string): string => `zstd ${version} ${PATCH_FLAGS.join(' ')} --patch-from`;

/** Writes to `out` the patch that turns `from` into `to`. */
export async function makePatch(from: string, to: string, out: string): Promise<void> {
  const { zstd } = await shell();
  await run(zstd`zstd -q -f -T1 ${PATCH_FLAGS} --patch-from=${from} ${to} -o ${out}`);
}

/** Writes to `out` what `patch` makes of `from`. Rejects with zstd's own words when it cannot. */
export async function applyPatch(from: string, patch: string, out: string): Promise<void> {
  // --long=31: a patch's window spans its reference, past the 128 MiB zstd decodes without being told.
  const { zstd } = await shell();
  await run(zstd`zstd -d -q -f --long=31 --patch-from=${from} ${patch} -o ${out}`);
}

async function run(p: ProcessPromise): Promise<void> {
  const out = await p.nothrow();
  if (out.exitCode !== 0) throw new Error(`zstd exited ${out.exitCode ?? out.signal}: ${(out.stderr || out.stdout).trim().split('\n').at(-1) ?? ''}`);
}
