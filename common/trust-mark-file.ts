// The Node driver of common/trust.ts's MarkStore: the rollback mark in one file, written atomically (durable-file.ts),
// and where that file goes for `serve --trust`, `pull --trust` and `verify --trust` (docs/integrity.md, "The
// rollback mark").
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomically } from './durable-file.ts';
import { decodeMark, encodeMark, raiseMark, type MarkStore, type TrustMark } from './trust.ts';

/** The mark's file name, in the dist folder (a local dist) or the state folder (a dist served from a URL). */
export const TRUST_MARK_FILE = '.trust-mark.json';

/**
 * Saves in flight per mark file in this process, chained: a save reads the file, merges and writes, so two at once
 * would each merge with the same old mark and the later rename would drop the other's raise.
 */
const saving = new Map<string, Promise<void>>();

/**
 * The mark in `dir`/.trust-mark.json. A missing file is "nothing accepted here yet"; a damaged one rejects (never
 * read as empty). Saving merges with what the file holds (the newer of each field), so writers in several processes
 * over one folder (`--workers`, a pull beside a server) do not lower each other's mark.
 */
export function fileMarkStore(dir: string): MarkStore {
  const path = join(dir, TRUST_MARK_FILE);
  const load = async (): Promise<TrustMark | null> => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new Error(`cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    return decodeMark(text);
  };
  return {
    where: path,
    load,
    save(mark) {
      const run = (saving.get(path) ?? Promise.resolve()).catch(() => {}).then(async () => {
        // A damaged file on disk is replaced by the mark held in memory, which is at least as new as anything loaded.
        const there = await load().catch(() => null);
        await writeAtomically(dir, TRUST_MARK_FILE, encodeMark(there ? raiseMark(there, mark) : mark));
      });
      saving.set(path, run);
      void run.finally(() => saving.get(path) === run && saving.delete(path)).catch(() => {});
      return run;
    },
  };
}
