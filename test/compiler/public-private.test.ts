// Nothing from the private part of a compiled release (provider notices) appears in its public part, which is all
// a mirror uploads: no file, no title, no provider ref, no payload.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeHandWorld, STAMPS, type World } from '../fixtures/hand-world.ts';

let world: World;
beforeAll(async () => {
  world = await makeHandWorld();
});

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

describe('public and private parts', () => {
  it('keeps notice batches under private/ and no trace of them under public/', () => {
    const stampDir = join(world.dist, STAMPS[1]);
    const privateFiles = files(join(stampDir, 'private')).map((f) => relative(stampDir, f));
    // Besides the notices, only the compile-internal diff base (two files per partition and its meta) lives there.
    const notDiffBase = privateFiles.filter((f) => !f.startsWith('private/diff-base/'));
    expect(notDiffBase.sort()).toEqual(['private/manifest.json', 'private/notices/fbref.json', 'private/notices/opta.json']);
    expect(privateFiles.length - notDiffBase.length).toBe(2 * 256 + 1);
    const publicText = files(join(stampDir, 'public')).map((f) => readFileSync(f).toString('latin1')).join('\n');
    const batch = JSON.parse(readFileSync(join(stampDir, 'private/notices/opta.json'), 'utf8'));
    for (const f of batch.findings) {
      for (const secret of [f.finding_id, f.title, f.provider_ref, f.payload_hash, JSON.stringify(f.payload), JSON.stringify(f.source)]) {
        expect(publicText.includes(secret), `public part leaks ${secret}`).toBe(false);
      }
    }
    // The public summary has counts only.
    const summary = JSON.parse(readFileSync(join(stampDir, 'public/documents/provider-notices-summary.json'), 'utf8'));
    expect(summary.summary).toEqual({ providers: 2, findings: 4, by_provider: { fbref: 1, opta: 3 }, by_severity: { medium: 4 }, by_kind: { score_outlier: 4 } });
  });

  it('the public manifest lists only public files, so a mirror that uploads it gets nothing private', () => {
    const m = JSON.parse(readFileSync(join(world.dist, STAMPS[1], 'public', 'manifest.json'), 'utf8'));
    expect(Object.keys(m.files).some((f) => f.includes('notices/'))).toBe(false);
  });
});
