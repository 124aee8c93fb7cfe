// The Node adapter: the only file that touches node:http. It turns an IncomingMessage into a Web Request (body
// capped before it is buffered), hands it to the app, and writes the Response back.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MAX_HEADER_BYTES, MAX_HEADER_FIELDS } from '../common/request-limits.ts';
import { ApiError, errorReply } from './api-error.ts';
import { bodyLength, type App } from './app.ts';
import { chooseCoding, codedBody, codedEtag, compressStream, identityTags, MIN_COMPRESS_BYTES, tagAsHeld } from './compress.ts';
import { stderrProblemLog, type ProblemLog } from './problem-log.ts';
import type { AppRequest } from './route.ts';

/** A header Node may hand over as a list, as one value. */
function single(v: string | string[] | undefined): string | null {
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The request as the app reads it (route.ts AppRequest), backed by the Node request: building a full undici Request
 * per call cost a measurable share of each lookup. Tests and other runtimes hand the app real Requests.
 */
class NodeRequest implements AppRequest {
  /** The request is its own header reader: no second object per request. */
  readonly headers: { get(name: string): string | null } = this;
  constructor(
    readonly url: string,
    readonly method: string,
    private readonly h: IncomingMessage['headers'],
    private readonly body: Buffer | undefined,
  ) {}
  get(name: string): string | null {
    const lower = name.toLowerCase();
    const text = single(this.h[lower]);
    // The app knows only identity tags; the coded ones are this adapter's (compress.ts).
    return text !== null && lower === 'if-none-match' ? identityTags(text) : text;
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.body ?? Buffer.alloc(0);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
}

/** Options of listen(). */
export interface ListenOptions {
  port?: number;
  /** Default 127.0.0.1: a development server is not exposed by accident. */
  host?: string;
  /** Largest request body accepted (default 256 KiB); beyond it the request is answered 413 and not read further. */
  maxBodyBytes?: number;
  /** Headers must arrive within this many ms (default 10 s): slow-header clients are cut off. */
  headersTimeoutMs?: number;
  /** The whole request must arrive within this many ms (default 30 s): slow-body clients are cut off. */
  requestTimeoutMs?: number;
  /** close() waits this long for unfinished requests before it cuts every connection (default: requestTimeoutMs). */
  shutdownGraceMs?: number;
  /** Where a failure the adapter cannot explain is reported (not a client that went away). Default: stderr. */
  log?: ProblemLog;
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish (within shutdownGraceMs), then resolves. */
  close(): Promise<void>;
}

/** What is left of an over-cap body is read and thrown away up to this much, so the client gets to read the 413. */
const DRAIN_BYTES = 16 * 1024 * 1024;
/** …and for at most this long; past either, the connection is cut. */
const DRAIN_MS = 5_000;

/** A refusal before the app is asked (errorReply's answer), and the connection closed after it. */
function errorResponse(res: ServerResponse, err: ApiError): void {
  const { status, headers, body } = errorReply(err);
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/** The body could not be read whole because its client went away: nothing to report. */
class ClientGone extends Error {}

/**
 * Buffers the body up to `limit` bytes, then stops reading (the rest stays on the socket). Rejects if the client
 * goes away before the end.
 */
function readAtMost(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (err?: Error): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      const room = limit - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size = limit;
        req.pause();
        finish();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = (): void => finish();
    // The request stream fails only with its connection (reset, aborted): its client is gone.
    const onError = (e: Error): void => finish(new ClientGone(e.message));
    const onClose = (): void => finish(req.complete ? undefined : new ClientGone('the client closed the connection mid-body'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Reads and discards the rest of a body the app did not need (one over the cap). Closing at once instead would
 * make the kernel reset the connection while the client is still sending, and the client would often lose the
 * answer (the 413) with it. A body that goes on past DRAIN_BYTES or DRAIN_MS is cut off.
 */
function discardRest(req: IncomingMessage): void {
  let seen = 0;
  const cut = (): void => void req.socket.destroy();
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_BYTES) cut();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

// Node's own answers to a request it could not parse or that ran out of time carry no body; every 4xx here has an
// Error body, so they are written the same way (same status choice as Node's default clientError handler).
function clientErrorResponse(e: NodeJS.ErrnoException): string {
  const [status, reason, code, message] =
    e.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ([408, 'Request Timeout', 'request_timeout', 'The request did not arrive in time.'] as const)
      : e.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.'] as const)
        : ([400, 'Bad Request', 'bad_request', 'The request is not valid HTTP.'] as const);
  return rawRefusal(new ApiError(status, code, message), reason);
}

/** A whole response (errorReply's answer) for a socket no ServerResponse writes to: a request Node could not parse, a CONNECT. */
function rawRefusal(err: ApiError, reason: string): string {
  const { status, headers, body } = errorReply(err);
  const { 'content-type': type, ...rest } = headers;
  const fields = Object.entries(rest).map(([name, value]) => `${name.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${fields}Connection: close\r\n\r\n${body}`;
}

const CONNECT_REFUSED = rawRefusal(
  new ApiError(405, 'method_not_allowed', 'CONNECT is not supported: this server is not a proxy.', { headers: { allow: 'GET, HEAD, POST' } }),
  'Method Not Allowed',
);

/**
 * One request being answered on a socket. Its outcome is true once the whole answer is handed to the socket, false
 * if the socket closes before that; callers are told by callback (a promise only where a refusal waits for it), so
 * an answer costs no promise and no closure for it.
 */
class Exchange {
  outcome: boolean | null = null;
  private then: ((ok: boolean) => void) | ((ok: boolean) => void)[] | null = null;
  constructor(
    readonly req: IncomingMessage,
    private readonly live: Set<Exchange>,
  ) {}
  settle(ok: boolean): void {
    if (this.outcome !== null) return;
    this.outcome = ok;
    this.live.delete(this);
    const then = this.then;
    this.then = null;
    if (typeof then === 'function') then(ok);
    else if (then) for (const f of then) f(ok);
  }
  /** Calls `f` with the outcome once it is known. */
  whenSettled(f: (ok: boolean) => void): void {
    if (this.outcome !== null) f(this.outcome);
    else if (this.then === null) this.then = f;
    else if (typeof this.then === 'function') this.then = [this.then, f];
    else this.then.push(f);
  }
  delivered(): Promise<boolean> {
    return new Promise((resolve) => this.whenSettled(resolve));
  }
}

/** The exchange a response answers, kept on it so that one shared listener settles it (no closure per answer). */
const EXCHANGE = Symbol('exchange');
type Answering = ServerResponse & { [EXCHANGE]?: Exchange };
/** 'finish': the last byte is handed to the socket (a pipelined answer waits its turn in Node's queue first). */
function delivered(this: Answering): void {
  this[EXCHANGE]?.settle(true);
}

/** Sockets already being refused: the parser reports every later chunk of a broken stream too. */
const refused = new WeakSet<Socket>();

/**
 * Writes `text` (a whole response) on `socket` and closes it once written, after every answer to a request read
 * before the broken one (pipelined ahead of it) has gone out whole: a client is answered every good request it
 * sent, and the refusal never cuts into an answer. The request still being read when it failed (its body timed
 * out) gets no answer but this one. Past `waitMs` of waiting (a client that does not read), the connection is cut;
 * an answer that never went out is then refunded (see handle).
 */
function refuseOn(socket: Socket, exchanges: Set<Exchange> | undefined, text: string, waitMs: number): void {
  if (refused.has(socket)) return;
  refused.add(socket);
  const write = (): void => {
    if (!socket.writable || socket.destroyed) return void socket.destroy();
    socket.end(text, () => socket.destroy());
  };
  const earlier = exchanges ? [...exchanges].filter((x) => x.req.complete) : [];
  if (earlier.length === 0) return write();
  const cut = setTimeout(() => socket.destroy(), waitMs);
  cut.unref();
  void Promise.all(earlier.map((x) => x.delivered())).then(() => {
    clearTimeout(cut);
    write();
  });
}

/**
 * Settles once the event loop reaches its check phase (setImmediate), the same promise for every caller of one
 * tick. Answers are written there together rather than each as soon as it is ready, while other connections'
 * requests are still being read: under load, the client side then wakes once for a run of answers instead of once
 * per answer. Measured over loopback at 50 connections on the full-size dist (alternating rounds): the read-only
 * runtime, whose answers were all ready within the tick that read their requests, served 1.6x the entity lookups;
 * the journal runtime, whose charges already waited for the journal's next tick, ~1.04x. An idle server pays one
 * setImmediate hop, microseconds.
 */
let tick: Promise<void> | null = null;
function endOfTick(): Promise<void> {
  return (tick ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      tick = null;
      resolve();
    }),
  ));
}

/**
 * Writes `pieces` through the coding stream `coder` into `res`, never joining them, and resolves once the response
 * is finished (or the client has gone, which stops the coder).
 */
function sendCoded(res: ServerResponse, coder: ReturnType<typeof compressStream>, pieces: Uint8Array[]): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      coder.destroy();
      resolve();
    };
    res.once('close', done);
    res.once('finish', done);
    coder.once('error', () => res.destroy());
    coder.pipe(res);
    for (const piece of pieces) coder.write(piece);
    coder.end();
  });
}

