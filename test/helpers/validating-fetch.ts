// A fetch for the typed client in tests: the real one (or an in-process app's, in-process.ts), with every response
// checked against the OpenAPI document (and recorded) before the client sees it, so a client test also proves the
// server kept the contract.
import { fetchAny } from './in-process.ts';
import { validateResponse } from './openapi-validator.ts';

export interface SeenResponse {
  method: string;
  path: string;
  query: string;
  status: number;
  headers: Headers;
}

export function validatingFetch(seen: SeenResponse[] = []): typeof fetch & { seen: SeenResponse[] } {
  const f = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetchAny(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? 'GET';
    validateResponse({ method, path: url.pathname, status: res.status, headers: res.headers, body: await res.clone().text() });
    seen.push({ method, path: url.pathname, query: url.search, status: res.status, headers: res.headers });
    return res;
  };
  return Object.assign(f, { seen });
}
