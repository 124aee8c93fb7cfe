// The embedded durable state store behind `--state DIR`: an fsynced append-only journal with group commit,
// compacted now and then into a snapshot so that restart time stays bounded.
//
// Files in the state directory:
//   lock                 O_EXCL pid file (state-lock.ts): one server per directory.
//   snapshot.json        one framed record {v, gen, counters, notices}: the state before journal `gen`.
//   journal-NNNNNNNN.log framed records (journal-record.ts) appended since; replayed in order from `gen` up.
// Compaction first switches writes to a fresh journal, then writes the snapshot (temp, fsync, rename, fsync dir),
// and only then deletes the older journals. Because recovery replays every journal from the snapshot's `gen` up,
// a crash at any step leaves either the old snapshot plus all journals or the new snapshot plus the new journal.
// Rate windows are not journalled (see rate-window.ts): they matter for one second and would cost an fsync per request.

import { mkdir, open, readdir, readFile, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StateUnavailableError, type ChargeResult, type NoticeState } from '../interfaces.ts';
import { frameRecord, scanRecords } from './journal-record.ts';
import { RateWindows } from './rate-window.ts';
import { StateCore, checkCharge, checkNoticeArgs, checkRefund, type InspectableStateStore, type NoticeDetail, type StateImage } from './state-core.ts';
import { acquireStateLock } from './state-lock.ts';

export { StateDirLockedError } from './state-lock.ts';

/** The file operations the journal's durability rests on; injectable so tests can make the disk fail. */
export interface JournalIo {
  /**
   * Writes all of `data` at `position` of the journal `fh`, synchronously. A group of charges is a few hundred
   * bytes into the page cache: a blocking write costs a few microseconds, while a thread-pool round trip left the
   * event loop idle between groups (a quarter of the server's time under load, measured).
   */
  append(fh: FileHandle, data: Uint8Array, position: number): void;
  /** Writes all of `data` at `position` of `fh` (the snapshot, which can be large, so off the event loop). */
  write(fh: FileHandle, data: Uint8Array, position: number): Promise<void>;
  /** Makes what was written to `fh` durable. */
  sync(fh: FileHandle): Promise<void>;
  /** Cuts `fh` back to `size` bytes (drops the bytes of a write that failed). */
  truncate(fh: FileHandle, size: number): Promise<void>;
}

/** Options of openJournalStore. */
export interface JournalStoreOptions {
  /** The state directory; created if missing. */
  dir: string;
  /** Compact once the journals since the last snapshot hold this many bytes. Default 4 MiB (~60,000 records). */
  compactBytes?: number;
  /** Let concurrent callers share one write and fsync. Default true; false (one fsync per record) only for benchmarks. */
  groupCommit?: boolean;
  /**
   * Which records wait for fsync before their caller is answered. `acks` (default): acknowledgements wait for
   * fsync; charges and seen marks are answered once written (a process crash, SIGKILL included, cannot lose them:
   * the bytes are in the kernel) and fsynced within `syncIntervalMs`, so only a machine crash in that window can
   * lose a few charges, in the client's favour. `all`: every record waits for fsync.
   */
  fsync?: 'acks' | 'all';
  /** Longest delay before written-but-not-fsynced records are fsynced. Default 50 ms. */
  syncIntervalMs?: number;
  /** Overrides of the journal's file operations, for fault injection in tests. Default: node:fs. */
  io?: Partial<JournalIo>;
  /** Where recovery, lock and write-failure messages go. Default console.warn. */
  log?: (message: string) => void;
}

const SNAPSHOT = 'snapshot.json';
const SNAPSHOT_TMP = 'snapshot.json.tmp';
const SNAPSHOT_VERSION = 1;
const JOURNAL_NAME = /^journal-(\d{8})\.log$/;
const journalName = (gen: number): string => `journal-${String(gen).padStart(8, '0')}.log`;
/** One key's charges in one period: the unit of a reservation and of a summed journal record. */
const chargeSlot = (keyId: string, period: string): string => `${period}\u0000${keyId}`;

const defaultIo: JournalIo = {
  append(fh, data, position) {
    let done = 0;
    while (done < data.length) done += writeSync(fh.fd, data, done, data.length - done, position + done);
  },
  async write(fh, data, position) {
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await fh.write(data, done, data.length - done, position + done);
      done += bytesWritten;
    }
  },
  // fdatasync still writes the file size, which is what an append needs; it skips only mtime and the like.
  sync: (fh) => fh.datasync(),
  truncate: (fh, size) => fh.truncate(size),
};

