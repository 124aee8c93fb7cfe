// Path rules shared by every ShardSource driver: which relative paths may be read, and which files may change.
import { SIG_SUFFIX } from '../../common/signing.ts';

/** Longest accepted path, in UTF-16 code units; dist paths are far shorter, so anything longer is a probe. */
const MAX_SOURCE_PATH = 1024;

/**
 * Checks that `path` is a plain relative `/`-separated path that cannot leave the dist root, and returns it.
 * Refused: empty, absolute, `.`/`..`/empty segments, backslashes (a second separator on some platforms),
 * NUL and other control characters, and anything longer than MAX_SOURCE_PATH. Checked before any I/O, so a
 * refused path never reaches the file system or the network.
 */
export function checkSourcePath(label: string, path: string): string {
  const refuse = (why: string): never => {
    throw new Error(`[${label}] refused path ${JSON.stringify(path.length > 80 ? path.slice(0, 80) + '…' : path)}: ${why}`);
  };
  if (typeof path !== 'string' || path.length === 0) refuse('empty');
  if (path.length > MAX_SOURCE_PATH) refuse(`longer than ${MAX_SOURCE_PATH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) refuse('control character');
  if (path.includes('\\')) refuse('backslash');
  if (path.startsWith('/')) refuse('absolute');
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') refuse(`segment ${JSON.stringify(segment)}`);
  }
  return path;
}

/**
 * Whether the file at `path` may be replaced in place. Files at the dist root (index.json, the pointer that a
 * publish rewrites atomically, and its signature) change, and so does a stamp's signature (`….sig`: re-signed
 * before it expires, common/signing.ts); everything else under a release stamp is written once and never
 * rewritten, so drivers may keep it open or cached indefinitely.
 */
export const isMutablePath = (path: string): boolean => !path.includes('/') || path.endsWith(SIG_SUFFIX);

/** Checks a (offset, length) pair for readRange. */
export function checkRange(label: string, path: string, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new Error(`[${label}] ${path}: invalid range offset=${offset} length=${length}`);
  }
}
