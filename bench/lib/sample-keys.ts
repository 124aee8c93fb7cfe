// Real request keys for the load: register IDs and labels from the entities table, provider keys from the bridges
// table, chosen uniformly over the whole table (tables are ordered by type, so the first rows would all be alike).
import { seededRandom } from '../../generator/random.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { columnIndex, readCsv } from '../../compiler/read/csv-reader.ts';

/** Seeded uniform draws (the generator's sfc32), so a run can be replayed with the seed it prints. */
export const prng = (seed: number): (() => number) => seededRandom(seed, 'bench-samples');

export interface Samples {
  entities: { id: string; label: string }[];
  bridges: { provider: string; namespace: string; externalId: string }[];
  /** Team IDs, for the /matches rows (empty for a release without a teams table). */
  teams: string[];
  /** Competition and season IDs, for the /matches worst-filter rows (empty without their tables). */
  competitions: string[];
  seasons: string[];
}

/** Reads `count` rows chosen uniformly at random from a table (by row number; the row count comes from release.json). */
async function sampleTable(releaseDir: string, file: string, count: number, random: () => number, take: (f: string[], col: Record<string, number>) => void, required: string[]): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(releaseDir, 'release.json'), 'utf8')) as { files: Record<string, { rows?: number }>; row_counts?: Record<string, number> };
  const rows = manifest.files[file]?.rows ?? manifest.row_counts?.[file];
  if (!rows) throw new Error(`${file}: release.json gives no row count to sample from`);
  const picks = new Set<number>();
  const want = Math.min(count, rows);
  while (picks.size < want) picks.add(1 + Math.floor(random() * rows));
  let col: Record<string, number> = {};
  await readCsv(join(releaseDir, file), file, {
    header: (h) => {
      col = columnIndex(h, required, file);
    },
    row: (f, n) => {
      if (picks.has(n)) take(f, col);
    },
  });
}

export async function sampleKeys(releaseDir: string, count: number, seed: number, opts: { bridges?: boolean } = {}): Promise<Samples> {
  const random = prng(seed);
  const out: Samples = { entities: [], bridges: [], teams: [], competitions: [], seasons: [] };
  await sampleTable(releaseDir, 'csv/entities.csv.gz', count, random, (f, c) => out.entities.push({ id: f[c.reep_id], label: f[c.label] }), ['reep_id', 'label']);
  if (opts.bridges !== false) {
    await sampleTable(
      releaseDir,
      'csv/bridges.csv.gz',
      count,
      random,
      (f, c) => out.bridges.push({ provider: f[c.provider], namespace: f[c.namespace], externalId: f[c.external_id] }),
      ['provider', 'namespace', 'external_id'],
    );
  }
  if (opts.bridges !== false && manifestLists(releaseDir, 'csv/teams.csv.gz')) {
    await sampleTable(releaseDir, 'csv/teams.csv.gz', count, random, (f, c) => out.teams.push(f[c.reep_id]), ['reep_id']);
  }
  // Shuffle: rows were collected in file order, i.e. grouped by type.
  shuffle(out.entities, random);
  shuffle(out.bridges, random);
  shuffle(out.teams, random);
  // Their own draws, so adding them left the other samples as they were.
  const more = seededRandom(seed, 'bench-samples-matches');
  for (const [file, into] of [['csv/competitions.csv.gz', out.competitions], ['csv/seasons.csv.gz', out.seasons]] as const) {
    if (opts.bridges !== false && manifestLists(releaseDir, file)) await sampleTable(releaseDir, file, count, more, (f, c) => into.push(f[c.reep_id]), ['reep_id']);
    shuffle(into, more);
  }
  return out;
}

/** Whether release.json lists `file`. */
function manifestLists(releaseDir: string, file: string): boolean {
  return file in (JSON.parse(readFileSync(join(releaseDir, 'release.json'), 'utf8')) as { files: Record<string, unknown> }).files;
}

function shuffle<T>(a: T[], random: () => number): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
}

/** A search query a user would type: the first one or two words of a real label; null when under 3 letters. */
export function searchQuery(label: string, random: () => number): string | null {
  const words = label.split(/\s+/).filter(Boolean);
  const letters = (q: string) => q.normalize('NFKD').replace(/[^\p{L}\p{N}]/gu, '').length;
  // One word when it is long enough and the coin says so; otherwise two (a bare "FC" or "v" is not a query).
  for (const n of random() < 0.5 ? [1, 2] : [2]) {
    const q = words.slice(0, n).join(' ');
    if (letters(q) >= 3) return q;
  }
  return null;
}