/** Journal records: a charge, a "seen" and an acknowledgement. Short tags keep lines small. */
type JournalRecord =
  | ['c', string, string, number]
  | ['s', string, number, string[], string]
  | ['a', string, number, string[], string, string | null, string | null];

interface Pending {
  record: JournalRecord;
  /** Answer only after fsync (else after write). */
  sync: boolean;
  commit: () => void;
  fail: () => void;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Opens (recovering if needed) the journal store in `options.dir`. Rejects with StateDirLockedError when another
 * process uses the directory, StateUnavailableError when it cannot be created or written, and a plain Error naming
 * the file when the stored state is damaged beyond a torn tail.
 */
export async function openJournalStore(options: JournalStoreOptions): Promise<InspectableStateStore> {
  const dir = resolve(options.dir);
  const log = options.log ?? ((m: string) => console.warn(m));
  try {
    await mkdir(dir, { recursive: true });
  } catch (e) {
    throw unavailable(`${dir}: cannot create state directory`, e);
  }
  const release = await acquireStateLock(join(dir, 'lock'), log);
  const store = new JournalStore(dir, options, log, release);
  try {
    await store.recover();
  } catch (e) {
    await store.abandon();
    throw e;
  }
  return store;
}

class JournalStore implements InspectableStateStore {
  readonly writable = true;
  private readonly core = new StateCore();
  private readonly rates = new RateWindows();
  private readonly io: JournalIo;
  private readonly compactBytes: number;
  private readonly groupCommit: boolean;
  private readonly syncAll: boolean;
  private readonly syncIntervalMs: number;
  private syncTimer: NodeJS.Timeout | null = null;
  /** Written bytes not yet fsynced. */
  private unsynced = false;
  /** The fsync of already answered charges, running beside the write queue. */
  private backgroundSync: Promise<void> | null = null;

  /** Charges queued or being written: counted against the quota now, moved into `core` once durable. */
  private readonly reserved = new Map<string, number>();
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private compacting: Promise<void> | null = null;
  private closing = false;
  private closed: Promise<void> | null = null;

  private fh: FileHandle | null = null;
  private gen = 0;
  /** Durable length of the current journal. */
  private size = 0;
  /** Bytes past `size` may hold a failed write; cut them before the next one. */
  private dirty = false;
  /** Journals before the current one that the newest durable snapshot does not yet cover. */
  private older: { gen: number; bytes: number }[] = [];
  private compactAt: number;
  private failing = false;

  constructor(
    private readonly dir: string,
    options: JournalStoreOptions,
    private readonly log: (message: string) => void,
    private readonly release: () => Promise<void>,
  ) {
    this.io = { ...defaultIo, ...options.io };
    this.compactBytes = options.compactBytes ?? 4 * 1024 * 1024;
    this.compactAt = this.compactBytes;
    this.groupCommit = options.groupCommit ?? true;
    this.syncAll = options.fsync === 'all';
    this.syncIntervalMs = options.syncIntervalMs ?? 50;
  }

  // ---- StateStore ----

  async charge(keyId: string, period: string, cost: number, quota: number): Promise<ChargeResult> {
    checkCharge(cost, quota);
    const slot = chargeSlot(keyId, period);
    const reserved = this.reserved.get(slot) ?? 0;
    const used = this.core.used(keyId, period) + reserved;
    if (cost === 0 || used + cost > quota) return { ok: used + cost <= quota, remaining: Math.max(0, quota - used) };
    this.assertOpen();
    // Reserve synchronously, before anything awaits: this is what makes check-and-charge atomic in-process.
    this.reserved.set(slot, reserved + cost);
    await this.append(
      ['c', keyId, period, cost],
      () => {
        this.unreserve(slot, cost);
        this.core.addUsed(keyId, period, cost);
      },
      () => this.unreserve(slot, cost),
    );
    return { ok: true, remaining: Math.max(0, quota - used - cost) };
  }

  async refund(keyId: string, period: string, cost: number): Promise<void> {
    checkRefund(cost);
    // A refund follows its charge's answer, so the charge is already counted in `core`.
    const n = Math.min(cost, this.core.used(keyId, period));
    if (n === 0) return;
    this.assertOpen();
    await this.append(['c', keyId, period, -n], () => this.core.addUsed(keyId, period, -n), noop);
  }

