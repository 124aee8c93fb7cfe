// ShardSource driver for a dist/ hosted by a CDN or mirror: whole files by GET, pieces by HTTP Range requests,
// with identical in-flight requests shared and fetched bytes kept in a bounded LRU. An origin that cannot answer
// (unreachable, timed out, 5xx, a broken reply) throws UpstreamError; a file it says is missing or shorter than
// asked throws ArtefactError: the first is an outage, the second a damaged mirror. An outage writes one line when it
// starts and one when the origin answers again, not one per request.
import type { ShardSource } from '../interfaces.ts';
import { stderrProblemLog, type ProblemLog } from '../problem-log.ts';
import { ArtefactError, UpstreamError } from '../read-errors.ts';
import { LruCache } from '../release/lru-cache.ts';
import { cachedReads, wholeFileKey } from './cached-reads.ts';
import { isMutablePath } from './source-path.ts';

/** Options of createHttpSource. */
export interface HttpSourceOptions {
  /** URL of the dist root, e.g. `https://cdn.example.org/register/dist/`. User info in it is sent as Basic auth and never logged. */
  baseUrl: string | URL;
  /** Bound on bytes of fetched files and ranges kept in memory. Default 64 MiB. */
  cacheBytes?: number;
  /** Per-request deadline, including the body. Default 10000 ms. */
  timeoutMs?: number;
  /** Most requests in flight at once; more wait their turn, so a burst of lookups cannot open hundreds of sockets. Default 16. */
  maxConcurrent?: number;
  /** Extra request headers (e.g. a mirror token). Never logged. */
  headers?: Record<string, string>;
  /** The fetch to use. Default: global fetch (undici). */
  fetch?: typeof fetch;
  /** Where the lines of an outage and of its end go. Default stderr. */
  log?: ProblemLog;
}

/** Counters for tests and metrics. */
interface HttpSourceStats {
  /** HTTP requests sent so far. */
  requests: number;
  /** Bytes currently cached, and the bound. */
  cachedBytes: number;
  cacheBytes: number;
}

