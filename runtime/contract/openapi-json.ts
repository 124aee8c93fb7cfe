// The OpenAPI document of the route table, and the bytes GET /openapi.json serves: built once, on first use.
import { allRoutes } from '../routes/index.ts';
import { buildDocument, type OpenApiDocument } from './document.ts';
import { keep } from '../kept-bytes.ts';

let doc: OpenApiDocument | undefined;
let text: string | undefined;
let bytes: Uint8Array | undefined;

/**
 * The document of the API's routes. Built on first use rather than at load: the route modules that serve it are
 * among those it is built from. The routes' options (body caps, secrets) change no operation, so defaults serve.
 */
export function openapiDocument(): OpenApiDocument {
  return (doc ??= buildDocument(allRoutes(openapiJsonBytes, 1)));
}

/** `JSON.stringify(openapiDocument())`, canonical (no whitespace): the document never changes while the process runs. */
export function openapiJsonText(): string {
  return (text ??= JSON.stringify(openapiDocument()));
}

/** The same text as UTF-8 bytes, one object for the process's life (kept-bytes.ts): a coded form is made once. */
export function openapiJsonBytes(): Uint8Array {
  return (bytes ??= keep(new TextEncoder().encode(openapiJsonText())));
}