  /** Takes a charge's reservation back: once it is durable (and counted in `core`) or refused. */
  private unreserve(slot: string, cost: number): void {
    const left = (this.reserved.get(slot) ?? 0) - cost;
    if (left > 0) this.reserved.set(slot, left);
    else this.reserved.delete(slot);
  }

  async remaining(keyId: string, period: string, quota: number): Promise<number> {
    return Math.max(0, quota - this.core.used(keyId, period) - (this.reserved.get(chargeSlot(keyId, period)) ?? 0));
  }

  async hit(keyId: string, nowMs: number, rate: number): Promise<number> {
    return this.rates.hit(keyId, nowMs, rate);
  }

  async notices(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeState>> {
    checkNoticeArgs('notices', provider, batchId, findingIds);
    return this.core.noticeStates(provider, batchId, findingIds);
  }

  async noticeDetails(provider: string, batchId: number, findingIds: string[]): Promise<Map<string, NoticeDetail>> {
    checkNoticeArgs('noticeDetails', provider, batchId, findingIds);
    return this.core.noticeDetails(provider, batchId, findingIds);
  }

  // Notice changes are applied to memory only once durable; replay applies them in the same order, so the
  // first acknowledgement written is the one kept, in memory and after a restart alike.
  async markSeen(provider: string, batchId: number, findingIds: string[], at: string): Promise<void> {
    checkNoticeArgs('markSeen', provider, batchId, findingIds);
    if (typeof at !== 'string') throw new TypeError('[state] markSeen: at must be a string');
    const ids = this.core.unseen(provider, batchId, findingIds);
    if (ids.length === 0) return; // already durable
    this.assertOpen();
    await this.append(['s', provider, batchId, ids, at], () => this.core.applySeen(provider, batchId, ids, at), noop);
  }

  async acknowledge(provider: string, batchId: number, findingIds: string[], at: string, actor: string | null, note: string | null): Promise<void> {
    checkNoticeArgs('acknowledge', provider, batchId, findingIds);
    if (typeof at !== 'string') throw new TypeError('[state] acknowledge: at must be a string');
    const ids = this.core.unacknowledged(provider, batchId, findingIds);
    if (ids.length === 0) return;
    this.assertOpen();
    const a = actor ?? null;
    const n = note ?? null;
    // The contract: an acknowledgement answered 200 is on disk and fsynced.
    await this.append(['a', provider, batchId, ids, at, a, n], () => this.core.applyAck(provider, batchId, ids, at, a, n), noop, true);
  }

  /** Waits for queued writes and a running compaction, then closes the journal and releases the lock. */
  close(): Promise<void> {
    this.closing = true;
    this.closed ??= (async () => {
      while (this.draining || this.compacting || this.backgroundSync) {
        await this.draining;
        await this.compacting;
        await this.backgroundSync;
      }
      if (this.syncTimer) clearTimeout(this.syncTimer);
      await this.cutFailedTail();
      if (this.unsynced && this.fh) await this.io.sync(this.fh).catch(() => {});
      this.unsynced = false;
      await this.fh?.close().catch(() => {});
      this.fh = null;
      await this.release();
    })();
    return this.closed;
  }

  // ---- recovery ----

  async recover(): Promise<void> {
    const snapshotGen = await this.loadSnapshot();
    await unlink(join(this.dir, SNAPSHOT_TMP)).catch(() => {});
    const gens: number[] = [];
    for (const name of await readdir(this.dir)) {
      const m = JOURNAL_NAME.exec(name);
      if (!m) continue;
      const gen = Number(m[1]);
      if (gen < snapshotGen) await unlink(join(this.dir, name)).catch(() => {}); // covered by the snapshot
      else gens.push(gen);
    }
    gens.sort((a, b) => a - b);
    if (gens.length > 0 && gens[0] !== snapshotGen) {
      throw new Error(`[state] ${this.dir}: ${journalName(snapshotGen)} is missing (the journals start at ${journalName(gens[0])}); the state directory is damaged`);
    }
    for (const gen of gens) {
      const bytes = await this.replay(gen);
      this.older.push({ gen, bytes });
    }
    const current = this.older.pop();
    this.gen = current?.gen ?? snapshotGen;
    this.size = current?.bytes ?? 0;
    const path = join(this.dir, journalName(this.gen));
    try {
      // Not opened with 'a': on Linux O_APPEND ignores the position, and writes must land exactly at `size`
      // (over the remains of a failed write). So create the file first when new, then open it read-write.
      if (!current) {
        await writeFile(path, '', { flag: 'wx' });
        await syncDir(this.dir);
      }
      this.fh = await open(path, 'r+');
    } catch (e) {
      throw unavailable(`${path}: cannot open journal`, e);
    }
    if (this.journalBytes() >= this.compactAt) await this.rotate();
  }

  /** Releases what a failed open took. */
  async abandon(): Promise<void> {
    await this.fh?.close().catch(() => {});
    await this.release();
  }

  private async loadSnapshot(): Promise<number> {
    const path = join(this.dir, SNAPSHOT);
    let buf: Buffer;
    try {
      buf = await readFile(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw unavailable(`${path}: cannot read snapshot`, e);
    }
    // The snapshot is only ever renamed into place complete, so unlike a journal tail it is never torn: damage is fatal.
    const scan = scanRecords(buf);
    const snap = scan.records[0] as ({ v: number; gen: number } & StateImage) | undefined;
    if (scan.records.length !== 1 || scan.goodBytes !== buf.length || typeof snap !== 'object' || snap === null) {
      throw new Error(`[state] ${path}: snapshot is damaged (checksum or framing); restore it from a backup`);
    }
    if (snap.v !== SNAPSHOT_VERSION) throw new Error(`[state] ${path}: snapshot version ${snap.v} is not supported (expected ${SNAPSHOT_VERSION})`);
    if (!Number.isSafeInteger(snap.gen) || snap.gen < 0) throw new Error(`[state] ${path}: snapshot has a bad journal generation`);
    try {
      this.core.load(snap);
    } catch (e) {
      throw new Error(`[state] ${path}: ${(e as Error).message}`);
    }
    return snap.gen;
  }

  /** Applies one journal's complete records; cuts a torn or corrupt tail. Returns the journal's good length. */
  private async replay(gen: number): Promise<number> {
    const path = join(this.dir, journalName(gen));
    let buf: Buffer;
    try {
      buf = await readFile(path);
    } catch (e) {
      throw unavailable(`${path}: cannot read journal`, e);
    }
    const scan = scanRecords(buf);
    scan.records.forEach((r, i) => {
      if (!applyRecord(this.core, r)) {
        throw new Error(`[state] ${path} record ${i + 1}: checksum is good but the record is not understood (written by a newer version?)`);
      }
    });
    if (scan.goodBytes < buf.length) {
      const dropped = buf.length - scan.goodBytes;
      if (scan.tailHasMoreLines) {
        // More than one line past the damage is not a torn last write; keep the bytes for whoever investigates.
        const keep = `${path}.dropped-${Date.now()}`;
        await writeFile(keep, buf.subarray(scan.goodBytes)).catch(() => {});
        this.log(`[state] ${path}: corrupt record after ${scan.records.length} good ones; dropped ${dropped} bytes (kept in ${keep})`);
      } else {
        this.log(`[state] ${path}: dropped a torn last record (${dropped} bytes) after ${scan.records.length} good ones`);
      }
      try {
        const fh = await open(path, 'r+');
        try {
          await fh.truncate(scan.goodBytes);
          await fh.sync();
        } finally {
          await fh.close();
        }
      } catch (e) {
        throw unavailable(`${path}: cannot cut the damaged tail`, e);
      }
    }
    return scan.goodBytes;
  }

  // ---- writing ----

  private assertOpen(): void {
    if (this.closing) throw new StateUnavailableError(`[state] ${this.dir}: the state store is closed`);
  }

  private append(record: JournalRecord, commit: () => void, fail: () => void, sync = false): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, commit, fail, resolve, reject, sync: sync || this.syncAll });
      // Waiting for the next turn of the event loop lets callers of the same turn share the first write too.
      this.draining ??= new Promise<void>((r) => setImmediate(r)).then(() => this.drain());
    });
  }

  /** Writes queued records, one write and one fsync per group: whatever queued while the previous fsync ran. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.groupCommit ? this.queue.splice(0) : this.queue.splice(0, 1);
      try {
        await this.writeBatch(batch);
      } catch (e) {
        const err = unavailable(`${join(this.dir, journalName(this.gen))}: cannot write journal`, e);
        if (!this.failing) this.log(`${err.message}; state changes fail until a write succeeds`);
        this.failing = true;
        for (let i = batch.length - 1; i >= 0; i--) batch[i].fail();
        // Cut the refused records now, not only before the next write: if a shutdown or a crash came first, replay
        // would bring back changes whose callers were told they were not made (a 503 acknowledgement, an uncharged lookup).
        await this.cutFailedTail();
        for (const p of batch) p.reject(err);
        continue;
      }
      if (this.failing) this.log(`[state] ${this.dir}: journal writes succeed again`);
      this.failing = false;
      for (const p of batch) p.commit();
      for (const p of batch) p.resolve();
      if (!this.compacting && this.journalBytes() >= this.compactAt) await this.rotate();
    }
    this.draining = null;
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const fh = this.fh;
    if (!fh) throw new Error('journal is not open');
    if (this.dirty) {
      await this.io.truncate(fh, this.size);
      await this.io.sync(fh);
      this.dirty = false;
    }
    const data = frameGroup(batch);
    const needSync = batch.some((p) => p.sync);
    if (data.length) {
      // Until the write (or, for records that wait for it, the fsync) returns, the bytes past `size` are not
      // known to be ours to keep: a failure cuts them back before the next write.
      this.dirty = true;
      this.io.append(fh, data, this.size);
      if (!needSync) {
        this.dirty = false;
        this.size += data.length;
        this.unsynced = true;
      }
    }
    if (needSync) {
      await this.io.sync(fh); // also covers earlier records that were answered once written
      this.dirty = false;
      this.size += data.length;
      this.unsynced = false;
    } else if (this.unsynced) this.scheduleSync();
  }

  /**
   * Best effort after a failed write or fsync: truncate the journal back to its last good length. The truncate alone
   * already keeps a process crash from replaying the refused bytes; `dirty` is cleared only once it is fsynced too,
   * otherwise the next write (or close) cuts again.
   */
  private async cutFailedTail(): Promise<void> {
    const fh = this.fh;
    if (!fh || !this.dirty) return;
    try {
      await this.io.truncate(fh, this.size);
      await this.io.sync(fh);
      this.dirty = false;
    } catch {
      // the disk is still failing; the next write starts with the same cut
    }
  }

  /**
   * fsyncs what was written, soon. Beside the write queue, not in it: charges are answered once written, and
   * queued behind an fsync they waited for it anyway (every 50 ms, under load: ~15% of entity throughput).
   * An fsync covers whatever was written before it started, so writes may go on meanwhile; records that must
   * wait for their own fsync (acknowledgements) still go through the queue. A failure leaves the bytes unsynced
   * and is tried again on the next interval; the answers given stand (see `fsync` in JournalStoreOptions).
   */
  private scheduleSync(): void {
    if (this.syncTimer || this.closing) return;
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      const fh = this.fh;
      if (!this.unsynced || this.closing || this.backgroundSync || !fh) return;
      this.unsynced = false;
      this.backgroundSync = this.io
        .sync(fh)
        .catch((e: unknown) => {
          this.unsynced = true;
          this.log(`[state] ${join(this.dir, journalName(this.gen))}: fsync failed (${describe(e)}); retrying`);
        })
        .finally(() => {
          this.backgroundSync = null;
          if (this.unsynced) this.scheduleSync();
        });
    }, this.syncIntervalMs);
    this.syncTimer.unref?.();
  }

  // ---- compaction ----

  private journalBytes(): number {
    return this.older.reduce((sum, j) => sum + j.bytes, this.size);
  }

  /**
   * Starts a new journal and snapshots the state of all before it. Runs between groups (no write in flight, so the
   * in-memory state is exactly what the journals hold); the snapshot is then written while new groups go on.
   */
  private async rotate(): Promise<void> {
    const gen = this.gen + 1;
    const path = join(this.dir, journalName(gen));
    let fh: FileHandle | undefined;
    try {
      fh = await open(path, 'w');
      await this.io.sync(fh);
      await syncDir(this.dir);
    } catch (e) {
      await fh?.close().catch(() => {});
      await unlink(path).catch(() => {});
      this.compactionFailed(e);
      return;
    }
    const snapshot = frameRecord({ v: SNAPSHOT_VERSION, gen, ...this.core.image() });
    const previous = this.fh;
    // A background fsync of the journal being left may have failed; know before deciding it is durable.
    await this.backgroundSync;
    // Records written but not yet fsynced must reach the disk before their journal is left behind.
    if (previous && this.unsynced) {
      try {
        await this.io.sync(previous);
      } catch (e) {
        await fh.close().catch(() => {});
        await unlink(path).catch(() => {});
        this.compactionFailed(e);
        return;
      }
      this.unsynced = false;
    }
    this.older.push({ gen: this.gen, bytes: this.size });
    this.fh = fh;
    this.gen = gen;
    this.size = 0;
    this.dirty = false;
    await previous?.close().catch(() => {});
    this.compacting = this.writeSnapshot(gen, snapshot).finally(() => {
      this.compacting = null;
    });
  }

  private async writeSnapshot(gen: number, bytes: Buffer): Promise<void> {
    const tmp = join(this.dir, SNAPSHOT_TMP);
    let fh: FileHandle | undefined;
    try {
      fh = await open(tmp, 'w');
      await this.io.write(fh, bytes, 0);
      await this.io.sync(fh);
      await fh.close();
      fh = undefined;
      await rename(tmp, join(this.dir, SNAPSHOT));
      await syncDir(this.dir);
    } catch (e) {
      await fh?.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      this.compactionFailed(e);
      return;
    }
    const covered = this.older.filter((j) => j.gen < gen);
    this.older = this.older.filter((j) => j.gen >= gen);
    for (const j of covered) await unlink(join(this.dir, journalName(j.gen))).catch(() => {});
    await syncDir(this.dir).catch(() => {});
    this.compactAt = this.compactBytes;
  }

  private compactionFailed(e: unknown): void {
    // Keep serving from the journals; try again once as much again has been written.
    this.compactAt = this.journalBytes() + this.compactBytes;
    this.log(`[state] ${this.dir}: compaction failed (${describe(e)}); keeping the journals, retrying later`);
  }
}

