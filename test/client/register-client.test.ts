// The typed client against the whole app in process: every endpoint, and each contract rule it knows (429 retried
// after Retry-After within bounds, merged IDs' redirects surfaced, HTTP redirects refused, 409 candidates as data,
// batches split within the caps and charged exactly, paged feeds as async iterators, headers on every result). Every
// response from the register is checked against the OpenAPI document on the way in.
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_MAX_ITEMS, BATCH_MAX_RESOLVE, createRegisterClient, RegisterApiError, RegisterRedirectError, splitBatch, type BatchItem, type RegisterClient } from 'identity-register/client';
import { compileAll } from '../../compiler/compile.ts';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { ID, STAMPS, makeHandWorld, type World } from '../fixtures/hand-world.ts';
import { compiledSamples } from '../fixtures/compiled-fixtures.ts';
import { writeHandRelease } from '../fixtures/hand-release.ts';
import { openInProcess, type InProcessRuntime } from '../helpers/in-process.ts';
import { validatingFetch } from '../helpers/validating-fetch.ts';

let world: World;
let rt: InProcessRuntime;
let keysFile: string;
const keys: Record<string, string> = {};
let client: RegisterClient;
const fetched = validatingFetch();
/** Signs /matches cursors (the runtime's `cursorSecret`; at least 32 characters). */
const CURSOR_SECRET = 'the client test deployment secret, 32+ characters';

beforeAll(async () => {
  world = await makeHandWorld();
  keysFile = join(world.root, 'keys.json');
  keys.partner = (await addKey({ file: keysFile, name: 'partner', quota: 100_000, rate: 1000 })).key;
  keys.opta = (await addKey({ file: keysFile, name: 'opta', quota: 1000, rate: 1000, provider: 'opta' })).key;
  rt = await openInProcess({ dist: world.dist, keys: keysFile, state: 'memory:', pages: null, cursorSecret: CURSOR_SECRET });
  client = createRegisterClient({ baseUrl: `${rt.url}/api/v1`, key: keys.partner, fetch: fetched });
});
afterAll(async () => {
  await rt?.close();
});

const credits = async (): Promise<number> => (await client.key()).data.key.credits_remaining!;

