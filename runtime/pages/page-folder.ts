// The page routes' files on Node: a built pages folder (build/pages/ by default). Assets are named by their content
// hash, so what was read once stays right and is kept (a few MB at most); the HTML is read on each load.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markLongLived } from '../long-lived-bytes.ts';
import type { PageFiles } from '../route.ts';

/** build/pages beside the running build (build/chunk-….mjs), or of the checkout when running from the sources. */
function defaultPagesDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const built = join(here, 'pages');
  return existsSync(join(built, 'index.html')) ? built : join(here, '..', '..', 'build', 'pages');
}

export function pageFolder(dir: string = defaultPagesDir()): PageFiles {
  const assets = new Map<string, Uint8Array>();
  async function readOrNull(name: string): Promise<Uint8Array | null> {
    try {
      return await readFile(join(dir, name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }
  return {
    location: (name) => join(dir, name),
    async read(name) {
      if (!name.startsWith('assets/')) return readOrNull(name);
      let bytes = assets.get(name);
      if (!bytes) {
        const read = await readOrNull(name);
        if (!read) return null;
        // Long-lived (long-lived-bytes.ts): the adapter codes each asset once per coding, not on every request.
        bytes = markLongLived(read);
        assets.set(name, bytes);
      }
      return bytes;
    },
  };
}
