// `register pull`: copies the public part of a published dist from a static host or CDN into a local dist that
// `register serve --dist DIR` serves. Nothing is taken on the host's word: index.json must carry its seal, each
// stamp's public manifest must hash to what the index records, and every file to what its manifest lists, before
// it is used. A stamp is fetched into DIR/.pull/<stamp>/ and renamed into place only when every file of it is
// there and checked; index.json is written last and atomically, naming only stamps that are in place. A changed file
// that the stamp's patches.json has a patch for, from a file held here, is made from that patch instead of fetched
// whole; what it makes is checked against the manifest like a fetched file, and a patch that fails falls back to it.
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { INDEX_FILE, MANIFEST_FILE, ORIGIN_INDEX_FILE, PUBLIC_DIR, type DistIndex, type IndexedRelease, INDEX_SIG_FILE, manifestSigPath, MANIFEST_SIG_FILE, ORIGIN_INDEX_SIG_FILE } from '../common/dist-layout.ts';
import { RegisterError } from '../common/errors.ts';
import { STAMP } from '../common/ids.ts';
import { openIndex, sealIndex } from '../common/index-file.ts';
import { Progress } from '../common/progress.ts';
import { parseSignature, type SignatureDoc, type TrustedKeys } from '../common/signing.ts';
import { TrustedSet } from '../common/trust.ts';
import { fileMarkStore } from '../common/trust-mark-file.ts';
import { checkSourcePath } from '../runtime/source/source-path.ts';
import { fetchFile, FetchRefusal, getWhole, originOf, type Origin } from './fetch-file.ts';
import { sha256File } from '../compiler/read/release-input.ts';
import { fsyncPath, writeAtomically } from '../common/durable-file.ts';
import { createConcurrencyLimit } from '../runtime/concurrency-limit.ts';
import { applyPatch, zstdVersion, PATCHES_DIR, PATCHES_FILE, type PatchesDoc } from '../common/zstd-patch.ts';

/** Options of pull(). */
export interface PullOptions {
  /** URL of the published dist's root (what publish-public.sh uploaded). */
  origin: string;
  /** Local dist folder to fill. */
  out: string;
  /** Pull only this stamp (default: every stamp the origin's index lists). */
  stamp?: string;
  /**
   * Keys whose signatures are accepted: index.json and each stamp's public manifest must be signed by one of them,
   * unexpired, and index.json no older than the one already here. Without keys only the hashes are checked, against
   * the host's own sealed index.json: the copy is then exactly as trustworthy as the host.
   */
  trusted?: TrustedKeys;
  /** The clock signatures' expiry is judged by (tests). Default: now. */
  now?: () => Date;
  /** Files fetched at once. Default 8. */
  parallel?: number;
  /** A host that sends nothing for this long is given up on for that attempt. Default 30000 ms. */
  timeoutMs?: number;
  /** Tries per file before the pull gives up on a broken transfer (each resumes the last). Default 3. */
  attempts?: number;
  /** Where the summary lines go. */
  log?: (line: string) => void;
  /** Progress line on a terminal (default: when stderr is one). */
  progress?: Progress;
}

/** What one stamp took. */
interface StampPulled {
  stamp: string;
  files: number;
  /** Files fetched from the host, and the bytes received for them. */
  fetched: number;
  fetchedBytes: number;
  /** Files made from a patch against a file held here, and the bytes received for those patches. */
  patched: number;
  patchedBytes: number;
  /** What fetching every file whole would have received (the stamp's files, its patches aside). */
  fullBytes: number;
  /** Files hard-linked (or copied) from a stamp already here with the same sha256. */
  linked: number;
  /** Files already in place from an earlier, interrupted run. */
  present: number;
  /** Fetches that continued a partial file with a Range request. */
  resumed: number;
  /** Whether the stamp was already complete here (nothing done). */
  complete: boolean;
}

