// Content coding for the Node adapter: the fixed-level gzip and brotli it writes with (the negotiation and coded
// ETags, which the edge shares, are in coding.ts and exported from here as before).
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, createBrotliCompress, createGzip, gzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';
import { isLongLived } from './long-lived-bytes.ts';
import type { Coding } from './coding.ts';

export { chooseCoding, codedEtag, identityTags, MIN_COMPRESS_BYTES, tagAsHeld, type Coding } from './coding.ts';

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

/** Whole bodies coded so far in this process, by coding: what shows that a kept body is coded once. */
export const wholeBodiesCoded: Record<Coding, number> = { br: 0, gzip: 0 };

/** A whole body, coded. */
function compressWhole(coding: Coding, body: Uint8Array): Buffer {
  wholeBodiesCoded[coding]++;
  return coding === 'br' ? brotliCompressSync(body, brotliOptions(body.length)) : gzipSync(body, { level: GZIP_LEVEL });
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
/** Coded forms of long-lived bodies (long-lived-bytes.ts), each made once and kept as long as its body. */
const longLivedForms = new WeakMap<Uint8Array, Partial<Record<Coding, Promise<Buffer>>>>();

/**
 * A whole body, coded: a kept body (a page asset, the OpenAPI document) once per coding, on zlib's thread pool rather
 * than the event loop (the Swagger UI bundle is 1.7 MB), and the same coded bytes every time after; any other body
 * at once, as the answer it belongs to is made once.
 */
export function codedBody(coding: Coding, body: Uint8Array): Buffer | Promise<Buffer> {
  if (!isLongLived(body)) return compressWhole(coding, body);
  const forms = longLivedForms.get(body) ?? {};
  longLivedForms.set(body, forms);
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

