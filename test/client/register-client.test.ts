// The typed client against the real server over HTTP: every endpoint, and each contract rule it knows (429 retried
// after Retry-After within bounds, redirects surfaced, 409 candidates as data, batches split within the caps and
// charged exactly, paged feeds as async iterators, headers on every result). Every response is checked against the
// OpenAPI document on the way in.
import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_MAX_ITEMS, BATCH_MAX_RESOLVE, createRegisterClient, RegisterApiError, splitBatch, type BatchItem, type RegisterClient } from 'identity-register/client';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { ID, STAMPS, makeHandWorld, type World } from '../fixtures/hand-world.ts';
import { validatingFetch } from '../helpers/validating-fetch.ts';

let world: World;
let rt: Runtime;
let keysFile: string;
const keys: Record<string, string> = {};
let client: RegisterClient;
const fetched = validatingFetch();

beforeAll(async () => {
  world = await makeHandWorld();
  keysFile = join(world.root, 'keys.json');
  keys.partner = (await addKey({ file: keysFile, name: 'partner', quota: 100_000, rate: 1000 })).key;
  keys.opta = (await addKey({ file: keysFile, name: 'opta', quota: 1000, rate: 1000, provider: 'opta' })).key;
  rt = await startRuntime({ dist: world.dist, keys: keysFile, state: 'memory:', port: 0, pages: null });
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
  let limited: Runtime;
  let slowKey: string;
  /** The server's clock, moved on only by the client's waits: the test never depends on real time. */
  const clock = { t: Date.parse('2026-11-10T12:00:00Z'), now() { return this.t; } };
  beforeAll(async () => {
    slowKey = (await addKey({ file: keysFile, name: 'slow', quota: 1000, rate: 1 })).key;
    limited = await startRuntime({ dist: world.dist, keys: keysFile, state: 'memory:', port: 0, clock, pages: null });
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

describe('headers and keys', () => {
  it('the key travels only in the Authorization header, never in a URL', () => {
    for (const s of fetched.seen) {
      for (const k of Object.values(keys)) expect(`${s.path}${s.query}`).not.toContain(k);
    }
    expect(fetched.seen.length).toBeGreaterThan(20);
  });
});