export interface PullResult {
  stamps: StampPulled[];
  /** Whether index.json is the origin's own bytes (else one listing only the stamps held here). */
  indexIsOrigin: boolean;
}

const MAX_INDEX_BYTES = 16 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;
const MAX_SIG_BYTES = 64 * 1024;
const STAGING = '.pull';

const sha256Hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const refuse = (message: string, file?: string): RegisterError => new RegisterError('pull', message, file);

interface PublicManifest {
  stamp: string;
  files: Record<string, { bytes: number; sha256: string }>;
}

export async function pull(opts: PullOptions): Promise<PullResult> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(l + '\n'));
  const parallel = Math.max(1, opts.parallel ?? 8);
  const origin = originOf(opts.origin, parallel, opts.timeoutMs ?? 30_000);
  const where = (path: string): string => `${origin.base.origin}${origin.base.pathname}${path}`;
  try {
    const indexBytes = await getWhole(origin, INDEX_FILE, MAX_INDEX_BYTES).catch((e: Error) => {
      throw refuse(`cannot read it: ${e.message}`, where(INDEX_FILE));
    });
    if (!indexBytes) throw refuse('not found (ORIGIN is the URL of a published dist: the folder holding index.json)', where(INDEX_FILE));
    let index: DistIndex;
    try {
      index = openIndex(indexBytes.toString('utf8'));
    } catch (e) {
      throw refuse((e as Error).message, where(INDEX_FILE));
    }
    for (const r of index.releases) if (!STAMP.test(r.stamp)) throw refuse(`lists ${JSON.stringify(r.stamp)}, which is not a stamp`, where(INDEX_FILE));
    await mkdir(opts.out, { recursive: true });
    // With --trust the one rollback rule judges (below); without, only the stamps the host lists can tell.
    if (!opts.trusted) await refuseRollback(opts.out, index, where(INDEX_FILE));
    const now = opts.now ?? (() => new Date());
    let indexSig: Buffer | null = null;
    let set: TrustedSet | null = null;
    let accepted: SignatureDoc | null = null;
    if (opts.trusted) {
      indexSig = await getWhole(origin, INDEX_SIG_FILE, MAX_SIG_BYTES).catch((e: Error) => {
        throw refuse(`cannot read it: ${e.message}`, where(INDEX_SIG_FILE));
      });
      // The one trust check, its mark the one `serve --trust` of this dist keeps beside it, raised by the newest origin
      // signature the dist holds (its own index's, or the origin's kept beside a partial copy's): an origin index
      // signed before it is a rollback, so what is kept is only ever replaced by something newer.
      try {
        set = await TrustedSet.open({ trusted: opts.trusted, store: fileMarkStore(opts.out), evidence: { indexSignedAt: await keptSignedAt(opts.out) } });
      } catch (e) {
        throw refuse((e as Error).message);
      }
      // Where the origin points is not what this copy will serve (a partial copy points at what it holds): the
      // pointers are checked against the mark once the local index is known, below.
      const v = await set.checkIndex(indexSig?.toString('utf8') ?? null, indexBytes, { stamp: index.next, pointers: null, now: now() });
      if (!v.ok) throw refuse(`refused (${v.reason}): ${v.message}`, where(INDEX_FILE));
      accepted = v.doc;
    } else {
      log(`[pull] no --trust: files are checked against the host's own sealed index.json, so this copy is exactly as trustworthy as the host`);
    }

    const wanted = opts.stamp === undefined ? index.releases : index.releases.filter((r) => r.stamp === opts.stamp);
    if (opts.stamp !== undefined && wanted.length === 0) {
      throw refuse(`lists no release ${opts.stamp} (it lists ${index.releases.map((r) => r.stamp).join(', ') || 'none'})`, where(INDEX_FILE));
    }
    const progress = opts.progress ?? new Progress(undefined, 'pull');
    const stamps: StampPulled[] = [];
    for (const release of wanted) {
      stamps.push(await pullStamp(origin, opts.out, release, { parallel, attempts: opts.attempts ?? 3, progress, where, log, trust: set, now }));
    }

    // index.json last: the origin's own bytes when every stamp it lists is here, else one naming only those that are.
    const held = await heldStamps(opts.out, index);
    const indexIsOrigin = held.length === index.releases.length;
    const served = indexIsOrigin ? index : localIndex(index, held);
    const text = indexIsOrigin ? indexBytes : Buffer.from(sealIndex(served));
    const pointers = { v1: served.v1, next: served.next };
    if (set) {
      const back = set.pointersBack(pointers);
      if (back) throw refuse(`refused (rollback): the index it would write ${back}`, join(opts.out, INDEX_FILE));
    }
    // An index of our own is signed by no one: the origin's signed index, verified above, is kept verbatim beside it
    // (before it, so a server that sees the new local index finds what vouches for it), for `serve --trust`.
    if (!indexIsOrigin && indexSig) {
      await writeAtomically(opts.out, ORIGIN_INDEX_FILE, indexBytes);
      await writeAtomically(opts.out, ORIGIN_INDEX_SIG_FILE, indexSig);
    }
    await writeAtomically(opts.out, INDEX_FILE, text);
    // The signature follows the bytes it signs (a reader seeing the new index with the old signature reads again);
    // an index of our own has none, so an older signature must not stay beside it.
    if (indexIsOrigin && indexSig) await writeAtomically(opts.out, INDEX_SIG_FILE, indexSig);
    else if (!indexIsOrigin) await rm(join(opts.out, INDEX_SIG_FILE), { force: true });
    // A full copy is the origin's own signed index: nothing else is needed, so nothing else is left.
    if (indexIsOrigin && indexSig) for (const f of [ORIGIN_INDEX_SIG_FILE, ORIGIN_INDEX_FILE]) await rm(join(opts.out, f), { force: true });
    // The mark follows what was written (the signature kept here covers a crash in between): a `serve --trust` of
    // this dist, restarted, never goes back past it.
    if (set && accepted) await set.accept(accepted, pointers);
    if (!indexIsOrigin) log(`[pull] index.json lists the ${held.length} of ${index.releases.length} stamps held here (v1 ${served.v1 ?? '-'}, next ${served.next ?? '-'})`);
    return { stamps, indexIsOrigin };
  } finally {
    origin.agent.destroy();
  }
}

