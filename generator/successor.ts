// Derives the next release from a prior one by streaming its tables: about 1% of entities change (added, merged,
// tombstoned, relabelled, status changed, bridges added or removed), so every changelog event type occurs.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import { ENTITY_TYPES, isEntityType, REGISTER_ID, type EntityType } from '../common/ids.ts';
import type { NoticeBatch, NoticeFindingRecord } from '../common/dist-layout.ts';
import { own, readCsv } from './csv.ts';
import { competitionName, personName, slugify, teamName } from './names.ts';
import { kindFor, makeFinding, noticeBatchJson, type NoticeSubject } from './notices.ts';
import { feistelHex56, hash32, Rng, saltOf } from './random.ts';
import { ReleaseWriter, stampToIso, type ReleaseManifest, type Tier } from './release-writer.ts';
import { TABLE_COLUMNS, TYPE_LETTER, TYPE_TABLE, type TableName } from './tables.ts';
import type { ProgressLine } from './release-writer.ts';

export interface SuccessorOptions {
  /** The prior release directory (any bridge-register-v1 release, synthetic or imported). */
  prior: string;
  /** The new release directory; its basename is the stamp and must be later than the prior's. */
  out: string;
  /** Seed of every choice. */
  seed: number | string;
  /** gzip level. Default 6. */
  gzipLevel?: number;
  /** Replace an existing directory. Default false. */
  overwrite?: boolean;
  /** A progress line for the rows read, then written (see ReleaseWriterOptions). Default none. */
  progress?: ProgressLine;
}

/** Shares of live entities changed per kind (with floors, so a 3,000-entity release still shows each kind). */
const CHANGE_RATES = {
  added: [0.003, 2],
  merged: [0.002, 2],
  tombstoned: [0.001, 1],
  relabelled: [0.002, 2],
  status: [0.0005, 1],
  bridgeAdded: [0.003, 2],
  bridgeRemoved: [0.002, 2],
  rescored: [0.002, 2],
  rescheduled: [0.002, 2],
} as const;

/** New entities are the kinds that appear between releases without new structure around them. */
const NEW_TYPES: readonly EntityType[] = ['player', 'coach', 'referee', 'team', 'competition'];
const PERSON = new Set<EntityType>(['player', 'coach', 'referee']);
const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

interface PriorManifest {
  stamp: string;
  tier?: Tier;
  publishable?: boolean;
  files: Record<string, { role?: string }>;
  row_counts?: Record<string, number>;
}

interface NewEntity {
  id: string;
  type: EntityType;
  label: string;
  country: string;
  gender: string;
  short: string | null;
  bridges: string[][];
}

const col = (table: TableName, name: string): number => (TABLE_COLUMNS[table] as readonly string[]).indexOf(name);

/** A new label that a real register might publish for the same thing (a middle initial, a club suffix). */
function relabel(old: string, type: EntityType, h: number): string {
  if (PERSON.has(type) && old.includes(' ')) {
    const at = old.indexOf(' ');
    return `${old.slice(0, at)} ${'ABCDEFGHJKLMNPRST'[h % 17]}.${old.slice(at)}`;
  }
  if (type === 'team') return old.endsWith(' FC') ? old.slice(0, -3) : `${old} FC`;
  return `${old} II`;
}

const MATCH_COLUMN = Object.fromEntries(TABLE_COLUMNS.matches.map((c, i) => [c, i]));

/**
 * A matches row as the successor publishes it: a corrected score (one more home goal, or a first recorded score,
 * resting on one source), a match moved a week on (or given a first date). Values stay in the published enums.
 */
function changeFixture(r: string[], rescore: boolean, reschedule: boolean): void {
  const c = MATCH_COLUMN;
  if (rescore) {
    if (/^\d+$/.test(r[c.home_score])) r[c.home_score] = String(Number(r[c.home_score]) + 1);
    else {
      r[c.home_score] = '1';
      r[c.away_score] = '0';
      r[c.result_form] = 'regular';
    }
    r[c.score_basis] = 'single_source';
  }
  if (reschedule) {
    const day = /^\d{4}-\d{2}-\d{2}$/.test(r[c.played_on]) ? Date.parse(`${r[c.played_on]}T00:00:00Z`) : Date.UTC(2025, 0, 1);
    r[c.played_on] = new Date(day + 7 * 86_400_000).toISOString().slice(0, 10);
  }
}

