// Damage for the damage suite: copies of a compiled dist that share every file with the original but the one
// damaged (zeroed bytes, a flipped byte, truncated to half, deleted), and a ShardSource wrapper that records which bytes
// of which file a run reads, so the suite knows which damage an answer had to notice.
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { ShardSource } from '../../../runtime/interfaces.ts';

export type DamageKind = 'zero' | 'flip' | 'truncate' | 'delete';
export const DAMAGE_KINDS: readonly DamageKind[] = ['zero', 'flip', 'truncate', 'delete'];

/** Every file under `root`, relative, `/`-separated, sorted. */
export function filesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(root, p).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/** What a damage changed: the byte offsets whose value differs from the original (all of them when deleted). */
export interface Damage {
  file: string;
  kind: DamageKind;
  /** Changed bytes as [start, end) ranges of the original file; deletion changes the file's existence too. */
  changed: [number, number][];
}

/** The damaged bytes of `bytes` (null: deleted), and which original bytes they changed. */
function damaged(bytes: Buffer, kind: DamageKind): { bytes: Buffer | null; changed: [number, number][] } {
  const n = bytes.length;
  if (kind === 'delete') return { bytes: null, changed: [[0, Math.max(1, n)]] };
  if (kind === 'truncate') return { bytes: bytes.subarray(0, n >> 1), changed: n ? [[n >> 1, n]] : [] };
  const out = Buffer.from(bytes);
  if (kind === 'flip') {
    if (n) out[n >> 1] ^= 0x01;
  } else out.fill(0, n >> 2, (n >> 2) + Math.ceil(n / 2)); // zero: the middle half, lengths and checksums alike
  // Only bytes whose value changed count: zeroing bytes that were zero already changes nothing.
  const changed: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    if (out[i] === bytes[i]) continue;
    const last = changed[changed.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else changed.push([i, i + 1]);
  }
  return { bytes: out, changed };
}

/** Options of damagedCopy. */
export interface CopyOptions {
  /** Copy only the files this keeps (a mirror's upload). Default: every file. */
  only?: (file: string) => boolean;
  /**
   * Share a folder that holds no damaged file as one symbolic link instead of a link per file (default true): a
   * stamp's diff base is hundreds of files. Off for a copy served over HTTP, whose server need not follow links.
   */
  linkFolders?: boolean;
}

/**
 * A copy of `dist` at `to` that shares every file with the original (hard links, or one symbolic link for a whole
 * folder without the damaged file) except `file`, which is written damaged (or left out).
 */
export function damagedCopy(dist: string, files: string[], to: string, file: string, kind: DamageKind, opts: CopyOptions = {}): Damage {
  const only = opts.only ?? (() => true);
  const linkFolders = opts.linkFolders ?? true;
  let result: Damage | null = null;
  const copy = (dir: string, list: string[]): void => {
    mkdirSync(join(to, dir), { recursive: true });
    const children = new Map<string, string[]>();
    for (const f of list) {
      const rest = dir ? f.slice(dir.length + 1) : f;
      const slash = rest.indexOf('/');
      if (slash < 0) {
        if (!only(f)) continue;
        if (f !== file) linkSync(join(dist, f), join(to, f));
        else {
          const d = damaged(readFileSync(join(dist, f)), kind);
          if (d.bytes) writeFileSync(join(to, f), d.bytes);
          result = { file, kind, changed: d.changed };
        }
        continue;
      }
      const child = (dir ? `${dir}/` : '') + rest.slice(0, slash);
      let c = children.get(child);
      if (!c) children.set(child, (c = []));
      c.push(f);
    }
    for (const [child, under] of children) {
      if (linkFolders && !under.includes(file) && under.every(only)) symlinkSync(join(dist, child), join(to, child), 'dir');
      else copy(child, under);
    }
  };
  copy('', files);
  if (!result) throw new Error(`damagedCopy: ${file} is not among the copied files`);
  return result;
}

/** Removes a copy made by damagedCopy (its links; the originals stay). */
export const removeCopy = (to: string): void => rmSync(to, { recursive: true, force: true });

/** Byte ranges of each file a run read, relative to the source root (`whole` for whole-file reads). */
export class ReadLog {
  readonly ranges = new Map<string, [number, number][]>();
  readonly whole = new Set<string>();

  /** Whether the run read any byte that `d` changed (a whole-file read, or a range that overlaps). */
  touched(d: Damage, prefix = ''): boolean {
    const path = d.file.startsWith(prefix) ? d.file.slice(prefix.length) : d.file;
    if (this.whole.has(path)) return d.changed.length > 0;
    return (this.ranges.get(path) ?? []).some(([a, b]) => d.changed.some(([x, y]) => a < y && x < b));
  }
}

/** `source`, with every read recorded in `log`. */
export function recording(source: ShardSource, log: ReadLog): ShardSource {
  const range = (path: string, offset: number, length: number): void => {
    let list = log.ranges.get(path);
    if (!list) log.ranges.set(path, (list = []));
    list.push([offset, offset + Math.max(1, length)]);
  };
  const wrapped: ShardSource = {
    label: source.label,
    local: source.local,
    where: source.where?.bind(source),
    readFile(path) {
      log.whole.add(path);
      return source.readFile(path);
    },
    readRange(path, offset, length, transient) {
      range(path, offset, length);
      return source.readRange(path, offset, length, transient);
    },
    close: () => source.close(),
  };
  return wrapped;
}
