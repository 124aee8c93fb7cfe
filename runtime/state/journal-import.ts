// One-time import of the state folder an earlier version wrote (snapshot.json and journal-NNNNNNNN.log: one record
// per line, `<crc32 as 8 hex> <json>\n`) into the SQLite store, so no deployed counter or acknowledgement is lost.
//
// Unlike the old recovery, which cut everything after a bad record and started normally, the import refuses a
// damaged journal: a complete line whose checksum or content is wrong is damage, not a torn write, and the
// acknowledgements after it would be dropped in silence. Only bytes after the last newline (a write cut short by a
// crash, never answered as durable) are left out, with a line saying so.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checksum32 } from '../../common/checksum.ts';
import { StateUnavailableError } from '../interfaces.ts';
import type { SqliteStateStore } from './sqlite-store.ts';
import { StateCore } from './state-core.ts';

const SNAPSHOT = 'snapshot.json';
const JOURNAL = /^journal-(\d{8})\.log$/;
/** Set in the database's meta table by the transaction that imports; makes a retried import a no-op. */
const MARKER = 'imported_journal';
/** Where the imported files go, beside the database, kept for whoever wants to check the import. */
const IMPORTED_DIR = 'journal-imported';

/**
 * Imports the journal in `dir` into `store` if one is there and was not imported yet; then moves its files into
 * `dir/journal-imported/`. Throws (naming the file, the record and how to recover) when the journal is damaged.
 */
export function importLegacyJournal(store: SqliteStateStore, dir: string, log: (line: string) => void): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const journals = names.filter((n) => JOURNAL.test(n)).sort();
  if (!names.includes(SNAPSHOT) && journals.length === 0) return;
  if (!store.hasMarker(MARKER)) {
    const core = new StateCore();
    const gen = loadSnapshot(core, join(dir, SNAPSHOT));
    const gens = journals.map((n) => Number(JOURNAL.exec(n)![1])).filter((g) => g >= gen);
    if (gens.length > 0 && gens[0] !== gen) throw damage(join(dir, journalName(gen)), 'is missing (the snapshot needs it)', 'restore it from a backup');
    let records = 0;
    for (const g of gens) records += replay(core, join(dir, journalName(g)), log);
    const image = core.image();
    store.importImage(image, MARKER);
    log(`[state] imported the journal of an earlier version from ${dir} into ${store.file}: ${image.counters.length} quota counters, ${image.notices.length} findings (${records} journal records)`);
  }
  // After the import committed: a crash before this point leaves the files, and the marker makes the next start skip them.
  const keep = join(dir, IMPORTED_DIR);
  try {
    mkdirSync(keep, { recursive: true });
    for (const n of names) if (n === SNAPSHOT || JOURNAL.test(n)) renameSync(join(dir, n), join(keep, n));
    rmSync(join(dir, 'lock'), { force: true });
  } catch (e) {
    throw new StateUnavailableError(`[state] ${dir}: imported the journal but cannot move it into ${IMPORTED_DIR}/ (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

const journalName = (gen: number): string => `journal-${String(gen).padStart(8, '0')}.log`;

function damage(file: string, what: string, recover: string): Error {
  return new Error(`[state] ${file}: ${what}; refusing to start rather than drop acknowledgements. Nothing was imported. To recover: ${recover}`);
}

function loadSnapshot(core: StateCore, path: string): number {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw new StateUnavailableError(`[state] ${path}: cannot read (${(e as NodeJS.ErrnoException).code})`);
  }
  const nl = buf.indexOf(0x0a);
  const snap = nl === buf.length - 1 ? parseLine(buf, 0, nl) : undefined;
  const recover = 'restore snapshot.json from a backup';
  if (typeof snap !== 'object' || snap === null) throw damage(path, 'the snapshot is damaged (checksum or framing)', recover);
  const s = snap as { v?: unknown; gen?: unknown; counters?: unknown; notices?: unknown };
  if (s.v !== 1 || !Number.isSafeInteger(s.gen) || (s.gen as number) < 0) throw damage(path, 'the snapshot has an unknown version or generation', recover);
  try {
    core.load(s as never);
  } catch (e) {
    throw damage(path, `the snapshot is not understood (${(e as Error).message})`, recover);
  }
  return s.gen as number;
}

/** Applies every record of one journal; returns how many. */
function replay(core: StateCore, path: string, log: (line: string) => void): number {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    throw new StateUnavailableError(`[state] ${path}: cannot read (${(e as NodeJS.ErrnoException).code})`);
  }
  let off = 0;
  let n = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, off);
    if (nl < 0) break;
    const record = parseLine(buf, off, nl);
    if (record === undefined || !applyRecord(core, record)) {
      throw damage(
        path,
        `record ${n + 1} (byte ${off}) is damaged (checksum, framing or content), with ${buf.length - nl - 1} more bytes after it`,
        `restore the file from a backup; or, to import only the ${n} records before it and lose the rest, cut the file there (\`truncate -s ${off} ${path}\`) and start again`,
      );
    }
    n++;
    off = nl + 1;
  }
  if (off < buf.length) log(`[state] ${path}: left out a torn last record (${buf.length - off} bytes without a newline: a write cut short, never answered as durable)`);
  return n;
}

function parseLine(buf: Buffer, start: number, nl: number): unknown {
  if (nl - start < 10 || buf[start + 8] !== 0x20) return undefined;
  const hex = buf.toString('latin1', start, start + 8);
  if (!/^[0-9a-f]{8}$/.test(hex) || parseInt(hex, 16) !== checksum32(buf, start + 9, nl)) return undefined;
  try {
    return JSON.parse(buf.toString('utf8', start + 9, nl));
  } catch {
    return undefined;
  }
}

/** A charge (negative: a refund), a "seen" or an acknowledgement, as the earlier version wrote them. */
function applyRecord(core: StateCore, r: unknown): boolean {
  if (!Array.isArray(r)) return false;
  const isIds = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
  const isText = (v: unknown): v is string | null => v === null || typeof v === 'string';
  switch (r[0]) {
    case 'c':
      if (r.length !== 4 || typeof r[1] !== 'string' || typeof r[2] !== 'string' || !Number.isSafeInteger(r[3])) return false;
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