/** The prior release as the passes read it: its manifest, where each table is, and its rows. */
interface Prior {
  dir: string;
  manifest: PriorManifest;
  table(t: TableName): string | null;
  /** Streams a prior table as rows in this table's published column order (absent columns read as empty). */
  rows(t: TableName): AsyncGenerator<string[][]>;
}

/** The prior's live population (IDs plus a type byte each: fine up to a few million) and what must not vanish. */
interface Population {
  ids: string[];
  typeIx: number[];
  activeFlags: boolean[];
  /** Register ID → its position in `ids`. */
  index: Map<string, number>;
  /** Positions in `ids` by type index. */
  byType: number[][];
  /** The prior's redirects rows, kept as they are. */
  redirects: string[][];
  redirectFrom: Set<string>;
  redirectTargets: Set<string>;
  /** IDs something else points at (parents, match sides, aggregate legs): never removed, so no row dangles. */
  referenced: Set<string>;
}

/** The changes chosen, and the random stream the writing passes go on drawing from (in this order). */
interface Changes {
  rng: Rng;
  idKey: number;
  /** Loser → survivor. */
  merged: Map<string, string>;
  survivors: Set<string>;
  tombstoned: Set<string>;
  /** Relabelled ID → its old label (empty until the entities pass reads it). */
  relabelled: Map<string, string>;
  /** Relabelled ID → its new label (filled by the entities pass). */
  relabelledTo: Map<string, string>;
  statusChanged: Set<string>;
  bridgeAdded: string[];
  bridgeRemoved: Set<string>;
  rescored: Set<string>;
  rescheduled: Set<string>;
  added: NewEntity[];
  /** Merged or tombstoned. */
  removed(id: string): boolean;
}

/** Providers with a private notice batch, and per provider a sample of live bridges to make new findings about. */
interface NoticeSample {
  providers: string[];
  subjects: Map<string, NoticeSubject[]>;
  /** Filled after the bridges pass: the sampled subjects by register ID, so the entities pass can label them. */
  byId: Map<string, NoticeSubject[]>;
}

/** What a writing pass works with. */
interface Pass {
  w: ReleaseWriter;
  prior: Prior;
  pop: Population;
  ch: Changes;
}

export async function deriveSuccessor(options: SuccessorOptions): Promise<ReleaseManifest> {
  const stamp = basename(options.out);
  const generatedAt = stampToIso(stamp);
  const prior = await openPrior(options, stamp);
  const pop = await readPopulation(prior);
  const ch = chooseChanges(pop, options.seed, stamp);
  const notices = noticeSample(prior.manifest);
  const w = await ReleaseWriter.create(options.out, {
    stamp, generatedAt, tier: prior.manifest.tier ?? 'public_bridge_v1', publishable: prior.manifest.publishable ?? true, prior: prior.manifest.stamp,
    gzipLevel: options.gzipLevel, overwrite: options.overwrite,
    // About as many rows as the prior: a successor changes about 1% of them.
    progress: options.progress, expectRows: Object.values(prior.manifest.row_counts ?? {}).reduce((n, rows) => n + rows, 0) || null,
  });
  try {
    const pass: Pass = { w, prior, pop, ch };
    const perProvider = await writeBridges(pass, notices);
    const typeCounts = await writeEntities(pass, notices);
    await writeTypeTables(pass);
    await writeAliases(pass);
    await writeEntityKeyedTables(pass);
    await writeRelationships(pass);
    await writeRedirects(pass);
    await copyTable(pass, 'providers');
    await writeCoverage(pass, stamp, typeCounts, perProvider);
    await writeNotices(pass, notices, options.seed, generatedAt);
    return await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  }
}

