// The edge's HTTP side of an answer, as runtime/node-adapter.ts writes it on Node: the same status, headers and body
// bytes. The edge answers identity and leaves compression to the platform: Cloudflare's front end (and miniflare's
// entry worker, which does as it does) hands a Worker `Accept-Encoding: br, gzip` whatever the client sent, and
// compresses the Worker's answer to what the client accepts. Coding here as well would code twice, or code for a
// client that did not ask. So a client that sends no Accept-Encoding gets Node's bytes and headers exactly; one
// that does gets the same body, coded by the platform (docs/edge.md, "Compression").
import { bodyLength, type Answer } from '../runtime/app.ts';
import { identityTags } from '../runtime/coding.ts';

const utf8 = new TextEncoder();

/** `request` as the app must see it: the coded forms of ETags a Node server issued (`….br"`) taken back to identity. */
export function appRequest(request: Request): Request {
  const inm = request.headers.get('if-none-match');
  if (inm === null) return request;
  const plain = identityTags(inm);
  if (plain === inm) return request;
  const copy = new Request(request);
  copy.headers.set('if-none-match', plain);
  return copy;
}

/** The Response for the app's `answer`. */
export function edgeResponse(answer: Answer): Response {
  const out = answer.headers;
  // A HEAD answer states its GET's headers, and is sent without the body.
  const head = answer.body === null && answer.omitted !== undefined;
  const raw = answer.body ?? answer.omitted ?? null;
  const bytes = typeof raw === 'string' ? utf8.encode(raw) : raw;
  // Node names Accept-Encoding in Vary on every answer with a body (or standing for one): the platform's coding
  // depends on it here just the same.
  if (answer.status !== 204) out.vary = out.vary ? `${out.vary}, Accept-Encoding` : 'Accept-Encoding';
  if (bytes) out['content-length'] = String(bodyLength(bytes));
  else if (answer.status !== 304 && answer.status !== 204 && out['content-length'] === undefined) out['content-length'] = '0';
  const body = head || !bytes ? null : Array.isArray(bytes) ? new Blob(bytes as BlobPart[]) : (bytes as BodyInit);
  return new Response(body, { status: answer.status, headers: out });
}