/**
 * The bytes of one group. Charges are sums, so a group's charges to one key in one period are written as one
 * record, which replay adds up to the same count: under load a group holds dozens of lookups by a few keys, and
 * framing each one was a twentieth of an entity lookup's CPU. Notice records keep their order and are never merged.
 */
function frameGroup(batch: Pending[]): Buffer {
  const frames: Buffer[] = [];
  let sums: Map<string, ['c', string, string, number]> | null = null;
  for (const { record } of batch) {
    if (record[0] !== 'c') {
      frames.push(frameRecord(record));
      continue;
    }
    sums ??= new Map();
    const slot = chargeSlot(record[1], record[2]);
    const sum = sums.get(slot);
    if (sum) sum[3] += record[3];
    else sums.set(slot, ['c', record[1], record[2], record[3]]);
  }
  if (sums) for (const sum of sums.values()) frames.push(frameRecord(sum));
  return frames.length === 1 ? frames[0] : Buffer.concat(frames);
}

function applyRecord(core: StateCore, r: unknown): boolean {
  if (!Array.isArray(r)) return false;
  const isIds = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
  const isText = (v: unknown): v is string | null => v === null || typeof v === 'string';
  switch (r[0]) {
    case 'c':
      if (r.length !== 4 || typeof r[1] !== 'string' || typeof r[2] !== 'string' || !Number.isSafeInteger(r[3])) return false;
      // A negative record is a refund (state-store refund); addUsed never goes below zero.
      core.addUsed(r[1], r[2], r[3]);
      return true;
    case 's':
      if (r.length !== 5 || typeof r[1] !== 'string' || !Number.isSafeInteger(r[2]) || !isIds(r[3]) || typeof r[4] !== 'string') return false;
      core.applySeen(r[1], r[2], r[3], r[4]);
      return true;
    case 'a':
      if (r.length !== 7 || typeof r[1] !== 'string' || !Number.isSafeInteger(r[2]) || !isIds(r[3]) || typeof r[4] !== 'string' || !isText(r[5]) || !isText(r[6])) return false;
      core.applyAck(r[1], r[2], r[3], r[4], r[5], r[6]);
      return true;
    default:
      return false;
  }
}

/** fsync of a directory, so a created, renamed or deleted entry survives a crash. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function describe(e: unknown): string {
  return (e as NodeJS.ErrnoException)?.code ?? (e as Error)?.message ?? String(e);
}

function unavailable(what: string, e: unknown): StateUnavailableError {
  return new StateUnavailableError(`[state] ${what} (${describe(e)})`);
}

function noop(): void {}