/** Opens the prior release: its manifest checked against the new stamp, its tables found. */
async function openPrior(options: SuccessorOptions, stamp: string): Promise<Prior> {
  const manifestPath = join(options.prior, 'release.json');
  if (!existsSync(manifestPath)) throw new RegisterError('generate', 'prior release has no release.json', options.prior);
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as PriorManifest;
  if (!(stamp > manifest.stamp)) {
    throw new RegisterError('generate', `new stamp ${stamp} must be later than the prior's ${manifest.stamp}`);
  }
  const table = (t: TableName): string | null => {
    for (const rel of [`csv/${t}.csv.gz`, `csv/${t}.csv`]) if (manifest.files[rel]) return join(options.prior, rel);
    return null;
  };
  if (!table('entities')) throw new RegisterError('generate', 'prior release lists no csv/entities.csv.gz', options.prior);

  let rowsRead = 0;
  options.progress?.follow(`read ${basename(options.prior)}`, null, () => rowsRead, 'rows');
  async function* rows(t: TableName): AsyncGenerator<string[][]> {
    const path = table(t);
    if (!path) return;
    let map: number[] | null = null;
    for await (const batch of readCsv(path, path.slice(options.prior.length + 1))) {
      rowsRead += batch.rows.length;
      map ??= TABLE_COLUMNS[t].map((c) => batch.header.indexOf(c));
      const m = map;
      yield batch.rows.map((r) => m.map((i) => (i < 0 ? '' : r[i])));
    }
  }
  return { dir: options.prior, manifest, table, rows };
}

/** Pass 1 over the prior: its live population, its redirects, and the IDs other rows point at. */
async function readPopulation(prior: Prior): Promise<Population> {
  const ids: string[] = [];
  const typeIx: number[] = [];
  const activeFlags: boolean[] = [];
  const index = new Map<string, number>();
  for await (const rows of prior.rows('entities')) {
    for (const r of rows) {
      const t = ENTITY_TYPES.indexOf(r[1] as EntityType);
      if (t < 0 || !REGISTER_ID.test(r[0])) continue; // the compiler reports these; a generator just skips them
      const id = own(r[0]);
      index.set(id, ids.length);
      ids.push(id);
      typeIx.push(t);
      activeFlags.push(r[2] === 'active');
    }
  }
  if (ids.length === 0) throw new RegisterError('generate', 'prior release has no entities', prior.dir);

  const redirects: string[][] = [];
  for await (const rows of prior.rows('redirects')) for (const r of rows) redirects.push(r.map(own));
  const redirectFrom = new Set(redirects.map((r) => r[0]));
  const redirectTargets = new Set(redirects.map((r) => r[1]).filter(Boolean));

  const referenced = new Set<string>();
  for await (const rows of prior.rows('relationships')) for (const r of rows) if (!referenced.has(r[1])) referenced.add(own(r[1]));
  for await (const rows of prior.rows('matches')) {
    for (const r of rows) {
      for (const c of [col('matches', 'home_id'), col('matches', 'away_id'), col('matches', 'aggregate_of')]) {
        if (r[c] && !referenced.has(r[c])) referenced.add(own(r[c]));
      }
    }
  }
  const byType = ENTITY_TYPES.map(() => [] as number[]);
  typeIx.forEach((t, i) => byType[t].push(i));
  return { ids, typeIx, activeFlags, index, byType, redirects, redirectFrom, redirectTargets, referenced };
}

