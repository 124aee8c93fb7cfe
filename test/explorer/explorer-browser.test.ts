// The explorer in a real headless Chromium against real servers: the real v0 data (search "arsenal", Arsenal F.C.'s
// Transfermarkt verein 11 bridge, resolve it, a 409 with its candidates) and the repo's two sample releases (a merged
// ID, a tombstone, what changed between them). Each view gets a screenshot with a pixel check and an axe-core run;
// every response is checked against the OpenAPI document, nothing is fetched from elsewhere, no key is in a URL.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegisterClient } from 'identity-register/client';
import { readCsv } from '../../compiler/read/csv-reader.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { CHANGES_PAGE_SIZE } from '../../explorer/context.ts';
import { ALL_DATES_FROM, MATCHES_PAGE_SIZE } from '../../explorer/matches-view.ts';
import { compiledRealData, compiledSamples } from '../fixtures/compiled-fixtures.ts';
import { launchBrowser, recordFigure, screenshot, seriousViolations, watchedPage, type WatchedPage } from '../helpers/browser.ts';
import { validatingFetch } from '../helpers/validating-fetch.ts';
import { build } from 'esbuild';
import { generateSigningKey, parseSigningKey, signBytes, SIGNS_MANIFEST } from '../../common/signing.ts';

const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const SAMPLES = resolve(process.cwd(), 'releases');

let browser: Browser;
let real: Runtime;
let sample: Runtime;
let key: string;
/** Signs /matches cursors (the runtime's `cursorSecret`, at least 32 characters), as REGISTER_CURSOR_SECRET would. */
const CURSOR_SECRET = 'the explorer test deployment secret, 32+ characters';

/** A server on a compiled dist, with one key allowed plenty (typing triggers a search per pause). */
async function serve(dist: string, root: string): Promise<Runtime> {
  return startRuntime({ dist, keys: join(root, 'keys.json'), state: 'memory:', port: 0, cursorSecret: CURSOR_SECRET });
}

beforeAll(async () => {
  // Fails here, loudly, when chromium is missing: .ci/run installs it.
  const t0 = performance.now();
  browser = await launchBrowser();
  const root = mkdtempSync(join(tmpdir(), 'ir-explorer-'));
  key = (await addKey({ file: join(root, 'keys.json'), name: 'explorer test', quota: 100_000, rate: 1000 })).key;
  // The two worlds compile side by side (or come from the run's cache): each is mostly one thread, on two cores.
  const [realData, samples] = await Promise.all([compiledRealData(V0, '20260401T000000Z'), compiledSamples()]);
  process.stdout.write(`[explorer test] browser and both compiles in ${Math.round(performance.now() - t0)} ms\n`);
  real = await serve(realData.dist, root);
  sample = await serve(samples.dist, root);
});
afterAll(async () => {
  await browser?.close();
  await real?.close();
  await sample?.close();
});

/** Opens the explorer, types the key once into the key box, and waits for the release view. */
async function openExplorer(origin: string): Promise<WatchedPage> {
  const w = await watchedPage(browser, origin, [key]);
  await w.page.goto(`${origin}/`);
  await w.page.fill('#api-key', key);
  await w.page.click('.key-form button[type=submit]');
  await w.page.waitForSelector('article.release canvas');
  return w;
}

async function expectAccessible(w: WatchedPage, view: string): Promise<void> {
  expect(await seriousViolations(w.page), `axe on ${view}`).toEqual([]);
}

/** Transfermarkt club IDs on two teams in the v0 data: each resolves to 409. */
async function sharedTransfermarktId(): Promise<string> {
  const seen = new Map<string, number>();
  let col = -1;
  await readCsv(join(V0, 'teams.csv'), 'teams.csv', { header: (h) => (col = h.indexOf('key_transfermarkt')), row: (f) => void (f[col] && seen.set(f[col], (seen.get(f[col]) ?? 0) + 1)) });
  const shared = [...seen].filter(([, n]) => n > 1).map(([id]) => id).sort();
  expect(shared.length).toBeGreaterThan(0);
  return shared[0];
}

