// GET /notices and POST /notices/ack: a data provider's own notice batch, read from the private part of the dist
// (never the public part), with seen/acknowledged state kept durably in the state store.
import type { NoticeBatch } from '../../common/dist-layout.ts';
import { ApiError } from '../api-error.ts';
import { StateUnavailableError } from '../interfaces.ts';
import { errorResponse, ok, responseRef, STAMP_IF_LOADED } from '../contract/http-parts.ts';
import { NoticesLimit, NoticesOffset } from '../contract/parameters.ts';
import { bodyChecker, parameterReader } from '../contract/request-check.ts';
import { AckRequest, AckResponse, NoticesPage, ref } from '../contract/schemas.ts';
import { readJsonBody } from '../read-body.ts';
import { defineRoute, type RequestContext, type RouteDef } from '../route.ts';

// Parsed batches per app (keyed by its services object), so two runtimes in one process never share one.
const cachesByApp = new WeakMap<object, Map<string, Promise<NoticeBatch | null>>>();
const PARAMETERS = [NoticesLimit, NoticesOffset] as const;
const readParameters = parameterReader(PARAMETERS);
const checkAck = bodyChecker(AckRequest);

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
    defineRoute({
      method: 'GET',
      path: '/notices',
      auth: true,
      operation: {
        operationId: 'listNotices',
        tag: 'notices',
        summary: "The provider's own notice feed",
        description:
          "No lookup cost; provider-scoped key (`meta.provider`) required. Returns a page of the provider's current " +
          'batch, each finding showing its state before this delivery; the delivery then marks them seen.',
        cost: 0,
        parameters: PARAMETERS,
        responses: {
          '200': ok('A page of findings.', ref(NoticesPage)),
          '400': errorResponse('`limit` or `offset` out of range.', readParameters.codes),
          '401': responseRef('Unauthorized'),
          '403': responseRef('ProviderScopeRequired'),
          '503': responseRef('IndexUnavailable'),
        },
      },
      prepare(c) {
        const provider = providerOf(c);
        const { limit, offset } = readParameters(c);
        return {
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
    }),
    defineRoute({
      method: 'POST',
      path: '/notices/ack',
      auth: true,
      operation: {
        operationId: 'ackNotices',
        tag: 'notices',
        summary: "Acknowledge findings of the provider's current batch",
        description:
          "No lookup cost; provider-scoped key required. Every ID must be in the caller's own current feed, else 400 " +
          '`unknown_batch` / `unknown_finding`, without saying whether it exists for anyone else. Durable (fsynced) ' +
          'before the 200; acknowledging twice is harmless and keeps the first `acknowledged_at`.',
        cost: 0,
        requestBody: AckRequest,
        responses: {
          '200': ok('What was acknowledged.', ref(AckResponse)),
          '400': errorResponse("Malformed body, or a batch or finding not in the caller's current feed.", [...checkAck.codes, 'unknown_batch', 'unknown_finding']),
          '401': responseRef('Unauthorized'),
          '403': responseRef('ProviderScopeRequired'),
          '413': responseRef('PayloadTooLarge'),
          '503': errorResponse(
            'The deployment has no writable state store (e.g. a read-only mirror), no release is loaded, or the ' +
              'notice batch (or a file vouching for it) failed its check.',
            ['ack_storage_unavailable', 'index_unavailable', 'artefact_corrupt', 'upstream_unavailable'],
            STAMP_IF_LOADED,
          ),
        },
      },
      async prepare(c) {
        const provider = providerOf(c);
        if (!c.services.store.writable) {
          throw new ApiError(503, 'ack_storage_unavailable', 'This deployment has no writable state store for acknowledgements.');
        }
        const b = checkAck(await readJsonBody(c.request, maxBodyBytes));
        // TypeBox's compiler does not read `anyOf` beside an object's properties: the "one of the two" rule here.
        if (b.batch_id === undefined && b.finding_ids === undefined) throw new ApiError(400, 'invalid_body', 'Give batch_id or finding_ids.');
        const batch = await currentBatch(c, provider);
        // The same answer whether or not the ID exists for another provider: nothing leaks across keys.
        if (b.batch_id !== undefined && (!batch || b.batch_id !== batch.batch_id)) {
          throw new ApiError(400, 'unknown_batch', "batch_id is not your current notice batch.");
        }
        const own = new Set(batch?.findings.map((f) => f.finding_id) ?? []);
        let ids: string[];
        if (b.finding_ids !== undefined) {
          ids = [...new Set(b.finding_ids)];
          const stranger = ids.find((id) => !own.has(id));
          if (stranger !== undefined) throw new ApiError(400, 'unknown_finding', 'A finding ID is not in your current notice feed; nothing was acknowledged.', { detail: stranger.slice(0, 128) });
        } else ids = [...own];
        ids.sort();
        return {
          async run() {
            if (batch && ids.length) {
              try {
                await c.services.store.acknowledge(provider, batch.batch_id, ids, new Date(c.now).toISOString(), b.actor ?? null, b.note ?? null);
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
    }),
  ];
}
