// Stage 5: the changelog against the predecessor, pre-paged per stream (all events, one stream per event type,
// one per provider), so the runtime serves any page with one bucket read and never scans. Stage 2 wrote the
// events (compiler/records/change-events.ts).
import { join } from 'node:path';
import { CHANGE_EVENT_TYPES, type ChangesDoc } from '../../common/dist-layout.ts';
import { fnv1a32 } from '../../common/hash.ts';
import { OrdinalFamilyWriter } from '../write/ordinal-family-writer.ts';
import type { CompileContext } from '../context.ts';
import type { ChangeEvents } from '../records/change-events.ts';

/** Events per changelog bucket; /changes pages up to 1,000 events, so a page touches at most a few buckets. */
const EVENTS_PER_BUCKET = 250;

/** File-name-safe, collision-free name of a stream (provider keys are free text). */
const streamFileName = (stream: string): string =>
  `${stream.replace(/[^a-z0-9_]+/gi, '-').slice(0, 40)}-${fnv1a32(stream).toString(16).padStart(8, '0')}`;

export async function buildChanges(ctx: CompileContext, events: ChangeEvents): Promise<ChangesDoc> {
  // provider_counts and streams are keyed by provider names: objects without a prototype, so `__proto__` is a key.
  const doc: ChangesDoc = { prior: ctx.prior?.stamp ?? null, counts: {}, provider_counts: Object.create(null), page_events: EVENTS_PER_BUCKET, streams: Object.create(null) };
  for (const t of CHANGE_EVENT_TYPES) doc.counts[t] = 0;
  for (const stream of events.streams()) {
    const n = events.count(stream);
    if (stream.startsWith('type:')) doc.counts[stream.slice(5)] = n;
    if (stream.startsWith('provider:')) {
      if (n === 0) continue;
      doc.provider_counts[stream.slice(9)] = n;
    }
    const writer = new OrdinalFamilyWriter({
      root: ctx.publicDir, name: `changes/${streamFileName(stream)}`, tmpDir: join(ctx.scratchDir, 'changes-writer'), perBucket: EVENTS_PER_BUCKET, ledger: ctx.written,
    });
    events.forEach(stream, (event) => writer.push(event));
    doc.streams[stream] = { total: n, family: await writer.finish() };
  }
  events.dispose();
  return doc;
}