/** The newest signed_at among the index signatures held in `out` (index.json.sig, the kept origin one), if any. */
async function keptSignedAt(out: string): Promise<string | undefined> {
  let newest: string | undefined;
  for (const f of [INDEX_SIG_FILE, ORIGIN_INDEX_SIG_FILE]) {
    const text = await readFile(join(out, f), 'utf8').catch(() => null);
    const doc = text === null ? null : parseSignature(text);
    if (typeof doc === 'object' && doc && (newest === undefined || doc.signed_at > newest)) newest = doc.signed_at;
  }
  return newest;
}

/**
 * Without --trust: a host whose index is older than the one this dist already serves is stale or rolled back: its
 * newest stamp is older, or it no longer lists the newest stamp served here. Refused, so a mirror never steps back.
 */
async function refuseRollback(out: string, index: DistIndex, file: string): Promise<void> {
  const text = await readFile(join(out, INDEX_FILE), 'utf8').catch(() => null);
  if (text === null) return;
  let local: DistIndex;
  try {
    local = openIndex(text);
  } catch {
    return; // a damaged local pointer is replaced by a checked one
  }
  const newest = (i: DistIndex) => i.releases.map((r) => r.stamp).sort().at(-1) ?? '';
  const mine = newest(local);
  if (mine && newest(index) < mine) {
    throw refuse(`its newest stamp ${newest(index) || '(none)'} is older than ${mine}, which ${join(out, INDEX_FILE)} already serves: a stale or rolled-back host`, file);
  }
}

