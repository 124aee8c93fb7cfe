// Entity shards and tombstone stubs, appended one after another (newline-separated) into content-addressed packs,
// because millions of small files cost gigabytes of disk blocks and minutes to write and delete.
import { checksum32 } from '../../common/checksum.ts';
import { ContentFileWriter, type ContentFile } from './content-file.ts';
import type { ShardLocation } from '../../common/dist-layout.ts';

export type { ShardLocation };

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

  constructor(private readonly opts: ShardPackWriterOptions) {
    this.packBytes = opts.packBytes ?? 256 * 1024 * 1024;
  }

  /** Appends one JSON document; returns its pack number, byte offset and byte length (without the newline). */
  add(json: string): ShardLocation {
    return this.addParts([json], this.oneEnd);
  }

  /**
   * Appends one JSON document given as consecutive parts (an entity's sections, say) and sets `ends[i]` to the byte
   * offset, within the document, where part i ends.
   */
  addParts(parts: readonly string[], ends: number[]): ShardLocation {
    const w = (this.current ??= new ContentFileWriter({ root: this.opts.root, bufferBytes: 4 * 1024 * 1024, ledger: this.opts.ledger }));
    const offset = w.bytes;
    const bytes = w.writeUtf8(parts, ends);
    // Checksummed before the next write can reuse the buffer under the view.
    const loc = { pack: this.finished.length, offset, length: bytes.length, checksum: checksum32(bytes, 0, bytes.length) };
    w.write(NEWLINE);
    if (w.bytes >= this.packBytes) this.roll();
    return loc;
  }

  /** Closes the last pack; returns pack paths relative to the public root, in pack-number order. */
  async finish(): Promise<string[]> {
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
