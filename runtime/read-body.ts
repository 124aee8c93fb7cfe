// Reading a request's body, for every route that takes one (POST /batch, /notices/ack, /contributions/check,
// /reconcile): one size cap, one content type check for JSON and one 400 for text that is not JSON.
import { ApiError } from './api-error.ts';
import type { AppRequest } from './route.ts';

const dec = new TextDecoder();

/** The body's bytes, with the size cap already enforced by the adapter (and again here). */
export async function readBodyBytes(request: AppRequest, maxBytes: number): Promise<Uint8Array> {
  const buf = new Uint8Array(await request.arrayBuffer());
  if (buf.length > maxBytes) throw new ApiError(413, 'payload_too_large', `The body is larger than ${maxBytes} bytes.`);
  return buf;
}

/** Body bytes as JSON, or the 400 every JSON body answers when they are not. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(bytes));
  } catch {
    throw new ApiError(400, 'invalid_body', 'The body is not valid JSON.');
  }
}

/** Reads the request body as JSON (Content-Type: application/json). */
export async function readJsonBody(request: AppRequest, maxBytes: number): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new ApiError(400, 'invalid_body', 'Send the body as application/json (Content-Type: application/json).');
  return parseJsonBody(await readBodyBytes(request, maxBytes));
}