/** The stamps of `index` held complete in `out`: their public manifest in place and hashing to what the index records. */
async function heldStamps(out: string, index: DistIndex): Promise<IndexedRelease[]> {
  const held: IndexedRelease[] = [];
  for (const r of index.releases) {
    const bytes = await readFile(join(out, r.stamp, PUBLIC_DIR, MANIFEST_FILE)).catch(() => null);
    if (bytes && sha256Hex(bytes) === r.sha256.public) held.push(r);
  }
  return held;
}

/** The origin's index cut down to the stamps held here: its pointers kept where they are held, else the newest held. */
function localIndex(index: DistIndex, held: IndexedRelease[]): DistIndex {
  const stamps = new Set(held.map((r) => r.stamp));
  const newest = (rs: IndexedRelease[]) => rs.map((r) => r.stamp).sort().at(-1) ?? null;
  return {
    format: index.format,
    v1: index.v1 !== null && stamps.has(index.v1) ? index.v1 : newest(held.filter((r) => r.publishable)),
    next: index.next !== null && stamps.has(index.next) ? index.next : newest(held),
    releases: held,
  };
}

/** fsyncs every file and folder under `dir`, `parallel` at a time, folders last. */
async function syncTree(dir: string, parallel: number): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  const dirs = [dir, ...entries.filter((e) => e.isDirectory()).map((e) => join(e.parentPath, e.name))];
  for (const list of [files, dirs]) {
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(parallel, list.length) }, async () => {
      while (next < list.length) await fsyncPath(list[next++]);
    }));
  }
}

interface StampContext {
  parallel: number;
  attempts: number;
  progress: Progress;
  where: (path: string) => string;
  log: (line: string) => void;
  /** With --trust: the one trust check (each stamp's manifest signature). */
  trust: TrustedSet | null;
  now: () => Date;
}