describe('explorer on the real v0 data', () => {
  it('first load weighs what it weighs; search "arsenal" by keyboard opens Arsenal F.C. with its verein 11 bridge; resolve lands there; a 409 lists candidates', async () => {
    const w = await watchedPage(browser, real.url, [key]);
    await w.page.goto(`${real.url}/`);
    await w.page.waitForSelector('#api-key');
    await w.page.waitForLoadState('networkidle');
    const firstLoad = await w.bytes();
    recordFigure('page-weight', { first_load_bytes: firstLoad, requests: w.urls.length, urls: w.urls.map((u) => new URL(u).pathname) });
    process.stdout.write(`[explorer test] first load: ${firstLoad} bytes transferred in ${w.urls.length} requests\n`);
    expect(await seriousViolations(w.page), 'axe on the key prompt').toEqual([]);

    await w.page.fill('#api-key', key);
    await w.page.click('.key-form button[type=submit]');
    await w.page.waitForSelector('article.release canvas');
    await screenshot(browser, w.page, 'real-release');
    await expectAccessible(w, 'the release view');

    // Search as you type, then the keyboard: down to Arsenal F.C., Enter.
    await w.page.click('#search');
    await w.page.keyboard.type('arsenal', { delay: 20 });
    await w.page.locator('#search-results[data-query="arsenal"] [role=option]').first().waitFor();
    const labels = await w.page.locator('#search-results [role=option] .label').allTextContents();
    const at = labels.indexOf('Arsenal F.C.');
    expect(at, `results: ${labels.join(' | ')}`).toBeGreaterThanOrEqual(0);
    for (let i = 0; i < at; i++) await w.page.keyboard.press('ArrowDown');
    expect(await w.page.getAttribute('#search', 'aria-activedescendant')).toBe(`search-option-${at}`);
    await w.page.keyboard.press('Enter');
    await w.page.waitForSelector('article.entity h1:text-is("Arsenal F.C.")');
    const arsenalHash = new URL(w.page.url()).hash;
    const bridge = w.page.locator('.bridge-group[data-provider="transfermarkt"] .bridge[data-namespace="verein"][data-external-id="11"]');
    await expect(bridge.count()).resolves.toBe(1);
    await expect(bridge.locator('button.copy').getAttribute('aria-label')).resolves.toBe('Copy transfermarkt ID 11');
    await expect(w.page.locator('.lower-confidence').count()).resolves.toBeGreaterThan(0);
    await screenshot(browser, w.page, 'real-entity-arsenal');
    await expectAccessible(w, 'the entity view');

    // Resolve Transfermarkt verein 11 from the resolve box: it lands on the same entity.
    await w.page.click('nav a[href="#/resolve"]');
    await w.page.waitForSelector('form.resolve-form');
    await w.page.selectOption('#resolve-provider', 'transfermarkt');
    await w.page.fill('#resolve-namespace', 'verein');
    await w.page.fill('#resolve-id', '11');
    await w.page.click('form.resolve-form button[type=submit]');
    await w.page.waitForFunction((hash) => location.hash === hash, arsenalHash);
    await w.page.waitForSelector('article.entity h1:text-is("Arsenal F.C.")');

    // Its matches: the v0 data links few matches, none of them Arsenal's; the view says so, with the release's count.
    await w.page.click('a#team-matches');
    const none = w.page.locator('#matches-none');
    await none.waitFor();
    const counts = (await createRegisterClient({ baseUrl: `${real.url}/api/v1`, key, fetch: validatingFetch() }).meta()).data.counts;
    expect(await none.textContent()).toContain(`This release holds ${counts.entities_match} matches in all for its ${counts.entities_team.toLocaleString('en')} teams`);
    await expect(w.page.locator('table.matches-table tbody tr').count()).resolves.toBe(0);

    // An ID two teams share: the candidates are listed, each a link to its entity.
    await w.page.click('nav a[href="#/resolve"]');
    await w.page.waitForSelector('form.resolve-form');
    await w.page.selectOption('#resolve-provider', 'transfermarkt');
    await w.page.fill('#resolve-namespace', 'verein');
    await w.page.fill('#resolve-id', await sharedTransfermarktId());
    await w.page.click('form.resolve-form button[type=submit]');
    await w.page.waitForSelector('.candidates li');
    await expect(w.page.locator('.candidates li a').count()).resolves.toBe(2);
    await screenshot(browser, w.page, 'real-resolve-409');
    await expectAccessible(w, 'the resolve view');

    expect(w.page.url()).not.toContain(key);
    await w.settle();
    await w.page.context().close();
  });

  it('/docs renders the reference from this server alone', async () => {
    const w = await watchedPage(browser, real.url, [key]);
    await w.page.goto(`${real.url}/docs`);
    await w.page.waitForSelector('.opblock-summary-path', { timeout: 120_000 });
    await expect(w.page.locator('.opblock-summary-path').count()).resolves.toBeGreaterThan(10);
    // No red error or warning box (Swagger UI's .errors-wrapper), such as one about the document's jsonSchemaDialect.
    await expect(w.page.locator('.errors-wrapper').allTextContents()).resolves.toEqual([]);
    // The reference is long: its first screen is the view.
    await screenshot(browser, w.page, 'docs', false);
    await w.settle();
    await w.page.context().close();
  });
});

