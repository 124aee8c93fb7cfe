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

export async function deriveSuccessor(options: SuccessorOptions): Promise<ReleaseManifest> {
  const stamp = basename(options.out);
  const generatedAt = stampToIso(stamp);
  const manifestPath = join(options.prior, 'release.json');
  if (!existsSync(manifestPath)) throw new RegisterError('generate', 'prior release has no release.json', options.prior);
  const prior = JSON.parse(await readFile(manifestPath, 'utf8')) as PriorManifest;
  if (!(stamp > prior.stamp)) {
    throw new RegisterError('generate', `new stamp ${stamp} must be later than the prior's ${prior.stamp}`);
  }
  const priorTable = (t: TableName): string | null => {
    for (const rel of [`csv/${t}.csv.gz`, `csv/${t}.csv`]) if (prior.files[rel]) return join(options.prior, rel);
    return null;
  };
  const entitiesPath = priorTable('entities');
  if (!entitiesPath) throw new RegisterError('generate', 'prior release lists no csv/entities.csv.gz', options.prior);

  let rowsRead = 0;
  options.progress?.follow(`read ${basename(options.prior)}`, null, () => rowsRead, 'rows');
  /** Streams a prior table as rows in this table's published column order (absent columns read as empty). */
  async function* rowsOf(t: TableName): AsyncGenerator<string[][]> {
    const path = priorTable(t);
    if (!path) return;
    let map: number[] | null = null;
    for await (const batch of readCsv(path, path.slice(options.prior.length + 1))) {
      rowsRead += batch.rows.length;
      map ??= TABLE_COLUMNS[t].map((c) => batch.header.indexOf(c));
      const m = map;
      yield batch.rows.map((r) => m.map((i) => (i < 0 ? '' : r[i])));
    }
  }

  // Pass 1: the live population, held as IDs plus a type byte each (fine up to a few million IDs).
  const ids: string[] = [];
  const typeIx: number[] = [];
  const activeFlags: boolean[] = [];
  const index = new Map<string, number>();
  for await (const rows of rowsOf('entities')) {
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
  const n = ids.length;
  if (n === 0) throw new RegisterError('generate', 'prior release has no entities', options.prior);

  const priorRedirects: string[][] = [];
  for await (const rows of rowsOf('redirects')) for (const r of rows) priorRedirects.push(r.map(own));
  const redirectFrom = new Set(priorRedirects.map((r) => r[0]));
  const redirectTargets = new Set(priorRedirects.map((r) => r[1]).filter(Boolean));

  // IDs something else points at (parents, match sides, aggregate legs) are never removed, so no row dangles.
  const referenced = new Set<string>();
  for await (const rows of rowsOf('relationships')) for (const r of rows) if (!referenced.has(r[1])) referenced.add(own(r[1]));
  for await (const rows of rowsOf('matches')) {
    for (const r of rows) {
      for (const c of [col('matches', 'home_id'), col('matches', 'away_id'), col('matches', 'aggregate_of')]) {
        if (r[c] && !referenced.has(r[c])) referenced.add(own(r[c]));
      }
    }
  }

  // Choose the changes.
  const rng = new Rng(options.seed, `successor/${stamp}`);
  const want = (k: keyof typeof CHANGE_RATES) => Math.max(CHANGE_RATES[k][1], Math.round(CHANGE_RATES[k][0] * n));
  const used = new Set<number>();
  const byType = ENTITY_TYPES.map(() => [] as number[]);
  typeIx.forEach((t, i) => byType[t].push(i));
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
  const relabelledTo = new Map<string, string>();
  const statusChanged = new Set(choose(want('status'), (i) => activeFlags[i]).map((i) => ids[i]));
  const bridgeAdded = choose(want('bridgeAdded'), () => true).map((i) => ids[i]);
  const bridgeRemoved = new Set(choose(want('bridgeRemoved'), () => true).map((i) => ids[i]));
  const removed = (id: string) => merged.has(id) || tombstoned.has(id);
  // Matches whose score is corrected (score_updated) or that move to another day (fixture_updated).
  const isMatch = (i: number) => ENTITY_TYPES[typeIx[i]] === 'match';
  const rescored = new Set(choose(want('rescored'), isMatch).map((i) => ids[i]));
  const rescheduled = new Set(choose(want('rescheduled'), isMatch).map((i) => ids[i]));

  const newTypes = NEW_TYPES.filter((t) => byType[ENTITY_TYPES.indexOf(t)].length > 0);
  const addTypes = newTypes.length > 0 ? newTypes : ENTITY_TYPES.filter((_, t) => byType[t].length > 0);
  const idKey = saltOf(options.seed, `successor-id/${stamp}`);
  const added: NewEntity[] = [];
  for (let k = 0; added.length < want('added'); k++) {
    // Weighted by the prior's own mix, so a player-heavy register gains mostly players.
    let type = addTypes[rng.int(addTypes.length)];
    const sample = ENTITY_TYPES[typeIx[rng.int(n)]];
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

  const noticeProviders = Object.keys(prior.files)
    .map((p) => /^private\/notices\/([^/]+)\.json$/.exec(p)?.[1])
    .filter((p): p is string => !!p && prior.files[`private/notices/${p}.json`].role === 'private')
    .sort();
  const subjects = new Map<string, NoticeSubject[]>(noticeProviders.map((p) => [p, []]));
  const subjectsById = new Map<string, NoticeSubject[]>();

  const w = await ReleaseWriter.create(options.out, {
    stamp, generatedAt, tier: prior.tier ?? 'public_bridge_v1', publishable: prior.publishable ?? true, prior: prior.stamp,
    gzipLevel: options.gzipLevel, overwrite: options.overwrite,
    // About as many rows as the prior: a successor changes about 1% of them.
    progress: options.progress, expectRows: Object.values(prior.row_counts ?? {}).reduce((n, rows) => n + rows, 0) || null,
  });
  try {
    let p: Promise<void> | undefined;

    // bridges: merged entities' bridges move to the survivor; one bridge of each chosen entity is dropped.
    const bw = w.table('bridges');
    const perProvider = new Map<string, number>();
    const count = (prov: string) => perProvider.set(prov, (perProvider.get(prov) ?? 0) + 1);
    const moved: string[][] = [];
    const survivorKeys = new Set<string>();
    const toRemove = new Set(bridgeRemoved);
    /** Per entity type: the (provider, namespace) pairs in use, with one example ID to copy its shape from. */
    const shapes = ENTITY_TYPES.map(() => new Map<string, string>());
    let seen = 0;
    for await (const rows of rowsOf('bridges')) {
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
          const subs = subjects.get(r[0]);
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
    for (const id of bridgeAdded) {
      const b = newBridge(ENTITY_TYPES[typeIx[index.get(id)!]], id, '');
      if (!b) continue;
      count(b[0]);
      if ((p = bw.row(b))) await p;
    }
    for (const e of added) {
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
    for (const subs of subjects.values()) for (const s of subs) subjectsById.set(s.reep_id, [...(subjectsById.get(s.reep_id) ?? []), s]);

    // entities and the per-type tables
    const ew = w.table('entities');
    const typeCounts = new Map<string, number>();
    for await (const rows of rowsOf('entities')) {
      for (const r of rows) {
        const id = r[0];
        if (removed(id)) continue;
        if (relabelled.has(id)) {
          const t = isEntityType(r[1]) ? r[1] : 'player';
          const label = relabel(r[3], t, hash32(index.get(id) ?? 0, idKey));
          relabelled.set(id, own(r[3])); // remember the old label: it becomes an alias
          r[3] = label;
          relabelledTo.set(id, own(label));
        }
        if (statusChanged.has(id)) r[2] = 'inactive';
        for (const s of subjectsById.get(id) ?? []) s.label = own(r[3]);
        typeCounts.set(r[1], (typeCounts.get(r[1]) ?? 0) + 1);
        if ((p = ew.row(r))) await p;
      }
    }
    for (const e of added) {
      const nb = e.bridges.length;
      typeCounts.set(e.type, (typeCounts.get(e.type) ?? 0) + 1);
      if ((p = ew.row([e.id, e.type, 'active', e.label, e.gender, e.country, nb >= 2 ? 'C' : 'D', String(nb), nb ? 'tier_2' : '']))) await p;
    }
    await w.closeTable(ew);

    for (const type of ENTITY_TYPES) {
      const table = TYPE_TABLE[type];
      const mine = added.filter((e) => e.type === type);
      if (!priorTable(table) && mine.length === 0) continue;
      const tw = w.table(table);
      const cols = TABLE_COLUMNS[table] as readonly string[];
      const labelAt = cols.indexOf('label');
      const statusAt = cols.indexOf('status');
      for await (const rows of rowsOf(table)) {
        for (const r of rows) {
          if (removed(r[0])) continue;
          const label = relabelledTo.get(r[0]);
          if (label !== undefined) r[labelAt] = label;
          if (statusChanged.has(r[0])) r[statusAt] = 'inactive';
          if (type === 'match') changeFixture(r, rescored.has(r[0]), rescheduled.has(r[0]));
          if ((p = tw.row(r))) await p;
        }
      }
      for (const e of mine) {
        const values: Record<string, string> = { reep_id: e.id, status: 'active', label: e.label, gender: e.gender, country: e.country };
        if ((p = tw.row(cols.map((c) => values[c] ?? '')))) await p;
      }
      await w.closeTable(tw);
    }

    // aliases: a merged entity's names move to the survivor; a relabelled entity keeps its old name as an alias.
    if (priorTable('aliases') || added.length > 0) {
      const aw = w.table('aliases');
      for await (const rows of rowsOf('aliases')) {
        for (const r of rows) {
          if (tombstoned.has(r[0])) continue;
          if (merged.has(r[0])) {
            r[0] = merged.get(r[0])!;
            r[3] = '';
          }
          if ((p = aw.row(r))) await p;
        }
      }
      for (const [id, old] of relabelled) if (old) if ((p = aw.row([id, old, 'secondary', '', '']))) await p;
      for (const e of added) {
        if ((p = aw.row([e.id, e.label, 'full', '1', '']))) await p;
        if (e.short && e.short !== e.label) if ((p = aw.row([e.id, e.short, 'short', '2', '']))) await p;
      }
      await w.closeTable(aw);
    }

    // tables keyed by one entity: rows of removed entities go
    for (const t of ['overlay_links', 'overlay_aliases', 'overlay_xids', 'observed_clubs'] as const) {
      if (!priorTable(t)) continue;
      const tw = w.table(t);
      for await (const rows of rowsOf(t)) {
        for (const r of rows) {
          if (removed(r[0])) continue;
          if ((p = tw.row(r))) await p;
        }
      }
      await w.closeTable(tw);
    }

    if (priorTable('relationships')) {
      const rw = w.table('relationships');
      for await (const rows of rowsOf('relationships')) {
        for (const r of rows) {
          if (removed(r[0])) continue;
          if (merged.has(r[1])) r[1] = merged.get(r[1])!;
          if ((p = rw.row(r))) await p;
        }
      }
      await w.closeTable(rw);
    }

    // redirects: every prior redirect stays (IDs never vanish), plus this release's merges and tombstones
    const redirects = [...priorRedirects];
    for (const [from, to] of [...merged].sort()) redirects.push([from, to, 'merged']);
    for (const from of [...tombstoned].sort()) redirects.push([from, '', 'de_corroborated']);
    await w.writeTable('redirects', redirects);

    if (priorTable('providers')) {
      const pw = w.table('providers');
      for await (const rows of rowsOf('providers')) for (const r of rows) if ((p = pw.row(r))) await p;
      await w.closeTable(pw);
    }

    const coverage: string[][] = [['release', 'stamp', stamp], ['release', 'prior', prior.stamp], ['release', 'entities', String(w.rowsOf('entities'))]];
    for (const t of [...typeCounts.keys()].sort()) coverage.push(['entities', t, String(typeCounts.get(t))]);
    for (const t of ['bridges', 'aliases', 'relationships', 'redirects', 'overlay_links', 'overlay_aliases', 'overlay_xids', 'observed_clubs'] as const) {
      coverage.push(['tables', t, String(w.rowsOf(t))]);
    }
    for (const prov of [...perProvider.keys()].sort()) coverage.push(['bridges_by_provider', prov, String(perProvider.get(prov))]);
    await w.writeTable('coverage', coverage);

    for (const provider of noticeProviders) {
      const old = JSON.parse(await readFile(join(options.prior, `private/notices/${provider}.json`), 'utf8')) as NoticeBatch;
      const findings: NoticeFindingRecord[] = [];
      for (const f of old.findings ?? []) {
        // Most findings persist (same ID, first_seen_at kept); some were fixed; none survive their entity.
        const subject = String((f.payload as { reep_id?: unknown })?.reep_id ?? '');
        if (removed(subject) || hash32(Number.parseInt(f.payload_hash.slice(0, 8), 16) || 0, idKey) % 10 < 3) continue;
        findings.push({ ...f, last_seen_at: generatedAt });
      }
      const have = new Set(findings.map((f) => f.finding_id));
      for (const [k, s] of (subjects.get(provider) ?? []).entries()) {
        if (!s.label || k >= 3) continue;
        const f = makeFinding(options.seed, s, kindFor(s, hash32(k, idKey)), generatedAt);
        if (!have.has(f.finding_id)) findings.push({ ...f, first_seen_at: generatedAt });
      }
      const batch: NoticeBatch = { provider, batch_id: (old.batch_id ?? 0) + 1, generated_at: generatedAt, findings };
      await w.writeFile(`private/notices/${provider}.json`, noticeBatchJson(batch), 'private');
    }
    return await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  }
}
