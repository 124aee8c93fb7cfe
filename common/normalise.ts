// Search normalisation (CONTRACT-DECISIONS.md, Search): one encoder, used to build the token buckets and to read queries.
import { Encoder } from 'flexsearch';

// Latin letters that NFKD leaves whole; each folds to its base letters.
const FOLD: Record<string, string> = {
  'ł': 'l', 'ø': 'o', 'đ': 'd', 'ß': 'ss', 'æ': 'ae', 'œ': 'oe', 'ð': 'd', 'þ': 'th', 'ı': 'i', 'ħ': 'h', 'ŧ': 't', 'ŀ': 'l',
};
const FOLD_RE = /[łøđßæœðþıħŧŀ]/g;
const MARKS_RE = /\p{M}+/gu;

/** NFKD, combining marks removed, case folded, the Latin letters above folded to their base. */
export function foldText(s: string): string {
  return s.normalize('NFKD').replace(MARKS_RE, '').toLowerCase().replace(FOLD_RE, (c) => FOLD[c]);
}

const NON_ASCII = /[^\x00-\x7f]/;
const MAX_TOKEN = 256;

// flexsearch's stock charsets collapse double letters and cut numbers into triplets; the contract forbids both,
// so the encoder gets our fold, a split on every run of non-letters/non-digits, and no dedupe or numeric split.
const encoder = new Encoder({
  normalize: foldText,
  split: /[^\p{L}\p{N}]+/u,
  dedupe: false,
  numeric: false,
  cache: false,
  minlength: 1,
  maxlength: MAX_TOKEN,
});

/**
 * The normalised tokens of a label or query, in order, a token equal to the one before it dropped (the encoder's
 * rule; repeats further apart stay).
 */
export function tokenize(text: string): string[] {
  // Most labels are plain ASCII. For them the fold is only a lower-casing and the split keeps runs of [a-z0-9], so
  // a scan gives the encoder's answer without its NFKD and Unicode regexes (a tenth of the compile's stage 2).
  if (!NON_ASCII.test(text)) return asciiTokens(text.toLowerCase());
  return latinTokens(text) ?? encodeTokens(text);
}

/** The encoder's tokens of any text: what `tokenize` answers, without its ASCII shortcut (which must agree with it). */
export function encodeTokens(text: string): string[] {
  return encoder.encode(text) as string[];
}

function asciiTokens(lower: string): string[] {
  const out: string[] = [];
  let last = '';
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i;
      continue;
    }
    if (start < 0) continue;
    if (i - start <= MAX_TOKEN) {
      const t = lower.slice(start, i);
      if (t !== last) out.push((last = t));
    }
    start = -1;
  }
  return out;
}

// Latin letters, combining marks and general punctuation fold one character at a time: NFKD decomposes each on its
// own (the reordering it also does only moves marks, which go), and lower-casing needs no context outside Greek.
// So each such character's fold is looked up once, and text made only of them is tokenised by a scan.
const FOLD_RANGES: [number, number][] = [[0x80, 0x250], [0x300, 0x370], [0x2000, 0x2070]];
/** No letter or digit in its fold: ends a token. */
const SEPARATOR = 1;
/** Letters and digits mixed with other characters in its fold, or outside the ranges: the encoder decides. */
const COMPLEX = 2;
const folds = new Map<number, string | typeof SEPARATOR | typeof COMPLEX>();

/** The fold of one character of the ranges above (cached: a few hundred at most), or COMPLEX. */
function foldOf(c: number): string | typeof SEPARATOR | typeof COMPLEX {
  let f = folds.get(c);
  if (f !== undefined) return f;
  if (!FOLD_RANGES.some(([from, to]) => c >= from && c < to)) return COMPLEX;
  const folded = foldText(String.fromCharCode(c));
  if (/^[a-z0-9]*$/.test(folded)) f = folded; // '' for a mark, which vanishes inside its token
  else f = /[\p{L}\p{N}]/u.test(folded) ? COMPLEX : SEPARATOR;
  folds.set(c, f);
  return f;
}

/** tokenize for text of ASCII and the ranges above; null when another character is in it. */
function latinTokens(text: string): string[] | null {
  const out: string[] = [];
  let word = ''; // the token so far, folded
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    let f: string | typeof SEPARATOR | typeof COMPLEX;
    if (c < 0x80) f = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) ? text[i] : c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : SEPARATOR;
    else f = foldOf(c);
    if (f === COMPLEX) return null;
    if (f !== SEPARATOR) {
      word += f;
      continue;
    }
    // The folded token's length is what counts against the limit, as in the encoder; so does dropping a token equal
    // to the one before it.
    if (word.length > 0 && word.length <= MAX_TOKEN && word !== out[out.length - 1]) out.push(word);
    word = '';
  }
  return out;
}

/** Shortest prefix that may stand for a whole last query token (typeahead). */
export const MIN_PREFIX = 3;
/** Longest prefix stored for typeahead; a longer last token is matched on its first MAX_PREFIX characters. */
export const MAX_PREFIX = 24;
/** Candidates kept per normalised token or prefix. */
export const MAX_CANDIDATES_PER_TOKEN = 500;
export const MAX_QUERY_TOKENS = 5;
/** Fewest normalised characters a search query needs. */
export const MIN_QUERY_CHARS = 3;
/** Longest search query as sent, in characters: it bounds the normalising before MAX_QUERY_TOKENS is counted. */
export const MAX_QUERY_CHARS = 512;
