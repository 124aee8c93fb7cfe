// Reading a request's JSON body, for every route that takes one (POST /batch, POST /notices/ack): one content type
// check, one size cap and one 400 for text that is not JSON.
import { ApiError } from './api-error.ts';
import type { AppRequest } from './route.ts';

const dec = new TextDecoder();

/** Reads the request body as JSON, with the size cap already enforced by the adapter (and again here). */
export async function readJsonBody(request: AppRequest, maxBytes: number): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new ApiError(400, 'invalid_body', 'Send the body as application/json (Content-Type: application/json).');
  const buf = new Uint8Array(await request.arrayBuffer());
  if (buf.length > maxBytes) throw new ApiError(413, 'payload_too_large', `The body is larger than ${maxBytes} bytes.`);
  try {
    return JSON.parse(dec.decode(buf));
  } catch {
    throw new ApiError(400, 'invalid_body', 'The body is not valid JSON.');
  }
}
