// GET /notices and POST /notices/ack: a data provider's own notice batch, read from the private part of the dist
// (never the public part), with seen/acknowledged state kept durably in the state store.
import type { NoticeBatch } from '../../common/dist-layout.ts';
import { ApiError } from '../api-error.ts';
import { StateUnavailableError } from '../interfaces.ts';
import { allowOnly, intParam } from '../params.ts';
import type { RequestContext, RouteDef } from '../route.ts';
import { readJsonBody } from '../read-body.ts';

// Parsed batches per app (keyed by its services object), so two runtimes in one process never share one.
const cachesByApp = new WeakMap<object, Map<string, Promise<NoticeBatch | null>>>();
const MAX_ACK_IDS = 1000;
const MAX_TEXT = 2000;

function providerOf(c: RequestContext): string {
  const p = c.key?.provider;
  if (!p) throw new ApiError(403, 'provider_scope_required', 'This key is not a data provider key (it has no meta.provider).');
  return p;
}

/** The provider's current batch in the served release, parsed once per stamp. */
function currentBatch(c: RequestContext, provider: string): Promise<NoticeBatch | null> {
  const k = `${c.release.stamp}\u0000${provider}`;
  let batches = cachesByApp.get(c.services);
  if (!batches) cachesByApp.set(c.services, (batches = new Map()));
  let p = batches.get(k);
  if (!p) {
    p = c.services.readNotices(c.release.stamp, provider);
    p.catch(() => batches!.delete(k));
    batches.set(k, p);
    if (batches.size > 256) batches.delete(batches.keys().next().value!);
  }
  return p;
}

export function noticeRoutes(maxBodyBytes: number): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/notices',
      auth: true,
      costing: false,
      prepare(c) {
        const provider = providerOf(c);
        allowOnly(c.query, ['limit', 'offset']);
        const limit = intParam(c.query, 'limit', 1, 100, 25);
        const offset = intParam(c.query, 'offset', 0, 1e9, 0);
        return {
          cost: 0,
          async run() {
            const batch = await currentBatch(c, provider);
            const all = batch?.findings ?? [];
            const page = all.slice(offset, offset + limit);
            const ids = page.map((f) => f.finding_id);
            const state = batch ? await c.services.store.notices(provider, batch.batch_id, ids) : new Map();
            // Each finding shows its state as it was before this delivery; then the delivery marks them seen.
            const findings = page.map((f) => {
              const s = state.get(f.finding_id) ?? { seen_at: null, acknowledged_at: null };
              return { ...f, seen: s.seen_at !== null, seen_at: s.seen_at, acknowledged: s.acknowledged_at !== null, acknowledged_at: s.acknowledged_at };
            });
            // A HEAD delivers nothing, so it marks nothing seen (it answers the same status and headers as the GET).
            if (batch && ids.length && c.method !== 'HEAD') await c.services.store.markSeen(provider, batch.batch_id, ids, new Date(c.now).toISOString());
            const next = offset + page.length < all.length ? offset + page.length : null;
            const body = JSON.stringify({
              provider, batch_id: batch?.batch_id ?? null, generated_at: batch?.generated_at ?? null, findings, count: findings.length,
              total: all.length, limit, offset, next_offset: next,
            });
            return { status: 200, body };
          },
        };
      },
    },
    {
      method: 'POST',
      path: '/notices/ack',
      auth: true,
      costing: false,
      async prepare(c) {
        const provider = providerOf(c);
        if (!c.services.store.writable) {
          throw new ApiError(503, 'ack_storage_unavailable', 'This deployment has no writable state store for acknowledgements.');
        }
        const raw = await readJsonBody(c.request, maxBodyBytes);
        if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ApiError(400, 'invalid_body', 'The body must be an object.');
        const b = raw as Record<string, unknown>;
        for (const k of Object.keys(b)) if (!['batch_id', 'finding_ids', 'actor', 'note'].includes(k)) throw new ApiError(400, 'invalid_body', `Unknown field ${JSON.stringify(k.slice(0, 64))}.`);
        if (b.batch_id !== undefined && !Number.isSafeInteger(b.batch_id)) throw new ApiError(400, 'invalid_body', 'batch_id must be an integer.');
        if (b.finding_ids !== undefined && (!Array.isArray(b.finding_ids) || b.finding_ids.some((x) => typeof x !== 'string') || b.finding_ids.length > MAX_ACK_IDS)) {
          throw new ApiError(400, 'invalid_body', `finding_ids must be an array of at most ${MAX_ACK_IDS} strings.`);
        }
        if (b.batch_id === undefined && b.finding_ids === undefined) throw new ApiError(400, 'invalid_body', 'Give batch_id or finding_ids.');
        for (const k of ['actor', 'note'] as const) {
          if (b[k] !== undefined && b[k] !== null && (typeof b[k] !== 'string' || (b[k] as string).length > MAX_TEXT)) {
            throw new ApiError(400, 'invalid_body', `${k} must be a string of at most ${MAX_TEXT} characters.`);
          }
        }
        const batch = await currentBatch(c, provider);
        // The same answer whether or not the ID exists for another provider: nothing leaks across keys.
        if (b.batch_id !== undefined && (!batch || b.batch_id !== batch.batch_id)) {
          throw new ApiError(400, 'unknown_batch', "batch_id is not your current notice batch.");
        }
        const own = new Set(batch?.findings.map((f) => f.finding_id) ?? []);
        let ids: string[];
        if (b.finding_ids !== undefined) {
          ids = [...new Set(b.finding_ids as string[])];
          const stranger = ids.find((id) => !own.has(id));
          if (stranger !== undefined) throw new ApiError(400, 'unknown_finding', 'A finding ID is not in your current notice feed; nothing was acknowledged.', { detail: stranger.slice(0, 128) });
        } else ids = [...own];
        ids.sort();
        return {
          cost: 0,
          async run() {
            if (batch && ids.length) {
              try {
                await c.services.store.acknowledge(provider, batch.batch_id, ids, new Date(c.now).toISOString(), (b.actor as string) ?? null, (b.note as string) ?? null);
              } catch (e) {
                // Never a 200 for an acknowledgement that is not on disk.
                if (e instanceof StateUnavailableError) throw new ApiError(503, 'ack_storage_unavailable', 'The acknowledgement could not be stored; nothing was recorded. Retry later.');
                throw e;
              }
            }
            return { status: 200, body: JSON.stringify({ provider, batch_id: batch?.batch_id ?? null, acknowledged: ids.length, finding_ids: ids }) };
          },
        };
      },
    },
  ];
}