async function pullStamp(origin: Origin, out: string, release: IndexedRelease, ctx: StampContext): Promise<StampPulled> {
  const { stamp } = release;
  const manifestPath = `${stamp}/${PUBLIC_DIR}/${MANIFEST_FILE}`;
  const done: StampPulled = { stamp, files: 0, fetched: 0, fetchedBytes: 0, patched: 0, patchedBytes: 0, fullBytes: 0, linked: 0, present: 0, resumed: 0, complete: false };
  const final = join(out, stamp);

  // Already here: the manifest in place is the one the index vouches for (its files were checked before the rename).
  const inPlace = await readFile(join(final, PUBLIC_DIR, MANIFEST_FILE)).catch(() => null);
  if (inPlace && sha256Hex(inPlace) === release.sha256.public) {
    // Pulled earlier, perhaps without --trust: its signature must be here and good for `serve --trust` to take it.
    if (ctx.trust) {
      const sigPath = join(final, PUBLIC_DIR, MANIFEST_SIG_FILE);
      const mine = await readFile(sigPath, 'utf8').catch(() => null);
      const v = await ctx.trust.checkManifest(mine, { bytes: inPlace }, stamp, ctx.now());
      if (!v.ok) {
        const sig = await fetchManifestSignature(origin, stamp, inPlace, ctx);
        await writeAtomically(join(final, PUBLIC_DIR), MANIFEST_SIG_FILE, sig);
      }
    }
    ctx.log(`[pull] ${stamp}: already here`);
    return { ...done, complete: true };
  }
  if (await stat(final).catch(() => null)) {
    throw refuse(`holds another copy of ${stamp} than the origin's index.json lists (its public manifest is missing or differs): remove it to pull ${stamp} again`, final);
  }

  const manifestBytes = await getWhole(origin, manifestPath, MAX_MANIFEST_BYTES).catch((e: Error) => {
    throw refuse(`cannot read it: ${e.message}`, ctx.where(manifestPath));
  });
  if (!manifestBytes) throw refuse('not found', ctx.where(manifestPath));
  const got = sha256Hex(manifestBytes);
  if (got !== release.sha256.public) throw refuse(`sha256 ${got} does not match index.json (${release.sha256.public})`, ctx.where(manifestPath));
  let manifest: PublicManifest;
  try {
    manifest = JSON.parse(manifestBytes.toString('utf8')) as PublicManifest;
  } catch {
    throw refuse('not JSON', ctx.where(manifestPath));
  }
  if (manifest?.stamp !== stamp || typeof manifest.files !== 'object' || manifest.files === null) {
    throw refuse(`not the public manifest of ${stamp}`, ctx.where(manifestPath));
  }
  // Its signature is checked before a single file is fetched, and kept beside it for `serve --trust`.
  const manifestSig = ctx.trust ? await fetchManifestSignature(origin, stamp, manifestBytes, ctx) : null;
  const files = Object.entries(manifest.files).map(([path, want]) => {
    // The index vouches for these bytes, but a path must still never leave the stamp's folder.
    try {
      checkSourcePath('pull', path);
    } catch (e) {
      throw refuse((e as Error).message.replace(/^\[pull\] /, ''), ctx.where(manifestPath));
    }
    if (path === MANIFEST_FILE || !Number.isSafeInteger(want?.bytes) || want.bytes < 0 || !/^[0-9a-f]{64}$/.test(want?.sha256 ?? '')) {
      throw refuse(`lists ${JSON.stringify(path)} with no usable size and sha256`, ctx.where(manifestPath));
    }
    return { path, want };
  });
  // Largest first, so the last files in flight are small ones and the connections stay busy to the end.
  files.sort((a, b) => b.want.bytes - a.want.bytes || (a.path < b.path ? -1 : 1));
  // The patches are fetched only where they are used, while the file they make is placed (below). A copy holding no
  // predecessor uses none, and needs none: they only ever save transfer, so `register verify` passes a public-only
  // copy that lacks some (compiler/dist-manifest.ts), and what it serves is the manifest's files either way.
  const placed = files.filter((f) => !f.path.startsWith(`${PATCHES_DIR}/`));
  done.files = placed.length;

  const staging = join(out, STAGING, stamp);
  const stagedPublic = join(staging, PUBLIC_DIR);
  await mkdir(stagedPublic, { recursive: true });
  const local = await localCopies(out);
  const totalBytes = placed.reduce((s, f) => s + f.want.bytes, 0);
  done.fullBytes = totalBytes;
  let bytesDone = 0;
  ctx.progress.follow(`${stamp}: ${placed.length.toLocaleString('en-US')} files`, totalBytes, () => bytesDone, 'bytes');
  const refusals: string[] = [];
  let broken: Error | null = null;
  const tally = (how: Placed, want: { bytes: number }, dest: string): void => {
    if (how.kind === 'fetched') {
      flushSoon(dest);
      done.fetched++;
      done.fetchedBytes += how.bytes;
      if (how.resumed) done.resumed++;
      return;
    }
    if (how.kind === 'patched') {
      flushSoon(dest);
      done.patched++;
      done.patchedBytes += how.bytes;
    } else done[how.kind]++;
    bytesDone += want.bytes;
  };
  // Each fetched file is fsynced as soon as it is whole, one at a time, while the others are still arriving: the
  // flush to disk then overlaps the transfer instead of following it (one lane, so at most one of libuv's four
  // threads waits on the disk, and the writes of the other transfers are not held up behind several flushes).
  let flushed: Promise<void> = Promise.resolve();
  let flushError: Error | null = null;
  const flushSoon = (file: string): void => {
    flushed = flushed.then(() => fsyncPath(file)).catch((e: Error) => void (flushError ??= e));
  };
  const place = async (path: string, want: { bytes: number; sha256: string }, patch: PatchPlan | null): Promise<void> => {
    const dest = join(stagedPublic, path);
    const name = ctx.where(`${stamp}/${PUBLIC_DIR}/${path}`);
    try {
      tally(await placeFile(origin, `${stamp}/${PUBLIC_DIR}/${path}`, dest, want, local, ctx.attempts, (n) => (bytesDone += n), patch), want, dest);
    } catch (e) {
      if (e instanceof FetchRefusal) refusals.push(`${name}: ${e.message}`);
      else broken ??= new Error(`${name}: ${(e as Error).message}`);
    }
  };
  // patches.json first (checked like any file), so each file knows its patch before it is placed.
  let rest = placed;
  let plans = new Map<string, PatchPlan>();
  const listing = manifest.files[PATCHES_FILE];
  if (listing && placed.some((f) => f.path === PATCHES_FILE)) {
    await place(PATCHES_FILE, listing, null);
    rest = placed.filter((f) => f.path !== PATCHES_FILE);
    if (refusals.length === 0 && broken === null) {
      plans = await patchPlans(join(stagedPublic, PATCHES_FILE), manifest, rest, local, stagedPublic, `${stamp}/${PUBLIC_DIR}`, (line) => ctx.log(`[pull] ${stamp}: ${line}`));
    }
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rest.length && refusals.length === 0 && broken === null) {
      const { path, want } = rest[next++];
      await place(path, want, plans.get(path) ?? null);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(ctx.parallel, rest.length) }, worker));
  } finally {
    await flushed;
    ctx.progress.end();
  }
  if (refusals.length) {
    throw refuse(`refused ${refusals.length === 1 ? 'a file' : `${refusals.length} files`} of ${stamp} from the host; nothing of it is served:\n  ${refusals.join('\n  ')}`);
  }
  if (broken) throw refuse(`${(broken as Error).message}; run the pull again to resume (${stamp} is not served until it is complete)`);

  // What an earlier, interrupted run left that this manifest does not list (the origin rebuilt the stamp since) stays
  // behind: the stamp in place holds exactly the published files.
  const listed = new Set(files.map((f) => f.path));
  for (const e of await readdir(stagedPublic, { recursive: true, withFileTypes: true })) {
    const path = relative(stagedPublic, join(e.parentPath, e.name)).split(sep).join('/');
    if (e.isFile() && !listed.has(path)) await rm(join(stagedPublic, path), { force: true });
  }
  if (flushError) throw refuse(`cannot write it to disk: ${(flushError as Error).message}`, staging);
  // On disk before the stamp is renamed into place: files and folders, several at once (most files are already
  // flushed above, and fsync of a clean file returns at once; this also covers linked files and the folders).
  await syncTree(stagedPublic, ctx.parallel);
  if (manifestSig) await writeAtomically(stagedPublic, MANIFEST_SIG_FILE, manifestSig);
  await writeAtomically(stagedPublic, MANIFEST_FILE, manifestBytes);
  // Every file is in place and checked: the stamp appears in one rename.
  await rename(staging, final);
  await fsyncPath(out);
  await rmdir(join(out, STAGING)).catch(() => {}); // only when no other stamp's partial copy waits in it
  const moved = done.fetchedBytes + done.patchedBytes;
  ctx.log(
    `[pull] ${stamp}: ${done.files} files, ${done.linked} linked, ${done.patched} patched (${size(done.patchedBytes)}), ` +
      `${done.fetched} fetched whole (${size(done.fetchedBytes)}${done.resumed ? `, ${done.resumed} resumed` : ''})` +
      `${done.present ? `, ${done.present} already fetched` : ''}: moved ${size(moved)} of ${size(done.fullBytes)} ` +
      `(${((100 * moved) / Math.max(1, done.fullBytes)).toFixed(1)}%); every sha256 checked`,
  );
  return done;
}

