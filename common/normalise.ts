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

// flexsearch's stock charsets collapse double letters and cut numbers into triplets; the contract forbids both,
// so the encoder gets our fold, a split on every run of non-letters/non-digits, and no dedupe or numeric split.
const encoder = new Encoder({
  normalize: foldText,
  split: /[^\p{L}\p{N}]+/u,
  dedupe: false,
  numeric: false,
  cache: false,
  minlength: 1,
  maxlength: 256,
});

/** The distinct normalised tokens of a label or query, in first-seen order. */
export function tokenize(text: string): string[] {
  return encoder.encode(text) as string[];
}

/** Shortest prefix that may stand for a whole last query token (typeahead). */
export const MIN_PREFIX = 3;
/** Candidates kept per normalised token or prefix. */
export const MAX_CANDIDATES_PER_TOKEN = 500;
export const MAX_QUERY_TOKENS = 5;
export const MIN_QUERY_CHARS = 3;
