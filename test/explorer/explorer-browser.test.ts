// The explorer in a real headless Chromium against real servers: the real v0 data (search "arsenal", Arsenal F.C.'s
// Transfermarkt verein 11 bridge, resolve it, a 409 with its candidates) and the repo's two sample releases (a merged
// ID, a tombstone, what changed between them). Each view gets a screenshot with a pixel check and an axe-core run;
// every response is checked against the OpenAPI document, nothing is fetched from elsewhere, no key is in a URL.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegisterClient } from 'identity-register/client';
import { parseCsvText, readCsv } from '../../compiler/read/csv-reader.ts';
import { addKey } from '../../runtime/keys/key-file.ts';
import { startRuntime, type Runtime } from '../../runtime/server.ts';
import { CHANGES_PAGE_SIZE } from '../../explorer/context.ts';
import { ALL_DATES_FROM, MATCHES_PAGE_SIZE } from '../../explorer/matches-view.ts';
import { STATUSES } from '../../explorer/check-csv.ts';
import { CHECK_PAGE_SIZE } from '../../explorer/check-view.ts';
import { compiledRealData, compiledSamples, type Compiled } from '../fixtures/compiled-fixtures.ts';
import { launchBrowser, recordFigure, screenshot, seriousViolations, watchedPage, type WatchedPage } from '../helpers/browser.ts';
import { validatingFetch } from '../helpers/validating-fetch.ts';
import { runToExit } from '../helpers/run-command.ts';
import { build } from 'esbuild';
import { generateSigningKey, parseSigningKey, signBytes, SIGNS_MANIFEST } from '../../common/signing.ts';

const V0 = resolve(process.cwd(), '../shared/real-data/v0-register');
const SAMPLES = resolve(process.cwd(), 'releases');

