// Where input bytes stop being UTF-8, Web-standard (the runtime's contribution files use it in workerd too; the
// compiler's tables through compiler/read/utf8-check.ts).

/**
 * The offset of the first byte of `bytes[from, to)` that does not start or continue a well-formed UTF-8 character
 * (overlong forms, surrogates and code points past U+10FFFF included, as `isUtf8` rejects them); -1 when there is
 * none. Slow next to isUtf8: for finding the place once a check failed.
 */
export function firstInvalidUtf8(bytes: Uint8Array, from: number, to: number): number {
  let i = from;
  while (i < to) {
    const c = bytes[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let more: number;
    // The second byte's range narrows for the lead bytes that could start an overlong form, a surrogate or a code
    // point past U+10FFFF.
    let low = 0x80;
    let high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c === 0xe0) low = 0xa0;
      else if (c === 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c === 0xf0) low = 0x90;
      else if (c === 0xf4) high = 0x8f;
    } else return i;
    if (i + 1 >= to || bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (let k = 2; k <= more; k++) {
      if (i + k >= to || bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return i;
    }
    i += more + 1;
  }
  return -1;
}
