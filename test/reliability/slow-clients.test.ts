// Abusive clients on the wire: slow headers, slow bodies and idle sockets are cut off by the server's timeouts
// while a well-behaved client keeps being served; oversize bodies get a quick, documented 413; broken HTTP gets an
// Error body.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeyStore } from '../../runtime/keys/key-store.ts';
import { listen, type RunningServer } from '../../runtime/node-adapter.ts';
import { MAX_HEADER_FIELDS } from '../../common/request-limits.ts';
import { buildApp } from '../../runtime/server.ts';
import { createFsSource } from '../../runtime/source/fs-source.ts';
import { createMemoryStore } from '../../runtime/state/memory-store.ts';
import { validateProtocolRefusal, validateResponse } from '../helpers/openapi-validator.ts';
import { eventually } from '../helpers/eventually.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { ID, STAMPS } from '../fixtures/hand-world.ts';
import { dribble, parseFirstResponse, rawConnect, steadyClient, type RawConnection, type SteadyStats } from './support/raw-http.ts';
import { makeFuzzWorld, type FuzzWorld } from './support/reliability-world.ts';

// Short timeouts so the test is quick; the production defaults (10 s / 30 s) take the same code path. They are
// still long enough that a busy machine starving this process for a moment cannot time out the steady client:
// at 400 ms it did, under load.
const HEADERS_TIMEOUT = 1500;
const REQUEST_TIMEOUT = 3000;
// A cut must come, and never before its timeout; how soon after depends on the machine, so the upper bound only
// catches a server that never cuts.
const NEVER = 20_000;

let world: FuzzWorld;
let server: RunningServer;
let keyStore: ReturnType<typeof openKeyStore>;
let source: ReturnType<typeof createFsSource>;
let auth: string;

beforeAll(async () => {
  world = await makeFuzzWorld();
  auth = `Authorization: Bearer ${world.keys.partner}\r\n`;
  keyStore = openKeyStore({ file: world.keysFile });
  source = createFsSource({ root: world.dist });
  const { app } = buildApp({ dist: world.dist, source, store: createMemoryStore(), keyStore });
  server = await listen(app, { port: 0, headersTimeoutMs: HEADERS_TIMEOUT, requestTimeoutMs: REQUEST_TIMEOUT });
});
afterAll(async () => {
  await server?.close();
  keyStore?.close();
  await source?.close(); // its pack handles, which garbage collection would otherwise close (Node warns, DEP0137)
  if (world) rmSync(world.root, { recursive: true, force: true });
});

function steady() {
  return steadyClient(`${server.url}/api/v1/meta`, { authorization: `Bearer ${world.keys.partner}` }, 40);
}

/**
 * Every connection was closed by the server no sooner than `min` ms after connecting (and well before NEVER), with a
 * 408 Error body. Resolves with the moment (performance.now) of the first cut.
 */
async function expectCutWith408(conns: RawConnection[], min: number): Promise<number> {
  const times = await Promise.all(conns.map((c) => c.closed));
  expect(Math.min(...times)).toBeGreaterThanOrEqual(min - 50);
  expect(Math.max(...times)).toBeLessThan(min + NEVER);
  for (const c of conns) {
    const r = parseFirstResponse(c.received());
    expect(r.status).toBe(408);
    validateProtocolRefusal(r);
  }
  return Math.min(...conns.map((c, i) => c.openedAt + times[i]));
}

/**
 * The steady client was never refused, and was answered while the slow clients still held their connections: at
 * least `minOk` of its requests ended before the first of them was cut. An order of events, not a latency, so a
 * slow machine passes as long as the server does not make the steady client wait for the slow ones.
 */
function expectServedMeanwhile(stats: SteadyStats, firstCut: number, minOk: number): void {
  expect(stats.failed).toEqual([]);
  expect(stats.answeredAt.filter((t) => t < firstCut).length).toBeGreaterThanOrEqual(minOk);
}

