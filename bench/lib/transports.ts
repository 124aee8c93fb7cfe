// How the load generator talks HTTP/1.1: `net` writes pre-built request bytes on one kept-alive socket per worker and
// parses just the status line, Content-Length or chunked framing; `http` is node:http with a keep-alive Agent.
// On a 2-core machine the generator shares the CPU with the server, so its cost per request bounds every figure;
// `net` costs about half of `http` per request, which is what lets the bare node:http ceiling be measured at all.
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';

/** One request to send; `body` is sent with content-type application/json. */
export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: Buffer;
}

interface Answer {
  /** HTTP status, or -1 for a transport error or timeout. */
  status: number;
  bytes: number;
}

export interface Transport {
  /** Sends on worker `w`'s connection; never rejects. */
  send(w: number, req: LoadRequest): Promise<Answer>;
  close(): void;
}

export type TransportKind = 'net' | 'http';

export interface TransportOptions {
  host: string;
  port: number;
  headers: Record<string, string>;
  concurrency: number;
  timeoutMs: number;
}

export function createTransport(kind: TransportKind, o: TransportOptions): Transport {
  return kind === 'http' ? httpTransport(o) : netTransport(o);
}

function httpTransport(o: TransportOptions): Transport {
  // One socket per worker, kept open: the figure is the server's, not the cost of TCP handshakes.
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency, maxFreeSockets: o.concurrency, scheduling: 'fifo' });
  return {
    send: (_w, req) =>
      new Promise((resolve) => {
        const headers: Record<string, string | number> = { ...o.headers };
        if (req.body) {
          headers['content-type'] = 'application/json';
          headers['content-length'] = req.body.length;
        }
        let settled = false;
        const done = (a: Answer) => {
          if (!settled) {
            settled = true;
            resolve(a);
          }
        };
        const r = request({ agent, host: o.host, port: o.port, method: req.method, path: req.path, headers, timeout: o.timeoutMs }, (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', () => done({ status: res.statusCode ?? 0, bytes }));
          res.on('error', () => done({ status: -1, bytes }));
        });
        r.on('timeout', () => r.destroy(new Error('timeout')));
        r.on('error', () => done({ status: -1, bytes: 0 }));
        r.end(req.body);
      }),
    close: () => agent.destroy(),
  };
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** The state of one in-flight response on a raw connection. */
class RawConnection {
  socket: Socket | null = null;
  private resolve: ((a: Answer) => void) | null = null;
  startedAt = 0;
  private head: Buffer | null = null; // bytes until the header block is complete
  private status = 0;
  private remaining = -1; // body bytes still due with Content-Length
  private chunked: Buffer | null = null; // body so far with chunked framing
  private chunkPos = 0; // where the next chunk-size line starts in `chunked`
  private bodyBytes = 0;
  private closeAfter = false;

  constructor(private readonly o: TransportOptions) {}

  send(bytes: Buffer): Promise<Answer> {
    if (!this.socket || this.socket.destroyed) this.open();
    this.head = null;
    this.status = 0;
    this.remaining = -1;
    this.chunked = null;
    this.chunkPos = 0;
    this.bodyBytes = 0;
    this.closeAfter = false;
    this.startedAt = performance.now();
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.socket!.write(bytes);
    });
  }

  /** Kills a request that is overdue (checked by the transport's timer, not one timer per request). */
  expire(now: number): void {
    if (this.resolve && now - this.startedAt > this.o.timeoutMs) this.fail();
  }

  destroy(): void {
    this.socket?.destroy();
  }

  private open(): void {
    const s = connect({ host: this.o.host, port: this.o.port, noDelay: true });
    // Events of a socket this connection has already replaced (after `connection: close`) are stale: ignore them.
    s.on('data', (c: Buffer) => this.socket === s && this.onData(c));
    s.on('error', () => this.socket === s && this.fail());
    s.on('close', () => this.socket === s && this.fail());
    this.socket = s;
  }

  private fail(): void {
    this.socket?.destroy();
    this.socket = null;
    this.finish(-1);
  }

  private finish(status: number): void {
    const r = this.resolve;
    this.resolve = null;
    if (this.closeAfter) {
      this.socket?.destroy();
      this.socket = null;
    }
    r?.({ status, bytes: this.bodyBytes });
  }

  private onData(c: Buffer): void {
    if (!this.resolve) return; // bytes after a timeout; the socket is being torn down
    if (this.status === 0) {
      this.head = this.head ? Buffer.concat([this.head, c]) : c;
      const end = this.head.indexOf(CRLFCRLF);
      if (end < 0) return;
      const text = this.head.toString('latin1', 0, end);
      this.status = Number(text.slice(9, 12));
      const lower = text.toLowerCase();
      const cl = /\r\ncontent-length:\s*(\d+)/.exec(lower);
      this.closeAfter = /\r\nconnection:\s*close/.test(lower);
      const rest = this.head.subarray(end + 4);
      this.head = null;
      if (/\r\ntransfer-encoding:\s*chunked/.test(lower)) {
        this.chunked = Buffer.alloc(0);
        this.onBody(rest);
        return;
      }
      this.remaining = cl ? Number(cl[1]) : 0;
      this.onBody(rest);
      return;
    }
    this.onBody(c);
  }

  private onBody(c: Buffer): void {
    if (this.chunked) {
      this.chunked = Buffer.concat([this.chunked, c]);
      // Walk complete chunks: "<hex size>\r\n<data>\r\n", ending with a zero-size chunk and a blank line.
      for (;;) {
        const eol = this.chunked.indexOf('\r\n', this.chunkPos);
        if (eol < 0) return;
        const size = parseInt(this.chunked.toString('latin1', this.chunkPos, eol), 16);
        if (size === 0) {
          if (this.chunked.length >= eol + 4) this.finish(this.status);
          return;
        }
        if (this.chunked.length < eol + 2 + size + 2) return;
        this.bodyBytes += size;
        this.chunkPos = eol + 2 + size + 2;
      }
    }
    this.bodyBytes += c.length;
    this.remaining -= c.length;
    if (this.remaining <= 0) this.finish(this.status);
  }
}

function netTransport(o: TransportOptions): Transport {
  const conns = Array.from({ length: o.concurrency }, () => new RawConnection(o));
  const fixed = Object.entries({ host: `${o.host}:${o.port}`, ...o.headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  // Request bytes depend only on the request, and the load cycles through a fixed list: build each once.
  const cache = new WeakMap<LoadRequest, Buffer>();
  const bytesOf = (req: LoadRequest): Buffer => {
    let b = cache.get(req);
    if (!b) {
      const head = `${req.method} ${req.path} HTTP/1.1\r\n${fixed}${req.body ? `content-type: application/json\r\ncontent-length: ${req.body.length}\r\n` : ''}\r\n`;
      b = req.body ? Buffer.concat([Buffer.from(head, 'latin1'), req.body]) : Buffer.from(head, 'latin1');
      cache.set(req, b);
    }
    return b;
  };
  const timer = setInterval(() => {
    const now = performance.now();
    for (const c of conns) c.expire(now);
  }, 250);
  timer.unref();
  return {
    send: (w, req) => conns[w].send(bytesOf(req)),
    close: () => {
      clearInterval(timer);
      for (const c of conns) c.destroy();
    },
  };
}
