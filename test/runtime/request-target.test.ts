// The request-target shortcut: for any target, the path and query parameters it gives are those `new URL` gives.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { requestTarget } from '../../runtime/request-target.ts';

const viaUrl = (href: string) => {
  const u = new URL(href);
  return { pathname: u.pathname, params: [...u.searchParams] };
};
const viaShortcut = (href: string) => {
  const t = requestTarget(href);
  return { pathname: t.pathname, params: [...t.query] };
};

// Pieces that matter to a URL parser: separators, dot segments (plain and percent-encoded), percent escapes,
// characters it encodes or strips, a backslash, non-ASCII, and the plain characters of real API paths.
const piece = fc.constantFrom(
  '/', '/', '?', '&', '=', '.', '..', '/./', '/../', '%2e', '%2E', '%2e%2E', '%20', '%zz', '%', '#', ' ', '"', "'",
  '<', '>', '`', '{', '}', '|', '^', '\\', '\t', '\n', 'é', '中', '+', ',', ';', ':', '@', '!', '$', '*', '(', ')', '~',
  'api', 'v1', 'next', 'entities', 'rP0123456789abcde', 'include=aliases,bridges', 'q=Thomas M', 'resolve', 'x',
);

describe('requestTarget', () => {
  it('agrees with new URL on the path and the query parameters of any target', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), fc.constantFrom('http://127.0.0.1', 'http://localhost:8787', 'https://example.org'), (parts, origin) => {
        const href = `${origin}/${parts.join('')}`;
        expect(viaShortcut(href)).toEqual(viaUrl(href));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees on the targets the API serves', () => {
    for (const href of [
      'http://127.0.0.1/api/v1/entities/rP0123456789abcde?include=aliases,bridges,overlay',
      'http://127.0.0.1/api/v1/resolve/transfermarkt/12345?namespace=player',
      'http://127.0.0.1/api/v1/search?q=M%C3%BCller&type=player&limit=5',
      'http://127.0.0.1/api/v1/entities/',
      'http://127.0.0.1/',
      'http://127.0.0.1',
      'http://127.0.0.1/api/v1/../v1/meta',
      'http://127.0.0.1/api/v1/%2E%2e/next/meta',
    ]) {
      expect(viaShortcut(href)).toEqual(viaUrl(href));
    }
  });
});
