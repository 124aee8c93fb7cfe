// Bodies that are the same bytes object on every answer for as long as the process runs (a hashed page asset, the
// OpenAPI document): what an adapter derives from one (its coded forms) it may keep with it instead of remaking it
// per request. Web-standard, so the core can mark bytes without knowing how an adapter codes them.

const marked = new WeakSet<Uint8Array>();

/** Marks `bytes` as never changing while they are referenced; returns them. */
export function markLongLived<T extends Uint8Array>(bytes: T): T {
  marked.add(bytes);
  return bytes;
}

/** Whether `bytes` were marked by markLongLived(). */
export function isLongLived(bytes: Uint8Array): boolean {
  return marked.has(bytes);
}