/** The origin's signature of `stamp`'s public manifest, checked against the manifest's bytes; refused naming why. */
async function fetchManifestSignature(origin: Origin, stamp: string, manifestBytes: Uint8Array, ctx: StampContext): Promise<Buffer> {
  const path = manifestSigPath(stamp);
  const sig = await getWhole(origin, path, MAX_SIG_BYTES).catch((e: Error) => {
    throw refuse(`cannot read it: ${e.message}`, ctx.where(path));
  });
  const v = await ctx.trust!.checkManifest(sig?.toString('utf8') ?? null, { bytes: manifestBytes }, stamp, ctx.now());
  if (!v.ok) throw refuse(`refused (${v.reason}): ${v.message}`, ctx.where(`${stamp}/${PUBLIC_DIR}/${MANIFEST_FILE}`));
  return sig!;
}

/** A byte count as pull's summary line gives it. */
const size = (n: number): string => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} bytes`);

type Placed = { kind: 'fetched' | 'patched'; bytes: number; resumed: boolean } | { kind: 'linked' | 'present' };

/** How one file can be made from a patch: the held file it applies to, and the patch as the manifest lists it. */
interface PatchPlan {
  from: string;
  /** The patch's path in the stamp (under patches/), where it is fetched to, and its size and sha256. */
  path: string;
  url: string;
  dest: string;
  want: { bytes: number; sha256: string };
  /** Says why the patch was not used (one line naming the file), before the file is fetched whole. */
  fallBack: (why: string) => void;
}

/**
 * The patch of each file to be placed whose patches.json entry applies to a file held here (by its sha256, under any
 * name). None when zstd is not installed, or patches.json is not understood: each said once, in `log`.
 */
async function patchPlans(
  listingPath: string, manifest: PublicManifest, files: { path: string }[], local: Map<string, string>, stagedPublic: string,
  stampPublic: string, log: (line: string) => void,
): Promise<Map<string, PatchPlan>> {
  const plans = new Map<string, PatchPlan>();
  let doc: PatchesDoc;
  try {
    doc = JSON.parse(await readFile(listingPath, 'utf8')) as PatchesDoc;
    if (doc.format !== 1 || typeof doc.files !== 'object' || doc.files === null) throw new Error(`format ${JSON.stringify(doc.format)}, this pull reads 1`);
  } catch (e) {
    log(`${PATCHES_FILE} is not understood (${(e as Error).message}): every changed file is fetched whole`);
    return plans;
  }
  const held = new Map<string, string>();
  for (const [k, path] of local) if (!held.has(k.split(' ')[0])) held.set(k.split(' ')[0], path);
  for (const { path } of files) {
    const entry = doc.files[path];
    const from = typeof entry?.from_sha256 === 'string' ? held.get(entry.from_sha256) : undefined;
    const want = typeof entry?.patch === 'string' && entry.patch.startsWith(`${PATCHES_DIR}/`) ? manifest.files[entry.patch] : undefined;
    if (!from || !want) continue;
    plans.set(path, {
      from, path: entry.patch, url: `${stampPublic}/${entry.patch}`, dest: join(stagedPublic, entry.patch), want,
      fallBack: (why) => log(`${path}: fetched whole, its patch ${entry.patch} was not used: ${why}`),
    });
  }
  if (plans.size > 0 && !(await zstdVersion())) {
    log(`zstd is not installed (apt-get install zstd): ${plans.size} file(s) with a patch against a file held here are fetched whole`);
    plans.clear();
  }
  return plans;
}

/** zstd runs at once while patches are applied: each holds its reference file in memory, and takes a core. */
const applyLanes = createConcurrencyLimit(2);

/**
 * Makes `dest` from its patch: the patch fetched (or found from an interrupted run) and checked against the manifest,
 * applied to the held file into a temp name, and renamed only when the result is the manifest's bytes. Resolves with
 * the bytes received for the patch, or rejects saying why the file must be fetched whole.
 */
async function applyPlan(origin: Origin, plan: PatchPlan, dest: string, want: { bytes: number; sha256: string }, local: Map<string, string>, attempts: number): Promise<number> {
  // The patch is a file of the stamp like any other: already here from an interrupted run, held, or fetched.
  const got = await placeFile(origin, plan.url, plan.dest, plan.want, local, attempts, () => {});
  const received = got.kind === 'fetched' ? got.bytes : 0;
  const made = `${dest}.patched`;
  try {
    await mkdir(join(dest, '..'), { recursive: true });
    await applyLanes.run(() => applyPatch(plan.from, plan.dest, made));
    const sha256 = await sha256File(made);
    if (sha256 !== want.sha256) throw new Error(`what it makes has sha256 ${sha256}, not the manifest's ${want.sha256}`);
    await rename(made, dest);
  } finally {
    await rm(made, { force: true });
  }
  return received;
}

