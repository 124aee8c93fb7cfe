// The router answers exactly the paths the OpenAPI document declares: no undocumented route, no documented
// route left unserved.
import { describe, expect, it } from 'vitest';
import { OPENAPI_ROUTES } from '../../runtime/openapi/openapi-document.ts';
import { allRoutes } from '../../runtime/routes/index.ts';

describe('route table', () => {
  it('is the same set as the OpenAPI paths', () => {
    const routes = allRoutes(1024).map((r) => `${r.method} ${r.path}`).sort();
    const documented = OPENAPI_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    expect(routes).toEqual(documented);
  });
});
