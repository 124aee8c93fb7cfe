// Content coding negotiation, shared by every adapter (Node's, the edge's): which coding a request accepts, the size
// below which bodies go out as they are, and how a coded answer's ETag is told apart from the identity one. Nothing
// here codes bytes: Node's adapter codes with node:zlib (compress.ts), the edge leaves it to the platform.
export type Coding = 'br' | 'gzip';

/**
 * Bodies smaller than this go out as they are. Below ~1 KiB an answer fits one TCP segment either way (a typical
 * MSS is 1,460 bytes), so coding it saves no round trip and only costs CPU and the coding's own header.
 */
export const MIN_COMPRESS_BYTES = 1024;

/**
 * The coding to answer with for an Accept-Encoding value (RFC 9110 §12.5.3), or null for identity: brotli where it
 * is acceptable at least as much as gzip (it codes JSON ~15-25% smaller), gzip (or x-gzip) otherwise; `q=0` refuses
 * a coding, and `*` stands for any coding not named.
 */
export function chooseCoding(acceptEncoding: string | null): Coding | null {
  if (!acceptEncoding) return null;
  let br = -1;
  let gzip = -1;
  let any = -1;
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!(q >= 0 && q <= 1)) continue;
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip, q);
    else if (name === '*') any = q;
  }
  if (br < 0) br = any;
  if (gzip < 0) gzip = any;
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return null;
}

// A coded answer is another representation of the resource, so it needs its own strong ETag (RFC 9110 §8.8.3): the
// identity tag with `.br` or `.gz` inside the quotes. `.` never occurs in the app's tags (base64url), so the adapter
// can take the suffix off a client's If-None-Match before the app compares tags, and put the client's back on a 304.
const SUFFIX: Record<Coding, string> = { br: '.br', gzip: '.gz' };
const CODED_TAG = /\.(br|gz)"/g;

/** The ETag of `etag`'s representation coded with `coding`. */
export function codedEtag(etag: string, coding: Coding): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}${SUFFIX[coding]}"` : etag;
}

/** If-None-Match with every coding suffix taken off, as the app compares tags. */
export function identityTags(ifNoneMatch: string): string {
  return ifNoneMatch.replace(CODED_TAG, '"');
}

/** The tag to send on a 304 for `etag`: as the client holds it (coded or not), so its cache entry is the one refreshed. */
export function tagAsHeld(ifNoneMatch: string | null, etag: string): string {
  if (ifNoneMatch === null || !etag.endsWith('"')) return etag;
  const base = etag.replace(/^W\//, '').slice(0, -1);
  for (const t of ifNoneMatch.split(',')) {
    const v = t.trim().replace(/^W\//, '');
    if (v === `${base}.br"` || v === `${base}.gz"`) return v;
  }
  return etag;
}
