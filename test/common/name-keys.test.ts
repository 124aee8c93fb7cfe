// The one normaliser of names (common/name-keys.ts): what folds together and what stays apart. The compiler keys
// every name with it and the runtime keys every query with it, so a name and its variants meet only where the
// keys below say they do.
import { describe, expect, it } from 'vitest';
import { nameKeys, nameTokens, soundKey } from '../../common/name-keys.ts';

/** Whether two names share a key of the given kind (`w:`, `p:`, `i:`). */
const share = (a: string, b: string, kind: string): boolean => nameKeys(a).some((k) => k.startsWith(kind) && nameKeys(b).includes(k));

describe('nameTokens', () => {
  it('folds case and diacritics, and Latin letters NFKD leaves whole', () => {
    expect(nameTokens('Zoë MÜLLER')).toEqual(['zoe', 'muller']);
    expect(nameTokens('Łódź')).toEqual(['lodz']);
    expect(nameTokens('Ørsted Ægir Straße')).toEqual(['orsted', 'aegir', 'strasse']);
    expect(nameTokens('İlkay Perišić')).toEqual(['ilkay', 'perisic']);
  });

  it('transliterates Cyrillic, Greek, Arabic, Han, kana and Hangul', () => {
    expect(nameTokens('Спартак Москва')).toEqual(['spartak', 'moskva']);
    expect(nameTokens('Ολυμπιακός')).toEqual(['olympiakos']);
    expect(nameTokens('北京国安')).toEqual(['beijingguoan']);
    expect(nameTokens('전북 현대')).toEqual(['jeonbug', 'hyeondae']);
    expect(nameTokens('الأهلي').length).toBe(1);
  });

  it('splits on punctuation, keeps digits, and lets an apostrophe join rather than split', () => {
    expect(nameTokens("N'Golo Kanté")).toEqual(['ngolo', 'kante']);
    expect(nameTokens('1. FC Köln')).toEqual(['1', 'fc', 'koln']);
    expect(nameTokens('J.-P. Smith')).toEqual(['j', 'p', 'smith']);
    expect(nameTokens(' -- ')).toEqual([]);
  });
});

describe('nameKeys', () => {
  it('are deterministic, each once, in the order word, sound, initials', () => {
    expect(nameKeys('John Smith')).toEqual(['w:john smith', 'p:jnsmt', 'i:j smith']);
    expect(nameKeys('John Smith')).toEqual(nameKeys('John Smith'));
    expect(nameKeys('')).toEqual([]);
  });

  it('fold diacritics and script: the same word key', () => {
    expect(share('Thomas Müller', 'THOMAS MULLER', 'w:')).toBe(true);
    expect(share('Спартак Москва', 'Spartak Moskva', 'w:')).toBe(true);
    expect(share('Ολυμπιακός', 'Olympiakos', 'w:')).toBe(true);
  });

  it('fold word order and club affixes', () => {
    expect(share('Müller, Thomas', 'Thomas Müller', 'w:')).toBe(true);
    expect(share('Arsenal FC', 'Arsenal', 'w:')).toBe(true);
    expect(share('FC Barcelona', 'Barcelona', 'w:')).toBe(true);
    // Only affixes: the name keeps them rather than vanish.
    expect(nameKeys('AS')).toEqual(['w:as']);
  });

  it('bring spelling and transliteration variants together by sound', () => {
    expect(share('Thomas Mueller', 'Thomas Müller', 'w:')).toBe(false);
    expect(share('Thomas Mueller', 'Thomas Müller', 'p:')).toBe(true);
    expect(share('北京国安', 'Beijing Guoan', 'p:')).toBe(true);
    expect(soundKey('philipp')).toBe(soundKey('filip'));
  });

  it('bring initials and full first names together', () => {
    expect(share('J. Smith', 'John Smith', 'i:')).toBe(true);
    expect(share('Smith J.', 'John Smith', 'i:')).toBe(true);
    expect(share('J. P. Smith', 'John Paul Smith', 'i:')).toBe(true);
    expect(share('J. Smith', 'Jane Smithers', 'i:')).toBe(false);
    // One token has no initials form.
    expect(nameKeys('Arsenal').some((k) => k.startsWith('i:'))).toBe(false);
  });

  it('keep different names apart', () => {
    for (const [a, b] of [['Arsenal', 'Chelsea'], ['John Smith', 'John Smyth Jones'], ['Real Madrid', 'Atletico Madrid']]) {
      expect(nameKeys(a).filter((k) => nameKeys(b).includes(k))).toEqual([]);
    }
  });
});

describe('affixes', () => {
  it('drop whether written as a word or with dots, and only as a whole run of letters', () => {
    expect(nameKeys('Arsenal F.C.')[0]).toBe('w:arsenal');
    expect(nameKeys('A.F.C. Bournemouth')[0]).toBe('w:bournemouth');
    expect(nameKeys('J. P. Smith')[0]).toBe('w:j p smith');
  });
});
