// Shard packs shared with the predecessor. A weekly release changes a few percent of its entities, spread over
// every ID, so a release that wrote every shard anew shared no pack with the one before and a mirror or an edge
// moved every shard again. Instead a successor inherits its predecessor's packs: an unchanged shard stays where it
// is, and only changed and new shards (and tombstone stubs) go into the release's own, small packs. Inherited packs
// are hard links of the predecessor's files, so the stamp's folder still holds every file it names.
//
// Shards that changed leave dead bytes behind in the inherited packs. When less than MIN_REFERENCED_SHARE of the
// predecessor's pack bytes are still its own shards, the successor writes every shard anew (compaction), which a
// mirror pays for once in whole packs. The decision reads the predecessor's diff base only, so it depends on the chain
// of releases compiled, never on the machine: `register compile` compiles that chain oldest first.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { RegisterError } from '../../common/errors.ts';
import { MANIFEST_FILE, RELEASE_DOC, type ReleaseDoc } from '../../common/dist-layout.ts';
import type { ContentFile } from './content-file.ts';
import type { DiffBaseSource } from './diff-base.ts';
import type { PartManifest } from '../dist-manifest.ts';

/**
 * Below this share of the predecessor's pack bytes still referenced, its packs are not inherited. A week's churn of
 * 1–2% of the shards lets a chain run about ten releases between compactions, and keeps the dead bytes a mirror
 * stores under a third of the shards it serves.
 */
export const MIN_REFERENCED_SHARE = 0.75;

/** The predecessor's packs a successor inherits (none when there is no diff base, sharing is off, or it is due a compaction). */
export async function inheritedShards(prior: DiffBaseSource | null, priorFiles: PartManifest['files'] | null, shareShards: boolean): Promise<ContentFile[]> {
  if (!prior || !shareShards) return [];
  const { referenced, packs } = prior.shardBytes;
  if (packs === 0 || referenced < MIN_REFERENCED_SHARE * packs) return [];
  if (!priorFiles) throw new RegisterError('compile', 'cannot be read; recompile the prior release (or remove its folder) and retry', join(prior.publicDir, MANIFEST_FILE));
  const doc = JSON.parse(await readFile(join(prior.publicDir, RELEASE_DOC), 'utf8')) as ReleaseDoc;
  return doc.shard_packs.map((path) => {
    const f = priorFiles[path];
    if (!f) throw new RegisterError('compile', `does not list its shard pack ${path}; recompile the prior release (or remove its folder) and retry`, join(prior.publicDir, MANIFEST_FILE));
    return { path, bytes: f.bytes, sha256: f.sha256 };
  });
}

/**
 * Puts the inherited packs into this release's public folder: hard links (a copy where the file system has none),
 * each checked against the predecessor's manifest first, since this release's manifest will vouch for its bytes.
 */
export async function linkInheritedShards(prior: DiffBaseSource, packs: ContentFile[], publicDir: string): Promise<void> {
  const done = new Set<string>();
  for (const f of packs) {
    // Two packs of the same bytes (two ranges' empty last packs, in a dist an older compiler wrote) share one file.
    if (done.has(f.path)) continue;
    done.add(f.path);
    const from = join(prior.publicDir, f.path);
    const hash = createHash('sha256');
    await pipeline(createReadStream(from), hash);
    if (hash.digest('hex') !== f.sha256) throw new RegisterError('compile', 'does not match its manifest; recompile the prior release (or remove its folder) and retry', from);
    const to = join(publicDir, f.path);
    await mkdir(dirname(to), { recursive: true });
    await link(from, to).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'EXDEV' || e.code === 'EPERM' || e.code === 'ENOTSUP') return copyFile(from, to);
      throw e;
    });
  }
}
