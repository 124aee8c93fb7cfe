// The Node adapter: the only file that touches node:http. It turns an IncomingMessage into a Web Request (body
// capped before it is buffered), hands it to the app, and writes the Response back.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from './api-error.ts';
import type { App } from './app.ts';

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
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

function errorResponse(res: ServerResponse, err: ApiError): void {
  const body = err.bodyText();
  res.writeHead(err.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

export function listen(app: App, opts: ListenOptions = {}): Promise<RunningServer> {
  const maxBody = opts.maxBodyBytes ?? 256 * 1024;
  const host = opts.host ?? '127.0.0.1';
  const inFlight = new Set<Promise<void>>();

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const done = handle(req, res);
    inFlight.add(done);
    await done;
    inFlight.delete(done);
  });
  server.headersTimeout = opts.headersTimeoutMs ?? 10_000;
  server.requestTimeout = opts.requestTimeoutMs ?? 30_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      let body: Buffer | undefined;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        const declared = Number(req.headers['content-length'] ?? 0);
        if (declared > maxBody) {
          errorResponse(res, new ApiError(413, 'payload_too_large', `The body is larger than ${maxBody} bytes.`));
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of req) {
          size += (chunk as Buffer).length;
          if (size > maxBody) {
            errorResponse(res, new ApiError(413, 'payload_too_large', `The body is larger than ${maxBody} bytes.`));
            req.destroy();
            return;
          }
          chunks.push(chunk as Buffer);
        }
        body = Buffer.concat(chunks);
      }
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        try {
          headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
        } catch {
          // a header value Headers refuses (control characters) is dropped, like a proxy would
        }
      }
      const url = `http://${host}${req.url && req.url.startsWith('/') ? req.url : '/'}`;
      const request = new Request(url, { method: req.method, headers, body: body as unknown as BodyInit | undefined });
      const response = await app.fetch(request);
      const out: Record<string, string> = {};
      response.headers.forEach((v, k) => (out[k] = v));
      const bytes = response.body ? Buffer.from(await response.arrayBuffer()) : null;
      if (bytes) out['content-length'] = String(bytes.length);
      else if (response.status !== 304) out['content-length'] = '0';
      res.writeHead(response.status, out);
      res.end(bytes ?? undefined);
    } catch (e) {
      if (!res.headersSent) errorResponse(res, new ApiError(400, 'bad_request', 'The request could not be read.'));
      else res.destroy();
      void e;
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
            server.close(() => done());
            server.closeIdleConnections();
            void Promise.all(inFlight).then(() => server.closeIdleConnections());
          }),
      });
    });
  });
}
