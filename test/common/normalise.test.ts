// Search normalisation (CONTRACT-DECISIONS.md, Search): the contract's examples, and the ASCII shortcut of
// `tokenize` held to the flexsearch encoder it stands in for.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeTokens, tokenize } from '../../common/normalise.ts';

describe('tokenize', () => {
  it('follows the contract: fold, keep double letters and digit runs, split on non-letters', () => {
    expect(tokenize('Lodz')).toEqual(tokenize('Łódź'));
    expect(tokenize('LÓDŹ')).toEqual(['lodz']);
    expect(tokenize('TSG 1899 Hoffenheim')).toEqual(['tsg', '1899', 'hoffenheim']);
    expect(tokenize('Straße')).toEqual(['strasse']);
    expect(tokenize('北京国安')).toEqual(['北京国安']);
    expect(tokenize("O'Neil-Smith_Jr.")).toEqual(['o', 'neil', 'smith', 'jr']);
    expect(tokenize('  ,; ')).toEqual([]);
    expect(tokenize('Wales League 2023–24 – Group A')).toEqual(['wales', 'league', '2023', '24', 'group', 'a']);
    expect(tokenize('Ðorđević Æsir')).toEqual(['dordevic', 'aesir']);
    expect(tokenize('Cafe\u0301 Zu\u0308rich')).toEqual(['cafe', 'zurich']);
  });

  it('drops a token equal to the one before it, and only that one', () => {
    expect(tokenize('Real Real Madrid')).toEqual(['real', 'madrid']);
    expect(tokenize('Ab ab AB')).toEqual(['ab']);
    expect(tokenize('ab cd ab')).toEqual(['ab', 'cd', 'ab']);
  });

  it('drops a token longer than 256 characters, keeping the rest of the text', () => {
    expect(tokenize(`${'x'.repeat(257)} y ${'z'.repeat(256)}`)).toEqual(['y', 'z'.repeat(256)]);
  });

  it('agrees with the encoder on every character of the per-character ranges, alone and inside a word', () => {
    for (const [from, to] of [[0x80, 0x250], [0x300, 0x370], [0x2000, 0x2070]]) {
      for (let c = from; c < to; c++) {
        const ch = String.fromCharCode(c);
        for (const s of [ch, `Ab${ch}c9 ${ch}${ch}x`]) expect(tokenize(s), `U+${c.toString(16)} in ${JSON.stringify(s)}`).toEqual(encodeTokens(s));
      }
    }
  });

  it('answers exactly what the encoder answers, for ASCII text and any other', () => {
    const ascii = fc.string({ unit: fc.constantFrom(...'aAbBzZ019 -_.,\'"\t\n!~\x00\x7f'.split('')), maxLength: 40 });
    const longRuns = fc.tuple(fc.integer({ min: 250, max: 262 }), fc.integer({ min: 0, max: 3 })).map(([n, k]) => `${'a'.repeat(n)} b${' a'.repeat(k)}`);
    const any = fc.string({ unit: 'grapheme', maxLength: 30 });
    // Latin letters, combining marks and punctuation (the per-character path), with ASCII and a few characters
    // outside those ranges (Greek capital sigma, a CJK ideograph, a fraction, a ligature) that send text elsewhere.
    const latinChar = fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.integer({ min: 0x80, max: 0x24f }),
      fc.integer({ min: 0x300, max: 0x36f }),
      fc.integer({ min: 0x2000, max: 0x206f }),
      fc.constantFrom(0x3a3, 0x5317, 0xbc, 0xfb01, 0x130, 0x2070),
    ).map((c) => String.fromCharCode(c));
    const latin = fc.array(latinChar, { maxLength: 30 }).map((cs) => cs.join(''));
    fc.assert(fc.property(fc.oneof(ascii, longRuns, any, latin, latin, fc.string({ unit: 'binary-ascii', maxLength: 40 })), (s) => {
      expect(tokenize(s)).toEqual(encodeTokens(s));
    }), { numRuns: 20000 });
  });
});
