// Speaks HTTP with node:http and keeps the bytes as sent (fetch would decode a coded body): the body is decoded here
// by its Content-Encoding, and the decoded answer is validated against the OpenAPI document before a test sees it.
import { request, type Agent } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { validatePageResponse, validateResponse } from './openapi-validator.ts';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body bytes as they came off the wire. */
  wire: Buffer;
  /** The body after undoing Content-Encoding. */
  body: Buffer;
}

/** What a response is validated as: its method, path with query, status, headers and decoded body. */
export interface RawSample {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * One request to `url` (absolute); `headers` as given, nothing added. `validate` replaces the check made of the
 * decoded answer; its throw rejects the request.
 */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent; validate?: (sample: RawSample) => void } = {},
): Promise<RawResponse> {
  const method = opts.method ?? 'GET';
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: opts.headers ?? {}, ...(opts.agent ? { agent: opts.agent } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const wire = Buffer.concat(chunks);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        // A HEAD answer states its GET's coding but carries no bytes to decode.
        const coding = method === 'HEAD' ? undefined : headers['content-encoding'];
        let body: Buffer;
        try {
          body = coding === 'br' ? brotliDecompressSync(wire) : coding === 'gzip' ? gunzipSync(wire) : wire;
          const { pathname, search } = new URL(url);
          const sample: RawSample = { method, path: pathname + search, status: res.statusCode ?? 0, headers, body };
          // By default validated by family: the API against the OpenAPI document, pages against the page rules,
          // /healthz by neither.
          if (opts.validate) opts.validate(sample);
          else if (pathname.startsWith('/api/')) validateResponse(sample);
          else if (pathname !== '/healthz') validatePageResponse(sample);
        } catch (e) {
          reject(e);
          return;
        }
        resolve({ status: res.statusCode ?? 0, headers, wire, body });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
