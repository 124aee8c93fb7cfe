// What partners expect from any HTTP API, over real servers on 127.0.0.1: GET /key in the published shape and the
// key-expiry headers (an injected clock expires keys), RateLimit fields, 402 messages, CORS, ETags and 304s (charged
// on costing routes), the bearer challenge, and br/gzip bodies that decode to the identity bytes.
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../runtime/keys/key-file.ts';
import { keysCommand } from '../../runtime/keys/keys-cli.ts';
import { CORS_EXPOSED } from '../../runtime/contract/http-parts.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { client } from '../helpers/api-client.ts';
import { validateResponse } from '../helpers/openapi-validator.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { ID, makeHandWorld, type World } from '../fixtures/hand-world.ts';
import { writeHandRelease } from '../fixtures/hand-release.ts';
import { compileAll } from '../../compiler/compile.ts';

class TestClock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
}

const START = Date.parse('2026-11-10T12:00:00Z');
const DAY = 86_400_000;
/** Seconds from START to the next reset (2026-12-01T00:00:00Z). */
const TO_RESET = (Date.parse('2026-12-01T00:00:00Z') - START) / 1000;
const NOVEMBER = 30 * 86_400;
const LARGE_ID = 'rt0000000000b1a0';
const EXTENSION = { how: 'Write to the partner desk with the key id.', contact: 'partners@example.org' };

let world: World;
let root: string;
const clock = new TestClock(START);
let rt: Runtime;
let twin: Runtime;
const keys: Record<string, string> = {};

beforeAll(async () => {
  world = await makeHandWorld();
  root = mkdtempSync(join(tmpdir(), 'ir-partner-'));
  const file = join(root, 'keys.json');
  const now = new Date(START);
  const add = async (name: string, opts: Parameters<typeof addKey>[0]) => (keys[name] = (await addKey({ ...opts, file, now })).key);
  await add('plain', { name: 'Plain', quota: 1000, rate: 1000 });
  await add('org', { name: 'Org', plan: 'preview', organisation: 'Acme Analytics Ltd', accessModel: 'partner_preview', expires: new Date(START + 30 * DAY).toISOString(), quota: 1000, rate: 1000 });
  await add('soon', { name: 'Soon', expires: new Date(START + 3.5 * DAY).toISOString(), quota: 1000, rate: 1000 });
  await add('metered', { name: 'Metered', quota: 5, rate: 2 });
  await add('tight', { name: 'Tight', quota: 3, rate: 1000 });
  await add('cached', { name: 'Cached', quota: 100, rate: 1000 });
  rt = await startRuntime({ dist: world.dist, keys: file, state: 'memory:', port: 0, clock, keyExtension: EXTENSION });
  // A second instance over the same dist: ETags must not depend on which one answers.
  twin = await startRuntime({ dist: world.dist, keys: file, state: 'memory:', port: 0, clock });
});
afterAll(async () => {
  await rt?.close();
  await twin?.close();
});

const api = (key: string | null) => client(rt.url + '/api/v1', key);

