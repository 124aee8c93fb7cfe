// What `register serve` (and `start`) says about itself at start, and how it lives as a process under npm: the
// `listening on …` line naming what it serves from, a warning when its dist is not there yet, and a stop when the npm
// process that started it goes. A `--workers` primary does all three; its workers do none.
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { INDEX_FILE } from '../common/dist-layout.ts';
import { describeStateLocation, parseStateLocation } from './state/open-state-store.ts';

/** What the `listening on …` line names besides the URL. */
export interface ServedFrom {
  dist: string;
  state: string;
  keys: string;
  stamp?: string;
  /** Worker processes (`--workers`); 1 serves in this process. */
  workers: number;
}

/**
 * `[serve] listening on URL/api/v1 (dist …, state …, keys …)`: an operator reads from one line which store and which
 * keys this server counts against, the usual cause of "my key is refused" or "my credits came back". Files are named
 * by absolute path (a relative one depends on where the command ran); a Redis URL without its password.
 */
export function listeningLine(url: string, from: ServedFrom): string {
  const loc = parseStateLocation(from.state);
  const state = loc.kind === 'sqlite' ? `sqlite:${resolve(loc.file)}` : loc.kind === 'memory' ? 'memory:' : describeStateLocation(loc);
  const keys = from.keys === 'state' ? 'keys from the state store' : `keys ${resolve(from.keys)}`;
  const extra = [from.stamp ? `pinned to ${from.stamp}` : null, from.workers > 1 ? `${from.workers} worker processes` : null].filter(Boolean);
  return `[serve] listening on ${url}/api/v1 (dist ${distLabel(from.dist)}, state ${state}, ${keys}${extra.map((e) => `, ${e}`).join('')})`;
}

/** The dist as logs may show it: a URL without the user and password it may carry (sent as Basic auth). */
function distLabel(dist: string): string {
  if (!/^https?:\/\//i.test(dist)) return dist;
  try {
    const url = new URL(dist);
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return dist.replace(/\/\/[^@/]*@/, '//');
  }
}

/**
 * A warning naming the dist when it holds no compiled release yet: a folder that does not exist or has no index.json,
 * or a URL that cannot be reached or has none. Null when the index is there. The server serves anyway (a release may
 * be compiled or published there later, and is picked up without a restart), so this only says why /readyz and the
 * API answer 503 meanwhile.
 */
export async function distWarning(dist: string): Promise<string | null> {
  const meanwhile = 'serving anyway; /readyz and the API answer 503 until a release is there';
  if (!/^https?:\/\//i.test(dist)) {
    try {
      await stat(join(dist, INDEX_FILE));
      return null;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      let folder = true;
      try {
        folder = (await stat(dist)).isDirectory();
      } catch {
        folder = false;
      }
      if (!folder) return `[serve] warning: --dist ${dist}: no such folder; ${meanwhile}`;
      return `[serve] warning: --dist ${dist}: no compiled release (${INDEX_FILE}: ${code ?? 'unreadable'}); ${meanwhile}`;
    }
  }
  // Read through the same source the server uses: it moves credentials in the URL to a header and never names them.
  const { createHttpSource } = await import('./source/http-source.ts');
  const { UpstreamError } = await import('./read-errors.ts');
  const source = createHttpSource({ baseUrl: dist, timeoutMs: 5000 });
  try {
    const index = await source.readFile(INDEX_FILE);
    return index ? null : `[serve] warning: --dist ${distLabel(dist)}: no ${INDEX_FILE} there; ${meanwhile}`;
  } catch (e) {
    const why = e instanceof UpstreamError ? `${e.url}: ${e.reason}` : (e as Error).message;
    return `[serve] warning: --dist cannot be reached (${why}); ${meanwhile}`;
  } finally {
    await source.close();
  }
}

/**
 * npm runs a script (`npm start`, `npx register serve`) as `sh -c "…"`, and passes a SIGTERM sent to npm on to that
 * shell only, which dies of it without passing it on: the server would be left running, orphaned, on its port.
 * Node cannot exec over the shell, so a process npm started watches its parent instead, and once the parent is gone
 * sends itself the SIGTERM it never got (the same graceful stop). Outside npm nothing is watched: a server started in
 * the background of a shell may well outlive that shell. Once per process (`start` calls it before compiling, `serve`
 * before serving).
 */
export function stopWithNpm(log: (line: string) => void, everyMs = 250): void {
  if (!process.env.npm_lifecycle_event || watching) return;
  watching = true;
  const parent = process.ppid;
  const timer = setInterval(() => {
    // process.ppid asks the kernel each time: an orphan's parent becomes init (or a subreaper).
    if (process.ppid === parent) return;
    clearInterval(timer);
    log(`[serve] the npm process that started this one is gone (parent ${parent}); stopping`);
    process.kill(process.pid, 'SIGTERM');
  }, everyMs);
  timer.unref();
}
let watching = false;
