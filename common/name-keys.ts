// Name matching's one normaliser (issue 48): the compiler indexes every name by the keys below, and the runtime
// looks a query up by the same keys, so build and query time can never fold a name differently. Pure and
// Web-standard: it runs in workerd as on Node.
import anyAscii from 'any-ascii';
import { foldText } from './normalise.ts';

/** Longest name, in characters, that is keyed or scored: a longer one is cut here (no real name comes near it). */
export const MAX_NAME_CHARS = 256;

/** Apostrophes vanish inside a token rather than split it: "N'Golo" is one token, "ngolo", as "Ngolo" is. */
const APOSTROPHES = /['\u2018\u2019\u02bc`\u00b4]/g;
const NOT_TOKEN = /[^a-z0-9]+/;

/**
 * The tokens of a name: any script transliterated to ASCII (any-ascii: Cyrillic, Greek, Arabic, CJK, ...), then
 * foldText's case and diacritic fold, split on every run of other characters. Han and kana come out of any-ascii as
 * capitalised syllables run together ("北京国安" is "BeiJingGuoAn"), one token here.
 */
export function nameTokens(text: string): string[] {
  const ascii = foldText(anyAscii(text.slice(0, MAX_NAME_CHARS))).replace(APOSTROPHES, '');
  return ascii.split(NOT_TOKEN).filter((t) => t.length > 0);
}

/**
 * Tokens a name may carry or drop and still name the same club or person: legal-form and sport affixes ("FC",
 * "Club") and the commonest particles ("de", "da"). Dropped from the keys so "Arsenal FC", "Arsenal" and "FC
 * Arsenal" share them; scoring still sees every token.
 */
const AFFIXES = new Set([
  'fc', 'afc', 'cf', 'sc', 'ac', 'cd', 'ud', 'sd', 'ca', 'cs', 'sv', 'fk', 'nk', 'sk', 'bk', 'if', 'ik', 'ff', 'ssc', 'us', 'as',
  'club', 'clube', 'football', 'futbol', 'futebol', 'calcio', 'the', 'de', 'del', 'da', 'do', 'di', 'la', 'le', 'van', 'von', 'der',
]);

/**
 * The tokens that are not affixes; all of them when every token is one (a club called "AS" stays "as"). An affix
 * written with dots ("F.C.", tokens "f" and "c") is one too: a run of single letters that spells one is dropped.
 */
export function coreTokens(tokens: readonly string[]): string[] {
  const core: string[] = [];
  for (let i = 0; i < tokens.length; ) {
    let end = i;
    while (end < tokens.length && tokens[end].length === 1) end++;
    if (end - i >= 2 && AFFIXES.has(tokens.slice(i, end).join(''))) {
      i = end;
      continue;
    }
    if (end === i) end = i + 1;
    for (; i < end; i++) if (!AFFIXES.has(tokens[i])) core.push(tokens[i]);
  }
  return core.length ? core : tokens.slice();
}

/**
 * A consonant skeleton, the phonetic key of this module (a Soundex cousin with no digit codes and no length cut):
 * spelling and transliteration variants mostly differ in vowels, doubled letters and a few letter pairs, so it
 * rewrites those pairs to one letter (sch/sh -> s, ch/tch -> c, ph -> f, th -> t, kh -> k, gh -> g, ck/q -> k,
 * zh/dj -> j, x -> ks), folds letters heard alike (c -> k, z -> s, w/v -> f), keeps the first letter, drops every
 * later vowel and h, and collapses repeats. "Müller" and "Mueller" are both "mlr"; "Beijing Guoan" and
 * "BeiJingGuoAn" both "bjngn".
 */
export function soundKey(word: string): string {
  const s = word
    .replace(/sch|sh/g, 's')
    .replace(/tch|ch/g, 'c')
    .replace(/ph/g, 'f')
    .replace(/th/g, 't')
    .replace(/kh/g, 'k')
    .replace(/gh/g, 'g')
    .replace(/ck|q/g, 'k')
    .replace(/zh|dj/g, 'j')
    .replace(/x/g, 'ks')
    .replace(/[cz wv]/g, (c) => (c === 'c' ? 'k' : c === 'z' ? 's' : 'f'));
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (i > 0 && 'aeiouyh'.includes(c)) continue;
    if (out[out.length - 1] !== c) out += c;
  }
  return out;
}

/** Shortest sound key indexed: shorter skeletons ("Hoy" is "h") would put thousands of names under one key. */
const MIN_SOUND_KEY = 3;

/** Key prefixes: one family holds the three kinds, told apart by their first two characters. */
const WORD_KEY = 'w:';
const SOUND_KEY = 'p:';
const INITIALS_KEY = 'i:';

/** The initials form of core tokens: the others' initials, sorted, then the last token of two or more letters. */
export function initialsForm(core: readonly string[]): string | null {
  if (core.length < 2) return null;
  let last = core.length - 1;
  while (last > 0 && core[last].length < 2) last--;
  const initials = core.filter((_, i) => i !== last).map((t) => t[0]).sort().join('');
  return `${initials} ${core[last]}`;
}

/**
 * The match keys of a name, in a fixed order, each once:
 * - `w:` its core tokens sorted, space-separated: case, diacritics, script, word order and affixes fold away;
 * - `p:` the sound key (soundKey) of those sorted tokens run together: spelling variants, and a name that
 *   transliterates as one run of syllables;
 * - `i:` its initials form ("J. Smith", "John Smith" and "Smith J." are all "j smith"), for two tokens or more.
 * None for a name with no letter or digit.
 */
export function nameKeys(text: string): string[] {
  const tokens = nameTokens(text);
  if (tokens.length === 0) return [];
  const sorted = coreTokens(tokens).sort();
  const out = [WORD_KEY + sorted.join(' ')];
  const sound = soundKey(sorted.join(''));
  if (sound.length >= MIN_SOUND_KEY) out.push(SOUND_KEY + sound);
  const initials = initialsForm(coreTokens(tokens));
  if (initials !== null) out.push(INITIALS_KEY + initials);
  return out;
}
