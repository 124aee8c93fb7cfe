// A runtime must never serve a release of a dist format it does not read (2 stored bridges compactly, 3 changed the
// checksums to CRC-32), and a compile must redo a stamp left in another format rather than count it as compiled.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST_FORMAT } from '../../../common/dist-layout.ts';
import { compileAll } from '../../../compiler/compile.ts';
import { loadRelease } from '../../../runtime/release/open-release.ts';
import { createBucketCache } from '../../../runtime/release/bucket-family-reader.ts';
import { createFsSource } from '../../../runtime/source/fs-source.ts';
import { writeHandRelease } from '../../fixtures/hand-release.ts';

const STAMP = '20261001T000000Z';

describe('dist format', () => {
  it('the runtime refuses a release of another format, naming both', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-format-'));
    const doc = Buffer.from(JSON.stringify({ format: 'identity-register-dist/1', stamp: STAMP }));
    mkdirSync(join(root, STAMP, 'public'), { recursive: true });
    writeFileSync(join(root, STAMP, 'public', 'release.json'), doc);
    const sha256 = createHash('sha256').update(doc).digest('hex');
    const manifest = Buffer.from(JSON.stringify({ files: { 'release.json': { bytes: doc.length, sha256 } } }));
    writeFileSync(join(root, STAMP, 'public', 'manifest.json'), manifest);
    const source = createFsSource({ root });
    await expect(loadRelease(source, STAMP, createHash('sha256').update(manifest).digest('hex'), createBucketCache(1 << 20))).rejects.toThrow(
      `${join(root, STAMP, 'public', 'release.json')}: format "identity-register-dist/1", this runtime reads ${DIST_FORMAT}; recompile it`,
    );
    await source.close();
  });

  it('compileAll recompiles a stamp whose manifest has another format', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ir-format-'));
    const releases = join(root, 'releases');
    writeHandRelease(releases, STAMP, { entities: [['rt000000000000a1', 'team', 'active', 'Alpha', '', '', '', '', '']] }, { gzip: true });
    const dist = join(root, 'dist');
    await compileAll({ releases, dist, progress: false });
    expect(await compileAll({ releases, dist, progress: false })).toEqual([]); // up to date: nothing to do
    const manifest = join(dist, STAMP, 'manifest.json');
    writeFileSync(manifest, JSON.stringify({ ...JSON.parse(readFileSync(manifest, 'utf8')), format: 'identity-register-dist/1' }));
    const again = await compileAll({ releases, dist, progress: false });
    expect(again.map((r) => r.stamp)).toEqual([STAMP]);
    expect(JSON.parse(readFileSync(manifest, 'utf8')).format).toBe(DIST_FORMAT);
  });
});