/** Chooses every change from the seed: which IDs merge, vanish, change label or status or bridges, and what is new. */
function chooseChanges(pop: Population, seed: number | string, stamp: string): Changes {
  const { ids, typeIx, activeFlags, byType, referenced, redirectTargets } = pop;
  const n = ids.length;
  const rng = new Rng(seed, `successor/${stamp}`);
  const want = (k: keyof typeof CHANGE_RATES) => Math.max(CHANGE_RATES[k][1], Math.round(CHANGE_RATES[k][0] * n));
  const used = new Set<number>();
  const choose = (count: number, ok: (i: number) => boolean): number[] => {
    const out: number[] = [];
    for (let tries = 0; out.length < count && tries < 200 * count + 1000; tries++) {
      const i = rng.int(n);
      if (used.has(i) || !ok(i)) continue;
      used.add(i);
      out.push(i);
    }
    return out;
  };
  const removable = (i: number) => !referenced.has(ids[i]);
  // Duplicates that get merged, and names that get corrected, are mostly people and clubs; fall back to any type
  // when the prior has none (an imported register of clubs and matches, say).
  const prefer = (...choices: (readonly EntityType[])[]) => {
    for (const types of choices) {
      const ok = types.map((t) => ENTITY_TYPES.indexOf(t)).filter((t) => byType[t].length > 3);
      if (ok.length > 0) return (i: number) => ok.includes(typeIx[i]);
    }
    return () => true;
  };
  const people = prefer(['player', 'coach', 'referee'], ['team']);
  const named = prefer(['player', 'coach', 'referee', 'team', 'competition']);
  const merged = new Map<string, string>();
  for (const loser of choose(want('merged'), (i) => removable(i) && people(i) && byType[typeIx[i]].length > 3)) {
    const pool = byType[typeIx[loser]];
    for (let tries = 0; tries < 100; tries++) {
      const s = pool[rng.int(pool.length)];
      if (used.has(s)) continue;
      used.add(s); // the survivor stays live and unchanged otherwise
      merged.set(ids[loser], ids[s]);
      break;
    }
  }
  const survivors = new Set(merged.values());
  const tombstoned = new Set(choose(want('tombstoned'), (i) => removable(i) && !redirectTargets.has(ids[i])).map((i) => ids[i]));
  const relabelled = new Map<string, string>(choose(want('relabelled'), named).map((i) => [ids[i], '']));
  const statusChanged = new Set(choose(want('status'), (i) => activeFlags[i]).map((i) => ids[i]));
  const bridgeAdded = choose(want('bridgeAdded'), () => true).map((i) => ids[i]);
  const bridgeRemoved = new Set(choose(want('bridgeRemoved'), () => true).map((i) => ids[i]));
  // Matches whose score is corrected (score_updated) or that move to another day (fixture_updated).
  const isMatch = (i: number) => ENTITY_TYPES[typeIx[i]] === 'match';
  const rescored = new Set(choose(want('rescored'), isMatch).map((i) => ids[i]));
  const rescheduled = new Set(choose(want('rescheduled'), isMatch).map((i) => ids[i]));
  const idKey = saltOf(seed, `successor-id/${stamp}`);
  const added = newEntities(pop, rng, idKey, want('added'));
  return {
    rng, idKey, merged, survivors, tombstoned, relabelled, relabelledTo: new Map(), statusChanged, bridgeAdded, bridgeRemoved, rescored, rescheduled, added,
    removed: (id) => merged.has(id) || tombstoned.has(id),
  };
}

/** `count` new entities, of the kinds that appear between releases, weighted by the prior's own mix. */
function newEntities(pop: Population, rng: Rng, idKey: number, count: number): NewEntity[] {
  const { byType, typeIx, index, redirectFrom } = pop;
  const newTypes = NEW_TYPES.filter((t) => byType[ENTITY_TYPES.indexOf(t)].length > 0);
  const addTypes = newTypes.length > 0 ? newTypes : ENTITY_TYPES.filter((_, t) => byType[t].length > 0);
  const added: NewEntity[] = [];
  for (let k = 0; added.length < count; k++) {
    // Weighted by the prior's own mix, so a player-heavy register gains mostly players.
    let type = addTypes[rng.int(addTypes.length)];
    const sample = ENTITY_TYPES[typeIx[rng.int(pop.ids.length)]];
    if (addTypes.includes(sample)) type = sample;
    const id = 'r' + TYPE_LETTER[type] + feistelHex56(k, idKey);
    if (index.has(id) || redirectFrom.has(id)) continue;
    const draw = (d: number) => hash32(k * 8 + d, idKey);
    let label: string;
    let country: string;
    let short: string | null = null;
    if (PERSON.has(type)) {
      const p = personName(draw);
      label = p.label;
      country = type === 'referee' ? '' : p.country;
      short = p.short;
    } else if (type === 'team') {
      ({ label, country } = teamName(1_000_000 + k, draw, false));
    } else if (type === 'competition') {
      ({ label, country } = competitionName(1_000_000 + k, draw));
    } else {
      label = `New ${type} ${k + 1}`;
      country = '';
    }
    const gender = type === 'player' || type === 'coach' || type === 'team' || type === 'competition' ? 'male' : '';
    added.push({ id, type, label, country, gender, short, bridges: [] });
  }
  return added;
}

/** The prior's notice providers, each with an empty sample the bridges pass fills. */
function noticeSample(manifest: PriorManifest): NoticeSample {
  const providers = Object.keys(manifest.files)
    .map((p) => /^private\/notices\/([^/]+)\.json$/.exec(p)?.[1])
    .filter((p): p is string => !!p && manifest.files[`private/notices/${p}.json`].role === 'private')
    .sort();
  return { providers, subjects: new Map(providers.map((p) => [p, []])), byId: new Map() };
}

/**
 * bridges: merged entities' bridges move to the survivor; one bridge of each chosen entity is dropped; chosen
 * entities and new ones gain bridges shaped like the prior's. Samples live bridges for new notice findings.
 * Returns the bridges per provider.
 */
