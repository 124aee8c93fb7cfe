// Index entries: a stage-2 range writes one binary record per ID into a scratch file, and the entity index step
// reads them back into the index family. Binary, so thirteen numbers are not printed in a range and parsed again on
// the main thread.
//
// A record: the kind (u8), the ID's UTF-8 length (u8) and bytes, then for a live entry its twelve numbers and for a
// tombstone its four (u32 little-endian each), or for a redirect its target ID (u8 length and bytes).
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ENTRY_LIVE, ENTRY_REDIRECT, ENTRY_TOMBSTONE, LIVE_ENTRY, TOMBSTONE_ENTRY, type EntityIndexValue } from '../../common/dist-layout.ts';
import { RegisterError } from '../../common/errors.ts';
import { releasePack } from '../write/diff-base.ts';

/** Numbers after the kind, by kind: the checksum is each kind's last. */
const NUMBERS: Record<number, number> = { [ENTRY_LIVE]: LIVE_ENTRY.checksum, [ENTRY_TOMBSTONE]: TOMBSTONE_ENTRY.checksum };
/** Longest ID a record holds (its length is one byte); register IDs are 16 characters. */
const MAX_ID_BYTES = 255;
const FLUSH_BYTES = 1 << 20;

export class IndexEntryLog {
  private readonly fd: number;
  private readonly buf = Buffer.allocUnsafe(FLUSH_BYTES);
  private at = 0;
  private closed = false;

  /** Creates `path` (which must not exist). */
  constructor(readonly path: string) {
    this.fd = openSync(path, 'wx');
  }

  add(id: string, value: EntityIndexValue): void {
    if (this.closed) throw new Error(`[index-entry-log] ${this.path}: add after close`);
    // Checked before a byte is written, so a refused entry leaves no part of itself behind.
    const kind = value[0];
    checkId(id, this.path);
    if (kind === ENTRY_REDIRECT) checkId(value[1] as string, this.path);
    else checkNumbers(id, value);
    // Room for the kind, two IDs with their lengths and twelve numbers: a record never straddles a flush.
    if (this.at + 2 * (1 + MAX_ID_BYTES) + 1 + 12 * 4 > this.buf.length) this.flush();
    this.buf[this.at++] = kind;
    this.id(id);
    if (kind === ENTRY_REDIRECT) {
      this.id(value[1] as string);
      return;
    }
    for (let i = 1; i < value.length; i++) this.at = this.buf.writeUInt32LE(value[i] as number, this.at);
  }

  private id(id: string): void {
    const n = this.buf.write(id, this.at + 1, MAX_ID_BYTES, 'utf8');
    this.buf[this.at] = n;
    this.at += 1 + n;
  }

  private flush(): void {
    for (let done = 0; done < this.at; ) done += writeSync(this.fd, this.buf, done, this.at - done);
    this.at = 0;
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    closeSync(this.fd);
    this.closed = true;
  }
}

function checkId(id: string, where: string): void {
  // At most three UTF-8 bytes per UTF-16 unit: a register ID (16 units) is never measured, only a long string is.
  if (id.length * 3 > MAX_ID_BYTES && Buffer.byteLength(id) > MAX_ID_BYTES) throw new RegisterError('compile', `register ID of more than ${MAX_ID_BYTES} bytes`, where);
}

function checkNumbers(id: string, value: EntityIndexValue): void {
  const n = NUMBERS[value[0]];
  if (n === undefined || value.length !== n + 1) throw new Error(`[index-entry-log] ${id}: an index entry of kind ${value[0]} with ${value.length - 1} numbers`);
  for (let i = 1; i <= n; i++) {
    const x = value[i] as number;
    // Offsets, lengths, counts and CRC-32s all fit; anything else is a compiler bug, not bad input.
    if (!(x >= 0 && x <= 0xffffffff && Number.isInteger(x))) throw new Error(`[index-entry-log] ${id}: number ${i} of its index entry is ${x}, not a u32`);
  }
}

/**
 * Reads a closed log in the order it was written; `packBase` is added to each live or tombstone entry's pack number,
 * but to an inherited pack's (INHERITED_PACK), which is numbered release-wide already.
 */
export function readIndexEntryLog(path: string, packBase: number, onEntry: (id: string, value: EntityIndexValue) => void): void {
  const b = readFileSync(path);
  const id = (at: number): string => b.toString('utf8', at + 1, at + 1 + b[at]);
  for (let at = 0; at < b.length; ) {
    const kind = b[at++];
    const key = id(at);
    at += 1 + b[at];
    if (kind === ENTRY_REDIRECT) {
      onEntry(key, [ENTRY_REDIRECT, id(at)]);
      at += 1 + b[at];
      continue;
    }
    const n = NUMBERS[kind];
    if (n === undefined || at + 4 * n > b.length) throw new Error(`[index-entry-log] ${path}: broken record at byte ${at}`);
    const value: number[] = [kind];
    for (let i = 0; i < n; i++, at += 4) value.push(b.readUInt32LE(at));
    value[1] = releasePack(value[1], packBase);
    onEntry(key, value as EntityIndexValue);
  }
}
