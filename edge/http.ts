// The edge's side of a request before the app sees it. The edge answers identity and leaves compression to the
// platform (runtime/app.ts toResponse, `codedAhead`), so the ETags a Node server issued for coded bodies (`….br"`)
// are taken back to identity here: a client that moved between the two still gets its 304.
import { identityTags } from '../runtime/coding.ts';

/** `request` as the app must see it: the coded forms of ETags a Node server issued taken back to identity. */
export function appRequest(request: Request): Request {
  const inm = request.headers.get('if-none-match');
  if (inm === null) return request;
  const plain = identityTags(inm);
  if (plain === inm) return request;
  const copy = new Request(request);
  copy.headers.set('if-none-match', plain);
  return copy;
}
