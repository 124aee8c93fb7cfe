// Raw-socket HTTP for tests that must misbehave on the wire (dribble bytes, never finish, send 10 MB), which no
// HTTP client library would do, plus a steady well-behaved client to show the server keeps serving meanwhile.
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  /** performance.now() when the connection was opened: `closed` and `waitFor` count from it. */
  openedAt: number;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with ms since connect when the server closes (or resets) the connection. */
  closed: Promise<number>;
  /** Resolves with ms since connect once `text` appears in what the server sent. */
  waitFor(text: string, timeoutMs?: number): Promise<number>;
}

export function rawConnect(port: number): RawConnection {
  const t0 = performance.now();
  const socket = connect(port, '127.0.0.1');
  let data = '';
  const waiters: { text: string; resolve: (ms: number) => void }[] = [];
  socket.on('data', (d) => {
    data += d.toString('latin1');
    for (const w of waiters.splice(0)) {
      if (data.includes(w.text)) w.resolve(performance.now() - t0);
      else waiters.push(w);
    }
  });
  // A reset while we are still writing is an expected way for these connections to end.
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now() - t0)));
  return {
    socket,
    openedAt: t0,
    received: () => data,
    closed,
    waitFor(text, timeoutMs = 10_000) {
      if (data.includes(text)) return Promise.resolve(performance.now() - t0);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} from the server after ${timeoutMs} ms; got ${JSON.stringify(data.slice(0, 300))}`)), timeoutMs);
        waiters.push({ text, resolve: (ms) => (clearTimeout(timer), resolve(ms)) });
        void closed.then(() => setTimeout(() => reject(new Error(`connection closed without ${JSON.stringify(text)}; got ${JSON.stringify(data.slice(0, 300))}`)), 0));
      });
    },
  };
}

/** Writes `chunk` every `everyMs` until the connection closes: a slowloris. */
export function dribble(c: RawConnection, chunk: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (c.socket.destroyed || !c.socket.writable) clearInterval(timer);
    else c.socket.write(chunk);
  }, everyMs);
  void c.closed.then(() => clearInterval(timer));
}

/** The status line, headers and body of the first response in `raw`. */
export function parseFirstResponse(raw: string): { status: number; headers: Headers; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers = new Headers();
  for (const l of lines) headers.append(l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim());
  const length = Number(headers.get('content-length') ?? 0);
  const bodyBytes = Buffer.from(raw.slice(end + 4), 'latin1').subarray(0, length);
  return { status: Number(statusLine.split(' ')[1]), headers, body: bodyBytes.toString('utf8') };
}

export interface SteadyStats {
  ok: number;
  failed: string[];
  /** performance.now() at the end of each 200. */
  answeredAt: number[];
}

/** A well-behaved client: one GET every `everyMs` on a fresh connection, until stopped. */
export function steadyClient(url: string, headers: Record<string, string>, everyMs: number): { stop(): Promise<SteadyStats> } {
  const stats: SteadyStats = { ok: 0, failed: [], answeredAt: [] };
  const pending = new Set<Promise<void>>();
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const req = httpRequest(url, { headers: { ...headers, connection: 'close' } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) {
            stats.ok++;
            stats.answeredAt.push(performance.now());
          } else stats.failed.push(`status ${res.statusCode}`);
          resolve();
        });
      });
      req.on('error', (e) => {
        stats.failed.push(e.message);
        resolve();
      });
      req.end();
    });
  const timer = setInterval(() => {
    const p = one();
    pending.add(p);
    void p.then(() => pending.delete(p));
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return stats;
    },
  };
}
