// What the edge tests share: a local edge (workerd through miniflare, in this process) over a compiled dist, keys
// issued to it through its admin route, and the same keys in a keys file for a Node runtime beside it.
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { join } from 'node:path';
import { startLocalEdge, type LocalEdge } from '../../edge/local-edge.ts';
import { publishDist } from '../../edge/publish.ts';
import type { KeyEntry } from '../../runtime/interfaces.ts';
import { edgeKeyRepository } from '../../runtime/keys/edge-key-repository.ts';
import { addKey, type AddKeyOptions } from '../../runtime/keys/key-file.ts';

export const ADMIN_TOKEN = 'edge-admin-token-for-tests-0123456789abcdef';
export const CURSOR_SECRET = 'edge-cursor-secret-for-tests-0123456789abcdef';

/**
 * The tier's one Worker bundle (edge-global-setup.ts builds it once a run): every edge the files start, in this
 * process or as `register edge dev --worker`, runs the same code over its own dist.
 */
export function workerFile(): string {
  const file = inject('edgeWorker');
  if (!file) throw new Error('no edge Worker bundle: the edge tests need test/edge/edge-global-setup.ts among their globalSetup (vitest.config.ts)');
  return file;
}
let code: Promise<string> | undefined;
export const workerCode = (): Promise<string> => (code ??= readFile(workerFile(), 'utf8'));

/**
 * A local edge on a free port with the tests' secrets, then `dist` published into its local R2 (null: left empty).
 * Published once it serves, not as its load: a load restarts workerd (local-edge.ts), and no test asks before this.
 */
export async function edgeOver(dist: string | null, persist: string | null = null): Promise<LocalEdge> {
  const edge = await startLocalEdge({ port: 0, persist, adminToken: ADMIN_TOKEN, cursorSecret: CURSOR_SECRET, code: await workerCode() });
  try {
    if (dist !== null) await publishDist(dist, await edge.target('public'), await edge.target('private'));
  } catch (e) {
    await edge.close();
    throw e;
  }
  return edge;
}

/** Issues keys on the edge (through its admin route) and writes the same entries into `keysFile` for Node. */
export async function issueKeys(edgeUrl: string, keysFile: string, specs: Record<string, Omit<AddKeyOptions, 'repository' | 'file'>>): Promise<Record<string, string>> {
  const repository = edgeKeyRepository(edgeUrl, ADMIN_TOKEN);
  const keys: Record<string, string> = {};
  for (const [label, spec] of Object.entries(specs)) keys[label] = (await addKey({ ...spec, repository })).key;
  writeFileSync(keysFile, JSON.stringify({ keys: (await repository.entries()) as KeyEntry[] }));
  return keys;
}

export const keysFileIn = (dir: string): string => join(dir, 'keys.json');

/** Headers both runtimes send that are the connection's or the clock's, not the answer's. */
const NOT_COMPARED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** Headers as compared: RateLimit's `t=` counts seconds to the month's end from the moment of the request (two requests, two moments). */
export const comparable = (h: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(h)
      .filter(([k]) => !NOT_COMPARED.has(k))
      .map(([k, v]) => [k, k === 'ratelimit' ? v.replace(/;t=\d+/g, ';t=…') : v])
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
