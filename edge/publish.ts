// `register edge publish`: a compiled dist into R2, the public tree (index.json and each stamp's public/) into the
// public bucket and each stamp's private/ (manifest and provider notices) into the private bucket, never the other
// way. Files under a stamp never change, so they go up with `Cache-Control: public, max-age=31536000, immutable`;
// index.json (and its signature), which move the deployment to a new stamp, go last, with a short max-age, so the
// Worker never finds an index pointing at files not there yet. Every object carries its sha256 in its metadata, and
// one already there with the same sha256 is not uploaded again.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '#platform/crypto';
import { RegisterError } from '../common/errors.ts';
import { INDEX_FILE, INDEX_SIG_FILE, PRIVATE_DIR, PUBLIC_DIR } from '../common/dist-layout.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** index.json: re-read by every isolate at most once a second anyway; a cache in front keeps it a few seconds at most. */
const POINTER = 'public, max-age=5';

/** Where objects go: a local R2 bucket (miniflare's, for `edge dev`), or a real one through wrangler. */
export interface PublishTarget {
  /** The sha256 recorded on each object already there, by key (objects without one are left out). */
  stored(): Promise<Map<string, string>>;
  put(key: string, bytes: Uint8Array, meta: { cacheControl: string; contentType: string; sha256: string }): Promise<void>;
}

/** One file of a dist to publish, relative path first. */
interface DistFile {
  path: string;
  cacheControl: string;
}

export interface PublishReport {
  uploaded: number;
  unchanged: number;
  /** Bytes uploaded. */
  bytes: number;
  /** Bytes of every object published, uploaded or already there: what a publish into an empty bucket would move. */
  total: number;
  stamps: string[];
}

async function filesUnder(root: string, rel: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...(await filesUnder(root, path)));
    else if (e.isFile()) out.push(path);
  }
  return out.sort();
}

const isDir = (p: string) => stat(p).then((s) => s.isDirectory(), () => false);

/** The dist's files for each bucket, in upload order (the public bucket's pointer files last). */
async function distFiles(dist: string): Promise<{ public: DistFile[]; private: DistFile[]; stamps: string[] }> {
  if (!(await isDir(dist)) || !(await stat(join(dist, INDEX_FILE)).catch(() => null))) {
    throw new RegisterError('edge', `${dist} is not a compiled dist (no ${INDEX_FILE}): run register compile first`);
  }
  const stamps: string[] = [];
  const pub: DistFile[] = [];
  const priv: DistFile[] = [];
  for (const e of (await readdir(dist, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!e.isDirectory() || !(await isDir(join(dist, e.name, PUBLIC_DIR)))) continue;
    stamps.push(e.name);
    for (const path of await filesUnder(dist, `${e.name}/${PUBLIC_DIR}`)) pub.push({ path, cacheControl: IMMUTABLE });
    if (await isDir(join(dist, e.name, PRIVATE_DIR))) for (const path of await filesUnder(dist, `${e.name}/${PRIVATE_DIR}`)) priv.push({ path, cacheControl: 'private, no-store' });
  }
  pub.push({ path: INDEX_FILE, cacheControl: POINTER });
  if (await stat(join(dist, INDEX_SIG_FILE)).catch(() => null)) pub.push({ path: INDEX_SIG_FILE, cacheControl: POINTER });
  return { public: pub, private: priv, stamps };
}

const contentType = (path: string): string => (path.endsWith('.json') || path.endsWith('.sig') ? 'application/json' : 'application/octet-stream');

/** Uploads `files` of `dist` to `target` in order, skipping those already there with the same sha256. */
async function upload(dist: string, files: DistFile[], target: PublishTarget, stored: Map<string, string>, report: PublishReport, parallel: number): Promise<void> {
  let next = 0;
  const one = async (f: DistFile): Promise<void> => {
    const bytes = new Uint8Array(await readFile(join(dist, f.path)));
    const sha256 = sha256Hex(bytes);
    report.total += bytes.length;
    if (stored.get(f.path) === sha256) {
      report.unchanged++;
      return;
    }
    await target.put(f.path, bytes, { cacheControl: f.cacheControl, contentType: contentType(f.path), sha256 });
    report.uploaded++;
    report.bytes += bytes.length;
  };
  const worker = async (): Promise<void> => {
    while (next < files.length) await one(files[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, files.length) }, worker));
}

/**
 * Publishes `dist` (`publicTarget` null: its private part only): the private part first (a new stamp's notices are there before it is served), then the public
 * tree with its pointer files last, one after the other.
 */
export async function publishDist(dist: string, publicTarget: PublishTarget | null, privateTarget: PublishTarget | null, parallel = 32): Promise<PublishReport> {
  const files = await distFiles(dist);
  const report: PublishReport = { uploaded: 0, unchanged: 0, bytes: 0, total: 0, stamps: files.stamps };
  if (privateTarget) await upload(dist, files.private, privateTarget, await privateTarget.stored(), report, parallel);
  // None: the public tree is served from elsewhere (a Worker reading a static host), only the private part goes up.
  if (!publicTarget) return report;
  const stored = await publicTarget.stored();
  const pointers = files.public.filter((f) => !f.path.includes('/'));
  await upload(dist, files.public.filter((f) => f.path.includes('/')), publicTarget, stored, report, parallel);
  for (const p of pointers) await upload(dist, [p], publicTarget, stored, report, 1);
  return report;
}
