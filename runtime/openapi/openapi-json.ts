// The OpenAPI document as the bytes GET /openapi.json serves: serialised once at load, canonical (no whitespace).

import { openapiDocument } from './openapi-document.ts';

/** `JSON.stringify(openapiDocument)`: computed once because the document never changes while the process runs. */
export const openapiJsonText: string = JSON.stringify(openapiDocument);