describe('slow and idle clients', () => {
  it('50 slow-header clients are cut at the headers timeout while a steady client is served', async () => {
    const client = steady();
    const conns = Array.from({ length: 50 }, () => {
      const c = rawConnect(server.port);
      c.socket.write('GET /api/v1/meta HTTP/1.1\r\nHost: x\r\n');
      dribble(c, 'X', 50); // one byte of a header line every 50 ms, never the blank line that ends the headers
      return c;
    });
    const firstCut = await expectCutWith408(conns, HEADERS_TIMEOUT);
    expectServedMeanwhile(await client.stop(), firstCut, 3);
  });

  it('30 idle connections that never send a byte are cut at the headers timeout', async () => {
    const conns = Array.from({ length: 30 }, () => rawConnect(server.port));
    await expectCutWith408(conns, HEADERS_TIMEOUT);
  });

  it('20 slow-body clients are cut at the request timeout while a steady client is served', async () => {
    const client = steady();
    const conns = Array.from({ length: 20 }, () => {
      const c = rawConnect(server.port);
      c.socket.write(`POST /api/v1/batch HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{`);
      dribble(c, ' ', 50); // headers on time, then the body one byte at a time
      return c;
    });
    const firstCut = await expectCutWith408(conns, REQUEST_TIMEOUT);
    expectServedMeanwhile(await client.stop(), firstCut, 3);
  });
});

/** Resolves when the socket can take more data or has closed. */
function writable(c: RawConnection): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      c.socket.off('drain', done);
      c.socket.off('close', done);
      resolve();
    };
    c.socket.on('drain', done);
    c.socket.on('close', done);
  });
}

describe('body cap', () => {
  const tenMb = Buffer.alloc(10 * 1024 * 1024, 0x20);
  // A server of its own whose timeouts cannot fire while 10 MB crosses a busy machine: what is tested here is the
  // cap, and a request timeout racing the 413 would answer 408 instead.
  let capped: RunningServer;
  beforeAll(async () => {
    const { app } = buildApp({ dist: world.dist, source, store: createMemoryStore(), keyStore });
    capped = await listen(app, { port: 0, headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, shutdownGraceMs: 1000 });
  });
  afterAll(() => capped?.close());

  async function send10Mb(head: string, chunked: boolean): Promise<RawConnection> {
    const c = rawConnect(capped.port);
    c.socket.write(head);
    if (chunked) {
      for (let off = 0; off < tenMb.length; off += 65536) c.socket.write(`10000\r\n${tenMb.subarray(off, off + 65536).toString('latin1')}\r\n`);
      c.socket.write('0\r\n\r\n');
    } else c.socket.write(tenMb);
    await c.waitFor('}', 30_000);
    return c;
  }

  for (const chunked of [false, true]) {
    it(`a 10 MB body (${chunked ? 'chunked' : 'Content-Length'}) gets a documented 413, and the connection is reused after it`, async () => {
      const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${tenMb.length}`;
      const c = await send10Mb(`POST /api/v1/batch HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n${framing}\r\n\r\n`, chunked);
      const r = parseFirstResponse(c.received());
      expect(r.status).toBe(413);
      // The app itself answers, so the 413 carries what every answer carries (it used to miss the stamp header).
      expect(r.headers.get('x-register-release-stamp')).toBe(STAMPS[1]);
      validateResponse({ method: 'POST', path: '/api/v1/batch', status: r.status, headers: r.headers, body: r.body });
      // The rest of the 10 MB was read and dropped, so the same connection answers the next request.
      const before = c.received().length;
      c.socket.write(`GET /api/v1/meta HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
      await c.waitFor('"api_schema"', 30_000);
      expect(parseFirstResponse(c.received().slice(before)).status).toBe(200);
      c.socket.destroy();
    });
  }

  it('a 10 MB body on a GET-only path gets 405 (the path is judged before the body), without reading it all into memory', async () => {
    const c = await send10Mb(`PUT /api/v1/meta HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${tenMb.length}\r\n\r\n`, false);
    const r = parseFirstResponse(c.received());
    expect(r.status).toBe(405);
    validateResponse({ method: 'PUT', path: '/api/v1/meta', status: r.status, headers: r.headers, body: r.body });
    c.socket.destroy();
  });

  it('a body far past the drain limit still gets its 413, then the connection is cut', async () => {
    const c = rawConnect(capped.port);
    c.socket.write(`POST /api/v1/batch HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n`);
    // Keep sending until the server gives up on us; a real client would stop on reading the 413.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    while (!c.socket.destroyed && sent < 200) {
      if (!c.socket.write(chunk)) await writable(c);
      sent++;
    }
    await c.closed;
    expect(sent).toBeLessThan(200);
    expect(parseFirstResponse(c.received()).status).toBe(413);
  });
});