async function writeBridges({ w, prior, pop, ch }: Pass, notices: NoticeSample): Promise<Map<string, number>> {
  const { index, typeIx, ids } = pop;
  const { rng, idKey, merged, tombstoned, survivors, relabelled } = ch;
  let p: Promise<void> | undefined;
  const bw = w.table('bridges');
  const perProvider = new Map<string, number>();
  const count = (prov: string) => perProvider.set(prov, (perProvider.get(prov) ?? 0) + 1);
  const moved: string[][] = [];
  const survivorKeys = new Set<string>();
  const toRemove = new Set(ch.bridgeRemoved);
  /** Per entity type: the (provider, namespace) pairs in use, with one example ID to copy its shape from. */
  const shapes = ENTITY_TYPES.map(() => new Map<string, string>());
  let seen = 0;
  for await (const rows of prior.rows('bridges')) {
    for (const r of rows) {
      const id = r[3];
      if (tombstoned.has(id)) continue;
      if (merged.has(id)) {
        moved.push([own(r[0]), own(r[1]), own(r[2]), merged.get(id)!, own(r[4])]);
        continue;
      }
      if (toRemove.has(id)) {
        toRemove.delete(id);
        continue;
      }
      if (survivors.has(id)) survivorKeys.add(own(`${id}\u0000${r[0]}\u0000${r[1]}\u0000${r[2]}`));
      const ix = index.get(id);
      if (ix !== undefined) {
        const m = shapes[typeIx[ix]];
        const key = `${r[0]}\u0000${r[1]}`;
        if (!m.has(key) && m.size < 200) m.set(own(key), own(r[2]));
        const subs = notices.subjects.get(r[0]);
        if (subs && !relabelled.has(id)) {
          // Reservoir sample of this provider's live bridges, for new notice findings.
          seen++;
          const slot = subs.length < 8 ? subs.length : hash32(seen, idKey) % (seen + 1);
          if (slot < 8) {
            const sub: NoticeSubject = {
              reep_id: ids[ix], label: '', entity_type: ENTITY_TYPES[typeIx[ix]], provider: own(r[0]), namespace: own(r[1]), external_id: own(r[2]),
            };
            subs[slot] = sub;
          }
        }
      }
      count(r[0]);
      if ((p = bw.row(r))) await p;
    }
  }
  for (const r of moved) {
    if (survivorKeys.has(`${r[3]}\u0000${r[0]}\u0000${r[1]}\u0000${r[2]}`)) continue; // survivor already has it
    count(r[0]);
    if ((p = bw.row(r))) await p;
  }
  const newBridge = (type: EntityType, id: string, label: string): string[] | null => {
    const m = shapes[ENTITY_TYPES.indexOf(type)];
    // Slug-shaped IDs (Flashscore's `name/code`) need the entity's name, which is not held for existing entities.
    const keys = [...m.keys()].filter((k) => label || !m.get(k)!.includes('/')).sort();
    if (keys.length === 0) return null;
    const key = keys[rng.int(keys.length)];
    const [prov, ns] = key.split('\u0000');
    const example = m.get(key)!;
    let x: string;
    if (/^\d+$/.test(example)) x = String(100_000_000 + rng.int(900_000_000));
    else if (example.includes('/')) x = `${slugify(label)}/${Array.from({ length: 8 }, () => BASE62[rng.int(62)]).join('')}`;
    else x = rng.nextU32().toString(16).padStart(8, '0');
    return [prov, ns, x, id, rng.int(4) === 0 ? '' : 'id_crosswalk'];
  };
  for (const id of ch.bridgeAdded) {
    const b = newBridge(ENTITY_TYPES[typeIx[index.get(id)!]], id, '');
    if (!b) continue;
    count(b[0]);
    if ((p = bw.row(b))) await p;
  }
  for (const e of ch.added) {
    const k = 1 + rng.int(3);
    const provs = new Set<string>();
    for (let i = 0; i < k; i++) {
      const b = newBridge(e.type, e.id, e.label);
      if (!b || provs.has(b[0] + '\u0000' + b[1])) continue;
      provs.add(b[0] + '\u0000' + b[1]);
      e.bridges.push(b);
      count(b[0]);
      if ((p = bw.row(b))) await p;
    }
  }
  await w.closeTable(bw);
  for (const subs of notices.subjects.values()) for (const s of subs) notices.byId.set(s.reep_id, [...(notices.byId.get(s.reep_id) ?? []), s]);
  return perProvider;
}

