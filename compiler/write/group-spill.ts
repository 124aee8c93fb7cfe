// Groups records onto disk by a group number, with bounded memory, so later stages can load one group at a time.
// The compiler's answer to "never load everything at once": hash-partition on write, process partition by partition.
import { openSync, writeSync, closeSync, readFileSync, readSync, fstatSync, rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** What another thread needs to read a sealed spill: its directory and per-group record counts. */
export interface GroupSpillHandle {
  dir: string;
  counts: number[];
}

/** Options of a GroupSpill. */
export interface GroupSpillOptions {
  /** Directory for the temp files (created; removed by `dispose`). */
  dir: string;
  /** Number of groups. */
  groups: number;
  /** Bytes buffered per group before it is appended to its file (default 128 KiB). */
  flushBytes?: number;
}

/**
 * Append-only record groups backed by one temp file each. Two record forms, not to be mixed in one spill:
 * - `addLine`/`addTaggedLine` and `readText` or `readLines`: text the caller frames itself, e.g. a CSV record as
 *   read, so the hot path of the compile copies rows instead of re-encoding them (JSON arrays encoded and parsed
 *   per record, with their garbage, were once the largest cost of a compile);
 * - `reserve`/`commit`/`readBytes`: binary records the caller lays out itself, written into the group's buffer.
 * Records are encoded into each group's byte buffer as they are added: a buffered string would outlive many young
 * collections (a group fills only after ~groups × flushBytes of input) and keep its 1 MiB source chunk alive.
 */
/** Size of a group's first buffer. */
const FIRST_BYTES = 4096;

export class GroupSpill {
  private readonly buffers: (Buffer | null)[];
  private readonly used: Int32Array;
  private readonly fds: (number | null)[];
  private readonly flushBytes: number;
  private counts: number[];

  constructor(private readonly opts: GroupSpillOptions) {
    mkdirSync(opts.dir, { recursive: true });
    this.buffers = new Array(opts.groups).fill(null);
    this.used = new Int32Array(opts.groups);
    this.fds = new Array(opts.groups).fill(null);
    this.counts = new Array(opts.groups).fill(0);
    this.flushBytes = Math.max(4096, opts.flushBytes ?? 128 * 1024);
  }

  /** Re-opens a sealed spill from its handle (in a worker thread), for reading. */
  static open(handle: GroupSpillHandle): GroupSpill {
    const spill = new GroupSpill({ dir: handle.dir, groups: handle.counts.length });
    spill.counts = handle.counts.slice();
    return spill;
  }

  /** The handle of this spill; call after `seal`. */
  handle(): GroupSpillHandle {
    return { dir: this.opts.dir, counts: this.counts.slice() };
  }

  get groups(): number {
    return this.opts.groups;
  }

  /** Appends one pre-framed record; `line` must not contain a newline that its reader cannot tell apart. */
  addLine(group: number, line: string): void {
    this.addTaggedLine(group, '', line);
  }

  /** Appends `<tag>,<line>` (no comma for an empty tag), without joining the two strings first. */
  addTaggedLine(group: number, tag: string, line: string): void {
    this.counts[group]++;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; room for the worst case means a write is never cut short.
    const buf = this.roomFor(group, (tag.length + line.length) * 3 + 2);
    if (buf === null) {
      this.append(group, Buffer.from(tag ? `${tag},${line}\n` : `${line}\n`, 'utf8'));
      return;
    }
    let at = tag ? writeTag(buf, this.used[group], tag) : this.used[group];
    at += buf.write(line, at, 'utf8');
    buf[at++] = 0x0a;
    this.used[group] = at;
  }

  /**
   * Appends `<tag>,` and the bytes `src[start, end)` as one line: addTaggedLine for text still in the bytes it was
   * read as (a CSV record framed by the byte reader), which is copied, not decoded and encoded again.
   */
  addTaggedBytes(group: number, tag: string, src: Uint8Array, start: number, end: number): void {
    this.counts[group]++;
    const buf = this.roomFor(group, tag.length + 2 + end - start);
    if (buf === null) {
      this.append(group, Buffer.concat([Buffer.from(`${tag},`), src.subarray(start, end), Buffer.from('\n')]));
      return;
    }
    let at = writeTag(buf, this.used[group], tag);
    // A row is some tens of bytes: a loop copies that faster than Buffer#copy, which makes a view per call.
    if (end - start < 128) {
      for (let i = start; i < end; i++) buf[at++] = src[i];
    } else {
      buf.set(src.subarray(start, end), at);
      at += end - start;
    }
    buf[at++] = 0x0a;
    this.used[group] = at;
  }

  /**
   * The group's buffer, flushed first when it lacks room for `most` more bytes from `used[group]`; null when `most`
   * is more than a whole buffer holds (the group then flushed), for the caller to append that line on its own or, for
   * a binary record, to give the group a buffer that size. A buffer starts at FIRST_BYTES and doubles as its group
   * fills, up to the flush size: a small release puts a few records in each of a spill's hundreds of groups, and a
   * full-size buffer for each (tens of MiB a spill, and the collections that forced) was most of a small compile.
   */
  private roomFor(group: number, most: number): Buffer | null {
    let buf = this.buffers[group];
    if (buf !== null && most <= buf.length - this.used[group]) return buf;
    const cap = Math.max(this.flushBytes, buf?.length ?? 0);
    if (this.used[group] + most > cap) this.flush(group);
    const need = this.used[group] + most;
    if (need > cap) return null;
    if (buf === null || buf.length < need) {
      let size = Math.max(FIRST_BYTES, buf?.length ?? 0);
      while (size < need) size *= 2;
      const grown = Buffer.allocUnsafe(Math.min(size, cap));
      if (this.used[group] > 0) buf!.copy(grown, 0, 0, this.used[group]);
      buf = this.buffers[group] = grown;
    }
    return buf;
  }

  /** Where `reserve` says the next binary record starts in the buffer it returned. */
  cursor = 0;
  /** The group `reserve` made room in, which `commit` ends the record of. */
  private reserved = -1;

  /**
   * Room for one binary record of at most `most` bytes in `group`, for spills read back with `readBytes`: returns
   * the group's buffer, which the caller fills from `cursor` and closes with `commit(end)`. Writing into the
   * buffer directly spares a Buffer per record, which a copying `add` would need for millions of short records.
   */
  reserve(group: number, most: number): Buffer {
    // A record longer than the flush size gets a buffer of its own size, kept for the group's later records.
    const buf = this.roomFor(group, most) ?? (this.buffers[group] = Buffer.allocUnsafe(most));
    this.cursor = this.used[group];
    this.reserved = group;
    return buf;
  }

  /** Ends the record the last `reserve` made room for: it filled that group's buffer up to `end`. Records are never empty. */
  commit(end: number): void {
    const group = this.reserved;
    if (group < 0) throw new Error('commit without a reserve');
    // An empty record would be counted with no byte on disk to show for it (a group of them has no file at all).
    if (end <= this.cursor) throw new Error(`empty binary record in spill group ${group}`);
    this.reserved = -1;
    this.used[group] = end;
    this.counts[group]++;
  }

  count(group: number): number {
    return this.counts[group];
  }

  private file(group: number): string {
    return join(this.opts.dir, `g${group}.jsonl`);
  }

  private flush(group: number): void {
    const n = this.used[group];
    if (n === 0) return;
    this.append(group, this.buffers[group]!.subarray(0, n));
    this.used[group] = 0;
  }

  private append(group: number, bytes: Uint8Array): void {
    let fd = this.fds[group];
    if (fd === null) fd = this.fds[group] = openSync(this.file(group), 'a');
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
  }

  /** Flushes every group and closes the files; call once, after the last add. */
  seal(): void {
    for (let g = 0; g < this.opts.groups; g++) {
      this.flush(g);
      const fd = this.fds[g];
      if (fd !== null) closeSync(fd);
      this.fds[g] = null;
      this.buffers[g] = null;
    }
  }

  /** Lines of one group (records added by `addLine`, which hold no newline), in the order they were added. */
  readLines(group: number): string[] {
    const text = this.readText(group);
    const out: string[] = new Array(this.counts[group]);
    let i = 0;
    for (let pos = 0; pos < text.length; ) {
      const nl = text.indexOf('\n', pos);
      out[i++] = text.slice(pos, nl);
      pos = nl + 1;
    }
    return out;
  }

  /** The whole text of one group (records added by `addLine`, each followed by a newline). */
  readText(group: number): string {
    return this.counts[group] === 0 ? '' : readFileSync(this.file(group), 'utf8');
  }

  /**
   * The text of one group whose lines are each one JSON value, as a JSON array of them: `[a,b,…]`, decoded once from
   * one buffer (no slice, replace and concatenation, each a copy of the whole group). Its lines hold no newline.
   */
  readJsonArray(group: number): string {
    if (this.counts[group] === 0) return '[]';
    const path = this.file(group);
    const fd = openSync(path, 'r');
    let buf: Buffer;
    try {
      const size = fstatSync(fd).size;
      buf = Buffer.allocUnsafe(size + 1);
      for (let done = 0; done < size; ) {
        const got = readSync(fd, buf, 1 + done, size - done, done);
        if (got === 0) throw new Error(`spill file ${path} ended before its ${size} bytes`);
        done += got;
      }
    } finally {
      closeSync(fd);
    }
    // Each record's newline becomes the comma before the next, and the last one the array's end.
    buf[0] = 0x5b;
    for (let nl = buf.indexOf(0x0a, 1); nl !== -1; nl = buf.indexOf(0x0a, nl + 1)) buf[nl] = 0x2c;
    buf[buf.length - 1] = 0x5d;
    return buf.toString('utf8');
  }

  /** The bytes of one group (records added by `reserve`/`commit`, back to back). */
  readBytes(group: number): Buffer {
    return this.counts[group] === 0 ? Buffer.alloc(0) : readFileSync(this.file(group));
  }

  /** Drops one group's file once it has been processed, to keep temp disk use down. */
  release(group: number): void {
    if (this.counts[group] > 0) rmSync(this.file(group), { force: true });
  }

  dispose(): void {
    for (const fd of this.fds) if (fd !== null) closeSync(fd);
    rmSync(this.opts.dir, { recursive: true, force: true });
  }
}

/**
 * Writes `<tag>,` at `at`; returns where the line goes on. Tags are one or two ASCII characters: copied byte by byte,
 * far cheaper than the native call `buf.write(tag)`, which matters over the ~30 million lines stage 1 writes at
 * full size.
 */
function writeTag(buf: Buffer, at: number, tag: string): number {
  for (let i = 0; i < tag.length; i++) buf[at++] = tag.charCodeAt(i);
  buf[at++] = 0x2c;
  return at;
}
