// Test helpers for generated releases: read a table as records, and check release.json and checksums.txt
// against the bytes on disk the way the compiler will.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import { readCsv } from '../../generator/csv.ts';
import { TABLE_COLUMNS, type TableName } from '../../generator/tables.ts';
import type { ReleaseManifest } from '../../generator/release-writer.ts';
import { SCORELINE_FIELDS, scorelineProblem } from '../../common/scoreline.ts';

export type Rec = Record<string, string>;

export async function readTable(dir: string, table: TableName): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const { header, rows } of readCsv(join(dir, `csv/${table}.csv.gz`))) {
    expect(header).toEqual(TABLE_COLUMNS[table]);
    for (const r of rows) out.push(Object.fromEntries(header.map((h, i) => [h, r[i]])));
  }
  return out;
}

export const manifestOf = (dir: string): ReleaseManifest => JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8'));

/** Every file below `dir`, relative, sorted. */
export function filesOf(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/** Checks sizes, hashes and row counts in release.json and the checksums.txt lines against the files. */
export async function expectConsistent(dir: string): Promise<ReleaseManifest> {
  const m = manifestOf(dir);
  expect(m.schema_version).toBe('bridge-register-v1');
  expect(m.licence).toMatchObject({ spdx: 'CC0-1.0', file: 'LICENSE.txt' });
  const listed = Object.keys(m.files).sort();
  expect(filesOf(dir)).toEqual([...listed, 'checksums.txt', 'release.json'].sort());
  const expectedLines: string[] = [];
  for (const path of listed) {
    const bytes = readFileSync(join(dir, path));
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(m.files[path].bytes, path).toBe(bytes.length);
    expect(m.files[path].sha256, path).toBe(sha);
    expectedLines.push(`${sha}  ${path}`);
    if (path.startsWith('csv/')) {
      let rows = 0;
      for await (const batch of readCsv(join(dir, path))) rows += batch.rows.length;
      expect(m.files[path].rows, path).toBe(rows);
      expect(m.row_counts[path], path).toBe(rows);
    }
  }
  expect(Object.keys(m.row_counts).sort()).toEqual(listed.filter((p) => p.startsWith('csv/')));
  expect(readFileSync(join(dir, 'checksums.txt'), 'utf8')).toBe(expectedLines.join('\n') + '\n');
  return m;
}

/**
 * Checks that every scoreline cell of the matches table is empty or a value the published service admits
 * (common/scoreline.ts): a generator writes no slack the compiler would drop. Returns the rows checked.
 */
export async function expectPublishedScorelines(dir: string): Promise<number> {
  const rows = await readTable(dir, 'matches');
  for (const r of rows) {
    for (const [name, kind] of SCORELINE_FIELDS) if (r[name] !== '') expect(scorelineProblem(kind, r[name]), `${r.reep_id} ${name} ${r[name]}`).toBeNull();
  }
  return rows.length;
}
