// UTF-8 checks over input bytes: the native check for the common case, and where the first bad byte is, for the
// message, only once that check has failed.
import { isUtf8 } from 'node:buffer';

export { firstInvalidUtf8 } from '../../common/utf8.ts';

/** Whether `bytes[from, to)` is well-formed UTF-8 (native; a range cut inside a character is not). */
export function isUtf8Range(bytes: Uint8Array, from: number, to: number): boolean {
  return isUtf8(from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to));
}

