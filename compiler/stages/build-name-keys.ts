// Stage: the name keys family (issue 48, name matching). Stage 2 wrote a line per match key of each live entity's
// names (compiler/records/name-key-records.ts), grouped by the key's hash; here each group is read whole, its lines
// gathered by key, and each key written with everything scoring needs, so one bucket read answers a key. It needs
// only stage 2's lines, so it runs in a worker thread alongside the steps after stage 2.
import { join } from 'node:path';
import type { BucketFamily } from '../../common/bucket-format.ts';
import type { NameKeyEntry, NameKeyValue } from '../../common/dist-layout.ts';
import { HashedFamilyWriter } from '../write/hashed-family-writer.ts';
import type { ContentFile } from '../write/content-file.ts';
import { GroupSpill, type GroupSpillHandle } from '../write/group-spill.ts';
import { forEachNameLine, type NameKeyLine, type NamePart } from '../records/name-key-records.ts';
import type { ThreadedStage } from '../run-stages.ts';

/**
 * Entities kept per key, the most prominent first (see byProminence). A key held by more is a common name or a
 * coarse sound key; its value still says how many hold it, so a reader knows the list is cut.
 */
export const MAX_KEY_ENTITIES = 32;

/** What the stage hands on: the family, and the countries its entries number (1-based; 0 is none). */
export interface NameKeysBuilt {
  family: BucketFamily;
  countries: string[];
}

/** Plain data in, for a worker thread. */
export interface NameKeysJob {
  /** Stage 2's name key lines, one spill per range. */
  lines: GroupSpillHandle[];
  /** Every country named, sorted: an entry's country is its position + 1. */
  countries: string[];
  publicDir: string;
  scratchDir: string;
}

export interface NameKeysResult {
  family: BucketFamily;
  files: ContentFile[];
}

export const nameKeysStage: ThreadedStage<NamePart[], NameKeysJob, NameKeysResult, NameKeysBuilt> = {
  worker: new URL('./build-name-keys.ts#buildNameKeys', import.meta.url),
  jobs: (ctx, parts) => [{
    lines: parts.map((p) => p.lines),
    countries: countriesOf(parts),
    publicDir: ctx.publicDir,
    scratchDir: join(ctx.scratchDir, 'name-keys-writer'),
  }],
  run: (job) => buildNameKeys(job),
  merge: (ctx, [r], parts) => {
    for (const f of r.files) ctx.written.set(f.path, f);
    return { family: r.family, countries: countriesOf(parts) };
  },
};

/** Every country the ranges' entities named, once each, sorted. */
const countriesOf = (parts: readonly NamePart[]): string[] => [...new Set(parts.flatMap((p) => p.countries))].sort();

/** Entities of one key, most prominent first: named by their label before an alias, then most bridges, then ID. */
function byProminence(a: NameKeyLine[], b: NameKeyLine[]): number {
  return a[0].source - b[0].source || b[0].bridges - a[0].bridges || (a[0].id < b[0].id ? -1 : a[0].id > b[0].id ? 1 : 0);
}

/** A key's lines, one list per entity, each list strongest source first (then by name). */
function byEntity(lines: NameKeyLine[]): NameKeyLine[][] {
  const of = new Map<string, NameKeyLine[]>();
  for (const l of lines) {
    const list = of.get(l.id);
    if (list) list.push(l);
    else of.set(l.id, [l]);
  }
  const out = [...of.values()];
  for (const list of out) list.sort((a, b) => a.source - b.source || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out.sort(byProminence);
}

export async function buildNameKeys(job: NameKeysJob): Promise<NameKeysResult> {
  const ledger = new Map<string, ContentFile>();
  const spills = job.lines.map((h) => GroupSpill.open(h));
  const countryIndex = new Map(job.countries.map((c, i) => [c, i + 1]));
  // A query reads three keys; 8 KiB buckets decode quickly and keep the directory small.
  const writer = new HashedFamilyWriter({ root: job.publicDir, name: 'names/keys', tmpDir: job.scratchDir, targetBucketBytes: 8 * 1024, ledger });
  try {
    const groups = spills[0]?.groups ?? 0;
    for (let g = 0; g < groups; g++) {
      const gathered = new Map<string, NameKeyLine[]>();
      for (const spill of spills) {
        forEachNameLine(spill.readText(g), (line) => {
          const list = gathered.get(line.key);
          if (list) list.push(line);
          else gathered.set(line.key, [line]);
        });
        spill.release(g);
      }
      for (const [key, lines] of gathered) {
        const entities = byEntity(lines);
        const entries: NameKeyEntry[] = [];
        for (const list of entities.slice(0, MAX_KEY_ENTITIES)) {
          for (const l of list) entries.push([l.id, l.type, l.source, countryIndex.get(l.country) ?? 0, l.name]);
        }
        const value: NameKeyValue = [entities.length, entries];
        writer.add(key, value);
      }
    }
  } catch (err) {
    await writer.abort();
    throw err;
  }
  for (const spill of spills) spill.dispose();
  const family = await writer.finish();
  return { family, files: [...ledger.values()] };
}
