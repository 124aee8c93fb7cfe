// The OpenAPI document of a route table, and the bytes GET /openapi.json serves: built once, on first use, from the
// table of the app that serves it (server.ts), or for the build and the tests from the full table (openapiDocument).
import { buildDocument, type OpenApiDocument } from './contract/document.ts';
import { markLongLived } from './long-lived-bytes.ts';
import type { RouteDef } from './route.ts';
import { allRoutes } from './routes/index.ts';

/**
 * The bytes of the document of `routes()`, made on first use rather than when the table is built: the route that
 * serves them is in the table. One object for the table's life (long-lived-bytes.ts): a coded form is made once.
 */
export function openapiBytesOf(routes: () => readonly RouteDef[]): () => Uint8Array {
  let bytes: Uint8Array | undefined;
  return () => (bytes ??= markLongLived(new TextEncoder().encode(JSON.stringify(buildDocument(routes())))));
}

let doc: OpenApiDocument | undefined;

/** The document of every route a server can answer (pages included), for the build and the tests. */
export function openapiDocument(): OpenApiDocument {
  return (doc ??= buildDocument(table()));
}

/** `JSON.stringify(openapiDocument())`, canonical (no whitespace), as every server serves it. */
export function openapiJsonText(): string {
  return JSON.stringify(openapiDocument());
}

// The routes' options (body caps, secrets) change no operation, so defaults serve.
const table = (): RouteDef[] => {
  const routes: RouteDef[] = allRoutes({ openapiJson: openapiBytesOf(() => routes), maxBodyBytes: 1 });
  return routes;
};
