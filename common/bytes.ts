// Byte slices joined once: responses and expanded shard sections are built as lists of views and copied a single time.

/** The parts one after another in one new array of their own. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  return joinInto(new Uint8Array(total(parts)), parts);
}

/**
 * `n` bytes for a caller that drops them after one answer (a response body, a shard read to be checked and copied).
 * Where Node's Buffer exists, an uninitialised slice of its shared 8 KiB pool (a fresh unzeroed buffer above 4 KiB):
 * for a ~1 KB body a third of what `new Uint8Array(n)` costs, which zeroes a backing store of its own for the GC to
 * account for, and a fresh one per shard (100 per batch) drove extra collections (both measured). Never retain the
 * result: a small one shares its slab with other pooled buffers and would keep that memory alive. Other runtimes
 * get a plain array.
 */
export const transientBytes: (n: number) => Uint8Array =
  typeof globalThis.Buffer === 'function' ? (n) => globalThis.Buffer.allocUnsafe(n) : (n) => new Uint8Array(n);

/** concat() for a response body, into transientBytes: never keep the result. */
export function concatToSend(parts: readonly Uint8Array[]): Uint8Array {
  return joinInto(transientBytes(total(parts)), parts);
}

function total(parts: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of parts) n += p.length;
  return n;
}

function joinInto(out: Uint8Array, parts: readonly Uint8Array[]): Uint8Array {
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
