// The API reference at /docs: Swagger UI, bundled into this server's assets, rendering the live OpenAPI document.
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-bundle.js';
import 'swagger-ui-dist/swagger-ui.css';

// validatorUrl null: Swagger UI would otherwise send the document to an outside validator for its badge.
SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', validatorUrl: null, deepLinking: true, defaultModelsExpandDepth: 0 });
