// Opens one stamped release directory and verifies it before any byte is trusted: release.json, every listed
// file's size and sha256, and checksums.txt. Files on disk that release.json does not list are ignored.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, basename } from 'node:path';
import { RegisterError } from '../../common/errors.ts';
import { STAMP, TIERS } from '../../common/ids.ts';

export const TABLES = [
  'entities', 'players', 'coaches', 'referees', 'teams', 'competitions', 'seasons', 'stages', 'matches',
  'aliases', 'bridges', 'redirects', 'relationships', 'overlay_links', 'overlay_aliases', 'overlay_xids',
  'coverage', 'observed_clubs', 'providers',
] as const;
export type TableName = (typeof TABLES)[number];

interface ManifestFile {
  bytes: number;
  sha256: string;
  rows?: number;
  role: string;
}

interface ReleaseManifest {
  schema_version: string;
  stamp: string;
  generated_at: string;
  tier: 'public_bridge_v1' | 'open_census';
  publishable: boolean;
  prior?: string | null;
  files: Record<string, ManifestFile>;
  row_counts?: Record<string, number>;
}

export interface ReleaseInput {
  dir: string;
  stamp: string;
  manifest: ReleaseManifest;
  /** Listed table files by table name (gzipped or plain CSV); a table not listed is empty. */
  tables: Partial<Record<TableName, { path: string; label: string; rows?: number }>>;
  /** Listed private notice files (role `private`, under private/notices/). */
  notices: { path: string; label: string }[];
}

const SHA256 = /^[0-9a-f]{64}$/;

/** Reads and verifies the release at `dir`. Throws a RegisterError naming the file on the first mismatch. */
export async function openRelease(dir: string): Promise<ReleaseInput> {
  const manifestPath = join(dir, 'release.json');
  let manifest: ReleaseManifest;
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : `not valid JSON (${(e as Error).message})`;
    throw new RegisterError('verify', why, `${basename(dir)}/release.json`);
  }
  const where = `${basename(dir)}/release.json`;
  const need = (ok: boolean, what: string) => {
    if (!ok) throw new RegisterError('verify', what, where);
  };
  need(manifest && typeof manifest === 'object', 'must be a JSON object');
  need(manifest.schema_version === 'bridge-register-v1', `schema_version must be bridge-register-v1, found ${JSON.stringify(manifest.schema_version)}`);
  need(typeof manifest.stamp === 'string' && STAMP.test(manifest.stamp), `stamp ${JSON.stringify(manifest.stamp)} is not a compact UTC stamp`);
  need(manifest.stamp === basename(dir), `stamp ${manifest.stamp} does not match the directory name ${basename(dir)}`);
  need(typeof manifest.generated_at === 'string' && !Number.isNaN(Date.parse(manifest.generated_at)), 'generated_at is not a date-time');
  need((TIERS as readonly string[]).includes(manifest.tier), `tier ${JSON.stringify(manifest.tier)} is not one of ${TIERS.join(', ')}`);
  need(typeof manifest.publishable === 'boolean', 'publishable must be a boolean');
  need(manifest.prior == null || (typeof manifest.prior === 'string' && STAMP.test(manifest.prior)), 'prior must be a stamp or null');
  need(manifest.files && typeof manifest.files === 'object', 'files must be an object');

  const checksums = await readChecksums(dir);
  const release: ReleaseInput = { dir, stamp: manifest.stamp, manifest, tables: {}, notices: [] };
  // Verify in sorted order so the first error reported is the same on every machine.
  for (const rel of Object.keys(manifest.files).sort()) {
    const entry = manifest.files[rel];
    if (rel.includes('..') || rel.startsWith('/') || rel.includes('\\') || rel.includes('\0')) {
      throw new RegisterError('verify', 'listed path escapes the release directory', rel);
    }
    if (!entry || typeof entry.bytes !== 'number' || typeof entry.sha256 !== 'string' || !SHA256.test(entry.sha256)) {
      throw new RegisterError('verify', 'file entry needs bytes and a sha256', rel);
    }
    const path = join(dir, rel);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      throw new RegisterError('verify', 'listed in release.json but missing on disk', rel);
    }
    if (size !== entry.bytes) throw new RegisterError('verify', `size ${size} bytes, release.json says ${entry.bytes}`, rel);
    const sum = await sha256File(path);
    if (sum !== entry.sha256) throw new RegisterError('verify', `sha256 ${sum} does not match release.json ${entry.sha256}`, rel);
    const listed = checksums.get(rel);
    if (listed === undefined) throw new RegisterError('verify', 'no line in checksums.txt', rel);
    if (listed !== sum) throw new RegisterError('verify', `sha256 does not match checksums.txt (${listed})`, rel);

    const table = /^csv\/([a-z_]+)\.csv(\.gz)?$/.exec(rel);
    if (table && (TABLES as readonly string[]).includes(table[1])) {
      const name = table[1] as TableName;
      if (release.tables[name]) throw new RegisterError('verify', `table ${name} is listed twice`, rel);
      release.tables[name] = { path, label: rel, rows: manifest.row_counts?.[rel] ?? entry.rows };
    } else if (/^private\/notices\/[^/]+\.json$/.test(rel)) {
      release.notices.push({ path, label: rel });
    }
  }
  if (!release.tables.entities) throw new RegisterError('verify', 'csv/entities.csv.gz is required but not listed', where);
  return release;
}

async function readChecksums(dir: string): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await readFile(join(dir, 'checksums.txt'), 'utf8');
  } catch {
    throw new RegisterError('verify', 'missing', `${basename(dir)}/checksums.txt`);
  }
  const map = new Map<string, string>();
  text.split('\n').forEach((line, i) => {
    line = line.replace(/\r$/, '');
    if (!line.trim()) return;
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!m) throw new RegisterError('verify', 'malformed line (want `<sha256>  <path>`)', 'checksums.txt', i + 1);
    map.set(m[2].replace(/^\.\//, ''), m[1]);
  });
  return map;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
