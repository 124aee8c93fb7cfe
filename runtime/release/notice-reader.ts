// Reads the private notice batches of a local dist, each checked before use: the stamp's private manifest against
// the sha256 index.json records for it, each batch against the private manifest (docs/integrity.md). A mirror never
// hosts them; a deployment reading a mirror points this at its local private part.
import { MANIFEST_FILE, PRIVATE_DIR, type NoticeBatch } from '../../common/dist-layout.ts';
import { MAX_NOTICE_FILE_BYTES } from '../../common/limits.ts';
import type { ShardSource } from '../interfaces.ts';
import { ArtefactError, fileOf } from '../read-errors.ts';
import type { ReleaseCatalog } from './catalog.ts';
import { parseVerified, readVerified, type ManifestEntry } from './open-release.ts';

/** Reads `provider`'s batch of `stamp`: null when the release ships none for it; throws ArtefactError when damaged. */
export type NoticeReader = (stamp: string, provider: string) => Promise<NoticeBatch | null>;

/** Private manifests by stamp, with the sha256 each was checked against; dropped when the index records another. */
const MAX_MANIFESTS = 16;

export function createNoticeReader(source: ShardSource, catalog: ReleaseCatalog): NoticeReader {
  const manifests = new Map<string, { sha256: string; files: Promise<Record<string, ManifestEntry>> }>();

  const privateFiles = async (stamp: string): Promise<Record<string, ManifestEntry>> => {
    const path = `${stamp}/${PRIVATE_DIR}/${MANIFEST_FILE}`;
    const sha256 = (await catalog.current())?.releases.find((r) => r.stamp === stamp)?.sha256.private;
    if (sha256 === undefined) throw new ArtefactError(fileOf(source, path), 'its stamp is not listed in index.json');
    const known = manifests.get(stamp);
    if (known?.sha256 === sha256) return known.files;
    const files = readVerified(source, path, sha256, 'index.json').then(
      (b) => parseVerified<{ files?: Record<string, ManifestEntry> }>(source, path, b).files ?? {},
      (err: unknown) => {
        // A dist made by `register pull` holds the public part only: say so, rather than leave "not found" to read
        // like damage.
        if (err instanceof ArtefactError && err.check === 'not found') {
          throw new ArtefactError(err.file, 'not found: this dist holds no private part (a public-only mirror, as `register pull` makes); /notices needs --private-dist with a copy of it');
        }
        throw err;
      },
    );
    files.catch(() => manifests.delete(stamp));
    if (manifests.size >= MAX_MANIFESTS) manifests.delete(manifests.keys().next().value!);
    manifests.set(stamp, { sha256, files });
    return files;
  };

  return async (stamp, provider) => {
    const name = `notices/${encodeURIComponent(provider)}.json`;
    const entry = (await privateFiles(stamp))[name];
    // The private manifest lists every batch the release ships: a provider absent from it has none (an empty feed).
    if (!entry) return null;
    const path = `${stamp}/${PRIVATE_DIR}/${name}`;
    // Read whole and parsed once per stamp: its size is bounded before a byte is read.
    if (entry.bytes > MAX_NOTICE_FILE_BYTES) throw new ArtefactError(fileOf(source, path), `${entry.bytes} bytes listed, more than ${MAX_NOTICE_FILE_BYTES}`);
    const batch = parseVerified<NoticeBatch>(source, path, await readVerified(source, path, entry.sha256, `${PRIVATE_DIR}/${MANIFEST_FILE}`));
    if (batch?.provider !== provider || !Number.isSafeInteger(batch.batch_id) || !Array.isArray(batch.findings)) {
      throw new ArtefactError(fileOf(source, path), `not the notice batch of ${provider}`);
    }
    return batch;
  };
}
