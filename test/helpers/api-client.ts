// Speaks HTTP to a running server, or calls an app opened in process (in-process.ts), and validates every response
// against the OpenAPI document before a test sees it.
import { fetchAny } from './in-process.ts';
import { validateResponse } from './openapi-validator.ts';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  method?: string;
}

export function client(baseUrl: string, defaultKey: string | null = null) {
  return async function call(path: string, opts: CallOptions = {}): Promise<ApiResponse> {
    const method = opts.method ?? (opts.body !== undefined || opts.rawBody !== undefined ? 'POST' : 'GET');
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const key = opts.key === undefined ? defaultKey : opts.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (opts.body !== undefined || opts.rawBody !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = opts.rawBody ?? JSON.stringify(opts.body);
    }
    const res = await fetchAny(baseUrl + path, { method, headers, body });
    const text = await res.text();
    validateResponse({ method, path, status: res.status, headers: res.headers, body: text });
    const isJson = res.headers.get('content-type')?.startsWith('application/json') ?? false;
    return { status: res.status, headers: res.headers, text, json: text && isJson ? JSON.parse(text) : null };
  };
}
