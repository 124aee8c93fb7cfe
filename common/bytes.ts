// Byte slices joined once: responses and expanded shard sections are built as lists of views and copied a single time.

/** The parts one after another in one new array of their own. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  return joinInto(new Uint8Array(total(parts)), parts);
}

// Where Node's Buffer exists, an uninitialised slice of its shared 8 KiB pool (a fresh unzeroed buffer above 4 KiB).
// For a ~1 KB entity body that is a third of what `new Uint8Array(n)` costs, which zeroes a backing store of its own
// for the GC to track (measured). Other runtimes get a plain array.
const allocForSend: (n: number) => Uint8Array =
  typeof globalThis.Buffer === 'function' ? (n) => globalThis.Buffer.allocUnsafe(n) : (n) => new Uint8Array(n);

/**
 * concat() for a response body: bytes written to the client and then dropped. Never keep the result: a small one
 * shares its memory with other pooled buffers, and retaining it would keep that memory alive.
 */
export function concatToSend(parts: readonly Uint8Array[]): Uint8Array {
  return joinInto(allocForSend(total(parts)), parts);
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
