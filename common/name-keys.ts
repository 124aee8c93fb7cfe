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
  const cut = text.slice(0, MAX_NAME_CHARS);
  // Most names are plain ASCII, for which transliteration and the fold are only a lower-casing.
  const ascii = (ASCII.test(cut) ? cut.toLowerCase() : foldText(anyAscii(cut))).replace(APOSTROPHES, '');
  return ascii.split(NOT_TOKEN).filter((t) => t.length > 0);
}
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Tokens a name may carry or drop and still name the same club or person: legal-form and sport affixes ("FC",
 * "Club") and the commonest particles ("de", "da"). Dropped from the keys so "Arsenal FC", "Arsenal" and "FC
 * Arsenal" share them; scoring still sees every token, and tells "AC Oulu" from "FC Oulu" (affixSignature).
 */
const CLUB_AFFIXES = new Set([
  'fc', 'afc', 'cf', 'sc', 'ac', 'cd', 'ud', 'sd', 'ca', 'cs', 'sv', 'fk', 'nk', 'sk', 'bk', 'if', 'ik', 'ff', 'ssc', 'us', 'as',
  'club', 'clube', 'football', 'futbol', 'futebol', 'calcio',
]);
const PARTICLES = new Set(['the', 'de', 'del', 'da', 'do', 'di', 'la', 'le', 'van', 'von', 'der']);
const isAffix = (t: string): boolean => CLUB_AFFIXES.has(t) || PARTICLES.has(t);

/**
 * A name's tokens cut into units: a word, or a run of single letters that spells a club affix ("F.C.", tokens "f"
 * and "c", is the unit "fc"); `affix` tells the units the keys drop.
 */
function units(tokens: readonly string[]): { text: string; tokens: string[]; affix: boolean }[] {
  const out: { text: string; tokens: string[]; affix: boolean }[] = [];
  for (let i = 0; i < tokens.length; ) {
    let end = i;
    while (end < tokens.length && tokens[end].length === 1) end++;
    const run = tokens.slice(i, end).join('');
    if (end - i >= 2 && CLUB_AFFIXES.has(run)) {
      out.push({ text: run, tokens: tokens.slice(i, end), affix: true });
      i = end;
      continue;
    }
    out.push({ text: tokens[i], tokens: [tokens[i]], affix: isAffix(tokens[i]) });
    i++;
  }
  return out;
}

/** The tokens that are not affixes; all of them when every token is one (a club called "AS" stays "as"). */
export function coreTokens(tokens: readonly string[]): string[] {
  // Most names have no affix and no single letter: nothing to cut.
  if (!tokens.some((t) => t.length === 1 || isAffix(t))) return tokens.slice();
  const core = units(tokens).filter((u) => !u.affix).flatMap((u) => u.tokens);
  return core.length ? core : tokens.slice();
}

/**
 * The club affixes of a name as one short code, so that forms of one affix agree and different ones do not: an
 * abbreviation as it is, a word by its initial ("F.C.", "FC", "Football Club" and "Futebol Clube" are all "fc";
 * "AC" is "ac"). Particles are not affixes here. Empty when the name has none.
 */
export function affixSignature(tokens: readonly string[]): string {
  let out = '';
  for (const u of units(tokens)) if (u.affix && !PARTICLES.has(u.text)) out += u.text.length <= 3 ? u.text : u.text[0];
  return out;
}

/**
 * Whether two names' affixes can be the same club's: either has none, or one's code holds the other's letters in
 * order ("afc" and "fc", "fc" and "c" for a bare "Club"). "ac" and "fc" cannot.
 */
export function affixesAgree(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  let at = 0;
  for (const c of long) if (at < short.length && c === short[at]) at++;
  return at === short.length;
}

/**
 * A consonant skeleton, the phonetic key of this module (a Soundex cousin with no digit codes and no length cut):
 * spelling and transliteration variants mostly differ in vowels, doubled letters and a few letter pairs, so it
 * reads those pairs as one letter (sch/sh -> s, ch/tch/ck -> k, ph -> f, th -> t, kh -> k, gh -> g, zh/dj -> j,
 * x -> ks), folds letters heard alike (c/q -> k, z -> s, w/v -> f), keeps the first letter, drops every later
 * vowel and h, and collapses repeats. "Müller" and "Mueller" are both "mlr"; "Beijing Guoan" and
 * "BeiJingGuoAn" both "bjngn".
 */
export function soundKey(word: string): string {
  let out = '';
  for (let i = 0; i < word.length; i++) {
    let c = word[i];
    const next = word[i + 1];
    // One pass, longest pair first: the letter a pair stands for, or a letter heard like another.
    if (c === 's' && next === 'c' && word[i + 2] === 'h') i += 2;
    else if (c === 't' && next === 'c' && word[i + 2] === 'h') (c = 'k'), (i += 2);
    else if (next === 'h' && (c === 's' || c === 't' || c === 'k' || c === 'g')) i++;
    else if (next === 'h' && c === 'c') (c = 'k'), i++;
    else if (next === 'h' && c === 'p') (c = 'f'), i++;
    else if (next === 'h' && c === 'z') (c = 'j'), i++;
    else if (c === 'd' && next === 'j') (c = 'j'), i++;
    else if (c === 'c' && next === 'k') (c = 'k'), i++;
    else if (c === 'c' || c === 'q') c = 'k';
    else if (c === 'z') c = 's';
    else if (c === 'w' || c === 'v') c = 'f';
    else if (c === 'x') {
      if (out[out.length - 1] !== 'k') out += 'k';
      c = 's';
    }
    // The first letter stays whatever it is; later vowels and h go; a letter repeated counts once.
    if (out.length > 0 && VOWELS_H.includes(c)) continue;
    if (out[out.length - 1] !== c) out += c;
  }
  return out;
}
const VOWELS_H = 'aeiouyh';

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
  return keysOfTokens(nameTokens(text));
}

/** nameKeys of a name's nameTokens, for a caller that has them already. */
export function keysOfTokens(tokens: readonly string[]): string[] {
  if (tokens.length === 0) return [];
  const core = coreTokens(tokens);
  const sorted = core.slice().sort();
  const out = [WORD_KEY + sorted.join(' ')];
  const sound = soundKey(sorted.join(''));
  if (sound.length >= MIN_SOUND_KEY) out.push(SOUND_KEY + sound);
  const initials = initialsForm(core);
  if (initials !== null) out.push(INITIALS_KEY + initials);
  return out;
}