describe('the verifying code in the browser', () => {
  it('common/signing.ts, bundled for the browser as is, verifies in Chromium a signature made in Node and refuses other bytes', async () => {
    const bundled = await build({ entryPoints: [join(import.meta.dirname, '../../common/signing.ts')], bundle: true, format: 'iife', globalName: 'signing', write: false, platform: 'browser' });
    const made = await generateSigningKey();
    const manifest = '{"stamp":"20261101T000000Z","files":{}}';
    const sig = await signBytes(manifest, await parseSigningKey(made.privateKeyFile), { signs: SIGNS_MANIFEST, stamp: '20261101T000000Z' });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // A page of this server: WebCrypto needs a secure context, which http://127.0.0.1 is.
      await page.goto(`${sample.url}/openapi.json`);
      await page.addScriptTag({ content: bundled.outputFiles[0].text });
      const verdicts = await page.evaluate(async ({ pub, sig, manifest }) => {
        const s = (globalThis as unknown as { signing: typeof import('../../common/signing.ts') }).signing;
        const trusted = s.trustedKeys([await s.parsePublicKey(pub)]);
        const opts = { signs: s.SIGNS_MANIFEST, stamp: '20261101T000000Z', trusted, now: new Date('2026-11-02T00:00:00Z') };
        const good = await s.verifyBytes(sig, manifest, opts);
        const bad = await s.verifyBytes(sig, manifest.replace('files', 'filez'), opts);
        return [good.ok ? `ok ${good.keyId}` : good.reason, bad.ok ? 'ok' : bad.reason];
      }, { pub: made.publicKeyText, sig, manifest });
      expect(verdicts).toEqual([`ok ${made.keyId}`, 'other_bytes']);
    } finally {
      await context.close();
    }
  });
});