/**
 * Puts one file at `dest`: already there from an interrupted run, linked from a stamp held here, made from its patch,
 * or fetched.
 */
async function placeFile(
  origin: Origin, path: string, dest: string, want: { bytes: number; sha256: string },
  local: Map<string, string>, attempts: number, onBytes: (n: number) => void, patch: PatchPlan | null = null,
): Promise<Placed> {
  const st = await stat(dest).catch(() => null);
  if (st) {
    if (st.size === want.bytes && (await sha256File(dest)) === want.sha256) return { kind: 'present' };
    await rm(dest, { force: true });
  }
  const source = local.get(`${want.sha256} ${want.bytes}`);
  if (source) {
    await mkdir(join(dest, '..'), { recursive: true });
    // A hard link costs no space; across file systems (or where links are refused) a copy does the same. A source
    // that is not there (a patch a copy never fetched) leaves the file to be fetched.
    const made = await link(source, dest).catch(() => copyFile(source, dest)).then(() => true, () => false);
    if (made && (await sha256File(dest)) === want.sha256) return { kind: 'linked' };
    await rm(dest, { force: true });
  }
  if (patch) {
    try {
      return { kind: 'patched', bytes: await applyPlan(origin, patch, dest, want, local, attempts), resumed: false };
    } catch (e) {
      patch.fallBack((e as Error).message);
    }
  }
  let refetchedWhole = false;
  for (let attempt = 1; ; attempt++) {
    try {
      const f = await fetchFile(origin, path, dest, want, onBytes);
      return { kind: 'fetched', bytes: f.bytes, resumed: f.resumed };
    } catch (e) {
      // Bytes that continued a partial copy and then failed their hash: the partial copy may be the bad part.
      if (e instanceof FetchRefusal && e.resumed && !refetchedWhole) {
        refetchedWhole = true;
        continue;
      }
      if (e instanceof FetchRefusal || attempt >= attempts) throw e;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
}

/** Files of the stamps held in `out`, by sha256 and size: a file the next stamp lists unchanged is linked, not fetched. */
async function localCopies(out: string): Promise<Map<string, string>> {
  const copies = new Map<string, string>();
  const stamps = (await readdir(out).catch(() => [] as string[])).filter((n) => STAMP.test(n)).sort().reverse();
  for (const stamp of stamps) {
    const bytes = await readFile(join(out, stamp, PUBLIC_DIR, MANIFEST_FILE)).catch(() => null);
    if (!bytes) continue;
    let m: PublicManifest;
    try {
      m = JSON.parse(bytes.toString('utf8')) as PublicManifest;
    } catch {
      continue;
    }
    for (const [path, f] of Object.entries(m.files ?? {})) {
      try {
        checkSourcePath('pull', path);
      } catch {
        continue;
      }
      const k = `${f.sha256} ${f.bytes}`;
      if (!copies.has(k)) copies.set(k, join(out, stamp, PUBLIC_DIR, path));
    }
  }
  return copies;
}
