// The page routes' files at the edge (PageFiles, runtime/route.ts): the built pages folder carried inside the Worker
// bundle (bundle.ts), so the explorer, /docs and their assets are the same bytes Node serves from build/pages/. Each
// file is decoded once per isolate, on its first request, and kept.
import { markLongLived } from '../runtime/long-lived-bytes.ts';
import type { PageFiles } from '../runtime/route.ts';

export type BundledFile = { text: string } | { base64: string };

function bytesOf(file: BundledFile): Uint8Array {
  if ('text' in file) return new TextEncoder().encode(file.text);
  const raw = atob(file.base64);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

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
