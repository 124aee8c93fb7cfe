// Stage 3: the resolve index. Records from every partition meet here by key hash, one group at a time, so a
// provider ID that names two entities (the 409 case) is seen whole.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import { HashedFamilyWriter } from '../write/bucket-family-writer.ts';
import { POINT_LOOKUP_BUCKET_BYTES, type CompileContext } from '../context.ts';
import type { TablesRead } from './read-tables.ts';

export async function buildResolve(ctx: CompileContext, read: TablesRead): Promise<{ family: BucketFamily; ambiguous: number }> {
  const writer = new HashedFamilyWriter({ root: ctx.publicDir, name: 'resolve/keys', tmpDir: join(ctx.scratchDir, 'resolve-writer'), targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger: ctx.written });
  let ambiguous = 0;
  ctx.progress.begin('build resolve index');
  for (let g = 0; g < read.resolve.groups; g++) {
    const byKey = new Map<string, [string, number][]>();
    for (const [key, id, type] of read.resolve.read<[string, string, number]>(g)) {
      const list = byKey.get(key);
      if (list) list.push([id, type]);
      else byKey.set(key, [[id, type]]);
    }
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
