// dist/index.json sealed with a checksum of its own text, so a damaged pointer is told from a good one: the writer
// (compiler/compile.ts) seals it, the runtime and `register verify` open it. The seal is the last field,
// `"sha256":"<hex>"`, the sha256 of the text the file would be without that field.
import { sha256Hex } from '#platform/crypto';
import { DIST_FORMAT, type DistIndex } from './dist-layout.ts';

const SEAL_OPEN = ',"sha256":"';
const SEAL_LENGTH = SEAL_OPEN.length + 64 + 2; // ,"sha256":"<64 hex>"}
const SEAL = /,"sha256":"([0-9a-f]{64})"\}$/;

/** The text of index.json for `index`: its JSON with the seal appended as a last field. */
export function sealIndex(index: DistIndex): string {
  const body = JSON.stringify(index);
  return `${body.slice(0, -1)}${SEAL_OPEN}${sha256Hex(body)}"}`;
}

/**
 * The index a sealed text holds. Throws an Error saying which check failed: no seal (damaged, or written by an
 * older compiler), a seal that does not match the text, or a text that is not an index of this format.
 */
export function openIndex(text: string): DistIndex {
  const m = SEAL.exec(text);
  if (!m) throw new Error('no checksum seal at its end (damaged, or written by an older compiler: run `register compile` to rewrite it)');
  const body = `${text.slice(0, text.length - SEAL_LENGTH)}}`;
  const actual = sha256Hex(body);
  if (actual !== m[1]) throw new Error(`sha256 of its content ${actual} does not match its seal ${m[1]}`);
  let index: DistIndex;
  try {
    index = JSON.parse(body) as DistIndex;
  } catch (e) {
    throw new Error(`sealed but not JSON (${(e as Error).message})`);
  }
  if (index?.format !== DIST_FORMAT) throw new Error(`format ${JSON.stringify(index?.format)}, this reader takes ${DIST_FORMAT}`);
  if (!Array.isArray(index.releases) || index.releases.some((r) => !r?.sha256 || typeof r.sha256.public !== 'string')) {
    throw new Error('a release entry carries no manifest sha256 (written by an older compiler: run `register compile` to rewrite it)');
  }
  return index;
}
