// Stage 3: the resolve index. Records from every partition meet here by key hash, one group at a time, so a
// provider ID that names two entities (the 409 case) is seen whole.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import { HashedFamilyWriter } from '../write/bucket-family-writer.ts';
import { POINT_LOOKUP_BUCKET_BYTES, type CompileContext } from '../context.ts';
import type { TablesRead } from './read-tables.ts';
import { parseRecords } from '../read/csv-reader.ts';
import { resolveKey } from '../../common/dist-layout.ts';

export async function buildResolve(ctx: CompileContext, read: TablesRead): Promise<{ family: BucketFamily; ambiguous: number }> {
  const writer = new HashedFamilyWriter({ root: ctx.publicDir, name: 'resolve/keys', tmpDir: join(ctx.scratchDir, 'resolve-writer'), targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger: ctx.written });
  let ambiguous = 0;
  ctx.progress.begin('build resolve index');
  for (let g = 0; g < read.resolve.groups; g++) {
    const byKey = new Map<string, [string, number][]>();
    const { c } = read.resolveLayout;
    // Lines are `<type index>,<bridges record as read>`; the key is rebuilt rather than stored twice.
    parseRecords(read.resolve.readText(g), true, (f) => {
      const key = resolveKey(f[c.provider], f[c.namespace], f[c.external_id]);
      const item: [string, number] = [f[c.reep_id], +f[0]];
      const list = byKey.get(key);
      if (list) list.push(item);
      else byKey.set(key, [item]);
    });
    read.resolve.release(g);
    for (const [key, list] of byKey) {
      // One candidate per final entity: a merged ID and its survivor under one key are the same entity.
      const byFinal = new Map<string, [string, number]>();
      for (const item of list) {
        const final = read.redirects.get(item[0])?.to ?? item[0];
        const prev = byFinal.get(final);
        if (!prev || item[0] === final || (prev[0] !== final && item[0] < prev[0])) byFinal.set(final, item);
      }
      const value = [...byFinal.values()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
      if (value.length > 1) ambiguous++;
      writer.add(key, value);
    }
  }
  read.resolve.dispose();
  const family = await writer.finish();
  ctx.progress.end();
  return { family, ambiguous };
}