export interface HttpShardSource extends ShardSource {
  stats(): HttpSourceStats;
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;
/** Answers in a row, none failing, that end an outage even when no file that failed is asked for again. */
const RECOVERED = 8;

export function createHttpSource(opts: HttpSourceOptions): HttpShardSource {
  const base = new URL(String(opts.baseUrl));
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new Error(`[http-source] base URL must be http(s), got ${base.protocol}`);
  }
  const headers: Record<string, string> = { ...opts.headers };
  // fetch refuses URLs with credentials; move them to a header, and keep them out of every message.
  if (base.username || base.password) {
    const user = decodeURIComponent(base.username);
    const pass = decodeURIComponent(base.password);
    // btoa takes Latin-1: the UTF-8 bytes go through it one per character (Web-standard, so a Worker can run it too).
    headers.authorization = 'Basic ' + btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${pass}`)));
    base.username = '';
    base.password = '';
  }
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const label = `http:${base.origin}${base.pathname}`;
  const tag = 'http-source';
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const cacheBytes = opts.cacheBytes ?? 64 * 1024 * 1024;
  const doFetch = opts.fetch ?? globalThis.fetch;
  const cache = new LruCache<string, Uint8Array>({ maxWeight: cacheBytes });
  // One controller per request, made by the request itself, that close() aborts while it waits for its answer. Not
  // one shared controller: in a Worker an I/O object (an AbortSignal too) belongs to the request that made it, and
  // another request that uses it fails ("Cannot perform I/O on behalf of a different request").
  const inFlight = new Set<AbortController>();
  const maxConcurrent = Math.max(1, opts.maxConcurrent ?? 16);
  const waiting: (() => void)[] = [];
  let active = 0;
  let requests = 0;
  let closed = false;
  const log = opts.log ?? stderrProblemLog;
  // The origin's health, for the outage lines. Requests are numbered as they start (by `requests`), and only one started after the
  // last failure counts towards the end of an outage (answers to requests in flight when it began do not). It ends
  // when a file that failed during it is answered, or after RECOVERED answers in a row: an origin failing only some
  // files (its shards, say) while answering others is one outage, not a line for every answer between two failures.
  let lastFailure = 0;
  let down: string | null = null;
  const failedPaths = new Set<string>();
  let answersInRow = 0;
  const failed = (n: number, path: string, why: string, what: string): void => {
    lastFailure = Math.max(lastFailure, n);
    answersInRow = 0;
    if (closed) return;
    if (failedPaths.size < 256) failedPaths.add(path);
    if (down !== null) return;
    down = why;
    log({ level: 'error', event: 'upstream_unavailable', line: `[serve] upstream_unavailable: ${what}: ${why}; what needs the origin answers 503 until it answers again`, file: what, check: why });
  };
  const answered = (n: number, path: string): void => {
    if (down === null || n <= lastFailure || closed) return;
    if (!failedPaths.has(path) && ++answersInRow < RECOVERED) return;
    down = null;
    failedPaths.clear();
    answersInRow = 0;
    log({ level: 'warn', event: 'upstream_available', line: `[serve] ${base.origin}${base.pathname}: the origin answers again`, file: `${base.origin}${base.pathname}` });
  };

  // Each segment is percent-encoded so that `?`, `#` and `%` in a file name stay part of the path.
  const urlOf = (path: string): URL => new URL(path.split('/').map(encodeURIComponent).join('/'), base);
  const where = (url: URL, range?: string): string => `${url.pathname}${range ? ` (bytes=${range})` : ''}`;
  // The URL as logs name it: the base had its credentials moved to a header, so none are in it.
  const href = (url: URL, range?: string): string => `${url.origin}${where(url, range)}`;
  const upstream = (url: URL, why: string, range?: string, method = 'GET', outage = false): UpstreamError => new UpstreamError(`${method} ${href(url, range)}`, why, outage);
  const assertOpen = () => {
    if (closed) throw new Error(`[${tag}] ${label} is closed`);
  };

  async function request(url: URL, init: { method?: string; range?: string }): Promise<Response> {
    if (active >= maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await send(url, init);
    } finally {
      // The slot is held until headers arrive; bodies are small (one bucket) and read at once.
      active--;
      waiting.shift()?.();
    }
  }

  async function send(url: URL, init: { method?: string; range?: string }): Promise<Response> {
    if (closed) throw new Error(`[${tag}] ${init.method ?? 'GET'} ${where(url, init.range)}: source closed`);
    const n = ++requests;
    const h: Record<string, string> = { ...headers };
    // fetch itself adds `Accept-Encoding: identity` to a Range request (Fetch standard), so the bytes come as stored.
    if (init.range) h.range = `bytes=${init.range}`;
    const stop = new AbortController();
    inFlight.add(stop);
    const attempt = () =>
      doFetch(url, {
        method: init.method ?? 'GET',
        headers: h,
        redirect: 'follow',
        signal: AbortSignal.any([stop.signal, AbortSignal.timeout(timeoutMs)]),
      });
    let res: Response;
    try {
      res = await attempt().catch((err: unknown) => {
        // A reused keep-alive connection the host has just closed resets the request before any byte of an answer:
        // reads are idempotent, so that one case is tried again once on a fresh connection.
        if (closed || !connectionReset(err)) throw err;
        return attempt();
      });
    } catch (err) {
      const e = fetchError(err, url, init.range, init.method);
      failed(n, url.pathname, e.reason, e.url);
      throw e;
    } finally {
      inFlight.delete(stop);
    }
    if (res.status >= 500) failed(n, url.pathname, `HTTP ${res.status}`, `${init.method ?? 'GET'} ${href(url, init.range)}`);
    else answered(n, url.pathname);
    return res;
  }

  async function body(res: Response, url: URL, range?: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      // The origin answered, then the body broke: this request's own failure, logged with it.
      const e = fetchError(err, url, range);
      throw new UpstreamError(e.url, e.reason);
    }
  }

  function fetchError(err: unknown, url: URL, range?: string, method = 'GET'): UpstreamError {
    const e = err as Error;
    const why =
      e?.name === 'TimeoutError'
        ? `timed out after ${timeoutMs} ms`
        : e?.name === 'AbortError'
          ? 'source closed'
          : `${e?.message ?? String(err)}${(e?.cause as Error)?.message ? ` (${(e.cause as Error).message})` : ''}`;
    return upstream(url, why, range, method, true);
  }

  async function discard(res: Response): Promise<void> {
    await res.body?.cancel().catch(() => {});
  }

