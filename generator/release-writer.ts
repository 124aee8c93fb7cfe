// Writes one release directory in the published bridge-register-v1 format: gzipped CSV tables streamed to disk,
// then LICENSE.txt, schema.json, release.json and checksums.txt. The directory appears only once it is complete.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import { RegisterError } from '../common/errors.ts';
import { STAMP } from '../common/ids.ts';
import { csvLine } from '../common/csv-records.ts';
import { TABLE_COLUMNS, tablePath, tableRole, type FileRole, type TableName } from './tables.ts';

const SCHEMA_VERSION = 'bridge-register-v1';
export type Tier = 'public_bridge_v1' | 'open_census';

/** One `files` entry of release.json. */
export interface FileEntry {
  bytes: number;
  sha256: string;
  rows?: number;
  role: FileRole;
}

/** The release.json written by the writer. */
export interface ReleaseManifest {
  schema_version: typeof SCHEMA_VERSION;
  stamp: string;
  generated_at: string;
  tier: Tier;
  publishable: boolean;
  prior?: string;
  files: Record<string, FileEntry>;
  row_counts: Record<string, number>;
  licence: { spdx: 'CC0-1.0'; name: string; url: string; file: string };
}

export interface ReleaseWriterOptions {
  /** Release stamp. Default: the basename of the release directory (must match ^\d{8}T\d{6}Z$). */
  stamp?: string;
  /** ISO date-time the release was cut. Default: derived from the stamp. */
  generatedAt?: string;
  /** Default `public_bridge_v1`. */
  tier?: Tier;
  /** Default true. */
  publishable?: boolean;
  /** The predecessor's stamp, written as release.json `prior`. Default: none (the field is omitted). */
  prior?: string | null;
  /** gzip level 1..9. Default 6 (the zlib default); the output is deterministic for a given level. */
  gzipLevel?: number;
  /** Write schema.json (columns per CSV). Default true. */
  schema?: boolean;
  /** Replace an existing release directory. Default false (an existing non-empty directory is an error). */
  overwrite?: boolean;
  /** A progress line (common/progress.ts) to show the rows written on, against `expectRows`. Default none. */
  progress?: ProgressLine;
  /** Rows the release is expected to hold, for the progress line's ETA; null when not known. */
  expectRows?: number | null;
}

/** What the writer needs of a progress line: follow a count, then end. */
export interface ProgressLine {
  follow(stage: string, total: number | null, count: () => number, unit: string): void;
  end(): void;
}

