// The page routes' files at the edge (PageFiles, runtime/route.ts): the built pages folder carried inside the Worker
// bundle (bundle.ts), so the explorer, /docs and their assets are the same bytes Node serves from build/pages/. Each
// file is decoded once per isolate, on its first request, and kept.
import { fromBase64url } from '#platform/crypto';
import { markLongLived } from '../runtime/long-lived-bytes.ts';
import type { PageFiles } from '../runtime/route.ts';

export type BundledFile = { text: string } | { base64: string };

// fromBase64url reads standard base64 as well (`+`, `/`, `=` padding), as bundle.ts writes it.
const bytesOf = (file: BundledFile): Uint8Array => ('text' in file ? new TextEncoder().encode(file.text) : fromBase64url(file.base64));

export function bundledPages(files: Record<string, BundledFile>): PageFiles {
  const decoded = new Map<string, Uint8Array>();
  return {
    location: (name) => `the Worker bundle's pages/${name}`,
    async read(name) {
      let bytes = decoded.get(name);
      if (!bytes) {
        if (!Object.hasOwn(files, name)) return null;
        // Long-lived (long-lived-bytes.ts): the same bytes object on every answer, as page-folder.ts gives its assets.
        bytes = markLongLived(bytesOf(files[name]));
        decoded.set(name, bytes);
      }
      return bytes;
    },
  };
}
