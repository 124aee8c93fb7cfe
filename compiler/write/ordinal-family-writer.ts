// An ordinal family (common/bucket-format.ts) from values pushed in ordinal order, streamed straight to its pack.
import { resolve } from 'node:path';
import { DIRECTORY_ENTRY_BYTES, type BucketFamily } from '../../common/bucket-format.ts';
import { checksum32 } from '../../common/checksum.ts';
import { RegisterError } from '../../common/errors.ts';
import { ContentFileWriter, type ContentFile } from './content-file.ts';
import { MsgpackOut, writeArrayHeader } from './msgpack-out.ts';
import { MAX_PACK_BYTES, publishFiles, writeDirectoryEntry } from './family-buckets.ts';

/** Options of an OrdinalFamilyWriter. */
export interface OrdinalFamilyOptions {
  /** The public root; the family's paths are relative to it. */
  root: string;
  /** Family name, used as file prefix (see HashedFamilyOptions.name). */
  name: string;
  /** Directory for the temp file (created if missing). Default: `root`. */
  tmpDir?: string;
  /** Values per bucket. Default 256. */
  perBucket?: number;
  /** See ContentFileOptions.ledger. */
  ledger?: Map<string, ContentFile>;
}


/**
 * Builds an ordinal family from values pushed in ordinal order: bucket = floor(ordinal / perBucket), each bucket
 * the msgpack array of its values. Streams straight to the pack; memory holds one bucket.
 */
export class OrdinalFamilyWriter {
  private readonly root: string;
  private readonly name: string;
  private readonly tmpDir: string;
  private readonly perBucket: number;
  private readonly pack: ContentFileWriter;
  /** The current bucket's values, written as packr would write them, without a buffer per value. */
  private readonly stage = new MsgpackOut(64 * 1024);
  private inBucket = 0;
  private dir = Buffer.allocUnsafe(64 * DIRECTORY_ENTRY_BYTES);
  private buckets = 0;
  private count = 0;
  private done = false;

  private readonly ledger: Map<string, ContentFile> | undefined;

  constructor(opts: OrdinalFamilyOptions) {
    this.ledger = opts.ledger;
    this.root = resolve(opts.root);
    this.name = opts.name;
    this.tmpDir = resolve(opts.tmpDir ?? opts.root);
    this.perBucket = opts.perBucket ?? 256;
    if (!Number.isSafeInteger(this.perBucket) || this.perBucket < 1) {
      throw new RegisterError('compile', `perBucket must be a positive integer, got ${opts.perBucket}`, this.name);
    }
    this.pack = new ContentFileWriter({ root: this.root, tmpDir: this.tmpDir, ledger: this.ledger });
  }

  /** Values pushed so far (the next value's ordinal). */
  get entries(): number {
    return this.count;
  }

  push(value: unknown): void {
    if (this.done) throw new RegisterError('compile', 'push after finish', this.name);
    this.stage.value(value);
    this.count++;
    if (++this.inBucket === this.perBucket) this.flushBucket();
  }

  /**
   * push(value) for a value already written as msgpack (MsgpackOut.value's bytes): `bytes[start, end)` is copied in
   * as it is, so values can be encoded elsewhere (another thread) and stitched in ordinal order here.
   */
  pushEncoded(bytes: Uint8Array, start: number, end: number): void {
    if (this.done) throw new RegisterError('compile', 'push after finish', this.name);
    if (end <= start) throw new RegisterError('compile', 'an encoded value has at least one byte', this.name);
    this.stage.ensure(end - start);
    this.stage.buf.set(bytes.subarray(start, end), this.stage.pos);
    this.stage.pos += end - start;
    this.count++;
    if (++this.inBucket === this.perBucket) this.flushBucket();
  }

  async finish(): Promise<BucketFamily> {
    if (this.done) throw new RegisterError('compile', 'finish called twice', this.name);
    this.done = true;
    try {
      if (this.inBucket > 0) this.flushBucket();
      const dir = this.dir.subarray(0, this.buckets * DIRECTORY_ENTRY_BYTES);
      const files = await publishFiles({ root: this.root, tmpDir: this.tmpDir, ledger: this.ledger }, this.name, dir, this.pack);
      return {
        buckets: this.buckets,
        addressing: 'ordinal',
        per_bucket: this.perBucket,
        directory: files.directory,
        pack: files.pack,
        entries: this.count,
      };
    } catch (err) {
      await this.pack.abort();
      throw err;
    }
  }

  /** Drops the temp file (after an error elsewhere). */
  async abort(): Promise<void> {
    this.done = true;
    await this.pack.abort();
  }

  private flushBucket(): void {
    const offset = this.pack.bytes;
    const header = Buffer.allocUnsafe(5);
    const h = writeArrayHeader(header, 0, this.inBucket);
    this.pack.write(header.subarray(0, h));
    const staged = this.stage.pos;
    this.pack.write(this.stage.bytes());
    const length = h + staged;
    if (offset + length > MAX_PACK_BYTES) throw new RegisterError('compile', `pack exceeds ${MAX_PACK_BYTES} bytes (u32 offsets)`, this.name);
    if ((this.buckets + 1) * DIRECTORY_ENTRY_BYTES > this.dir.length) {
      const bigger = Buffer.allocUnsafe(this.dir.length * 2);
      this.dir.copy(bigger);
      this.dir = bigger;
    }
    writeDirectoryEntry(this.dir, this.buckets, offset, length, checksum32(this.stage.buf, 0, staged, checksum32(header, 0, h)));
    this.buckets++;
    this.stage.pos = 0;
    this.inBucket = 0;
  }
}