describe('GET /key and key expiry', () => {
  it('answers the published shape for a key without plan, organisation or expiry: nulls, and extend null', async () => {
    const r = await api(keys.plain)('/key');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      key: {
        plan: null, access_model: null, organisation: null, provider: null, expires_at: null, days_remaining: null, expiring_soon: false,
        credits_remaining: 1000, rate_limit_remaining: null, id: keys.plain.slice(3, 11), name: 'Plain', quota: 1000, rate: 1000,
        credits_reset_at: '2026-12-01T00:00:00.000Z',
      },
      extend: null,
    });
    expect(r.headers.get('x-register-key-expires')).toBeNull();
    expect(r.headers.get('cache-control')).toBe('private, no-store');
  });

  it('reports plan, organisation, access model and expiry, and the deployment\'s extension text', async () => {
    const r = await api(keys.org)('/key');
    const expires = new Date(START + 30 * DAY).toISOString();
    expect(r.json.key).toMatchObject({ plan: 'preview', access_model: 'partner_preview', organisation: 'Acme Analytics Ltd', expires_at: expires, days_remaining: 30, expiring_soon: false });
    expect(r.json.extend).toEqual(EXTENSION);
    // The other instance was started without the setting: the default text, and no contact at all (the published
    // `contact` is a string; a null one fails the client's validation against the OpenAPI document).
    const other = await client(twin.url + '/api/v1', keys.org)('/key');
    expect(Object.keys(other.json.extend)).toEqual(['how']);
    expect(other.json.extend.how).toMatch(/extend/);
  });

  it('says expiring_soon from 7 days before the expiry', async () => {
    const r = await api(keys.soon)('/key');
    expect(r.json.key).toMatchObject({ days_remaining: 3, expiring_soon: true });
  });

  it('puts the expiry headers on every authenticated answer of a key that expires, errors included, and on none of a key that does not', async () => {
    const expires = new Date(START + 30 * DAY).toISOString();
    for (const path of ['/key', '/meta', `/entities/${ID.arsenal}`, `/entities/${ID.never}`, '/search?q=a']) {
      const r = await api(keys.org)(path);
      expect(r.headers.get('x-register-key-expires'), path).toBe(expires);
      expect(r.headers.get('x-register-key-days-remaining'), path).toBe('30');
      expect((await api(keys.plain)(path)).headers.get('x-register-key-expires'), path).toBeNull();
    }
  });

  it('answers 401 key_expired once the clock passes the expiry, with the invalid_token challenge', async () => {
    try {
      clock.t = START + 3.5 * DAY - 1;
      const last = await api(keys.soon)('/key');
      expect(last.json.key.days_remaining).toBe(0);
      clock.t = START + 3.5 * DAY + 1;
      const r = await api(keys.soon)(`/entities/${ID.arsenal}`);
      expect(r.status).toBe(401);
      expect(r.json.error).toBe('key_expired');
      expect(r.headers.get('www-authenticate')).toBe('Bearer realm="identity-register", error="invalid_token"');
      expect(r.headers.get('x-register-credits-remaining')).toBeNull();
    } finally {
      clock.t = START;
    }
  });

  it('reads plan, organisation and access model from state-held keys (serve --keys state)', async () => {
    const state = `sqlite:${join(root, 'state.db')}`;
    let out = '';
    await keysCommand(['add', '--name', 'Stored', '--plan', 'bulk', '--organisation', 'Stored Org', '--access-model', 'contract', '--expires', '2027-06-30', '--state', state], {
      out: (t) => void (out += t),
      err: () => {},
    });
    const key = out.trim();
    const stored = await startRuntime({ dist: world.dist, keys: 'state', state, port: 0, clock });
    try {
      const r = await client(stored.url + '/api/v1', key)('/key');
      expect(r.json.key).toMatchObject({ plan: 'bulk', organisation: 'Stored Org', access_model: 'contract', expires_at: '2027-06-30T23:59:59.999Z', days_remaining: 232 });
      expect(r.headers.get('x-register-key-days-remaining')).toBe('232');
    } finally {
      await stored.close();
    }
  });
});

describe('WWW-Authenticate', () => {
  it('is the bare challenge without credentials, and names invalid_token for a bad one', async () => {
    const none = await api(null)('/meta');
    expect(none.status).toBe(401);
    expect(none.json.error).toBe('missing_key');
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="identity-register"');
    const bad = await api('rk_00000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')('/meta');
    expect(bad.json.error).toBe('invalid_key');
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="identity-register", error="invalid_token"');
  });
});