let browser: Browser;
let real: Runtime;
let sample: Runtime;
let samples: Compiled;
let key: string;
/** A key whose allowance runs out within a contribution file: the check view's refusal. */
let lowKey: string;
/** The allowance of lowKey: more than the first request of the file costs, less than the first two. */
const LOW_QUOTA = 1500;
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
  lowKey = (await addKey({ file: join(root, 'keys.json'), name: 'explorer low quota', quota: LOW_QUOTA, rate: 1000 })).key;
  // The two worlds compile side by side (or come from the run's cache): each is mostly one thread, on two cores.
  let realData: Compiled;
  [realData, samples] = await Promise.all([compiledRealData(V0, '20260401T000000Z'), compiledSamples()]);
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
async function openExplorer(origin: string, withKey = key): Promise<WatchedPage> {
  const w = await watchedPage(browser, origin, [key, lowKey]);
  await w.page.goto(`${origin}/`);
  await w.page.fill('#api-key', withKey);
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

describe('checking a contribution file in the explorer', () => {
  it("a dropped CSV is checked in requests of 1,000 rows into one table, filtered by status, and its report is register check's CSV byte for byte", async () => {
    const file = await contributionFile();
    // The oracle: `register check` of the same file against the same stamp, read whole in one process.
    const cli = await runToExit(process.execPath, [resolve('bin/register.mjs'), 'check', file.path, '--stamp', STAMP, '--dist', samples.dist, '--format', 'csv'], { timeoutMs: 120_000 });
    expect(cli.status, cli.stderr).toBe(0);
    const [head, ...expected] = parseCsvText(cli.stdout);
    const col = (name: string) => head.indexOf(name);
    expect(expected.length).toBe(file.rows);
    const statuses = new Set(expected.map((r) => r[col('status')]));
    expect([...statuses].sort()).toEqual([...STATUSES].sort());

    const w = await openExplorer(sample.url);
    await w.page.click('nav a[href="#/check"]');
    await w.page.waitForSelector('#check-drop');
    await expectAccessible(w, 'the check view before a file');
    // Dropped as a browser drops a file: a DataTransfer holding it, on the drop zone.
    const transfer = await w.page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'contributions.csv', { type: 'text/csv' }));
      return dt;
    }, file.text);
    await w.page.dispatchEvent('#check-drop', 'drop', { dataTransfer: transfer });
    await w.page.waitForSelector(`#check-progress[data-state="done"][data-rows="${file.rows}"]`);
    expect(await w.page.locator('#check-progress').textContent()).toBe(`Checked all ${file.rows.toLocaleString('en')} rows of contributions.csv against release ${STAMP}, in 3 requests.`);
    // Three requests of at most 1,000 records, each numbered from where the last one ended (blank lines are no rows).
    const asked = w.urls.map((u) => new URL(u)).filter((u) => u.pathname === '/api/v1/contributions/check');
    expect(asked.map((u) => u.searchParams.get('first_row'))).toEqual(['1', '1001', '1999']);

    // The counts per status are the CLI's; the first page is its first 100 rows, with the file's lines.
    for (const st of statuses) {
      const n = expected.filter((r) => r[col('status')] === st).length;
      await expect(w.page.locator(`label[for="check-status-${st}"]`).textContent()).resolves.toBe(`${st.replaceAll('_', ' ')} (${n.toLocaleString('en')})`);
    }
    const rows = w.page.locator('table.check-table tbody tr');
    const cells = () => rows.evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-row'), tr.getAttribute('data-status'), tr.querySelector('td:nth-child(2)')!.textContent]));
    expect(await cells()).toEqual(expected.slice(0, CHECK_PAGE_SIZE).map((r) => [r[col('row')], r[col('status')], r[col('line')]]));
    await expect(w.page.locator('#check-page').textContent()).resolves.toBe(`Page 1 of ${Math.ceil(file.rows / CHECK_PAGE_SIZE)}`);
    await screenshot(browser, w.page, 'sample-check');
    await expectAccessible(w, 'the check view with results');

    // Hiding already_bridged rows: the table holds the others, in file order, and says how many; the last page too.
    await w.page.click('#check-status-already_bridged');
    const others = expected.filter((r) => r[col('status')] !== 'already_bridged');
    await w.page.waitForSelector(`table.check-table caption:text-matches("of the ${others.length.toLocaleString('en')} shown")`);
    expect(await w.page.isChecked('#check-status-already_bridged')).toBe(false);
    expect(await cells()).toEqual(others.slice(0, CHECK_PAGE_SIZE).map((r) => [r[col('row')], r[col('status')], r[col('line')]]));
    await expectAccessible(w, 'the check view filtered');

    // "Download report" saves every row (the filter narrows the table, not the report): the CLI's bytes.
    const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.click('#check-download')]);
    expect(download.suggestedFilename()).toBe(`contributions.report.${STAMP}.csv`);
    expect(readFileSync((await download.path())!, 'utf8')).toBe(cli.stdout);
    expect(w.urls.every((u) => !u.includes(key))).toBe(true);
    await w.settle();
    await w.page.context().close();
  });

  it('chosen with the file box under a key whose allowance runs out: the refusal is shown and the rows checked before it stay', async () => {
    const file = await contributionFile();
    const w = await openExplorer(sample.url, lowKey);
    await w.page.evaluate(() => (location.hash = '#/check'));
    await w.page.setInputFiles('#check-file', file.path);
    await w.page.waitForSelector('#check-progress[data-state="failed"]');
    const error = await w.page.locator('#check-error').textContent();
    expect(error).toMatch(/^Rows 1,001–1,998 were not checked: 402 quota_exceeded: This request needs 998 lookups but only \d+ of the monthly allowance of 1500 remain; nothing was charged\. It resets at /);
    expect(error).toMatch(/\. The 1,000 rows checked before them are kept below\.$/);
    await expect(w.page.locator('#check-progress').getAttribute('data-rows')).resolves.toBe('1000');
    await expect(w.page.locator('table.check-table tbody tr').count()).resolves.toBe(CHECK_PAGE_SIZE);
    // The first request was charged a lookup per row that is not invalid; the refused one nothing.
    const first = await (await validatingFetch()(`${sample.url}/api/v1/contributions/check`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body: file.firstThousand })).json();
    const charged = (first as { results: { status: string }[] }).results.filter((r) => r.status !== 'invalid').length;
    const low = createRegisterClient({ baseUrl: `${sample.url}/api/v1`, key: lowKey, fetch: validatingFetch() });
    expect((await low.key()).data.key.credits_remaining).toBe(LOW_QUOTA - charged);
    await expectAccessible(w, 'the check view after a refusal');
    await w.settle();
    await w.page.context().close();
  });
});