describe('every endpoint, typed', () => {
  it('metadata: index (no key), meta, providers, coverage, notice summary, key, openapi', async () => {
    const anonymous = createRegisterClient({ baseUrl: `${rt.url}/api/v1`, fetch: fetched });
    const index = await anonymous.index();
    expect(index.data.release.stamp).toBe(STAMPS[1]);
    expect(index.meta.stamp).toBe(STAMPS[1]);
    expect((await client.meta()).data.counts.entities).toBe(6);
    const providers = (await client.providers()).data;
    expect(providers.provider_roles.wyscout).toBe('bridge_only');
    expect((await client.coverage()).data.stamp).toBe(STAMPS[1]);
    expect((await client.noticeSummary()).data.summary).toMatchObject({ findings: 4 });
    const key = await client.key();
    expect(key.data.key.name).toBe('partner');
    expect(key.meta.creditsRemaining).toBeNull(); // /key costs nothing: no credits header
    expect((await client.openapi()).data.openapi).toBe('3.1.0');
  });

  it('lookups: search, entity with includes, bridges, overlay, relationships; credits on each', async () => {
    const before = await credits();
    const found = await client.search('arsenal', { limit: 5 });
    expect(found.data.results[0].reep_id).toBe(ID.arsenal);
    const arsenal = await client.entity(ID.arsenal, { include: ['bridges', 'overlay'] });
    expect(arsenal.redirect).toBeNull();
    expect(arsenal.data.bridges?.some((b) => b.provider === 'transfermarkt' && b.namespace === 'verein' && b.external_id === '11')).toBe(true);
    expect(arsenal.data.overlay?.kb?.qid).toBe('Q9617');
    expect((await client.bridges(ID.arsenal)).data.count).toBeGreaterThan(0);
    expect((await client.overlay(ID.arsenal)).data.overlay.kb?.qid).toBe('Q9617');
    const rels = await client.relationships(ID.arsenal, { limit: 5 });
    expect(rels.data.relationships.map((r) => r.family)).toContain('participates_in');
    expect(rels.meta.creditsRemaining).toBe(before - 5);
    expect(rels.meta.stamp).toBe(STAMPS[1]);
  });

  it('changelog: releases, summary, a page with its ETag, and every page through the iterator', async () => {
    const releases = (await client.releases()).data;
    expect(releases.latest).toBe(STAMPS[1]);
    const summary = await client.changesSummary({ since: STAMPS[0] });
    const total = Object.values(summary.data.counts).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(2);
    const page = await client.changes({ from: STAMPS[0], limit: 2 });
    expect(page.meta.etag).toMatch(/^"/);
    const seen: string[] = [];
    let pages = 0;
    for await (const p of client.changePages({ from: STAMPS[0], limit: 2 })) {
      pages++;
      seen.push(...p.data.events.map((e) => `${e.type} ${e.reep_id}`));
    }
    expect(seen.length).toBe(total);
    expect(pages).toBe(Math.ceil(total / 2));
    expect(seen.slice(0, 2)).toEqual(page.data.events.map((e) => `${e.type} ${e.reep_id}`));
  });

  it('matches: one typed page for a team, by ID and by provider reference, one lookup each', async () => {
    const before = await credits();
    const page = await client.matches({ team: [ID.arsenal], from: '2024-01-01' });
    expect(page.meta.status).toBe(200);
    expect(page.meta.creditsRemaining).toBe(before - 1);
    expect(page.data.count).toBe(1);
    expect(page.data.next_cursor).toBeNull();
    expect(page.data.generation).toMatch(/^[0-9a-f]{64}$/);
    const [m] = page.data.matches;
    expect(m).toMatchObject({ reep_id: ID.match, played_on: '2024-10-01', state: 'played', home: { reep_id: ID.arsenal, label: 'Arsenal F.C.' }, away: { reep_id: ID.chelsea }, home_score: 2 });
    expect(m.bridges).toContainEqual({ provider: 'opta', namespace: '', external_id: 'g1' });
    // A provider reference names the same team; one that resolves to nothing is listed, the page empty.
    expect((await client.matches({ team: ['fbref::18bb7c10'], from: '2024-01-01' })).data.matches.map((r) => r.reep_id)).toEqual([ID.match]);
    const none = await client.matches({ team: ['fbref::no-such-team'], from: '2024-01-01' });
    expect(none.data).toMatchObject({ matches: [], count: 0, unresolved: ['fbref::no-such-team'], next_cursor: null });
    // The release's default window (30 days ending on its date) leaves the 2024 match out.
    expect((await client.matches({ team: [ID.arsenal] })).data.count).toBe(0);
    await expect(client.matches({ from: '2024-01-01' })).rejects.toMatchObject({ status: 400, code: 'anchor_required' });
  });

  it('matches: the iterator follows next_cursor page by page, repeated anchors ORed', async () => {
    const seen: string[] = [];
    const cursors: (string | null)[] = [];
    for await (const p of client.matchPages({ team: [ID.arsenal, ID.chelsea], from: '2024-01-01', limit: 1 })) {
      seen.push(...p.data.matches.map((m) => m.reep_id));
      cursors.push(p.data.next_cursor);
    }
    expect(seen).toEqual([ID.match]);
    expect(cursors.at(-1)).toBeNull();
  });

  it('matches: on the sample releases the iterator follows next_cursor through every page, each a lookup', async () => {
    // The repo's sample releases have thousands of matches: a busy team pages for real.
    const { dist } = await compiledSamples();
    const sample = await openInProcess({ dist, keys: keysFile, state: 'memory:', pages: null, cursorSecret: CURSOR_SECRET });
    try {
      const c = createRegisterClient({ baseUrl: `${sample.url}/api/v1`, key: keys.partner, fetch: fetched });
      const team = await busiestTeam();
      // Every page by hand, cursor by cursor, 100 a page: the list the iterator must give, in order.
      const all: string[] = [];
      let cursor: string | null = null;
      do {
        const p: Awaited<ReturnType<typeof c.matches>> = await c.matches({ team: [team.id], from: '1850-01-01', limit: 100, ...(cursor ? { cursor } : {}) });
        all.push(...p.data.matches.map((m) => m.reep_id));
        cursor = p.data.next_cursor;
      } while (cursor !== null);
      expect(all.length).toBe(team.matches);
      const seen: string[] = [];
      let pages = 0;
      const before = (await c.key()).data.key.credits_remaining!;
      for await (const p of c.matchPages({ team: [team.id], from: '1850-01-01', limit: 7 })) {
        pages++;
        expect(p.data.count).toBe(p.data.matches.length);
        seen.push(...p.data.matches.map((m) => m.reep_id));
      }
      expect(pages).toBe(Math.ceil(team.matches / 7));
      expect(seen).toEqual(all);
      expect((await c.key()).data.key.credits_remaining).toBe(before - pages);
    } finally {
      await sample.close();
    }
  });

  it('notices: every page through the iterator, then an acknowledgement', async () => {
    const opta = createRegisterClient({ baseUrl: `${rt.url}/api/v1`, key: keys.opta, fetch: fetched });
    const ids: string[] = [];
    let pages = 0;
    for await (const p of opta.noticePages({ limit: 2 })) {
      pages++;
      ids.push(...p.data.findings.map((f) => f.finding_id));
    }
    expect(pages).toBe(2);
    expect(ids).toEqual(['opta-1', 'opta-2', 'opta-3']);
    const ack = await opta.ackNotices({ finding_ids: ['opta-2'], actor: 'client test' });
    expect(ack.data).toMatchObject({ provider: 'opta', acknowledged: 1, finding_ids: ['opta-2'] });
    // A key without provider scope: the 403 is an error, with its code.
    await expect(client.notices()).rejects.toMatchObject({ status: 403, code: 'provider_scope_required' });
  });
});

describe('contract rules', () => {
  it('a merged ID surfaces requested_id → redirected_to, on entities and in resolve results', async () => {
    const merged = await client.entity(ID.mergedOld);
    expect(merged.redirect).toEqual({ requested_id: ID.mergedOld, redirected_to: ID.arsenal });
    expect(merged.data.reep_id).toBe(ID.arsenal);
    const viaResolve = await client.resolve('wyscout', 'w1');
    expect(viaResolve.kind).toBe('found');
    if (viaResolve.kind === 'found') expect(viaResolve.redirect).toEqual({ requested_id: ID.lodz, redirected_to: ID.arsenal });
  });

  it('a 409 comes back as data with every candidate, charged one lookup; none is data too', async () => {
    const before = await credits();
    const r = await client.resolve('transfermarkt', '500', { namespace: 'verein' });
    expect(r.kind).toBe('ambiguous');
    if (r.kind !== 'ambiguous') return;
    expect(r.meta.status).toBe(409);
    expect(r.error.error).toBe('ambiguous_provider_id');
    expect(r.candidates.map((c) => c.reep_id).sort()).toEqual([ID.arsenal, ID.chelsea].sort());
    expect(r.meta.creditsRemaining).toBe(before - 1);
    expect((await client.resolve('transfermarkt', 'no-such-id', { namespace: 'verein' })).kind).toBe('none');
  });

  it('a tombstone and an unknown ID are errors with their codes and headers', async () => {
    const gone = await client.entity(ID.tomb).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(RegisterApiError);
    expect(gone).toMatchObject({ status: 410, code: 'gone', body: { detail: ID.tomb } });
    expect((gone as RegisterApiError).meta.creditsRemaining).not.toBeNull();
    await expect(client.entity(ID.never)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.entity('not-an-id')).rejects.toMatchObject({ status: 400, code: 'invalid_id' });
  });

  it('batchAll splits 263 lookups within both caps, in order, and each request charges exactly its items', async () => {
    const entityIds = [ID.arsenal, ID.chelsea, ID.palmer, ID.match];
    const items: BatchItem[] = Array.from({ length: 263 }, (_, i) =>
      i % 4 === 1 ? { type: 'resolve', provider: 'fbref', external_id: '18bb7c10' } : { type: 'entity', id: entityIds[i % entityIds.length] },
    );
    const before = await credits();
    const firstPost = fetched.seen.length;
    const out = await client.batchAll(items);
    const posts = fetched.seen.slice(firstPost).filter((s) => s.method === 'POST');
    expect(posts.length).toBe(out.requests.length);
    // In order: item i's answer is item i's entity (resolve items: Arsenal, by its FBref ID).
    expect(out.results.length).toBe(items.length);
    out.results.forEach((r, i) => {
      expect(r.status, `item ${i}`).toBe(200);
      const body = r.body as { reep_id?: string; results?: { reep_id: string }[] };
      const item = items[i];
      expect(item.type === 'resolve' ? body.results?.[0].reep_id : body.reep_id, `item ${i}`).toBe(item.type === 'resolve' ? ID.arsenal : item.id);
    });
    // Each request within the caps; the credits header after each one drops by exactly the items it carried.
    const runs = splitBatch(items);
    expect(runs.length).toBe(out.requests.length);
    let expected = before;
    runs.forEach((run, k) => {
      expect(run.length).toBeLessThanOrEqual(BATCH_MAX_ITEMS);
      expect(run.filter((x) => x.type === 'resolve').length).toBeLessThanOrEqual(BATCH_MAX_RESOLVE);
      expected -= run.length;
      expect(out.requests[k].creditsRemaining, `request ${k}`).toBe(expected);
    });
    expect(await credits()).toBe(before - items.length);
  });

  it('splitBatch keeps order, respects both caps, and closes a request only when the next item would break one', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 400 }), (isResolve) => {
        const items = isResolve.map((r, i) => ({ type: r ? 'resolve' : 'entity', i }));
        const runs = splitBatch(items);
        expect(runs.flat().map((x) => x.i)).toEqual(items.map((x) => x.i));
        runs.forEach((run, k) => {
          const resolves = run.filter((x) => x.type === 'resolve').length;
          expect(run.length).toBeGreaterThan(0);
          expect(run.length).toBeLessThanOrEqual(BATCH_MAX_ITEMS);
          expect(resolves).toBeLessThanOrEqual(BATCH_MAX_RESOLVE);
          const next = runs[k + 1]?.[0];
          if (next) expect(run.length === BATCH_MAX_ITEMS || (resolves === BATCH_MAX_RESOLVE && next.type === 'resolve')).toBe(true);
        });
      }),
    );
  });
});

