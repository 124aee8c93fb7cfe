// The input floor: what merely reading a release costs (gunzip and split every table into rows and fields, no other
// work), so the compile can be judged as a multiple of it. It reads as the compiler reads (over bytes, fields as
// offsets): a slower reader would make a higher floor and flatter the ratio. The text reader (strings for every
// field) and `zcat | wc -l` are measured too, for reference.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCsv, readCsvRecords } from '../../compiler/read/csv-reader.ts';
import { $, quote, which } from 'zx';

interface TableFloor {
  file: string;
  bytes: number;
  rows: number;
  wallMs: number;
  cpuMs: number;
}

export interface ReleaseFloor {
  release: string;
  /** Which reader read it (absent in runs from before the byte reader: they read with `text`). */
  reader?: FloorReader;
  tables: TableFloor[];
  bytes: number;
  rows: number;
  wallMs: number;
  cpuMs: number;
}

/** The CSV tables a release lists (the compiler reads nothing else). */
function releaseTables(releaseDir: string): { file: string; bytes: number; rows?: number }[] {
  const manifest = JSON.parse(readFileSync(join(releaseDir, 'release.json'), 'utf8')) as { files: Record<string, { bytes: number; rows?: number }> };
  return Object.entries(manifest.files)
    .filter(([f]) => f.startsWith('csv/') && (f.endsWith('.csv.gz') || f.endsWith('.csv')))
    .map(([file, m]) => ({ file, bytes: m.bytes, rows: m.rows }))
    .sort((a, b) => (a.file < b.file ? -1 : 1));
}

/** `bytes`: the compiler's reader (readCsvRecords), the floor; `text`: readCsv, which makes a string of every field. */
export type FloorReader = 'bytes' | 'text';

export async function measureFloor(releaseDir: string, reader: FloorReader = 'bytes'): Promise<ReleaseFloor> {
  const tables: TableFloor[] = [];
  for (const t of releaseTables(releaseDir)) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    // The empty visitor is the point: only decompression and field splitting remain.
    const path = join(releaseDir, t.file);
    const rows = reader === 'bytes' ? await readCsvRecords(path, t.file, { record() {} }) : await readCsv(path, t.file, { row() {} });
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    tables.push({ file: t.file, bytes: t.bytes, rows, wallMs: Math.round(wallMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000) });
  }
  const sum = (k: 'bytes' | 'rows' | 'wallMs' | 'cpuMs') => tables.reduce((s, t) => s + t[k], 0);
  return { release: releaseDir, reader, tables, bytes: sum('bytes'), rows: sum('rows'), wallMs: sum('wallMs'), cpuMs: sum('cpuMs') };
}

export interface ZcatFloor {
  lines: number;
  wallMs: number;
  /** user + system of the whole pipeline (zcat and wc run in parallel, so this can exceed wall). */
  cpuMs: number | null;
}

/** `zcat csv/*.gz | wc -l` under /usr/bin/time when present; null when zcat is missing. */
export async function measureZcat(releaseDir: string): Promise<ZcatFloor | null> {
  const files = releaseTables(releaseDir).filter((t) => t.file.endsWith('.gz')).map((t) => join(releaseDir, t.file));
  if (files.length === 0 || !(await which('zcat', { nothrow: true }))) return null;
  const sh = $({ quiet: true, nothrow: true });
  if (existsSync('/usr/bin/time')) {
    // GNU time's -f prints the children's user and system seconds, on stderr after the pipeline's own output; the
    // pipeline runs in its own shell so that time counts both its sides. zx quotes each file name.
    const pipeline = `zcat ${files.map((f) => quote(f)).join(' ')} | wc -l`;
    const r = await sh`/usr/bin/time -f ${'TIME %e %U %S'} sh -c ${pipeline}`;
    const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+)/.exec(r.stderr);
    if (r.exitCode === 0 && m) return { lines: Number(r.stdout.trim()), wallMs: Math.round(Number(m[1]) * 1000), cpuMs: Math.round((Number(m[2]) + Number(m[3])) * 1000) };
  }
  const t0 = performance.now();
  const r = await sh`zcat ${files} | wc -l`;
  if (r.exitCode !== 0) return null;
  return { lines: Number(r.stdout.trim()), wallMs: Math.round(performance.now() - t0), cpuMs: null };
}
