// Content coding for the Node adapter: which coding a request accepts, the fixed-level gzip and brotli it is
// written with, and how a coded answer's ETag is told apart from the identity one.
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, createBrotliCompress, createGzip, gzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';
import { isKept } from './kept-bytes.ts';

export type Coding = 'br' | 'gzip';

/**
 * Bodies smaller than this go out as they are. Below ~1 KiB an answer fits one TCP segment either way (a typical
 * MSS is 1,460 bytes), so coding it saves no round trip and only costs CPU and the coding's own header.
 */
export const MIN_COMPRESS_BYTES = 1024;

/**
 * Fixed levels, so the same body always codes to the same bytes. The fastest of each: on the 100-entity batch
 * answers of the 100k bench dist (54 KB on average) brotli quality 1 took 0.25 ms of CPU a body for 10.0x smaller
 * (quality 4: 0.76 ms, 11.3x) and gzip level 1 0.18 ms for 9.2x (level 6: 0.51 ms, 11.0x), where composing the
 * answer itself takes ~0.4 ms. CPU is what bounds this 2-core machine; the higher levels bought ~10% fewer bytes
 * for 3x the CPU. bench/run.ts measures the batch row coded against the same row uncoded.
 */
const BROTLI_QUALITY = 1;
const GZIP_LEVEL = 1;

const brotliOptions = (size?: number) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    ...(size !== undefined ? { [constants.BROTLI_PARAM_SIZE_HINT]: size } : {}),
  },
});

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

/** Whole bodies coded so far in this process, by coding: what shows that a kept body is coded once. */
export const wholeBodiesCoded: Record<Coding, number> = { br: 0, gzip: 0 };

/** A whole body, coded. */
function compressWhole(coding: Coding, body: Uint8Array): Buffer {
  wholeBodiesCoded[coding]++;
  return coding === 'br' ? brotliCompressSync(body, brotliOptions(body.length)) : gzipSync(body, { level: GZIP_LEVEL });
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
/** Coded forms of kept bodies (kept-bytes.ts), each made once and kept as long as its body. */
const keptForms = new WeakMap<Uint8Array, Partial<Record<Coding, Promise<Buffer>>>>();

/**
 * A whole body, coded: a kept body (a page asset, the OpenAPI document) once per coding, on zlib's thread pool rather
 * than the event loop (the Swagger UI bundle is 1.7 MB), and the same coded bytes every time after; any other body
 * at once, as the answer it belongs to is made once.
 */
export function codedBody(coding: Coding, body: Uint8Array): Buffer | Promise<Buffer> {
  if (!isKept(body)) return compressWhole(coding, body);
  const forms = keptForms.get(body) ?? {};
  keptForms.set(body, forms);
  const kept = forms[coding];
  if (kept) return kept;
  wholeBodiesCoded[coding]++;
  const made = coding === 'br' ? brotliAsync(body, brotliOptions(body.length)) : gzipAsync(body, { level: GZIP_LEVEL });
  // A failed coding (memory) is not kept: the next request tries again.
  return (forms[coding] = made.catch((e: unknown) => {
    delete forms[coding];
    throw e;
  }));
}

/**
 * A coding stream for a body sent in pieces: the pieces are written into it one by one and never joined. The coded
 * bytes do not depend on how the input was cut, only on the bytes and the fixed level.
 */
export function compressStream(coding: Coding): BrotliCompress | Gzip {
  return coding === 'br' ? createBrotliCompress(brotliOptions()) : createGzip({ level: GZIP_LEVEL });
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
