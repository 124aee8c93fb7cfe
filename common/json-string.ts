// A string as JSON text, for the compiler's hand-written shard sections, which quote ~30M values at full size.

/**
 * `JSON.stringify(s)` for a string, the same text. Nearly every value (labels, dates, scores, codes, IDs) needs no
 * escaping: a scan finds that and wraps the string in quotes, which costs less than JSON.stringify's call for short
 * strings (in a 300k compile's profile, quoting fell from 3.4% to 2.1% of the CPU). Anything else, a quote, a
 * backslash, a control character or any surrogate, paired or not, goes to JSON.stringify, which decides for it.
 */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s);
  }
  return `"${s}"`;
}