/** The sample release the servers serve on /api/v1 (the newest). */
const STAMP = '20261008T120000Z';

/**
 * A contribution file on the newest sample release, written to disk: first a row of each status (the sample facts
 * test/runtime/contributions-check.test.ts names: Marcus Foden rp10d88a6570bb3f is transfermarkt 8155472 and fotmob
 * 4196709, Son Min-jae is transfermarkt 7381724, fbref a2ae0994 is on two players, rpd8e4e243f9af6d was merged,
 * rpcea49c744a377e retired), then the release's own bridges of live players and teams (no namespace) by their
 * names, to 2,345 rows: three requests. CRLF line ends; every 97th row's pass-through `note` holds a quoted comma
 * and line break, so rows and lines part; a blank line and a line of commas in the second thousand are no rows.
 */
async function contributionFile(): Promise<{ path: string; text: string; rows: number; firstThousand: string }> {
  const dir = join(SAMPLES, STAMP, 'csv');
  const entities = new Map<string, { type: string; status: string; label: string }>();
  let cols: string[] = [];
  await readCsv(join(dir, 'entities.csv.gz'), 'entities.csv.gz', {
    header: (h) => void (cols = h),
    row: (f) => void entities.set(f[cols.indexOf('reep_id')], { type: f[cols.indexOf('entity_type')], status: f[cols.indexOf('status')], label: f[cols.indexOf('label')] }),
  });
  const fill: string[][] = [];
  await readCsv(join(dir, 'bridges.csv.gz'), 'bridges.csv.gz', {
    header: (h) => void (cols = h),
    row: (f) => {
      const e = entities.get(f[cols.indexOf('reep_id')]);
      if (f[cols.indexOf('namespace')] === '' && e?.status === 'active' && (e.type === 'player' || e.type === 'team')) fill.push([f[cols.indexOf('provider')], f[cols.indexOf('external_id')], e.label, e.type, '', '']);
    },
  });
  const rows = [
    ['transfermarkt', '8155472', 'Marcus Foden', 'player', '', ''],
    ['kicker', 'k-1', 'Marcus Foden', 'player', '8155472', ''],
    ['fotmob', '4196709', '', 'player', '7381724', ''],
    ['fbref', 'a2ae0994', '', 'player', '', ''],
    ['nosuch', '1', '', '', '', ''],
    ['zerozero', 'z-2', '', '', '', 'rpd8e4e243f9af6d'],
    ['kicker', 'k-3', '', '', '', 'rpcea49c744a377e'],
    ['kicker', 'k-4', '', '', '', ''],
  ];
  for (let i = 0; rows.length < 2345; i++) rows.push(fill[i % fill.length]);
  const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const records = rows.map((r, i) => [...r, i % 97 === 96 ? `row ${i + 1}, "noted"\non two lines` : `n${i + 1}`].map(cell).join(','));
  // Blank records: an empty line after row 1,500 and a line of commas after row 1,700 (both in the second request).
  records.splice(1700, 0, ',,,,,,');
  records.splice(1500, 0, '');
  const header = 'provider,external_id,name,type,transfermarkt_id,reep_id,note';
  const text = `${header}\r\n${records.join('\r\n')}\r\n`;
  const path = join(mkdtempSync(join(tmpdir(), 'ir-explorer-check-')), 'contributions.csv');
  writeFileSync(path, text);
  return { path, text, rows: rows.length, firstThousand: `${header}\r\n${records.slice(0, 1000).join('\r\n')}\r\n` };
}

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