export function listen(app: App, opts: ListenOptions = {}): Promise<RunningServer> {
  const maxBody = opts.maxBodyBytes ?? 256 * 1024;
  const host = opts.host ?? '127.0.0.1';
  const log = opts.log ?? stderrProblemLog;
  // Requests being answered, and what close() waits on once they are all done: a count, not a set of promises
  // with a closure each.
  let inFlight = 0;
  let whenIdle: (() => void) | null = null;
  const handled = (): void => {
    if (--inFlight === 0 && whenIdle) {
      const idle = whenIdle;
      whenIdle = null;
      idle();
    }
  };
  let closing = false;

  const headersTimeout = opts.headersTimeoutMs ?? 10_000;
  const requestTimeout = opts.requestTimeoutMs ?? 30_000;
  // Node enforces both timeouts only when it sweeps its connections, by default every 30 s: a slow client then
  // held its socket for up to 30 s past the timeout (60 s with the defaults). Sweep often enough to be on time.
  const connectionsCheckingInterval = Math.max(50, Math.min(1000, Math.floor(Math.min(headersTimeout, requestTimeout) / 5)));
  // The answers on each socket not delivered yet, so a refusal written straight to the socket waits for them.
  const exchangesOn = new WeakMap<Socket, Set<Exchange>>();
  // requireHostHeader off: Node's own 400 for a missing Host has no body; handle() answers it with one.
  const server = createServer({ connectionsCheckingInterval, requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES }, (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    let live = exchangesOn.get(socket);
    if (!live) {
      const set = (live = new Set());
      exchangesOn.set(socket, set);
      // Answers still queued behind others when the connection ends never go out: one listener settles them all.
      socket.once('close', () => {
        for (const x of set) x.settle(false);
      });
    }
    const x = new Exchange(req, live);
    live.add(x);
    (res as Answering)[EXCHANGE] = x;
    res.on('finish', delivered);
    inFlight++;
    void handle(req, res, x).then(handled, handled);
  });
  server.headersTimeout = headersTimeout;
  server.requestTimeout = requestTimeout;
  server.keepAliveTimeout = 5_000;
  // Node drops the header fields past maxHeadersCount without a word, so it is set one past the limit: a request
  // that reaches it is refused 431 (handle), never read with a header missing.
  server.maxHeadersCount = MAX_HEADER_FIELDS + 1;
  server.on('clientError', (e: NodeJS.ErrnoException, socket: Socket) => refuseOn(socket, exchangesOn.get(socket), clientErrorResponse(e), requestTimeout));
  // Without these listeners Node answers an unknown Expect with a bodiless 417 and drops a CONNECT without a word.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    errorResponse(res, new ApiError(417, 'expectation_failed', 'Only Expect: 100-continue is understood.'));
  });
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => {});
    refuseOn(socket, exchangesOn.get(socket), CONNECT_REFUSED, requestTimeout);
  });

  /** Answers `req`; `x` settles when the answer has gone out or can no longer go out. */
  async function handle(req: IncomingMessage, res: ServerResponse, x: Exchange): Promise<void> {
    try {
      if (req.rawHeaders.length / 2 > MAX_HEADER_FIELDS) {
        errorResponse(res, new ApiError(431, 'headers_too_large', `The request has more than ${MAX_HEADER_FIELDS} header fields.`));
        return;
      }
      if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined) {
        // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without Host.
        errorResponse(res, new ApiError(400, 'bad_request', 'An HTTP/1.1 request needs a Host header.'));
        return;
      }
      let body: Buffer | undefined;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        // One byte past the cap is enough for the app to see the body is too large and answer 413 itself: in the
        // contract's order of checks (after auth and routing), with the release stamp like every answer.
        body = await readAtMost(req, maxBody + 1);
      }
      const url = `http://${host}${req.url && req.url.startsWith('/') ? req.url : '/'}`;
      const answer = await app.answer(new NodeRequest(url, req.method ?? 'GET', req.headers, body));
      // An answer that charged and never reaches its client (it closed the connection first, or answers queued
      // behind others were cut) is refunded.
      if (answer.giveBack) {
        const giveBack = answer.giveBack;
        x.whenSettled((ok) => void (ok || giveBack()));
      }
      await endOfTick();
      const out = answer.headers;
      // A HEAD answer is coded like its GET, headers and all, and then sent without the body.
      const head = answer.body === null && answer.omitted !== undefined;
      const raw = answer.body ?? answer.omitted ?? null;
      let bytes: Uint8Array | Uint8Array[] | null = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
      const size = bytes ? (Array.isArray(bytes) ? bodyLength(bytes) : bytes.length) : 0;
      // The coding depends on Accept-Encoding for every answer that has (or, for HEAD and 304, stands for) a body.
      if (answer.status !== 204) out.vary = out.vary ? `${out.vary}, Accept-Encoding` : 'Accept-Encoding';
      const coding = bytes && size >= MIN_COMPRESS_BYTES ? chooseCoding(req.headers['accept-encoding'] ?? null) : null;
      if (answer.status === 304 && out.etag) out.etag = tagAsHeld(single(req.headers['if-none-match']), out.etag);
      let coder: ReturnType<typeof compressStream> | null = null;
      if (coding && bytes) {
        out['content-encoding'] = coding;
        if (out.etag) out.etag = codedEtag(out.etag, coding);
        // A body in pieces is coded as a stream (chunked, no length); a whole one at once, with its length.
        if (Array.isArray(bytes)) {
          delete out['content-length'];
          if (head) out['transfer-encoding'] = 'chunked';
          else coder = compressStream(coding);
        } else {
          const coded = codedBody(coding, bytes);
          bytes = coded instanceof Buffer ? coded : await coded;
        }
      }
      // Only a bodiless answer of the app's own is 0; a body coded as a stream has no length.
      if (bytes && !(coding && Array.isArray(bytes))) out['content-length'] = String(Array.isArray(bytes) ? bodyLength(bytes) : bytes.length);
      else if (!bytes && answer.status !== 304 && answer.status !== 204 && out['content-length'] === undefined) out['content-length'] = '0';
      // While shutting down, a keep-alive client is told to go rather than left to send its next request into a
      // connection that is about to close.
      if (closing) out.connection = 'close';
      res.writeHead(answer.status, out);
      if (head) res.end();
      else if (coder && Array.isArray(bytes)) await sendCoded(res, coder, bytes);
      else if (Array.isArray(bytes)) {
        // Pieces go out as one gathered write; each is released once the socket has taken it.
        res.cork();
        for (const piece of bytes) res.write(piece);
        res.end();
      } else res.end(bytes ?? undefined);
      if (body && !req.complete) discardRest(req);
    } catch (e) {
      // The app answers every failure itself: what lands here is the body's client gone (nothing to say) or a fault
      // of this adapter, reported so it is not mistaken for a bad request.
      if (!(e instanceof ClientGone)) log({ level: 'error', event: 'internal_error', line: `[serve] adapter error: ${(e as Error)?.stack ?? String(e)}` });
      if (!res.headersSent) errorResponse(res, new ApiError(400, 'bad_request', 'The request could not be read.'));
      else res.destroy();
    }
  }

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8787, host, () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        server,
        port,
        url: `http://${host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            closing = true;
            server.close(() => {
              clearTimeout(grace);
              done();
            });
            server.closeIdleConnections();
            // Connections that were busy are closed once their answers are done.
            if (inFlight > 0) whenIdle = () => server.closeIdleConnections();
            // close() also stops Node's sweep for timed-out connections, so a client that never finishes its request
            // (a slowloris) would keep the process alive for ever. Past the grace period, every connection is cut.
            const grace = setTimeout(() => server.closeAllConnections(), opts.shutdownGraceMs ?? requestTimeout);
            grace.unref();
          }),
      });
    });
  });
}