describe('shutdown with slow clients connected', () => {
  it('close() finishes a slow in-flight request, tells keep-alive clients to go, and does not wait forever for a slowloris', async () => {
    const keys = openKeyStore({ file: world.keysFile });
    const ownSource = createFsSource({ root: world.dist });
    const { app } = buildApp({ dist: world.dist, source: ownSource, store: createMemoryStore(), keyStore: keys });
    const own = await listen(app, { port: 0, headersTimeoutMs: HEADERS_TIMEOUT, requestTimeoutMs: REQUEST_TIMEOUT });
    try {
      // A keep-alive client with one answered request, a body arriving slowly, and headers that never end.
      const keepAlive = rawConnect(own.port);
      keepAlive.socket.write(`GET /api/v1/meta HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
      await keepAlive.waitFor('"api_schema"');
      const body = JSON.stringify({ requests: [{ type: 'entity', id: 'rt00000000000a01' }] });
      const slowBody = rawConnect(own.port);
      slowBody.socket.write(`POST /api/v1/batch HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      const slowloris = rawConnect(own.port);
      slowloris.socket.write('GET /api/v1/meta HTTP/1.1\r\nHost: x\r\n');
      dribble(slowloris, 'X', 50);
      await new Promise((r) => setTimeout(r, 100));

      const t0 = performance.now();
      let bodySent = false;
      let answered = false;
      const keepAliveClosedEarly = keepAlive.closed.then(() => !bodySent);
      const closed = own.close().then(() => ({ ms: performance.now() - t0, afterAnswer: answered }));
      // Node stops sweeping for timed-out connections once close() is called, so only the adapter's own limit
      // ends the slowloris; without it close() never resolves.
      // The body arrives after close() in two halves, the second once the keep-alive connection was closed (or
      // a long while passed, when the assertion below fails): an order of events, so a busy machine that delays
      // each write cannot stretch the body past the request timeout, as a byte every few ms once could.
      const half = Math.floor(body.length / 2);
      slowBody.socket.write(body.slice(0, half));
      await Promise.race([keepAlive.closed, new Promise((r) => setTimeout(r, REQUEST_TIMEOUT / 2))]);
      slowBody.socket.write(body.slice(half));
      bodySent = true;
      await slowBody.waitFor('"results"');
      answered = true;
      expect(parseFirstResponse(slowBody.received()).status).toBe(200);
      expect(parseFirstResponse(slowBody.received()).headers.get('connection')).toBe('close');
      // The idle keep-alive connection is closed at once (while the slow body is still arriving), not left for the
      // client to reuse.
      expect(await keepAliveClosedEarly).toBe(true);
      // close() waited for the in-flight request, then gave up on the slowloris after its grace (the request
      // timeout) rather than never.
      const done = await closed;
      expect(done.afterAnswer).toBe(true);
      expect(done.ms).toBeLessThan(REQUEST_TIMEOUT + NEVER);
      await slowloris.closed;
    } finally {
      await Promise.race([own.close(), new Promise((r) => setTimeout(r, 100))]);
      own.server.closeAllConnections();
      keys.close();
      await ownSource.close();
    }
  });
});

/** Every complete response at the start of `raw`, in order. */
function completeResponses(raw: string): ReturnType<typeof parseFirstResponse>[] {
  const out: ReturnType<typeof parseFirstResponse>[] = [];
  while (raw.includes('\r\n\r\n')) {
    const r = parseFirstResponse(raw);
    // The raw text is latin1, one character per byte, so the body's end is an index.
    const end = raw.indexOf('\r\n\r\n') + 4 + Number(r.headers.get('content-length'));
    if (raw.length < end) break;
    out.push(r);
    raw = raw.slice(end);
  }
  return out;
}

describe('broken HTTP', () => {
  /** The one answer a connection gets to `text` before the server closes it. */
  async function refusal(text: string): Promise<ReturnType<typeof parseFirstResponse>> {
    const c = rawConnect(server.port);
    c.socket.write(text);
    await c.closed;
    const r = parseFirstResponse(c.received());
    expect(r.headers.get('connection')).toBe('close');
    validateProtocolRefusal(r);
    return r;
  }

  it('garbage instead of a request line gets 400 with an Error body', async () => {
    expect((await refusal('THIS IS NOT HTTP\r\n\r\n')).status).toBe(400);
  });

  it('a malformed request line (a bad method token, a space in the target) gets 400 with an Error body', async () => {
    expect((await refusal('G(T /api/v1/meta HTTP/1.1\r\nHost: x\r\n\r\n')).status).toBe(400);
    expect((await refusal('GET /api/v1/me ta HTTP/1.1\r\nHost: x\r\n\r\n')).status).toBe(400);
  });

  it('headers over 16 KB get 431 with an Error body', async () => {
    expect((await refusal(`GET /api/v1/meta HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).status).toBe(431);
  });

  it('more header fields than the limit get 431 with an Error body, never an answer with a field dropped', async () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `X-Filler-${i}: ${i}\r\n`).join('');
    // Host and Authorization after the fillers: a server that dropped the fields past its count would answer 401.
    const over = await refusal(`GET /api/v1/key HTTP/1.1\r\n${fields(MAX_HEADER_FIELDS - 1)}Host: x\r\n${auth}\r\n`);
    expect([over.status, JSON.parse(over.body).error]).toEqual([431, 'headers_too_large']);
    // Exactly at the limit, every field is read: the key is found.
    const c = rawConnect(server.port);
    c.socket.write(`GET /api/v1/key HTTP/1.1\r\n${fields(MAX_HEADER_FIELDS - 3)}Host: x\r\n${auth}Connection: close\r\n\r\n`);
    await c.closed;
    const r = parseFirstResponse(c.received());
    expect(r.status).toBe(200);
    validateResponse({ method: 'GET', path: '/api/v1/key', status: r.status, headers: r.headers, body: r.body });
  });

  it('an HTTP/1.1 request without Host gets 400 with an Error body (Node would send none)', async () => {
    const r = await refusal(`GET /api/v1/meta HTTP/1.1\r\n${auth}\r\n`);
    expect([r.status, JSON.parse(r.body).message]).toEqual([400, 'An HTTP/1.1 request needs a Host header.']);
  });

  it('an Expect other than 100-continue gets 417 with an Error body', async () => {
    expect((await refusal(`GET /api/v1/meta HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n${auth}\r\n`)).status).toBe(417);
  });

  it('CONNECT gets 405 with Allow and an Error body instead of a silent close', async () => {
    const r = await refusal('CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  /** The credits the partner key has left, asked over HTTP (free). */
  async function creditsLeft(): Promise<number> {
    const r = await rawRequest(`${server.url}/api/v1/key`, { headers: { authorization: `Bearer ${world.keys.partner}` } });
    return JSON.parse(r.body.toString('utf8')).key.credits_remaining;
  }

  const LOOKUPS = [ID.palmer, ID.arsenal, ID.chelsea, ID.match, ID.palmer].map((id) => `/api/v1/entities/${id}`);
  const BROKEN: [string, string, number][] = [
    ['a malformed request', 'NOT HTTP AT ALL\r\n\r\n', 400],
    ['one with 17 KB of headers', `GET /api/v1/meta HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431],
  ];
  for (const [what, broken, status] of BROKEN) {
    it(`five lookups pipelined before ${what}: five answers, then the ${status}, and exactly five lookups charged`, async () => {
      const before = await creditsLeft();
      const c = rawConnect(server.port);
      c.socket.write(LOOKUPS.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`).join('') + broken);
      await c.closed;
      const got = completeResponses(c.received());
      expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, status]);
      got.slice(0, 5).forEach((r, i) => {
        validateResponse({ method: 'GET', path: LOOKUPS[i], status: r.status, headers: r.headers, body: r.body });
        expect(JSON.parse(r.body).reep_id).toBe(LOOKUPS[i].split('/').pop());
      });
      validateProtocolRefusal(got[5]);
      expect(before - (await creditsLeft())).toBe(5);
    });
  }

  it('lookups whose answers never reach the client (it closed the connection while they waited their turn) are refunded', async () => {
    const before = await creditsLeft();
    const c = rawConnect(server.port);
    // A client that reads nothing, asking for ~14 MB of free answers: more than the kernel buffers between the two
    // hold (a few MB on loopback), so the lookups behind them are read and charged while their answers wait.
    c.socket.pause();
    const big = 'GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100);
    c.socket.write(big + LOOKUPS.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`).join(''));
    await eventually('the five lookups charged', async () => (await creditsLeft()) === before - 5);
    c.socket.destroy();
    await eventually('the five lookups refunded', async () => (await creditsLeft()) === before);
  });

  it('garbage pipelined after a good request: the good answer first, whole, then the 400 with its body', async () => {
    const c = rawConnect(server.port);
    const path = `/api/v1/entities/${ID.arsenal}?include=bridges`;
    c.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\nNOT HTTP AT ALL\r\n\r\n`);
    await c.closed;
    const raw = c.received();
    const first = parseFirstResponse(raw);
    expect(first.status).toBe(200);
    validateResponse({ method: 'GET', path, status: first.status, headers: first.headers, body: first.body });
    const rest = raw.slice(raw.indexOf('\r\n\r\n') + 4 + Number(first.headers.get('content-length')));
    const second = parseFirstResponse(rest);
    expect(second.status).toBe(400);
    validateProtocolRefusal(second);
  });
});

describe('pipelining', () => {
  it('answers requests pipelined on one connection in their order, each whole, though answers wait for the end of the turn', async () => {
    // The adapter writes answers at the end of the event loop's turn, all together: on one connection they must
    // still go out in request order, with the right body under each head.
    const c = rawConnect(server.port);
    const paths = [`/api/v1/entities/${ID.palmer}`, '/api/v1/nope', `/api/v1/entities/${ID.arsenal}?include=bridges`, '/api/v1/meta', `/api/v1/entities/${ID.match}`];
    c.socket.write(paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`).join(''));
    let got = completeResponses(c.received());
    await eventually('every pipelined answer', () => (got = completeResponses(c.received())).length >= paths.length).catch(() => {});
    c.socket.destroy();
    expect(got.map((r) => r.status)).toEqual([200, 404, 200, 200, 200]);
    got.forEach((r, i) => validateResponse({ method: 'GET', path: paths[i].split('?')[0], status: r.status, headers: r.headers, body: r.body }));
    expect(JSON.parse(got[0].body).reep_id).toBe(ID.palmer);
    expect(JSON.parse(got[1].body)).toMatchObject({ error: 'not_found' });
    expect(JSON.parse(got[2].body)).toMatchObject({ reep_id: ID.arsenal, bridges: expect.any(Array) });
    expect(JSON.parse(got[3].body)).toHaveProperty('api_version');
    expect(JSON.parse(got[4].body).reep_id).toBe(ID.match);
  });
});
