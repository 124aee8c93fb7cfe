// Real headless Chromium for the explorer's tests: Debian's `chromium`, driven by playwright-core (which downloads no
// browser). Each page is watched: every response is checked against the OpenAPI document, every request must stay on
// the server, and the key must never appear in a URL. Screenshots get a pixel check; axe-core checks accessibility.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { validatePageResponse, validateResponse } from './openapi-validator.ts';

/** Where screenshots go: kept after the run (test-output/ is git-ignored), unlike the run's temp folder. */
const SCREENSHOTS = resolve('test-output/explorer');

/** The chromium executable, or a failure saying how to get it: CI installs it (.ci/run), so a missing one is a fault. */
function chromiumPath(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given) return given;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    } catch {}
  }
  throw new Error("[explorer test] Chromium is not installed: run `apt-get install -y chromium` (.ci/run installs it where it is missing), or set CHROMIUM_PATH");
}

export async function launchBrowser(): Promise<Browser> {
  // As root (CI, containers) Chromium refuses to start with its sandbox.
  return chromium.launch({ executablePath: chromiumPath(), args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
}

export interface WatchedPage {
  page: Page;
  /** Every request URL the page made. */
  urls: string[];
  /** Bytes transferred (headers and encoded bodies) of the responses so far. */
  bytes(): Promise<number>;
  /** Resolves once every response seen so far has been validated; throws the first problem. */
  settle(): Promise<void>;
}

/** A new page (own context: its own sessionStorage) whose traffic is checked as it happens. */
export async function watchedPage(browser: Browser, origin: string, secrets: string[]): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const urls: string[] = [];
  const checks: Promise<void>[] = [];
  const problems: string[] = [];
  const sizes: Promise<number>[] = [];
  page.on('request', (request) => {
    const url = request.url();
    urls.push(url);
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) problems.push(`request outside the server: ${url}`);
    for (const s of secrets) if (url.includes(s)) problems.push(`a key appears in the URL ${url.replace(s, '<key>')}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.origin !== origin) return;
    sizes.push(response.request().sizes().then((s) => s.responseHeadersSize + s.responseBodySize, () => 0));
    checks.push(
      (async () => {
        const method = response.request().method();
        const headers = await response.allHeaders();
        // A changelog answer the browser revalidated from its cache (its ETag sent back as If-None-Match) came from
        // the server as a 304 without a body; the page is handed the cached 200.
        const revalidated = (await response.request().allHeaders())['if-none-match'] !== undefined;
        const status = revalidated ? 304 : response.status();
        const body = status === 304 ? '' : await response.body();
        const sample = { method, path: url.pathname, status, headers, body };
        if (url.pathname.startsWith('/api/')) validateResponse(sample);
        else validatePageResponse(sample);
      })().catch((e: unknown) => void problems.push((e as Error).message)),
    );
  });
  return {
    page,
    urls,
    bytes: async () => (await Promise.all(sizes)).reduce((a, b) => a + b, 0),
    async settle() {
      await Promise.all(checks);
      if (problems.length) throw new Error(`[explorer test] ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
    },
  };
}

/** One blank page per browser that decodes the screenshots, opened on first use and closed with the browser. */
const probes = new WeakMap<Browser, Promise<Page>>();
function probePage(browser: Browser): Promise<Page> {
  let probe = probes.get(browser);
  if (!probe) probes.set(browser, (probe = browser.newPage()));
  return probe;
}

/**
 * Saves a full-page screenshot under test-output/explorer/ and checks it is not blank: decoded by the browser itself,
 * at least 2% of its pixels differ from the corner's colour and it holds at least 16 distinct colours. Returns the path.
 */
export async function screenshot(browser: Browser, page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  const png = await page.screenshot({ path, fullPage });
  const probe = await probePage(browser);
  const { inked, colours } = await probe.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const g = canvas.getContext('2d')!;
    g.drawImage(img, 0, 0);
    const data = g.getImageData(0, 0, img.width, img.height).data;
    const corner = (data[0] << 16) | (data[1] << 8) | data[2];
    const seen = new Set<number>();
    let differ = 0;
    for (let i = 0; i < data.length; i += 4) {
      const c = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
      if (c !== corner) differ++;
      if (seen.size < 64) seen.add(c);
    }
    return { inked: differ / (data.length / 4), colours: seen.size };
  }, png.toString('base64'));
  if (inked < 0.02 || colours < 16) throw new Error(`[explorer test] screenshot ${path} looks blank: ${(inked * 100).toFixed(2)}% inked, ${colours} colours`);
  process.stdout.write(`[explorer test] screenshot ${path}\n`);
  return path;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations of impact serious or critical on the page as it is now (as "rule: target" lines). */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol: the page's CSP (scripts from the server only) stays in force for the page.
  // Once per document: the explorer changes views in place, and axe stays loaded across them.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.slice(0, 3).join(', ')}`);
}

/** Records a measured figure beside the screenshots (the page weight), for the README and the report. */
export function recordFigure(name: string, value: unknown): void {
  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(join(SCREENSHOTS, `${name}.json`), `${JSON.stringify(value, null, 1)}\n`);
}
