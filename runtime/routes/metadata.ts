// Free metadata routes: /, /meta, /providers, /provider-notices/summary, /coverage (precomputed documents served as
// stored bytes), /key (the caller's own plan) and /openapi.json (the contract this server answers to).
import { ApiError } from '../api-error.ts';
import { openapiJsonText } from '../openapi/openapi-json.ts';
import type { RequestContext, RouteDef } from '../route.ts';
import { quotaPeriod } from '../state/quota-period.ts';

const doc = (path: string, auth: boolean, pick: (c: RequestContext) => string | null, missing?: ApiError): RouteDef => ({
  method: 'GET',
  path,
  auth,
  costing: false,
  // Free documents ignore query parameters (cache busters and the like): there is nothing to validate.
  prepare(c) {
    return {
      cost: 0,
      async run() {
        const file = pick(c);
        if (file === null) throw missing!;
        return { status: 200, body: await c.release.document(file) };
      },
    };
  },
});

export const metadataRoutes: RouteDef[] = [
  doc('/', false, (c) => c.release.doc.documents.root[c.ns]),
  doc('/meta', true, (c) => c.release.doc.documents.meta[c.ns]),
  doc('/providers', true, (c) => c.release.doc.documents.providers),
  doc('/coverage', true, (c) => c.release.doc.documents.coverage),
  doc(
    '/provider-notices/summary',
    true,
    (c) => c.release.doc.documents.notices_summary,
    new ApiError(503, 'summary_unavailable', 'This release ships no provider-notice summary.'),
  ),
  {
    method: 'GET',
    path: '/key',
    auth: true,
    costing: false,
    // A key's plan and credits need no release: they answer while none is loaded or while it cannot be opened.
    noRelease: true,
    prepare(c) {
      const k = c.key!;
      return {
        cost: 0,
        async run() {
          const period = quotaPeriod(c.now);
          const remaining = await c.services.store.remaining(k.id, period, k.quota);
          const body = JSON.stringify({
            id: k.id, name: k.name, plan: { quota: k.quota, rate: k.rate }, credits_remaining: remaining, period, provider: k.provider, expires_at: k.expires_at,
          });
          return { status: 200, body };
        },
      };
    },
  },
  {
    method: 'GET',
    path: '/openapi.json',
    auth: false,
    costing: false,
    noRelease: true,
    prepare() {
      return { cost: 0, run: async () => ({ status: 200, body: openapiJsonText }) };
    },
  },
];
