// Free metadata routes: /, /meta, /providers, /provider-notices/summary, /coverage (precomputed documents served as
// stored bytes) and /openapi.json (the contract this server answers to).
import { ApiError } from '../api-error.ts';
import { DOCUMENT_HEADERS, errorResponse, ok, responseRef, STAMP_IF_LOADED, type RouteOperation } from '../contract/http-parts.ts';
import * as S from '../contract/schemas.ts';
import { documentEtag, signedDocumentEtag } from '../response-headers.ts';
import { defineRoute, type RequestContext, type RouteDef } from '../route.ts';

/** A precomputed document's operation: free, its 200 tagged, 304 on a match, 401 when keyed, 503 without a release. */
const docOperation = (
  operationId: string,
  summary: string,
  description: string,
  body: [string, S.Schema],
  auth = true,
  unavailable: RouteOperation['responses'][string] = responseRef('IndexUnavailable'),
): RouteOperation & { cost: 0 } => ({
  operationId,
  tag: 'metadata',
  summary,
  description,
  cost: 0,
  responses: {
    '200': ok(body[0], S.ref(body[1]), DOCUMENT_HEADERS),
    '304': responseRef('DocumentNotModified'),
    ...(auth ? { '401': responseRef('Unauthorized') } : {}),
    '503': unavailable,
  },
});

/**
 * A document with `"signing_key_id":"<id>"` added as its last field: the key whose signature over the release's
 * public manifest this server verified. Added at answer time, not compiled in, so an unsigned or re-signed stamp
 * keeps the same compiled bytes (and a server without --trust answers exactly them).
 */
function withSigningKeyId(body: Uint8Array, keyId: string): Uint8Array {
  const end = body.lastIndexOf(0x7d); // the document's closing brace
  const field = new TextEncoder().encode(`,"signing_key_id":${JSON.stringify(keyId)}`);
  const out = new Uint8Array(body.length + field.length);
  out.set(body.subarray(0, end));
  out.set(field, end);
  out.set(body.subarray(end), end + field.length);
  return out;
}

const doc = (
  path: string, auth: boolean, operation: RouteOperation & { cost: 0 }, pick: (c: RequestContext) => string | null, missing?: ApiError, namesSigner = false,
): RouteDef => defineRoute({
  method: 'GET',
  path,
  auth,
  operation,
  // Free documents ignore query parameters (cache busters and the like): there is nothing to validate.
  prepare(c) {
    return {
      async run() {
        const file = pick(c);
        if (file === null) throw missing!;
        const body = await c.release.document(file);
        // The tag was fixed when the document was compiled: its sha256 in the manifest the bytes were checked against.
        const sha256 = c.release.documentSha256(file);
        const signer = namesSigner ? c.release.signingKeyId : null;
        if (signer !== null) return { status: 200, body: withSigningKeyId(body, signer), headers: sha256 ? { etag: signedDocumentEtag(sha256, signer) } : undefined };
        return { status: 200, body, headers: sha256 ? { etag: documentEtag(sha256) } : undefined };
      },
    };
  },
});

/**
 * The metadata routes. `openapiJson` gives the bytes of GET /openapi.json: the document is built from the route table
 * these routes are part of, so the table's builder hands it in (runtime/openapi-json.ts) rather than this module
 * importing it back.
 */
export const metadataRoutes = (openapiJson: () => Uint8Array): RouteDef[] => [
  doc(
    '/',
    false,
    docOperation(
      'getIndex',
      'Service identity and the served release',
      'Public (no key). Reports the namespace (`v1` or `next`) and the release it serves.',
      ['Service index.', S.IndexResponse],
      false,
    ),
    (c) => c.release.doc.documents.root[c.ns],
    undefined,
    true,
  ),
  doc('/meta', true, docOperation('getMeta', 'API and release metadata', 'No lookup cost.', ['Metadata.', S.MetaResponse]), (c) => c.release.doc.documents.meta[c.ns], undefined, true),
  doc(
    '/providers',
    true,
    docOperation('listProviders', 'Provider rollups', 'No lookup cost. Every valid key reads the same complete provider crosswalk.', ['Provider rollups.', S.ProvidersResponse]),
    (c) => c.release.doc.documents.providers,
  ),
  doc(
    '/coverage',
    true,
    docOperation(
      'getCoverage',
      'Coverage counts of the served release',
      'No lookup cost. From coverage.csv, or counts computed from the release when the file is absent.',
      ['Coverage.', S.CoverageResponse],
    ),
    (c) => c.release.doc.documents.coverage,
  ),
  doc(
    '/provider-notices/summary',
    true,
    docOperation(
      'getProviderNoticeSummary',
      'Redacted provider-notice counts',
      'No lookup cost. Aggregate counts only: no titles, refs or payloads.',
      ['Redacted summary.', S.ProviderNoticeSummaryResponse],
      true,
      errorResponse(
        'The summary artefact (or the release) is not generated, or a compiled file it needs failed its check or cannot be fetched.',
        ['summary_unavailable', 'index_unavailable', 'artefact_corrupt', 'upstream_unavailable'],
        STAMP_IF_LOADED,
      ),
    ),
    (c) => c.release.doc.documents.notices_summary,
    new ApiError(503, 'summary_unavailable', 'This release ships no provider-notice summary.'),
  ),
  defineRoute({
    method: 'GET',
    path: '/openapi.json',
    auth: false,
    noRelease: true,
    operation: {
      operationId: 'getOpenApi',
      tag: 'metadata',
      summary: 'This OpenAPI document',
      description: 'Public (no key), no cost; served from memory, so it answers even before a release is loaded.',
      cost: 0,
      responses: { '200': ok('The OpenAPI document.', S.ref(S.OpenApiDocumentBody), STAMP_IF_LOADED) },
    },
    prepare() {
      return { run: async () => ({ status: 200, body: openapiJson() }) };
    },
  }),
];
