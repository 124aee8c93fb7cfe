// Entity shards and tombstone stubs, appended one after another (newline-separated) into content-addressed packs,
// because millions of small files cost gigabytes of disk blocks and minutes to write and delete.
import { hash } from 'node:crypto';
import { checksum32 } from '../../common/checksum.ts';
import { ContentFileWriter, type ContentFile } from './content-file.ts';
import type { ShardLocation } from '../../common/dist-layout.ts';
import { INHERITED_PACK, type ShardDigest, type ShardPlace } from './diff-base.ts';

export type { ShardLocation };

/** Where a shard went, and the digest the next release's diff base records for it. */
export interface PlacedShard extends ShardLocation, ShardDigest {
  /** Whether it was found unchanged in the predecessor's pack and left there (pack is then INHERITED_PACK-marked). */
  kept: boolean;
}

/** Options of a ShardPackWriter. */
export interface ShardPackWriterOptions {
  /** The release's public directory; packs go to `<root>/shards/`. */
  root: string;
  /** Start a new pack once this many bytes are written (default 256 MiB, friendly to CDNs' file size limits). */
  packBytes?: number;
  /** See ContentFileOptions.ledger. */
  ledger?: Map<string, ContentFile>;
}

const NEWLINE = new Uint8Array([0x0a]);

export class ShardPackWriter {
  private readonly packBytes: number;
  private current: ContentFileWriter | null = null;
  private readonly finished: Promise<ContentFile>[] = [];
  /** `add`'s one part end, which it does not report. */
  private readonly oneEnd = [0];
  /** Bytes of every document added, kept or written, with its newline: what this release's index points at. */
  referenced = 0;

  constructor(private readonly opts: ShardPackWriterOptions) {
    this.packBytes = opts.packBytes ?? 256 * 1024 * 1024;
  }

  /** Appends one JSON document; returns its pack number, byte offset and byte length (without the newline). */
  add(json: string): ShardLocation {
    return this.addParts([json], this.oneEnd);
  }

  /**
   * Appends one JSON document given as consecutive parts (an entity's sections, say) and sets `ends[i]` to the byte
   * offset, within the document, where part i ends. With `prior`, where the predecessor's shard of the same ID sits
   * in a pack this release inherits: a document of the same length, CRC-32 and 64 bits of sha256 is not written
   * again but left there, so the pack is shared whole with the predecessor (a mirror or an edge moves only the
   * shards that changed).
   */
  addParts(parts: readonly string[], ends: number[], prior: ShardPlace | null = null): PlacedShard {
    const w = (this.current ??= new ContentFileWriter({ root: this.opts.root, bufferBytes: 4 * 1024 * 1024, ledger: this.opts.ledger }));
    const pack = this.finished.length;
    const offset = w.bytes;
    const bytes = w.writeUtf8(parts, ends);
    // Checksummed and digested before the next write can reuse the buffer under the view.
    const length = bytes.length;
    const checksum = checksum32(bytes, 0, length);
    const d = hash('sha256', bytes, 'buffer');
    const digest0 = d.readUInt32LE(0);
    const digest1 = d.readUInt32LE(4);
    this.referenced += length + 1;
    if (prior && prior.length === length && prior.checksum === checksum && prior.digest0 === digest0 && prior.digest1 === digest1 && w.unwrite(length)) {
      return { pack: prior.pack + INHERITED_PACK, offset: prior.offset, length, checksum, digest0, digest1, kept: true };
    }
    w.write(NEWLINE);
    if (w.bytes >= this.packBytes) this.roll();
    return { pack, offset, length, checksum, digest0, digest1, kept: false };
  }

  /** Closes the last pack; returns pack paths relative to the public root, in pack-number order. */
  async finish(): Promise<string[]> {
    // A last pack every shard of which was kept in an inherited pack holds nothing: no file for it.
    if (this.current?.bytes === 0) {
      await this.current.abort();
      this.current = null;
    }
    if (this.current) this.roll();
    return (await Promise.all(this.finished)).map((f) => f.path);
  }

  private roll(): void {
    const p = this.current!.finish('shards/pack', 'jsonl');
    p.catch(() => {}); // surfaced by finish()
    this.finished.push(p);
    this.current = null;
  }
}