describe('RateLimit fields', () => {
  it('state both policies on every costing answer, count the allowance down, and the spent burst window on a 429', async () => {
    const call = api(keys.metered);
    const policy = `"burst";q=2;w=1, "monthly";q=5;w=${NOVEMBER}`;
    const first = await call(`/entities/${ID.arsenal}`);
    expect(first.headers.get('ratelimit-policy')).toBe(policy);
    expect(first.headers.get('ratelimit')).toBe(`"monthly";r=4;t=${TO_RESET}`);
    const second = await call(`/entities/${ID.never}`); // a 404 is charged and carries them too
    expect(second.status).toBe(404);
    expect(second.headers.get('ratelimit')).toBe(`"monthly";r=3;t=${TO_RESET}`);
    const third = await call(`/entities/${ID.arsenal}`);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(third.headers.get('ratelimit-policy')).toBe(policy);
    expect(third.headers.get('ratelimit')).toBe(`"burst";r=0;t=1, "monthly";r=3;t=${TO_RESET}`);
    try {
      clock.t = START + 1000;
      const later = await call('/search?q=arsenal');
      expect(later.status).toBe(200);
      expect(later.headers.get('ratelimit')).toBe(`"monthly";r=2;t=${TO_RESET - 1}`);
      // Free answers carry neither.
      expect((await call('/meta')).headers.get('ratelimit-policy')).toBeNull();
    } finally {
      clock.t = START;
    }
  });
});

describe('402 quota_exceeded', () => {
  it('says a batch needs more than remains, then that the allowance is used up; detail is the reset time', async () => {
    const call = api(keys.tight);
    const batch = { requests: Array.from({ length: 5 }, () => ({ type: 'entity', id: ID.arsenal })) };
    const tooBig = await call('/batch', { body: batch });
    expect(tooBig.status).toBe(402);
    expect(tooBig.json.message).toMatch(/needs 5 lookups but only 3 of the monthly allowance of 3 remain; nothing was charged/);
    expect(tooBig.json.detail).toBe('2026-12-01T00:00:00.000Z');
    expect(tooBig.headers.get('x-register-credits-remaining')).toBe('3');
    expect((await call('/batch', { body: { requests: batch.requests.slice(0, 3) } })).status).toBe(200);
    const spent = await call(`/entities/${ID.arsenal}`);
    expect(spent.status).toBe(402);
    expect(spent.json.message).toMatch(/allowance of 3 lookups is used up; nothing was charged/);
    expect(spent.json.detail).toBe('2026-12-01T00:00:00.000Z');
    expect(spent.headers.get('ratelimit')).toBe(`"monthly";r=0;t=${TO_RESET}`);
  });
});

