// Writes one large output file under a content-addressed name: bytes stream to a temp file while being hashed,
// and the file is renamed to `<prefix>-<sha256[0:16]>.<ext>` only once complete, so a published name never changes.
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { closeSync, fsync as fsyncCb, mkdirSync, openSync, writeSync, type PathLike } from 'node:fs';
import { copyFile, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { RegisterError } from '../../common/errors.ts';

const fsync = promisify(fsyncCb);

/** Options of a ContentFileWriter. */
export interface ContentFileOptions {
  /** The public root; returned paths are relative to it. */
  root: string;
  /** Directory for the temp file (created if missing). Same file system as `root` makes the final rename atomic. Default: `root`. */
  tmpDir?: string;
  /** Bytes buffered in memory between writes to disk. Default 1 MiB. */
  bufferBytes?: number;
  /** Records each finished file (path → bytes and sha256), so the manifest need not read it back. Default none. */
  ledger?: Map<string, ContentFile>;
}

/** A finished content-addressed file. */
export interface ContentFile {
  /** Path relative to the root, `/`-separated, e.g. `entities/index-3fa2c1d09e5b7a44.pack`. */
  path: string;
  bytes: number;
  /** Full sha256 of the content, lowercase hex. */
  sha256: string;
}

let serial = 0;

/**
 * Streams bytes to a temp file with large buffered writes, hashing as it goes. `write` is synchronous so hot
 * loops (bucket and shard writers) pay no promise per call; one syscall per `bufferBytes`.
 */
export class ContentFileWriter {
  private readonly root: string;
  private readonly ledger: Map<string, ContentFile> | undefined;
  private readonly tmpPath: string;
  private readonly hash: Hash = createHash('sha256');
  private readonly buf: Buffer;
  private fd: number | null;
  private used = 0;
  private written = 0;

  constructor(opts: ContentFileOptions) {
    this.root = resolve(opts.root);
    this.ledger = opts.ledger;
    const tmpDir = resolve(opts.tmpDir ?? opts.root);
    mkdirSync(tmpDir, { recursive: true });
    this.tmpPath = join(tmpDir, `.content-${process.pid}-${++serial}-${randomBytes(4).toString('hex')}.tmp`);
    this.fd = openSync(this.tmpPath, 'wx');
    this.buf = Buffer.allocUnsafe(Math.max(4096, opts.bufferBytes ?? 1024 * 1024));
  }

  /** Bytes written so far: the offset the next write lands at. */
  get bytes(): number {
    return this.written + this.used;
  }

  /** Appends `chunk`; the chunk may be reused by the caller as soon as this returns. */
  write(chunk: Uint8Array): void {
    if (this.fd === null) throw new Error(`ContentFileWriter: write after finish/abort (${this.tmpPath})`);
    const n = chunk.byteLength;
    if (n <= this.buf.length - this.used) {
      this.buf.set(chunk, this.used);
      this.used += n;
      return;
    }
    this.flush();
    if (n >= this.buf.length) this.writeOut(chunk);
    else {
      this.buf.set(chunk, 0);
      this.used = n;
    }
  }

  /**
   * Appends `parts` one after another as UTF-8, encoded straight into the write buffer, and sets `ends[i]` to the
   * byte length of parts 0..i. Returns a view of all their bytes that is valid only until the next write (to
   * checksum them, say). Saves a buffer per call for millions of small documents; a document written in its parts
   * is never joined into one string, which V8 would copy flat to encode it, and its parts' byte lengths come free.
   */
  writeUtf8(parts: readonly string[], ends: number[]): Uint8Array {
    if (this.fd === null) throw new Error(`ContentFileWriter: write after finish/abort (${this.tmpPath})`);
    let units = 0;
    for (let i = 0; i < parts.length; i++) units += parts[i].length;
    const most = units * 3; // UTF-8 bytes per UTF-16 unit, at most
    if (most > this.buf.length - this.used) {
      this.flush();
      if (most > this.buf.length) {
        const chunks = parts.map((p) => Buffer.from(p, 'utf8'));
        let end = 0;
        for (let i = 0; i < chunks.length; i++) ends[i] = end += chunks[i].length;
        const bytes = Buffer.concat(chunks, end);
        this.writeOut(bytes);
        return bytes;
      }
    }
    const start = this.used;
    let at = start;
    for (let i = 0; i < parts.length; i++) {
      at += this.buf.write(parts[i], at, 'utf8');
      ends[i] = at - start;
    }
    this.used = at;
    return this.buf.subarray(start, at);
  }

  /**
   * Takes back the last `n` bytes written, if they are still in the write buffer (not hashed or on disk yet);
   * false, and nothing taken back, otherwise. A shard found unchanged after it was encoded is dropped this way.
   */
  unwrite(n: number): boolean {
    if (this.fd === null || n > this.used) return false;
    this.used -= n;
    return true;
  }

  /**
   * Flushes, fsyncs and closes the temp file, then renames it to `<root>/<prefix>-<hash16>.<ext>`.
   * If that name already exists it holds the same bytes (same hash), so replacing it is harmless.
   */
  async finish(prefix: string, ext: string): Promise<ContentFile> {
    checkName(prefix, ext);
    if (this.fd === null) throw new Error(`ContentFileWriter: finish called twice (${this.tmpPath})`);
    try {
      try {
        this.flush();
        await fsync(this.fd);
      } finally {
        closeSync(this.fd);
        this.fd = null;
      }
      const sha256 = this.hash.digest('hex');
      const path = `${prefix}-${sha256.slice(0, 16)}.${ext}`;
      const dest = join(this.root, ...path.split('/'));
      await mkdir(dirname(dest), { recursive: true });
      try {
        await rename(this.tmpPath, dest);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        // tmpDir on another file system: copy, then drop the temp file.
        await copyFile(this.tmpPath, dest);
        await rm(this.tmpPath, { force: true });
      }
      await syncDir(dirname(dest));
      const file = { path, bytes: this.written, sha256 };
      this.ledger?.set(path, file);
      return file;
    } catch (err) {
      await rm(this.tmpPath, { force: true });
      throw err;
    }
  }

  /** Drops the temp file (after an error). Safe to call at any time, also after finish. */
  async abort(): Promise<void> {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    await rm(this.tmpPath, { force: true });
  }

  private flush(): void {
    if (this.used === 0) return;
    this.writeOut(this.buf.subarray(0, this.used));
    this.used = 0;
  }

  private writeOut(bytes: Uint8Array): void {
    this.hash.update(bytes);
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(this.fd!, bytes, done, bytes.byteLength - done);
    this.written += bytes.byteLength;
  }
}

/** Writes `data` as one content-addressed file (small files: documents, directories). */
export async function writeContentFile(opts: ContentFileOptions, prefix: string, ext: string, data: Uint8Array): Promise<ContentFile> {
  // A tiny buffer: the one write of `data` goes straight to the file.
  const w = new ContentFileWriter({ ...opts, bufferBytes: 4096 });
  try {
    w.write(data);
    return await w.finish(prefix, ext);
  } catch (err) {
    await w.abort();
    throw err;
  }
}

function checkName(prefix: string, ext: string): void {
  const bad =
    !prefix ||
    prefix.startsWith('/') ||
    prefix.includes('\\') ||
    prefix.split('/').some((s) => s === '' || s === '.' || s === '..') ||
    !/^[A-Za-z0-9]+$/.test(ext);
  if (bad) throw new RegisterError('compile', `bad content file name ${JSON.stringify(prefix)} . ${JSON.stringify(ext)}`);
}

// The rename is only durable once the directory entry is; not every platform lets a directory be fsynced.
async function syncDir(dir: PathLike): Promise<void> {
  let fh;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // best effort
  } finally {
    await fh?.close();
  }
}
