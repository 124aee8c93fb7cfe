// The path and query of a request URL without a URL parser for the common case. `new URL()` plus its searchParams
// was a tenth of an entity lookup's CPU; most targets are plain ASCII that a parser would hand back unchanged.

/** A request's path (as `URL.pathname` gives it, but for percent-encoded dot segments) and its query parameters. */
export interface RequestTarget {
  pathname: string;
  query: URLSearchParams;
}

// Characters the WHATWG URL parser keeps as they are in the path and in the query of an http(s) URL: letters,
// digits, `-._~`, the sub-delimiters except the quote (percent-encoded in a special URL's query), `:@/%?`.
// Anything else (spaces, quotes, `\`, non-ASCII, control characters) goes to the parser.
const PLAIN = /^[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
// A dot segment (`/./`, `/../`, also spelled `%2e`) is resolved away by the parser; leave those to pathOf.
const MAYBE_DOT_SEGMENT = /\/\.|%2e/i;
/** A segment of one or two dots, at least one of them percent-encoded (`%2E`, `.%2e`, `%2E%2E`). */
const ENCODED_DOT_SEGMENT = /^(?=.*%)(?:\.|%2e){1,2}$/i;
/** What the WHATWG parser removes from any input before parsing it. */
const TAB_OR_NEWLINE = /[\t\n\r]/g;
// eslint-disable-next-line no-control-regex
const EDGE_CONTROLS = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;

/**
 * Splits an absolute `href` into path and query, as `new URL(href)` would, but for one thing: a path segment that
 * is a percent-encoded dot (`%2E`, `%2E%2E`) is kept as it was sent, a value like any other. The parser resolves
 * it as `.` or `..`, which turned a resolve of external ID `..` into a request for another path.
 */
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
  // What the parser reads: the input without tabs, newlines and the controls around it.
  const clean = href.replace(TAB_OR_NEWLINE, '').replace(EDGE_CONTROLS, '');
  return { pathname: /%2e/i.test(clean) ? pathOf(clean, url) : url.pathname, query: url.searchParams };
}

/** The parser's path of `clean`, with its percent-encoded dot segments kept as data (see requestTarget). */
function pathOf(clean: string, url: URL): string {
  const origin = clean.indexOf('//');
  const from = clean.slice(origin + 2).search(/[/\\?#]/);
  if (from < 0) return url.pathname;
  const rest = clean.slice(origin + 2 + from);
  const end = rest.search(/[?#]/);
  const raw = end < 0 ? rest : rest.slice(0, end);
  if (raw === '') return url.pathname;
  // Segments as the parser splits an http URL's path (`\` counts as `/`); plain dot segments are resolved as it
  // resolves them, the others are encoded as it encodes them.
  const out: string[] = [];
  const segments = raw.split(/[/\\]/).slice(1);
  segments.forEach((s, i) => {
    const last = i === segments.length - 1;
    if (s === '.' || s === '..') {
      if (s === '..') out.pop();
      if (last) out.push('');
    } else out.push(ENCODED_DOT_SEGMENT.test(s) ? s : new URL(`http://x/${s}/`).pathname.slice(1, -1)); // `/`: a space at its end is data
  });
  return `/${out.join('/')}`;
}

/** The path of an absolute request URL as it was sent (dot segments and escapes kept), without the query. */
export function pathAsSent(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  // Where the query or fragment starts, whichever is first (a regular expression search cost more per request).
  const q = url.indexOf('?', start);
  const h = url.indexOf('#', start);
  const end = q < 0 ? h : h < 0 ? q : Math.min(q, h);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}