/** `20261005T180536Z` → `2026-10-05T18:05:36Z`. */
export function stampToIso(stamp: string): string {
  if (!STAMP.test(stamp)) throw new RegisterError('generate', `bad release stamp ${JSON.stringify(stamp)}`);
  const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`;
  const t = Date.parse(iso);
  if (Number.isNaN(t) || new Date(t).toISOString().replace('.000Z', 'Z') !== iso) {
    throw new RegisterError('generate', `release stamp ${stamp} is not a real UTC date-time`);
  }
  return iso;
}

/** Flush the row buffer to gzip once it holds this many UTF-16 units: large writes keep per-call overhead low. */
const FLUSH_CHARS = 1 << 20;

/** Streams one table through gzip to disk, hashing the compressed bytes on the way. */
export class TableWriter {
  readonly relpath: string;
  readonly columns: readonly string[];
  /** Data rows written so far. */
  rows = 0;
  private buf = '';
  private readonly gzip: Gzip;
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private readonly done: Promise<void>;
  private failure: Error | null = null;
  private closed = false;

  constructor(
    readonly table: TableName,
    file: string,
    gzipLevel: number,
  ) {
    this.relpath = tablePath(table);
    this.columns = TABLE_COLUMNS[table];
    this.gzip = createGzip({ level: gzipLevel, chunkSize: 1 << 16 });
    const tap = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.hash.update(chunk);
        this.bytes += chunk.length;
        cb(null, chunk);
      },
    });
    this.done = pipeline(this.gzip, tap, createWriteStream(file));
    this.done.catch((e: Error) => {
      this.failure = e;
    });
    this.buf = csvLine(this.columns);
  }

  /**
   * Appends one data row (escaped here). Returns a promise only when the buffered text was handed to gzip and
   * gzip asked the writer to wait; callers `await` it then, which keeps memory bounded on 10M-row tables.
   */
  row(fields: readonly string[]): Promise<void> | undefined {
    if (fields.length !== this.columns.length) {
      throw new RegisterError('generate', `row has ${fields.length} fields, expected ${this.columns.length}`, this.relpath, this.rows + 1);
    }
    return this.line(csvLine(fields));
  }

  /** Appends one record that the caller has already escaped, including its `\n`. Same contract as `row`. */
  line(record: string): Promise<void> | undefined {
    this.rows++;
    this.buf += record;
    if (this.buf.length < FLUSH_CHARS) return undefined;
    return this.flush();
  }

  private flush(): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    const text = this.buf;
    this.buf = '';
    if (text.length === 0 || this.gzip.write(text)) return undefined;
    return once(this.gzip, 'drain').then(() => undefined);
  }

  /** Abandons the file (after a failure elsewhere); the work directory is removed by the release writer. */
  destroy(): void {
    this.closed = true;
    this.gzip.destroy();
  }

  /** Ends the file and returns its manifest entry. */
  async close(): Promise<FileEntry> {
    if (this.closed) throw new RegisterError('generate', 'table closed twice', this.relpath);
    this.closed = true;
    const pending = this.flush();
    if (pending) await pending;
    this.gzip.end();
    await this.done;
    return { bytes: this.bytes, sha256: this.hash.digest('hex'), rows: this.rows, role: tableRole(this.table) };
  }
}

const LICENCE = {
  spdx: 'CC0-1.0' as const,
  name: 'Creative Commons Zero v1.0 Universal',
  url: 'https://creativecommons.org/publicdomain/zero/1.0/',
  file: 'LICENSE.txt',
};

const LICENCE_TEXT = `Creative Commons Zero v1.0 Universal (CC0 1.0)

To the extent possible under law, the publishers of this register release have
waived all copyright and related or neighbouring rights to its data files.
You can copy, modify, distribute and use the data, even for commercial
purposes, without asking permission.

Full legal code: https://creativecommons.org/publicdomain/zero/1.0/legalcode
`;

/**
 * Builds a release in a hidden sibling directory and renames it into place in `finish()`, so a reader scanning
 * releases/ never sees a half-written release.
 */
export class ReleaseWriter {
  readonly stamp: string;
  readonly generatedAt: string;
  private readonly files = new Map<string, FileEntry>();
  private readonly open = new Map<TableName, TableWriter>();
  private readonly written = new Set<TableName>();

  private constructor(
    readonly dir: string,
    private readonly work: string,
    private readonly options: ReleaseWriterOptions,
  ) {
    this.stamp = options.stamp ?? basename(dir);
    this.generatedAt = options.generatedAt ?? stampToIso(this.stamp);
  }

  /** Prepares an empty work directory next to `dir`; throws if `dir` already holds a release (unless overwrite). */
  static async create(dir: string, options: ReleaseWriterOptions = {}): Promise<ReleaseWriter> {
    const stamp = options.stamp ?? basename(dir);
    stampToIso(stamp); // validates
    if (existsSync(dir) && (await readdir(dir)).length > 0 && !options.overwrite) {
      throw new RegisterError('generate', `${dir} already exists and is not empty (pass overwrite / --force to replace it)`);
    }
    const work = join(dirname(dir), `.${basename(dir)}.partial-${process.pid}`);
    await rm(work, { recursive: true, force: true });
    await mkdir(join(work, 'csv'), { recursive: true });
    const w = new ReleaseWriter(dir, work, options);
    options.progress?.follow(`write ${basename(dir)}`, options.expectRows ?? null, () => w.rowsWritten, 'rows');
    return w;
  }

  /** Data rows written so far, over every table. */
  get rowsWritten(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.rows ?? 0;
    for (const t of this.open.values()) n += t.rows;
    return n;
  }

  /** Opens csv/<table>.csv.gz; each table can be written once. Several tables may be open at the same time. */
  table(table: TableName): TableWriter {
    if (this.written.has(table)) throw new RegisterError('generate', 'table written twice', tablePath(table));
    this.written.add(table);
    const w = new TableWriter(table, join(this.work, tablePath(table)), this.options.gzipLevel ?? 6);
    this.open.set(table, w);
    return w;
  }

  /** Closes a table opened with `table()` and records it in the manifest. */
  async closeTable(w: TableWriter): Promise<FileEntry> {
    const entry = await w.close();
    this.open.delete(w.table);
    this.files.set(w.relpath, entry);
    return entry;
  }

  /** Writes a whole table from an array of rows (for small tables). */
  async writeTable(table: TableName, rows: Iterable<readonly string[]>): Promise<FileEntry> {
    const w = this.table(table);
    for (const r of rows) {
      const p = w.row(r);
      if (p) await p;
    }
    return this.closeTable(w);
  }

  /** Data rows of a table already closed (0 when it was not written). */
  rowsOf(table: TableName): number {
    return this.files.get(tablePath(table))?.rows ?? 0;
  }

  /** Writes a non-CSV file (e.g. private/notices/<provider>.json) and lists it with `role`. */
  async writeFile(relpath: string, content: string | Uint8Array, role: FileRole): Promise<FileEntry> {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const file = join(this.work, relpath);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
    const entry: FileEntry = { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), role };
    this.files.set(relpath, entry);
    return entry;
  }

  /** Writes LICENSE.txt, schema.json, release.json and checksums.txt, then moves the release into place. */
  async finish(): Promise<ReleaseManifest> {
    this.options.progress?.end();
    if (this.open.size > 0) {
      throw new RegisterError('generate', `tables still open: ${[...this.open.keys()].join(', ')}`, this.dir);
    }
    await this.writeFile('LICENSE.txt', LICENCE_TEXT, 'metadata');
    const tables = [...this.files.keys()].filter((p) => p.startsWith('csv/')).sort();
    if (this.options.schema ?? true) {
      const schema = {
        schema_version: SCHEMA_VERSION,
        files: Object.fromEntries(
          tables.map((p) => [p, { columns: TABLE_COLUMNS[p.slice(4, -7) as TableName] }]),
        ),
      };
      await this.writeFile('schema.json', JSON.stringify(schema, null, 2) + '\n', 'metadata');
    }
    const paths = [...this.files.keys()].sort();
    const manifest: ReleaseManifest = {
      schema_version: SCHEMA_VERSION,
      stamp: this.stamp,
      generated_at: this.generatedAt,
      tier: this.options.tier ?? 'public_bridge_v1',
      publishable: this.options.publishable ?? true,
      ...(this.options.prior ? { prior: this.options.prior } : {}),
      files: Object.fromEntries(paths.map((p) => [p, this.files.get(p)!])),
      row_counts: Object.fromEntries(tables.map((p) => [p, this.files.get(p)!.rows!])),
      licence: LICENCE,
    };
    await writeFile(join(this.work, 'release.json'), JSON.stringify(manifest, null, 2) + '\n');
    const checksums = paths.map((p) => `${this.files.get(p)!.sha256}  ${p}\n`).join('');
    await writeFile(join(this.work, 'checksums.txt'), checksums);
    if (existsSync(this.dir)) await rm(this.dir, { recursive: true, force: true });
    await mkdir(dirname(this.dir), { recursive: true });
    await rename(this.work, this.dir);
    return manifest;
  }

  /** Removes the work directory after a failure. */
  async abort(): Promise<void> {
    this.options.progress?.end();
    for (const w of this.open.values()) w.destroy();
    this.open.clear();
    await rm(this.work, { recursive: true, force: true });
  }
}