describe('explorer on the two sample releases', () => {
  const api = () => createRegisterClient({ baseUrl: `${sample.url}/api/v1`, key, fetch: validatingFetch() });

  it('a merged ID shows the redirect to its survivor; a tombstoned ID says it is retired; a resolve link naming `..` stays a resolve', async () => {
    const merged = (await api().changes({ type: 'redirect_changed', limit: 1 })).data.events[0];
    const removed = (await api().changes({ type: 'entity_removed', limit: 1 })).data.events[0];
    expect(merged && removed).toBeTruthy();
    const w = await openExplorer(sample.url);

    await w.page.evaluate((id) => (location.hash = `#/entity/${id}`), merged.reep_id);
    const notice = w.page.locator('.redirect-notice');
    await notice.waitFor();
    expect(await notice.textContent()).toContain(merged.reep_id);
    // The survivor the page links to is where the redirect chain ends (the API's redirected_to).
    const final = (await api().entity(merged.reep_id)).redirect?.redirected_to;
    expect(final).toMatch(/^r[a-z][0-9a-f]{14}$/);
    await expect(notice.locator('a').getAttribute('href')).resolves.toBe(`#/entity/${final}`);
    await screenshot(browser, w.page, 'sample-redirect');
    await expectAccessible(w, 'a redirected entity');

    await w.page.evaluate((id) => (location.hash = `#/entity/${id}`), removed.reep_id);
    await w.page.locator('.retired-notice').waitFor();
    expect(await w.page.locator('.retired-notice').textContent()).toMatch(/^Retired\. /);
    await screenshot(browser, w.page, 'sample-tombstone');
    await expectAccessible(w, 'a retired ID');

    // A resolve link naming `..`: the browser's URL parser would turn GET /api/v1/resolve/../notices (even spelled
    // %2E%2E) into GET /api/v1/notices, so the explorer's client asks it as a batch item, and shows the refusal.
    const from = w.urls.length;
    await w.page.evaluate(() => (location.hash = '#/resolve?provider=..&id=notices'));
    await w.page.locator('.notice.error').waitFor();
    expect(await w.page.locator('.notice.error').textContent()).toContain('400 unknown_provider');
    const asked = w.urls.slice(from).map((u) => new URL(u).pathname);
    expect(asked).toContain('/api/v1/batch');
    expect(asked).not.toContain('/api/v1/notices');
    await w.settle();
    await w.page.context().close();
  });

  it('what changed: both charts and the first page of events, with the page count /changes/summary implies', async () => {
    const releases = (await api().releases()).data.releases;
    expect(releases.length).toBe(2);
    const [to, from] = [releases[0].stamp, releases[1].stamp];
    const summary = (await api().changesSummary({ from, to })).data;
    const total = Object.values(summary.counts).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(CHANGES_PAGE_SIZE);

    const w = await openExplorer(sample.url);
    await w.page.setViewportSize({ width: 1280, height: 900 });
    await w.page.click('nav a[href="#/changes"]');
    const count = w.page.locator('#changes-page-count');
    await count.waitFor();
    await expect(w.page.locator('article.changes canvas').count()).resolves.toBe(2);
    expect(await count.getAttribute('data-pages')).toBe(String(Math.ceil(total / CHANGES_PAGE_SIZE)));
    expect(await count.textContent()).toBe(`Page 1 of ${Math.ceil(total / CHANGES_PAGE_SIZE)}`);
    const rows = w.page.locator('table.events tbody tr');
    await expect(rows.count()).resolves.toBe(CHANGES_PAGE_SIZE);
    await expect(rows.first().locator('a').first().getAttribute('href')).resolves.toMatch(/^#\/entity\/r[a-z][0-9a-f]{14}$/);
    // The page stays within a 1,280 px window: long names and bridge lists wrap.
    expect(await w.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);

    // Names the events carry (an added entity's label, a renamed one's new label) are shown free; the rest cost a
    // lookup each, fetched when asked, for exactly the lookups the button names.
    const page1 = (await api().changes({ from, to, limit: CHANGES_PAGE_SIZE })).data.events;
    const added = page1.find((e) => e.type === 'entity_added');
    expect(added).toBeTruthy();
    await expect(w.page.locator(`table.events tr[data-type="entity_added"] a.entity-name:text-is("${added!.type === 'entity_added' ? added!.label : ''}")`).count()).resolves.toBe(1);
    const button = w.page.locator('#changes-names');
    const asked = Number((await button.textContent())!.match(/^Show names \((\d+) lookups?\)$/)![1]);
    expect(asked).toBeGreaterThan(0);
    const creditsBefore = (await api().key()).data.key.credits_remaining!;
    await button.click();
    await w.page.locator('#changes-names-status:text-matches("^Names fetched")').waitFor();
    expect((await api().key()).data.key.credits_remaining).toBe(creditsBefore - asked);
    await expect(w.page.locator('#changes-names').count()).resolves.toBe(0);
    // Every row is named now, or says why its ID has no name of its own (merged, retired).
    const whos = await rows.evaluateAll((trs) => trs.map((tr) => [tr.querySelector('a.entity-name')?.textContent ?? null, tr.querySelector('.entity-note')?.textContent ?? null]));
    expect(whos.length).toBe(page1.length);
    page1.forEach((e, i) => {
      const [name, note] = whos[i];
      if (e.type === 'entity_removed') expect(note).toBe(' (retired)');
      else if (e.type === 'redirect_changed') expect(note).toBe(' (merged)');
      else expect(name !== null || note !== null, `${e.type} ${e.reep_id}`).toBe(true);
    });
    expect(whos.filter(([name]) => name !== null).length).toBeGreaterThan(page1.length / 2);
    // The names are the entities' own: a bridge update's entity that is not merged away, asked through the client.
    const merged = new Set(page1.filter((e) => e.type === 'redirect_changed' || e.type === 'entity_removed').map((e) => e.reep_id));
    const live = page1.find((e) => e.type === 'provider_updated' && !merged.has(e.reep_id))!;
    const named = (await api().entity(live.reep_id)).data;
    expect(named.reep_id).toBe(live.reep_id);
    await expect(w.page.locator(`table.events tbody tr:nth-child(${page1.indexOf(live) + 1}) a.entity-name`).textContent()).resolves.toBe(named.name_en);
    await screenshot(browser, w.page, 'sample-changes');
    await expectAccessible(w, 'the changes view');

    // Every event in words, on every page: no raw JSON, and each type said its own way.
    const said: Record<string, RegExp> = {
      entity_added: /^new [a-z]+: “.+”$/, entity_status_changed: /^status \w+ → \w+$/, label_updated: /^name “.+” → “.+”$/,
      entity_removed: /^retired: /, redirect_changed: /^merged into \S/, provider_updated: /^[a-z_0-9]+: (added|removed) \S/,
      fixture_updated: /^fixture now: .+ v .+, (\d{4}-\d{2}-\d{2}|undated)/, score_updated: /^score (now \d+–\d+|withdrawn)/,
    };
    const seen = new Set<string>();
    const checkPage = async () => {
      const cells = await w.page.locator('table.events tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-type')!, tr.querySelector('td:nth-child(3)')!.textContent!]));
      for (const [type, text] of cells) {
        expect(text, type).not.toMatch(/[{}]|":/);
        expect(text, type).toMatch(said[type]);
        seen.add(type);
      }
    };
    await checkPage();

    // The next page follows the cursor: page 2, other events.
    const firstIds = await rows.locator('td:nth-child(2)').allTextContents();
    await w.page.click('nav.pager a:text-is("Next page")');
    await w.page.waitForSelector('#changes-page-count[data-page="2"]');
    const secondIds = await w.page.locator('table.events tbody tr td:nth-child(2)').allTextContents();
    expect(secondIds).not.toEqual(firstIds);
    await checkPage();
    for (let p = 3; p <= Math.ceil(total / CHANGES_PAGE_SIZE); p++) {
      await w.page.click('nav.pager a:text-is("Next page")');
      await w.page.waitForSelector(`#changes-page-count[data-page="${p}"]`);
      await checkPage();
    }
    // The sample successor has events of every type (summary.counts), so every type's wording was checked.
    expect([...seen].sort()).toEqual(Object.keys(summary.counts).filter((t) => summary.counts[t] > 0).sort());
    expect(w.urls.every((u) => !u.includes(key))).toBe(true);
    await w.settle();
    await w.page.context().close();
  });

  it("a team's matches: from its entity page to the matches view, a table of rows with entity links, More follows the cursor", async () => {
    const team = await busiestSampleTeam();
    // What the view must show, asked through the validating client: every page of the team's matches, newest first.
    const expected: string[] = [];
    for await (const p of api().matchPages({ team: [team], from: ALL_DATES_FROM, limit: 100 })) expected.push(...p.data.matches.map((m) => m.reep_id));
    expect(expected.length).toBeGreaterThan(MATCHES_PAGE_SIZE);

    const w = await openExplorer(sample.url);
    await w.page.evaluate((id) => (location.hash = `#/entity/${id}`), team);
    const link = w.page.locator('a#team-matches');
    await link.waitFor();
    expect(await link.textContent()).toBe('Matches of this team');
    await link.click();
    const status = w.page.locator('#matches-count[data-rows]');
    await status.waitFor();
    const rows = w.page.locator('table.matches-table tbody tr');
    await expect(rows.count()).resolves.toBe(MATCHES_PAGE_SIZE);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-match')))).toEqual(expected.slice(0, MATCHES_PAGE_SIZE));
    await expect(w.page.locator('table.matches-table thead th[scope=col]').allTextContents()).resolves.toEqual(['Date', 'Home', 'Away', 'Score', 'Competition / season', 'State']);
    // The team is on one side of every row, as a link to its page; the date links to the match.
    const first = rows.first();
    await expect(first.locator('td:nth-child(1) a').getAttribute('href')).resolves.toBe(`#/entity/${expected[0]}`);
    await expect(first.locator(`a[href="#/entity/${team}"]`).count()).resolves.toBeGreaterThan(0);
    expect(await w.page.locator('#matches-team').inputValue()).toBe(team);
    await screenshot(browser, w.page, 'sample-matches');
    await expectAccessible(w, 'the matches view');

    // More follows next_cursor: the next rows are appended, in the API's order.
    await w.page.click('#matches-more');
    await w.page.waitForSelector(`#matches-count[data-rows="${Math.min(2 * MATCHES_PAGE_SIZE, expected.length)}"]`);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-match')))).toEqual(expected.slice(0, 2 * MATCHES_PAGE_SIZE));

    // A window typed into the form narrows the list to its dates.
    const day = (await api().entity(expected[0])).data.match?.played_on;
    expect(day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await w.page.fill('#matches-from', day!);
    await w.page.fill('#matches-to', day!);
    await w.page.click('form.matches-form button[type=submit]');
    await w.page.waitForFunction((d) => location.hash.includes(`from=${d}`), day);
    const narrowed = (await api().matches({ team: [team], from: day!, to: day! })).data.matches.map((m) => m.reep_id);
    await w.page.waitForSelector(`#matches-count[data-rows="${narrowed.length}"]`);
    expect(await w.page.locator('table.matches-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-match')))).toEqual(narrowed);

    // The team picker is the search box, offering teams only: picking one opens its matches.
    const name = (await api().entity(team)).data.name_en;
    const word = name.split(/\s+/).find((x) => x.length >= 4) ?? name;
    await w.page.click('#matches-search');
    await w.page.keyboard.type(word, { delay: 20 });
    await w.page.locator(`#matches-search-results[data-query="${word}"] [role=option]`).first().waitFor();
    await expect(w.page.locator('#matches-search-results [role=option] .meta').allTextContents()).resolves.toSatisfy((metas: string[]) => metas.every((m) => m.startsWith('team ')));
    const labels = await w.page.locator('#matches-search-results [role=option] .label').allTextContents();
    const at = labels.indexOf(name);
    expect(at, `results: ${labels.join(' | ')}`).toBeGreaterThanOrEqual(0);
    await w.page.locator('#matches-search-results [role=option]').nth(at).dispatchEvent('mousedown');
    await w.page.waitForFunction((id) => location.hash.startsWith(`#/matches?team=${id}`), team);
    await w.page.waitForSelector(`#matches-count[data-rows="${narrowed.length}"]`);
    expect(w.urls.every((u) => !u.includes(key))).toBe(true);
    await w.settle();
    await w.page.context().close();
  });
});

/** The team in most dated matches of the newest sample release, counted from its matches table. */
async function busiestSampleTeam(): Promise<string> {
  const counts = new Map<string, number>();
  let cols: string[] = [];
  await readCsv(join(SAMPLES, '20261008T120000Z', 'csv', 'matches.csv.gz'), 'matches.csv.gz', {
    header: (h) => void (cols = h),
    row: (f) => {
      const at = (name: string) => f[cols.indexOf(name)];
      if (at('status') !== 'active' || !at('played_on')) return;
      for (const side of ['home_id', 'away_id']) if (at(side)) counts.set(at(side), (counts.get(at(side)) ?? 0) + 1);
    },
  });
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}
