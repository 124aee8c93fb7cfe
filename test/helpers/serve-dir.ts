// Test helper: hosts a directory on 127.0.0.1 with serve-handler (the core of the `serve` package, as a CDN
// stand-in), counting requests, with an optional hook to make the server misbehave.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

type ServeHandler = (req: IncomingMessage, res: ServerResponse, config: Record<string, unknown>) => Promise<void>;
const serveHandler = createRequire(import.meta.url)('serve-handler') as ServeHandler;

interface ServedRequest {
  method: string;
  url: string;
  range: string | undefined;
  authorization: string | undefined;
  acceptEncoding: string | undefined;
}

export interface ServedDir {
  /** Base URL of the root, with a trailing slash. */
  baseUrl: string;
  /** Every request received so far. */
  log: ServedRequest[];
  /** Returns true when it answered the request itself; serve-handler answers otherwise. */
  hook: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  close(): Promise<void>;
}

export async function serveDir(root: string): Promise<ServedDir> {
  const served: ServedDir = { baseUrl: '', log: [], hook: null, close: async () => {} };
  const server = createServer((req, res) => {
    served.log.push({
      method: req.method ?? '',
      url: req.url ?? '',
      range: req.headers.range,
      authorization: req.headers.authorization,
      acceptEncoding: req.headers['accept-encoding'],
    });
    if (served.hook?.(req, res)) return;
    serveHandler(req, res, { public: root, directoryListing: false, cleanUrls: false, etag: true }).catch((err) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  served.baseUrl = `http://127.0.0.1:${port}/`;
  served.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return served;
}
