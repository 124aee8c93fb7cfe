// Where `serve --trust` keeps its rollback mark (docs/integrity.md, "The rollback mark"): beside a local dist, or in
// the --state folder when the dist is an HTTP origin. Opened before serving, so a mark that cannot be read or a place
// that cannot be written is refused at start, naming it, rather than found out on the first publish.
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { fileMarkStore } from '../../common/trust-mark-file.ts';
import { EMPTY_MARK, loadMark, memoryMarkStore, type MarkStore } from '../../common/trust.ts';
import { describeStateLocation, parseStateLocation } from '../state/open-state-store.ts';

/**
 * The mark's store for a server of `dist` (a folder, or an http(s) URL when `fromUrl`) with state `state`. Writes
 * the mark once (as it is) to prove the place writable; `log` says where it is when it starts empty.
 */
export async function openServeMarks(dist: string, fromUrl: boolean, state: string, log: (line: string) => void): Promise<MarkStore> {
  let dir = dist;
  if (fromUrl) {
    const loc = parseStateLocation(state);
    if (loc.kind === 'memory') {
      // Nothing of a memory: server outlives it; its mark neither (a restart may go back, as with its quotas).
      log('[serve] --trust: the rollback mark is kept in memory (--state memory:), so a restart may accept an older index');
      return memoryMarkStore('memory: (this process only)');
    }
    if (loc.kind === 'redis') {
      throw new RegisterError('serve', `--trust over an HTTP origin keeps its rollback mark in the --state folder, and --state ${describeStateLocation(loc)} is no folder: give --state a folder or sqlite:PATH`);
    }
    dir = dirname(loc.file);
    await mkdir(dir, { recursive: true }).catch(() => {}); // the state store makes it too; refused below if it cannot be
  }
  const store = fileMarkStore(dir);
  const mark = await loadMark(store).catch((e: Error) => {
    throw new RegisterError('serve', e.message);
  });
  try {
    await store.save(mark ?? EMPTY_MARK);
  } catch (e) {
    throw new RegisterError('serve', `${store.where}: cannot write the rollback mark of --trust (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): ${fromUrl ? 'give --state a writable folder' : 'the dist folder must be writable'}`);
  }
  if (mark === null) log(`[serve] --trust: rollback mark started at ${store.where} (nothing accepted here before)`);
  return store;
}
