// Free metadata routes: /, /meta, /providers, /provider-notices/summary, /coverage (precomputed documents served as
// stored bytes) and /openapi.json (the contract this server answers to).
import { ApiError } from '../api-error.ts';
import { openapiJsonText } from '../openapi/openapi-json.ts';
import { documentEtag } from '../response-headers.ts';
import type { RequestContext, RouteDef } from '../route.ts';

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
        const body = await c.release.document(file);
        // The tag was fixed when the document was compiled: its sha256 in the manifest the bytes were checked against.
        const sha256 = c.release.documentSha256(file);
        return { status: 200, body, headers: sha256 ? { etag: documentEtag(sha256) } : undefined };
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
    path: '/openapi.json',
    auth: false,
    costing: false,
    noRelease: true,
    prepare() {
      return { cost: 0, run: async () => ({ status: 200, body: openapiJsonText }) };
    },
  },
];
