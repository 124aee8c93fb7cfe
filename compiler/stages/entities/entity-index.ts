// The entity index: every stage-2 range's index entries (compiler/records/index-entry-log.ts), their pack numbers
// made release-wide, written as one hashed family.
import { join } from 'node:path';
import type { BucketFamily } from '../../../common/bucket-format.ts';
import { POINT_LOOKUP_BUCKET_BYTES, type CompileContext } from '../../context.ts';
import { HashedFamilyWriter } from '../../write/hashed-family-writer.ts';
import { readIndexEntryLog } from '../../records/index-entry-log.ts';
import type { EntitiesBuilt } from './build-entities.ts';

export async function writeEntityIndex(ctx: CompileContext, logs: EntitiesBuilt['index']): Promise<BucketFamily> {
  // Small buckets: at full size the runtime's cache holds a fraction of the index, so a lookup usually decodes one
  // bucket, and a small one decodes much faster.
  const writer = new HashedFamilyWriter({ root: ctx.publicDir, name: 'entities/index', tmpDir: join(ctx.scratchDir, 'index-writer'), targetBucketBytes: POINT_LOOKUP_BUCKET_BYTES, ledger: ctx.written });
  for (const { log, packBase } of logs) readIndexEntryLog(log, packBase, (id, value) => writer.add(id, value));
  return writer.finish();
}