describe('CORS', () => {
  it('answers a preflight without a key and without a charge; an unknown path is 404, an OPTIONS that is no preflight 405', async () => {
    const before = (await api(keys.plain)('/key')).json.key.credits_remaining;
    const pre = await api(null)(`/entities/${ID.arsenal}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://partner.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(pre.status).toBe(204);
    expect(pre.text).toBe('');
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/\bAuthorization\b.*\bContent-Type\b/);
    const batch = await api(null)('/batch', { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } });
    expect(batch.headers.get('access-control-allow-methods')).toBe('POST');
    expect((await api(null)('/nope', { method: 'OPTIONS', headers: { 'access-control-request-method': 'GET' } })).status).toBe(404);
    expect((await api(null)('/meta', { method: 'OPTIONS' })).status).toBe(405);
    expect((await api(keys.plain)('/key')).json.key.credits_remaining).toBe(before);
  });

  it('lets any origin read answers and their headers, errors included', async () => {
    for (const [key, path] of [[keys.plain, `/entities/${ID.arsenal}`], [null, '/meta'], [keys.plain, '/entities/nope']] as const) {
      const r = await api(key)(path, { headers: { origin: 'https://partner.example' } });
      expect(r.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(r.headers.get('access-control-expose-headers'), path).toBe(CORS_EXPOSED);
      expect(r.headers.get('access-control-allow-credentials'), path).toBeNull();
    }
    expect(CORS_EXPOSED.split(', ')).toEqual(expect.arrayContaining(['X-Register-Release-Stamp', 'X-Register-Credits-Remaining', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'ETag', 'X-Register-Key-Expires']));
  });
});

describe('ETag and 304', () => {
  const LOOKUPS = [
    `/entities/${ID.arsenal}?include=bridges,aliases`,
    `/entities/${ID.mergedOld}`,
    `/entities/${ID.arsenal}/bridges`,
    `/entities/${ID.arsenal}/overlay`,
    `/entities/${ID.season}/relationships?limit=5`,
    '/resolve/transfermarkt/11?namespace=verein',
    '/search?q=arsenal',
  ];

  it('gives per-stamp lookups a strong ETag; a matching If-None-Match is 304 without a body, and still charged', async () => {
    const call = api(keys.cached);
    for (const path of LOOKUPS) {
      const first = await call(path);
      const etag = first.headers.get('etag')!;
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect(first.headers.get('cache-control'), path).toBe('private, no-cache');
      const credits = Number(first.headers.get('x-register-credits-remaining'));
      const again = await call(path, { headers: { 'if-none-match': `"other", ${etag}` } });
      expect(again.status, path).toBe(304);
      expect(again.text, path).toBe('');
      expect(again.headers.get('etag'), path).toBe(etag);
      expect(Number(again.headers.get('x-register-credits-remaining')), path).toBe(credits - 1);
      // A tag that does not match answers the body again.
      expect((await call(path, { headers: { 'if-none-match': '"stale"' } })).status, path).toBe(200);
    }
  });

  it('gives no tag to answers that are not a function of the stamp and request: misses, the key, batch', async () => {
    const call = api(keys.cached);
    for (const r of [await call(`/entities/${ID.never}`), await call(`/entities/${ID.tomb}`), await call('/key'), await call('/batch', { body: { requests: [{ type: 'entity', id: ID.arsenal }] } })]) {
      expect(r.headers.get('etag')).toBeNull();
    }
  });

  it('tags the precomputed documents with the sha256 the compiler recorded; their 304 is free', async () => {
    const call = api(keys.cached);
    for (const path of ['/', '/meta', '/providers', '/coverage', '/provider-notices/summary']) {
      const r = await call(path);
      const fromBody = `"${createHash('sha256').update(r.text).digest().subarray(0, 16).toString('base64url')}"`;
      expect(r.headers.get('etag'), path).toBe(fromBody);
      const again = await call(path, { headers: { 'if-none-match': fromBody } });
      expect(again.status, path).toBe(304);
      expect(again.headers.get('x-register-credits-remaining'), path).toBeNull();
    }
    // Each namespace's index is its own document.
    expect((await client(rt.url + '/api/next', null)('/')).headers.get('etag')).not.toBe((await call('/')).headers.get('etag'));
  });

  it('is the same on two server instances over the same dist, and differs with the request', async () => {
    const one = api(keys.cached);
    const two = client(twin.url + '/api/v1', keys.cached);
    const tags = new Set<string>();
    for (const path of [...LOOKUPS, '/meta']) {
      const a = (await one(path)).headers.get('etag')!;
      expect((await two(path)).headers.get('etag'), path).toBe(a);
      tags.add(a);
    }
    expect(tags.size).toBe(LOOKUPS.length + 1);
    // The query's order changes no body, and no tag.
    expect((await one('/search?limit=5&q=arsenal')).headers.get('etag')).toBe((await one('/search?q=arsenal&limit=5')).headers.get('etag'));
    const ordered = await one(`/entities/${ID.arsenal}?include=bridges,aliases`);
    const shuffled = await one(`/entities/${ID.arsenal}?include=aliases,bridges,aliases`);
    expect(shuffled.text).toBe(ordered.text);
    expect(shuffled.headers.get('etag')).toBe(ordered.headers.get('etag'));
    expect((await one(`/entities/${ID.arsenal}?include=aliases`)).headers.get('etag')).not.toBe(ordered.headers.get('etag'));
  });
});

describe('compression', () => {
  const url = () => `${rt.url}/api/v1/entities/${ID.arsenal}?include=aliases,attributes,bridges,relationships,overlay`;
  const auth = () => ({ authorization: `Bearer ${keys.plain}` });

  it('codes bodies of 1 KiB and more as br or gzip, deterministically, decoding to the identity bytes', async () => {
    const identity = await rawRequest(url(), { headers: { ...auth(), 'accept-encoding': 'identity' } });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.length).toBeGreaterThanOrEqual(1024);
    expect(identity.headers.vary).toBe('Accept-Encoding');
    for (const [accept, coding] of [['br', 'br'], ['gzip', 'gzip'], ['gzip, deflate, br', 'br'], ['br;q=0.5, gzip', 'gzip'], ['*', 'br'], ['br;q=0, gzip;q=0', undefined]] as const) {
      const a = await rawRequest(url(), { headers: { ...auth(), 'accept-encoding': accept } });
      const b = await rawRequest(url(), { headers: { ...auth(), 'accept-encoding': accept } });
      expect(a.headers['content-encoding'], accept).toBe(coding);
      expect(a.body.equals(identity.body), accept).toBe(true);
      expect(a.wire.equals(b.wire), `${accept}: same bytes every time`).toBe(true);
      if (coding) {
        expect(a.wire.length, accept).toBeLessThan(identity.body.length);
        expect(a.headers['content-length'], accept).toBe(String(a.wire.length));
        expect(a.headers.etag, accept).toBe(identity.headers.etag.replace(/"$/, `.${coding === 'br' ? 'br' : 'gz'}"`));
      }
    }
  });

  it('leaves small bodies and 304 uncoded, states a HEAD as its coded GET; a coded tag revalidates to a 304 that keeps it', async () => {
    const small = await rawRequest(`${rt.url}/api/v1/key`, { headers: { ...auth(), 'accept-encoding': 'br' } });
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    const get = await rawRequest(url(), { headers: { ...auth(), 'accept-encoding': 'br' } });
    const head = await rawRequest(url(), { method: 'HEAD', headers: { ...auth(), 'accept-encoding': 'br' } });
    expect([head.headers['content-encoding'], head.headers.etag, head.headers['content-length']]).toEqual(['br', get.headers.etag, String(get.wire.length)]);
    expect(head.wire.length).toBe(0);
    const coded = await rawRequest(url(), { headers: { ...auth(), 'accept-encoding': 'gzip' } });
    const revalidated = await rawRequest(url(), { headers: { ...auth(), 'accept-encoding': 'gzip', 'if-none-match': coded.headers.etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.wire.length).toBe(0);
    expect(revalidated.headers['content-encoding']).toBeUndefined();
    expect(revalidated.headers.etag).toBe(coded.headers.etag);
  });
});

describe('compression of a batch sent in pieces', () => {
  let big: Runtime;
  let bigKey: string;
  beforeAll(async () => {
    // One team with 2,000 bridges: its answer with bridges is ~220 KB, so six of them make a batch of pieces.
    const dir = mkdtempSync(join(tmpdir(), 'ir-partner-large-'));
    const entity = [LARGE_ID, 'team', 'active', 'Many Bridges F.C.', '', '', '', '', ''];
    const bridges = Array.from({ length: 2000 }, (_, i) => ['transfermarkt', 'verein', String(1_000_000 + i), LARGE_ID, '']);
    writeHandRelease(join(dir, 'releases'), '20261101T000000Z', { entities: [entity], bridges }, { gzip: true });
    await compileAll({ releases: join(dir, 'releases'), dist: join(dir, 'dist'), progress: false });
    const file = join(dir, 'keys.json');
    bigKey = (await addKey({ file, name: 'large', quota: 1000, rate: 1000 })).key;
    big = await startRuntime({ dist: join(dir, 'dist'), keys: file, state: 'memory:', port: 0 });
  });
  afterAll(async () => {
    await big?.close();
  });

  it('streams the coded pieces (chunked) and they decode to the identity answer, the same bytes each time', async () => {
    // Six times the entity with its bridges: over the 1 MiB (FLUSH_BYTES) at which a batch is sent as pieces.
    const body = JSON.stringify({ requests: Array.from({ length: 6 }, () => ({ type: 'entity', id: LARGE_ID })), include: 'bridges' });
    const send = (accept: string) =>
      rawRequest(`${big.url}/api/v1/batch`, { method: 'POST', body, headers: { authorization: `Bearer ${bigKey}`, 'content-type': 'application/json', 'accept-encoding': accept } });
    const identity = await send('identity');
    expect(identity.body.length).toBeGreaterThan(1024 * 1024);
    for (const coding of ['br', 'gzip']) {
      const a = await send(coding);
      expect(a.headers['content-encoding']).toBe(coding);
      expect(a.headers['transfer-encoding']).toBe('chunked');
      expect(a.headers['content-length']).toBeUndefined();
      expect(a.body.equals(identity.body), coding).toBe(true);
      expect((await send(coding)).wire.equals(a.wire), coding).toBe(true);
    }
  });
});

describe('external IDs that are dot segments', () => {
  // One team whose Transfermarkt IDs are `.` and `..`: a URL parser resolves such a segment, `%2E%2E` included, so
  // the server reads the path itself and keeps an encoded dot segment as the value it stands for.
  const TEAM = 'rt0000000000d07a';
  let dots: Runtime;
  let dotKey: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ir-partner-dots-'));
    const entity = [TEAM, 'team', 'active', 'Dot Segments F.C.', '', '', '', '', ''];
    const bridges = ['.', '..', 'notices'].map((ext) => ['transfermarkt', 'verein', ext, TEAM, '']);
    writeHandRelease(join(dir, 'releases'), '20261101T000000Z', { entities: [entity], bridges }, { gzip: true });
    await compileAll({ releases: join(dir, 'releases'), dist: join(dir, 'dist'), progress: false });
    const file = join(dir, 'keys.json');
    dotKey = (await addKey({ file, name: 'dots', quota: 1000, rate: 1000 })).key;
    dots = await startRuntime({ dist: join(dir, 'dist'), keys: file, state: 'memory:', port: 0, pages: null });
  });
  afterAll(async () => {
    await dots?.close();
  });

  /** GET `path` exactly as written on the request line (node:http sends an options path unparsed). */
  const onTheWire = (path: string) =>
    new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: dots.server.port, path, headers: { authorization: `Bearer ${dotKey}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
          try {
            validateResponse({ method: 'GET', path, status: res.statusCode ?? 0, headers, body });
            resolve({ status: res.statusCode ?? 0, headers, body });
          } catch (e) {
            reject(e);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });

  for (const [encoded, value] of [['%2E', '.'], ['%2e%2E', '..'], ['.%2E', '..']] as const) {
    it(`GET /resolve/transfermarkt/${encoded} resolves the external ID ${JSON.stringify(value)}, over a socket and in-process`, async () => {
      const path = `/api/v1/resolve/transfermarkt/${encoded}?namespace=verein`;
      const wire = await onTheWire(path);
      expect([wire.status, JSON.parse(wire.body).results.map((e: { reep_id: string }) => e.reep_id)], path).toEqual([200, [TEAM]]);
      // In-process: a request whose URL no parser has touched, as an adapter hands it over.
      const request = { url: `http://127.0.0.1${path}`, method: 'GET', headers: new Headers({ authorization: `Bearer ${dotKey}` }) } as unknown as Request;
      const answer = await dots.app.answer(request);
      expect([answer.status, JSON.parse(new TextDecoder().decode(answer.body as Uint8Array)).count], path).toEqual([200, 1]);
    });
  }

  it('an encoded `..` provider stays a provider (400 unknown_provider), never a walk up to /notices', async () => {
    const r = await onTheWire('/api/v1/resolve/%2E%2E/notices');
    expect([r.status, JSON.parse(r.body).error]).toEqual([400, 'unknown_provider']);
  });
});
