// Swagger UI's browser bundle ships no types; the page calls only its constructor, with its documented options.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const SwaggerUIBundle: (options: { url: string; dom_id: string; validatorUrl: string | null; deepLinking?: boolean; defaultModelsExpandDepth?: number }) => unknown;
  export default SwaggerUIBundle;
}
