// The request-target shortcut: for any target, the path and query parameters it gives are those `new URL` gives,
// but for a percent-encoded dot segment, which stays a value (a resolve of external ID `..` sent as `%2E%2E`).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { requestTarget } from '../../runtime/request-target.ts';

/**
 * `new URL`'s path and parameters, but for path segments that are percent-encoded dots (`%2E`, `.%2e`, `%2E%2E`):
 * those are swapped for placeholders the parser leaves alone, and put back as they were sent.
 */
const viaUrl = (href: string) => {
  // As the parser reads it: no tabs or newlines, no controls or spaces around it.
  const clean = href.replace(/[\t\n\r]/g, '').trimEnd();
  const origin = clean.indexOf('//') + 2;
  const from = origin + Math.max(0, clean.slice(origin).search(/[/\\?#]/));
  const end = clean.slice(from).search(/[?#]/);
  const path = end < 0 ? clean.slice(from) : clean.slice(from, from + end);
  const kept: string[] = [];
  const swapped = path
    .split(/(?=[/\\])/)
    .map((s) => (/^[/\\](?=.*%)(?:\.|%2e){1,2}$/i.test(s) ? `${s[0]}ZZDOT${kept.push(s.slice(1)) - 1}ZZ` : s))
    .join('');
  const u = new URL(clean.slice(0, from) + swapped + (end < 0 ? '' : clean.slice(from + end)));
  return { pathname: u.pathname.replace(/ZZDOT([0-9]+)ZZ/g, (_, i: string) => kept[Number(i)]), params: [...u.searchParams] };
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

  it('keeps percent-encoded dot segments as sent, and resolves plain ones as the parser does', () => {
    expect(requestTarget('http://127.0.0.1/api/v1/resolve/fbref/%2E%2E').pathname).toBe('/api/v1/resolve/fbref/%2E%2E');
    expect(requestTarget('http://127.0.0.1/api/v1/resolve/fbref/%2e?namespace=x').pathname).toBe('/api/v1/resolve/fbref/%2e');
    expect(requestTarget('http://127.0.0.1/api/v1/resolve/%2E%2E/notices').pathname).toBe('/api/v1/resolve/%2E%2E/notices');
    expect(requestTarget('http://127.0.0.1/api/v1/x/../meta').pathname).toBe('/api/v1/meta');
    expect(requestTarget('http://127.0.0.1/api/v1/search/./?q=a b').pathname).toBe('/api/v1/search/');
  });
});