/** entities: removed IDs go, chosen ones get a new label or status, new ones are appended. Returns entities per type. */
async function writeEntities({ w, prior, pop, ch }: Pass, notices: NoticeSample): Promise<Map<string, number>> {
  let p: Promise<void> | undefined;
  const ew = w.table('entities');
  const typeCounts = new Map<string, number>();
  for await (const rows of prior.rows('entities')) {
    for (const r of rows) {
      const id = r[0];
      if (ch.removed(id)) continue;
      if (ch.relabelled.has(id)) {
        const t = isEntityType(r[1]) ? r[1] : 'player';
        const label = relabel(r[3], t, hash32(pop.index.get(id) ?? 0, ch.idKey));
        ch.relabelled.set(id, own(r[3])); // remember the old label: it becomes an alias
        r[3] = label;
        ch.relabelledTo.set(id, own(label));
      }
      if (ch.statusChanged.has(id)) r[2] = 'inactive';
      for (const s of notices.byId.get(id) ?? []) s.label = own(r[3]);
      typeCounts.set(r[1], (typeCounts.get(r[1]) ?? 0) + 1);
      if ((p = ew.row(r))) await p;
    }
  }
  for (const e of ch.added) {
    const nb = e.bridges.length;
    typeCounts.set(e.type, (typeCounts.get(e.type) ?? 0) + 1);
    if ((p = ew.row([e.id, e.type, 'active', e.label, e.gender, e.country, nb >= 2 ? 'C' : 'D', String(nb), nb ? 'tier_2' : '']))) await p;
  }
  await w.closeTable(ew);
  return typeCounts;
}

/** The per-type tables: the entities pass's labels and statuses, corrected and moved matches, new entities' rows. */
async function writeTypeTables({ w, prior, ch }: Pass): Promise<void> {
  let p: Promise<void> | undefined;
  for (const type of ENTITY_TYPES) {
    const table = TYPE_TABLE[type];
    const mine = ch.added.filter((e) => e.type === type);
    if (!prior.table(table) && mine.length === 0) continue;
    const tw = w.table(table);
    const cols = TABLE_COLUMNS[table] as readonly string[];
    const labelAt = cols.indexOf('label');
    const statusAt = cols.indexOf('status');
    for await (const rows of prior.rows(table)) {
      for (const r of rows) {
        if (ch.removed(r[0])) continue;
        const label = ch.relabelledTo.get(r[0]);
        if (label !== undefined) r[labelAt] = label;
        if (ch.statusChanged.has(r[0])) r[statusAt] = 'inactive';
        if (type === 'match') changeFixture(r, ch.rescored.has(r[0]), ch.rescheduled.has(r[0]));
        if ((p = tw.row(r))) await p;
      }
    }
    for (const e of mine) {
      const values: Record<string, string> = { reep_id: e.id, status: 'active', label: e.label, gender: e.gender, country: e.country };
      if ((p = tw.row(cols.map((c) => values[c] ?? '')))) await p;
    }
    await w.closeTable(tw);
  }
}

/** aliases: a merged entity's names move to the survivor; a relabelled entity keeps its old name as an alias. */
async function writeAliases({ w, prior, ch }: Pass): Promise<void> {
  if (!prior.table('aliases') && ch.added.length === 0) return;
  let p: Promise<void> | undefined;
  const aw = w.table('aliases');
  for await (const rows of prior.rows('aliases')) {
    for (const r of rows) {
      if (ch.tombstoned.has(r[0])) continue;
      if (ch.merged.has(r[0])) {
        r[0] = ch.merged.get(r[0])!;
        r[3] = '';
      }
      if ((p = aw.row(r))) await p;
    }
  }
  for (const [id, old] of ch.relabelled) if (old) if ((p = aw.row([id, old, 'secondary', '', '']))) await p;
  for (const e of ch.added) {
    if ((p = aw.row([e.id, e.label, 'full', '1', '']))) await p;
    if (e.short && e.short !== e.label) if ((p = aw.row([e.id, e.short, 'short', '2', '']))) await p;
  }
  await w.closeTable(aw);
}