  async function loadFile(path: string): Promise<Uint8Array | null> {
    const url = urlOf(path);
    const res = await request(url, {});
    if (res.status === 404 || res.status === 410) {
      await discard(res);
      return null;
    }
    if (res.status !== 200) {
      await discard(res);
      throw upstream(url, `HTTP ${res.status}`, undefined, 'GET', res.status >= 500);
    }
    return body(res, url);
  }

  async function loadRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    const url = urlOf(path);
    const end = offset + length - 1;
    const range = `${offset}-${end}`;
    const res = await request(url, { range });
    if (res.status === 206) {
      const m = CONTENT_RANGE.exec(res.headers.get('content-range') ?? '');
      if (!m) {
        await discard(res);
        throw upstream(url, '206 without a usable Content-Range', range);
      }
      const [a, b, total] = [Number(m[1]), Number(m[2]), m[3] === '*' ? NaN : Number(m[3])];
      if (a !== offset || b !== end) {
        await discard(res);
        // Servers clamp a range that runs past the end of the file.
        if (a === offset && b < end && total === b + 1) throw shorter(url, range, total);
        throw upstream(url, `server sent bytes ${a}-${b}`, range);
      }
      const bytes = await body(res, url, range);
      if (bytes.byteLength !== length) throw upstream(url, `body has ${bytes.byteLength} bytes, expected ${length}`, range);
      return bytes;
    }
    if (res.status === 200) {
      // The server ignored Range and sent the whole file: still correct, and worth keeping whole.
      const whole = await body(res, url, range);
      if (!isMutablePath(path)) cache.set(wholeFileKey(path), whole, whole.byteLength);
      if (offset + length > whole.byteLength) throw shorter(url, range, whole.byteLength);
      return whole.slice(offset, offset + length);
    }
    await discard(res);
    if (res.status === 416) {
      const total = /^bytes \*\/(\d+)$/.exec(res.headers.get('content-range') ?? '')?.[1];
      throw shorter(url, range, total === undefined ? NaN : Number(total));
    }
    if (res.status === 404 || res.status === 410) throw new ArtefactError(href(url), 'not found');
    throw upstream(url, `HTTP ${res.status}`, range, 'GET', res.status >= 500);
  }

  async function loadEmptyRange(path: string, offset: number): Promise<Uint8Array> {
    // A zero-length Range cannot be expressed; a HEAD still proves the file exists and is long enough.
    const url = urlOf(path);
    const res = await request(url, { method: 'HEAD' });
    await discard(res);
    if (res.status === 404 || res.status === 410) throw new ArtefactError(href(url), 'not found');
    if (res.status !== 200) throw upstream(url, `HTTP ${res.status}`, undefined, 'HEAD', res.status >= 500);
    const size = Number(res.headers.get('content-length'));
    if (Number.isFinite(size) && offset > size) throw shorter(url, `${offset}-`, size);
    return new Uint8Array(0);
  }

  function shorter(url: URL, range: string, size: number): Error {
    return new ArtefactError(href(url), `range ${range} is past the end of the file${Number.isNaN(size) ? '' : ` (${size} bytes)`}`);
  }

  return {
    label,
    where: (path) => href(urlOf(path)),

    ...cachedReads(cache, {
      tag, loadFile, loadRange, loadEmptyRange, assertOpen,
      pastEnd: (path: string, offset: number, length: number, size: number) => shorter(urlOf(path), `${offset}-${offset + length - 1}`, size),
    }),

    /** A HEAD of the release index: any answer below 500 means the origin is there (what it holds is the catalog's business). */
    async ping() {
      assertOpen();
      const url = urlOf('index.json');
      const res = await request(url, { method: 'HEAD' });
      await discard(res);
      if (res.status >= 500) throw upstream(url, `HTTP ${res.status}`, undefined, 'HEAD', true);
    },

    async close() {
      closed = true;
      for (const stop of inFlight) stop.abort();
      cache.clear();
    },

    stats: () => ({ requests, cachedBytes: cache.weight, cacheBytes }),
  };
}

/** A connection the peer reset or closed under a request (not a timeout, refusal or HTTP status). */
function connectionReset(err: unknown): boolean {
  const code = ((err as Error)?.cause as { code?: string } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET';
}
