// The pages the server shows people, at its root outside /api: the explorer (`/`), the API reference (`/docs`) and
// their assets (`/assets/<entry>-<hash>.<ext>`), as scripts/build.mjs built them into build/pages/. A wrapper of the
// app like the operational one, so the router never sees these paths.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../api-error.ts';
import { headOf, toResponse, type Answer, type App } from '../app.ts';
import { ASSET_NAME, PAGE_CACHE, PAGE_CSP, PAGE_TYPES } from '../contract/document.ts';
import { keep } from '../kept-bytes.ts';
import { pathOf } from '../ops/ops-app.ts';

/** Options of withPages. */
export interface PagesOptions {
  /** The built pages folder (its index.html, docs.html and assets/). Default: build/pages of this install. */
  dir?: string;
}

/** Page paths and the file each one is. */
const PAGE_FILES: Record<string, string> = { '/': 'index.html', '/docs': 'docs.html' };
const ASSETS = '/assets/';
/** Asset bytes by name: a name is its content hash, so what was read once stays right. A few MB at most. */
type AssetCache = Map<string, Buffer>;

/** build/pages beside the running build (build/chunk-….mjs), or of the checkout when running from the sources. */
function defaultPagesDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const built = join(here, 'pages');
  return existsSync(join(built, 'index.html')) ? built : join(here, '..', '..', 'build', 'pages');
}

export function withPages(app: App, opts: PagesOptions = {}): App {
  const dir = opts.dir ?? defaultPagesDir();
  const assets: AssetCache = new Map();

  async function page(path: string): Promise<Answer> {
    if (path.startsWith(ASSETS)) {
      const name = path.slice(ASSETS.length);
      if (!ASSET_NAME.test(name)) throw new ApiError(404, 'not_found', `No page asset is called ${JSON.stringify(name)}.`);
      let bytes = assets.get(name);
      if (!bytes) {
        // Kept (kept-bytes.ts): the adapter codes each asset once per coding, not on every request.
        bytes = keep(await readPageFile(dir, join('assets', name), true));
        assets.set(name, bytes);
      }
      return answerOf(bytes, name.endsWith('.js') ? PAGE_TYPES.js : PAGE_TYPES.css, PAGE_CACHE.asset);
    }
    // The HTML is read on each load: a rebuild while the server runs names new assets, and the page must follow.
    return answerOf(await readPageFile(dir, PAGE_FILES[path], false), PAGE_TYPES.html, PAGE_CACHE.page);
  }

  async function answer(request: Request): Promise<Answer> {
    const path = pathOf(request.url);
    const isPage = path in PAGE_FILES || path.startsWith(ASSETS);
    if (!isPage || (request.method !== 'GET' && request.method !== 'HEAD')) return app.answer(request);
    let a: Answer;
    try {
      a = await page(path);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      a = { status: e.status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }, body: e.bodyText() };
    }
    a.route = path.startsWith(ASSETS) ? '/assets/{file}' : path;
    return request.method === 'HEAD' ? headOf(a) : a;
  }

  return {
    answer,
    fetch: async (request) => toResponse(await answer(request)),
    routes: app.routes,
  };
}

function answerOf(bytes: Buffer, type: string, cache: string): Answer {
  return {
    status: 200,
    headers: { 'content-type': type, 'cache-control': cache, 'content-security-policy': PAGE_CSP, 'x-content-type-options': 'nosniff' },
    body: bytes,
  };
}

/** A built file; a missing asset is 404, a missing page means the pages were never built (503, naming the folder). */
async function readPageFile(dir: string, name: string, isAsset: boolean): Promise<Buffer> {
  try {
    return await readFile(join(dir, name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    if (isAsset) throw new ApiError(404, 'not_found', `No page asset is called ${JSON.stringify(name.slice('assets/'.length))}.`);
    throw new ApiError(503, 'pages_unavailable', `The explorer's pages are not built: ${join(dir, name)} is missing; run npm run build.`);
  }
}
