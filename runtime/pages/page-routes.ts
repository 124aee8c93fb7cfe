// The pages the server shows people, routes of the app at the server root: the explorer (`/`), the API reference
// (`/docs`) and their assets (`/assets/<entry>-<hash>.<ext>`), as scripts/build.mjs built them. Their files come
// through the app's services (PageFiles: a folder on Node, page-folder.ts; bundled files at the edge).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../api-error.ts';
import { errorResponse } from '../contract/http-parts.ts';
import { defineRoute, type PageFiles, type Reply, type RequestContext, type RouteDef } from '../route.ts';

/** What a page may load: only this server (the bundles, the API); inline styles for the charts and Swagger UI. */
const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
/** An HTML page names its assets by content hash: it is revalidated on every load, they are cached forever. */
export const PAGE_CACHE = { page: 'no-cache', asset: 'public, max-age=31536000, immutable' } as const;
/** A built asset's name: entry, content hash, extension (`explorer-L2BLNIKT.js`). */
const ASSET_NAME = /^[a-z][a-z0-9-]*-[A-Z0-9]{8}\.(js|css)$/;
export const PAGE_TYPES = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' } as const;

const ASSETS = '/assets/';
type Operation = RouteDef['operation'];

function pageHeaders(cache: string): Operation['responses'] {
  const fixed = (description: string, value: string) => ({ description, required: true, schema: { const: value } });
  return {
    'Cache-Control': fixed('Pages revalidate; hashed assets never change.', cache),
    'Content-Security-Policy': fixed('Nothing is loaded from outside this server.', PAGE_CSP),
    'X-Content-Type-Options': fixed('Types are never sniffed.', 'nosniff'),
  };
}

function pageOperation(operationId: string, summary: string, description: string, types: string[], cache: string, more: Pick<Operation, 'parameters'> & { responses?: Operation['responses'] } = {}): Operation & { cost: 0 } {
  const content: Record<string, { schema: { type: 'string' } }> = {};
  for (const t of types) content[t] = { schema: { type: 'string' } };
  return {
    operationId,
    tag: 'pages',
    summary,
    description: `Public (no key), no cost. ${description}`,
    cost: 0,
    ...(more.parameters ? { parameters: more.parameters } : {}),
    responses: {
      '200': { description: summary, headers: pageHeaders(cache), content },
      '503': errorResponse('The pages were not built (`npm run build` builds them into build/pages/).', ['pages_unavailable'], {}),
      ...more.responses,
    },
  };
}

function pageReply(bytes: Uint8Array, type: string, cache: string): Reply {
  return {
    status: 200,
    headers: { 'content-type': type, 'cache-control': cache, 'content-security-policy': PAGE_CSP, 'x-content-type-options': 'nosniff' },
    body: bytes,
  };
}

function filesOf(c: RequestContext): PageFiles {
  if (!c.services.pages) throw new ApiError(503, 'pages_unavailable', 'This server shows no pages.');
  return c.services.pages;
}

/** An HTML page, read on each load: a rebuild while the server runs names new assets, and the page must follow. */
function page(path: string, file: string, operation: Operation & { cost: 0 }): RouteDef {
  return defineRoute({
    method: 'GET',
    path,
    scope: 'pages',
    auth: false,
    noRelease: true,
    operation,
    prepare: (c) => ({
      async run() {
        const files = filesOf(c);
        const bytes = await files.read(file);
        if (!bytes) throw new ApiError(503, 'pages_unavailable', `The explorer's pages are not built: ${files.location(file)} is missing; run npm run build.`);
        return pageReply(bytes, PAGE_TYPES.html, PAGE_CACHE.page);
      },
    }),
  });
}

export const pageRoutes: RouteDef[] = [
  page(
    '/',
    'index.html',
    pageOperation(
      'getExplorer',
      'The release explorer',
      'Search, entities with their bridges, resolve, what changed between releases, the release at a glance. The page asks for a key once and keeps it in sessionStorage; the key never goes into a URL.',
      [PAGE_TYPES.html],
      PAGE_CACHE.page,
    ),
  ),
  page('/docs', 'docs.html', pageOperation('getApiReference', 'This document, rendered', 'Swagger UI, served by this server, reading /api/v1/openapi.json.', [PAGE_TYPES.html], PAGE_CACHE.page)),
  defineRoute({
    method: 'GET',
    path: '/assets/{file}',
    scope: 'pages',
    auth: false,
    noRelease: true,
    operation: pageOperation(
      'getPageAsset',
      'A script or style sheet of the pages',
      'Named by its content hash, so cached forever. Any other name is 404 `not_found`.',
      [PAGE_TYPES.js, PAGE_TYPES.css],
      PAGE_CACHE.asset,
      {
        parameters: [{ name: 'file', in: 'path', required: true, description: 'The asset: entry, content hash, extension.', schema: Type.Unsafe<string>({ type: 'string', pattern: ASSET_NAME.source }) }],
        responses: { '404': errorResponse('No built asset has this name.', ['not_found'], {}) },
      },
    ),
    prepare: (c) => ({
      async run() {
        // The name as it was sent: an asset name needs no escaping, so anything escaped is no asset.
        const name = c.pathname.slice(ASSETS.length);
        const missing = () => new ApiError(404, 'not_found', `No page asset is called ${JSON.stringify(name)}.`);
        if (!ASSET_NAME.test(name)) throw missing();
        const bytes = await filesOf(c).read(`assets/${name}`);
        if (!bytes) throw missing();
        return pageReply(bytes, name.endsWith('.js') ? PAGE_TYPES.js : PAGE_TYPES.css, PAGE_CACHE.asset);
      },
    }),
  }),
];