/** Tables keyed by one entity: rows of removed entities go. */
async function writeEntityKeyedTables({ w, prior, ch }: Pass): Promise<void> {
  let p: Promise<void> | undefined;
  for (const t of ['overlay_links', 'overlay_aliases', 'overlay_xids', 'observed_clubs'] as const) {
    if (!prior.table(t)) continue;
    const tw = w.table(t);
    for await (const rows of prior.rows(t)) {
      for (const r of rows) {
        if (ch.removed(r[0])) continue;
        if ((p = tw.row(r))) await p;
      }
    }
    await w.closeTable(tw);
  }
}

/** relationships: a removed entity's go; one pointing at a merged entity points at its survivor. */
async function writeRelationships({ w, prior, ch }: Pass): Promise<void> {
  if (!prior.table('relationships')) return;
  let p: Promise<void> | undefined;
  const rw = w.table('relationships');
  for await (const rows of prior.rows('relationships')) {
    for (const r of rows) {
      if (ch.removed(r[0])) continue;
      if (ch.merged.has(r[1])) r[1] = ch.merged.get(r[1])!;
      if ((p = rw.row(r))) await p;
    }
  }
  await w.closeTable(rw);
}

/** redirects: every prior redirect stays (IDs never vanish), plus this release's merges and tombstones. */
async function writeRedirects({ w, pop, ch }: Pass): Promise<void> {
  const redirects = [...pop.redirects];
  for (const [from, to] of [...ch.merged].sort()) redirects.push([from, to, 'merged']);
  for (const from of [...ch.tombstoned].sort()) redirects.push([from, '', 'de_corroborated']);
  await w.writeTable('redirects', redirects);
}

/** A prior table copied as it is. */
async function copyTable({ w, prior }: Pass, t: TableName): Promise<void> {
  if (!prior.table(t)) return;
  let p: Promise<void> | undefined;
  const tw = w.table(t);
  for await (const rows of prior.rows(t)) for (const r of rows) if ((p = tw.row(r))) await p;
  await w.closeTable(tw);
}

/** coverage: the new release's own counts. */
async function writeCoverage({ w, prior }: Pass, stamp: string, typeCounts: Map<string, number>, perProvider: Map<string, number>): Promise<void> {
  const coverage: string[][] = [['release', 'stamp', stamp], ['release', 'prior', prior.manifest.stamp], ['release', 'entities', String(w.rowsOf('entities'))]];
  for (const t of [...typeCounts.keys()].sort()) coverage.push(['entities', t, String(typeCounts.get(t))]);
  for (const t of ['bridges', 'aliases', 'relationships', 'redirects', 'overlay_links', 'overlay_aliases', 'overlay_xids', 'observed_clubs'] as const) {
    coverage.push(['tables', t, String(w.rowsOf(t))]);
  }
  for (const prov of [...perProvider.keys()].sort()) coverage.push(['bridges_by_provider', prov, String(perProvider.get(prov))]);
  await w.writeTable('coverage', coverage);
}

/** Each provider's next notice batch: most findings persist, some were fixed, none survive their entity; a few new. */
async function writeNotices({ w, prior, ch }: Pass, notices: NoticeSample, seed: number | string, generatedAt: string): Promise<void> {
  for (const provider of notices.providers) {
    const old = JSON.parse(await readFile(join(prior.dir, `private/notices/${provider}.json`), 'utf8')) as NoticeBatch;
    const findings: NoticeFindingRecord[] = [];
    for (const f of old.findings ?? []) {
      // Most findings persist (same ID, first_seen_at kept); some were fixed; none survive their entity.
      const subject = String((f.payload as { reep_id?: unknown })?.reep_id ?? '');
      if (ch.removed(subject) || hash32(Number.parseInt(f.payload_hash.slice(0, 8), 16) || 0, ch.idKey) % 10 < 3) continue;
      findings.push({ ...f, last_seen_at: generatedAt });
    }
    const have = new Set(findings.map((f) => f.finding_id));
    for (const [k, s] of (notices.subjects.get(provider) ?? []).entries()) {
      if (!s.label || k >= 3) continue;
      const f = makeFinding(seed, s, kindFor(s, hash32(k, ch.idKey)), generatedAt);
      if (!have.has(f.finding_id)) findings.push({ ...f, first_seen_at: generatedAt });
    }
    const batch: NoticeBatch = { provider, batch_id: (old.batch_id ?? 0) + 1, generated_at: generatedAt, findings };
    await w.writeFile(`private/notices/${provider}.json`, noticeBatchJson(batch), 'private');
  }
}
