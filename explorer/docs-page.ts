// The API reference at /docs: Swagger UI (its shipped browser bundle, served by this server before this script)
// rendering the live OpenAPI document.

/** Swagger UI's bundle defines this global; the page calls only its constructor, with its documented options. */
declare const SwaggerUIBundle: (options: { url: string; dom_id: string; validatorUrl: string | null; deepLinking?: boolean; defaultModelsExpandDepth?: number }) => unknown;

// validatorUrl null: Swagger UI would otherwise send the document to an outside validator for its badge.
SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', validatorUrl: null, deepLinking: true, defaultModelsExpandDepth: 0 });