describe('429 and Retry-After', () => {
  let limited: InProcessRuntime;
  let slowKey: string;
  /** The server's clock, moved on only by the client's waits: the test never depends on real time. */
  const clock = { t: Date.parse('2026-11-10T12:00:00Z'), now() { return this.t; } };
  beforeAll(async () => {
    slowKey = (await addKey({ file: keysFile, name: 'slow', quota: 1000, rate: 1 })).key;
    limited = await openInProcess({ dist: world.dist, keys: keysFile, state: 'memory:', clock, pages: null });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('waits the Retry-After the server asked for, then answers; the 429 was not charged', async () => {
    const waits: number[] = [];
    const c = createRegisterClient({ baseUrl: `${limited.url}/api/v1`, key: slowKey, fetch: fetched, sleep: async (ms) => void (waits.push(ms), (clock.t += ms)) });
    const first = await c.entity(ID.arsenal);
    const second = await c.entity(ID.chelsea);
    expect(waits).toEqual([1000]);
    expect(second.meta.retries).toBe(1);
    expect(second.meta.creditsRemaining).toBe((first.meta.creditsRemaining ?? 0) - 1);
  });

  it('gives up after maxRetries, and at once when Retry-After is longer than allowed, with the 429 as an error', async () => {
    clock.t += 5000;
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms); // waits without moving the clock: the limit holds
    const bounded = createRegisterClient({ baseUrl: `${limited.url}/api/v1`, key: slowKey, fetch: fetched, sleep, maxRetries: 2 });
    await bounded.entity(ID.arsenal);
    const err = await bounded.entity(ID.arsenal).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', meta: { retries: 2 } });
    expect(waits).toEqual([1000, 1000]);
    const impatient = createRegisterClient({ baseUrl: `${limited.url}/api/v1`, key: slowKey, fetch: fetched, sleep, maxRetryAfterSeconds: 0 });
    await expect(impatient.entity(ID.arsenal)).rejects.toMatchObject({ status: 429, meta: { retries: 0 } });
    expect(waits).toEqual([1000, 1000]);
  });
});

describe('external IDs that are dot segments', () => {
  // A URL parser resolves `.` and `..` path segments, percent-encoded ones too, so GET /resolve/p/.. would ask for
  // another path with the key: the client asks them as a one-item batch. A release of its own holds such IDs.
  const [ONE, TWO] = ['rt0000000000d001', 'rt0000000000d002'];
  let dots: InProcessRuntime;
  let dotClient: RegisterClient;
  let dir: string;
  const seen = validatingFetch();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ir-client-dots-'));
    const entities = [ONE, TWO].map((id, i) => [id, 'team', 'active', `Dots ${i + 1} F.C.`, '', '', '', '', '']);
    const bridges = [['transfermarkt', 'verein', '.', ONE, ''], ['transfermarkt', 'verein', '..', ONE, ''], ['transfermarkt', 'verein', '..', TWO, '']];
    writeHandRelease(join(dir, 'releases'), '20261101T000000Z', { entities, bridges }, { gzip: true });
    await compileAll({ releases: join(dir, 'releases'), dist: join(dir, 'dist'), progress: false });
    const file = join(dir, 'keys.json');
    const key = (await addKey({ file, name: 'dots', quota: 1000, rate: 1000, provider: 'opta' })).key;
    dots = await openInProcess({ dist: join(dir, 'dist'), keys: file, state: 'memory:', pages: null });
    dotClient = createRegisterClient({ baseUrl: `${dots.url}/api/v1`, key, fetch: seen });
  });
  afterAll(async () => {
    await dots?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('resolves `.` (found) and `..` (ambiguous, every candidate), one lookup each, as a one-item batch', async () => {
    const before = (await dotClient.key()).data.key.credits_remaining!;
    const one = await dotClient.resolve('transfermarkt', '.', { namespace: 'verein' });
    expect(one.kind === 'found' && one.entity.reep_id).toBe(ONE);
    expect([one.meta.status, one.meta.creditsRemaining]).toEqual([200, before - 1]);
    const two = await dotClient.resolve('transfermarkt', '..', { namespace: 'verein' });
    expect(two.kind === 'ambiguous' && two.candidates.map((c) => c.reep_id).sort()).toEqual([ONE, TWO]);
    expect([two.meta.status, two.meta.creditsRemaining]).toEqual([409, before - 2]);
    expect((await dotClient.resolve('transfermarkt', '..', { namespace: 'nothing' })).kind).toBe('none');
  });

  it('a `..` provider is refused as unknown (never GET /notices with the key); a `..` register ID is refused before anything is sent', async () => {
    const from = seen.seen.length;
    await expect(dotClient.resolve('..', 'notices')).rejects.toMatchObject({ status: 400, code: 'unknown_provider' });
    expect(() => dotClient.entity('..')).toThrow(RangeError);
    expect(() => dotClient.bridges('.')).toThrow(RangeError);
    expect(seen.seen.slice(from).map((s) => `${s.method} ${s.path}`)).toEqual(['POST /api/v1/batch']);
  });
});

describe('HTTP redirects', () => {
  it('follows none (301, 302, 303, 307, 308 to another port): an error naming it, and nothing, batch body included, reaches the other host', async () => {
    // Two plain servers, not the register: one that redirects everything to the other, which records what reaches it.
    const reached: string[] = [];
    const other = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        reached.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[],"count":0}');
      });
    });
    let status = 0;
    const redirector = createServer((req, res) => {
      req.resume();
      res.writeHead(status, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}${req.url}` }).end();
    });
    await Promise.all([other, redirector].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    try {
      const c = createRegisterClient({ baseUrl: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/api/v1`, key: keys.partner });
      for (const s of [301, 302, 303, 307, 308]) {
        status = s;
        const location = expect.stringMatching(/^http:\/\/127\.0\.0\.1:[0-9]+\/api\/v1\/(key|batch)$/);
        await expect(c.key(), String(s)).rejects.toMatchObject({ name: 'RegisterRedirectError', status: s, location });
        const batch = c.batch([{ type: 'entity', id: ID.arsenal }]).catch((e: unknown) => e);
        expect(await batch, String(s)).toBeInstanceOf(RegisterRedirectError);
        expect(await batch, String(s)).toMatchObject({ status: s, location });
      }
      expect(reached).toEqual([]);
    } finally {
      redirector.close();
      other.close();
      redirector.closeAllConnections();
      other.closeAllConnections();
    }
  });
});

describe('headers and keys', () => {
  it('the key travels only in the Authorization header, never in a URL', () => {
    for (const s of fetched.seen) {
      for (const k of Object.values(keys)) expect(`${s.path}${s.query}`).not.toContain(k);
    }
    expect(fetched.seen.length).toBeGreaterThan(20);
  });
});

/** The team in most dated matches of the newest sample release, counted here from its matches table. */
async function busiestTeam(): Promise<{ id: string; matches: number }> {
  const counts = new Map<string, number>();
  let cols: string[] = [];
  const csv = resolve(process.cwd(), 'releases', '20261008T120000Z', 'csv', 'matches.csv.gz');
  await readCsv(csv, 'matches.csv.gz', {
    header: (h) => void (cols = h),
    row: (f) => {
      const at = (name: string) => f[cols.indexOf(name)];
      if (at('status') !== 'active' || !at('played_on')) return;
      for (const side of ['home_id', 'away_id']) if (at(side)) counts.set(at(side), (counts.get(at(side)) ?? 0) + 1);
    },
  });
  const [id, matches] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  return { id, matches };
}
