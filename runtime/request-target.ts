// The path and query of a request URL without a URL parser for the common case. `new URL()` plus its searchParams
// was a tenth of an entity lookup's CPU; most targets are plain ASCII that a parser would hand back unchanged.

/** A request's path (as `URL.pathname` gives it) and its query parameters. */
export interface RequestTarget {
  pathname: string;
  query: URLSearchParams;
}

// Characters the WHATWG URL parser keeps as they are in the path and in the query of an http(s) URL: letters,
// digits, `-._~`, the sub-delimiters except the quote (percent-encoded in a special URL's query), `:@/%?`.
// Anything else (spaces, quotes, `\`, non-ASCII, control characters) goes to the parser.
const PLAIN = /^[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
// A dot segment (`/./`, `/../`, also spelled `%2e`) is resolved away by the parser; leave those to it too.
const MAYBE_DOT_SEGMENT = /\/\.|%2e/i;

/** Splits an absolute `href` into path and query, as `new URL(href)` would. */
export function requestTarget(href: string): RequestTarget {
  const scheme = href.indexOf('//');
  const start = scheme < 0 ? -1 : href.indexOf('/', scheme + 2);
  if (start > 0) {
    const q = href.indexOf('?', start);
    const pathname = q < 0 ? href.slice(start) : href.slice(start, q);
    if (PLAIN.test(href.slice(start)) && !MAYBE_DOT_SEGMENT.test(pathname)) {
      // With its `?`: the constructor drops one leading `?`, and a query may itself start with one.
      return { pathname, query: new URLSearchParams(q < 0 ? '' : href.slice(q)) };
    }
  }
  const url = new URL(href);
  return { pathname: url.pathname, query: url.searchParams };
}
