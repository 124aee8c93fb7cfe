// Stage 5: the changelog against the predecessor, pre-paged per stream (all events, one stream per event type,
// one per provider), so the runtime serves any page with one bucket read and never scans.
import { join } from 'node:path';
import { CHANGE_EVENT_TYPES, type ChangesDoc } from '../../common/dist-layout.ts';
import { fnv1a32 } from '../../common/hash.ts';
import { OrdinalFamilyWriter } from '../write/bucket-family-writer.ts';
import type { CompileContext } from '../context.ts';
import type { EntitiesBuilt } from './build-entities.ts';

/** Events per changelog bucket; /changes pages up to 1,000 events, so a page touches at most a few buckets. */
export const EVENTS_PER_BUCKET = 250;

/** File-name-safe, collision-free name of a stream (provider keys are free text). */
export const streamFileName = (stream: string): string =>
  `${stream.replace(/[^a-z0-9_]+/gi, '-').slice(0, 40)}-${fnv1a32(stream).toString(16).padStart(8, '0')}`;

export async function buildChanges(ctx: CompileContext, built: EntitiesBuilt, priorStamp: string | null): Promise<ChangesDoc> {
  ctx.progress.begin('build changelog');
  // provider_counts and streams are keyed by provider names: objects without a prototype, so `__proto__` is a key.
  const doc: ChangesDoc = { prior: priorStamp, counts: {}, provider_counts: Object.create(null), page_events: EVENTS_PER_BUCKET, streams: Object.create(null) };
  for (const t of CHANGE_EVENT_TYPES) doc.counts[t] = 0;
  for (const [stream, g] of [...built.streamGroups].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (g < 0) continue;
    const n = built.events.reduce((sum, spill) => sum + spill.count(g), 0);
    if (stream.startsWith('type:')) doc.counts[stream.slice(5)] = n;
    if (stream.startsWith('provider:')) {
      if (n === 0) continue;
      doc.provider_counts[stream.slice(9)] = n;
    }
    const writer = new OrdinalFamilyWriter({
      root: ctx.publicDir, name: `changes/${streamFileName(stream)}`, tmpDir: join(ctx.scratchDir, 'changes-writer'), perBucket: EVENTS_PER_BUCKET, ledger: ctx.written,
    });
    // Ranges in order: the stream reads as if one thread had built every partition in turn.
    for (const spill of built.events) {
      for (const event of spill.readLines(g)) writer.push(event);
      spill.release(g);
    }
    doc.streams[stream] = { total: n, family: await writer.finish() };
  }
  for (const spill of built.events) spill.dispose();
  ctx.progress.end();
  return doc;
}
