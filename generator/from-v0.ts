// Converts the real v0 register (teams, competitions, seasons, a match sample; CC0) into a bridge-register-v1
// release, keeping its quirks: ambiguous provider IDs, QID-only names, Flashscore IDs with slashes, empty cells.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import type { EntityType } from '../common/ids.ts';
import { readCsv } from './csv.ts';
import { ReleaseWriter, stampToIso, type ReleaseManifest } from './release-writer.ts';
import { TYPE_LETTER } from './tables.ts';
import { applyDemoEdits } from './v0-demo-edits.ts';

/** Where the v0 register lives relative to the project root (the CLI's working directory). */
export const DEFAULT_V0_DIR = '../shared/real-data/v0-register';

export interface ImportV0Options {
  /** Directory holding teams.csv, competitions.csv, seasons.csv, match_dictionary.csv. Default DEFAULT_V0_DIR. */
  from?: string;
  /** Release directory to create; its basename is the stamp unless `stamp` is given. */
  out: string;
  /** Release stamp. Default: basename of `out`. */
  stamp?: string;
  /** gzip level. Default 6. */
  gzipLevel?: number;
  /** Replace an existing directory. Default false. */
  overwrite?: boolean;
  /**
   * An earlier release of the same register (an import before this one): the new release names it as its `prior`,
   * keeps its redirects, and tombstones each ID it published that this import no longer mints, so no ID vanishes.
   */
  prior?: string;
  /** With `prior`: apply the documented demonstration edits of v0-demo-edits.ts. Default false. */
  demoEdits?: boolean;
  /** Where the demonstration edits are described, one line each. Default none. */
  onEdit?: (line: string) => void;
}

/** What a successor must keep of its prior: the stamp, every ID it published, and its redirect rows. */
interface PriorRelease {
  stamp: string;
  ids: Set<string>;
  redirects: string[][];
}

/** Reads the prior release's stamp, published IDs (live and redirected) and redirect rows. */
async function readPrior(dir: string, stamp: string): Promise<PriorRelease> {
  const manifestPath = join(dir, 'release.json');
  if (!existsSync(manifestPath)) throw new RegisterError('import-v0', 'prior release has no release.json', dir);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { stamp?: string; files?: Record<string, unknown> };
  const priorStamp = String(manifest.stamp ?? '');
  if (!(stamp > priorStamp)) throw new RegisterError('import-v0', `new stamp ${stamp} must be later than the prior's ${priorStamp}`, manifestPath);
  const table = (name: string): string | null => {
    for (const rel of [`csv/${name}.csv.gz`, `csv/${name}.csv`]) if (manifest.files?.[rel]) return join(dir, rel);
    return null;
  };
  const ids = new Set<string>();
  const redirects: string[][] = [];
  const entities = table('entities');
  if (!entities) throw new RegisterError('import-v0', 'prior release lists no csv/entities.csv.gz', dir);
  for await (const { header, rows } of readCsv(entities)) {
    const at = header.indexOf('reep_id');
    for (const r of rows) ids.add(r[at]);
  }
  const redirectsPath = table('redirects');
  if (redirectsPath) {
    for await (const { header, rows } of readCsv(redirectsPath)) {
      const at = ['from_id', 'to_id', 'reason'].map((c) => header.indexOf(c));
      for (const r of rows) {
        redirects.push(at.map((i) => r[i] ?? ''));
        ids.add(r[at[0]]);
      }
    }
  }
  return { stamp: priorStamp, ids, redirects };
}

/**
 * The successor's redirect rows: the prior's, less any whose ID is live again, and a `de_corroborated` tombstone
 * for each ID the prior published that is neither live now nor redirected (a team dropped from v0, say).
 */
function carriedRedirects(prior: PriorRelease, live: ReadonlySet<string>, added: readonly string[][]): string[][] {
  const out = prior.redirects.filter((r) => !live.has(r[0]));
  for (const r of added) if (!out.some((o) => o[0] === r[0])) out.push(r);
  const redirected = new Set(out.map((r) => r[0]));
  // A merge whose survivor is gone now ends at a tombstone, which is what the compiler makes of such a chain.
  for (const id of [...prior.ids].sort()) if (!live.has(id) && !redirected.has(id)) out.push([id, '', 'de_corroborated']);
  return out;
}

/** Match-ID columns of match_dictionary.csv and the provider each belongs to (fbref's comes from MatchURL). */
const MATCH_PROVIDER_COLUMNS: readonly [string, string][] = [
  ['fotmob_match_id', 'fotmob'],
  ['understat_match_id', 'understat'],
  ['sofascore_match_id', 'sofascore'],
  ['espn_match_id', 'espn'],
];
const QID = /^Q[1-9][0-9]*$/;

type Row = Record<string, string>;

async function readTable(dir: string, file: string): Promise<Row[]> {
  const path = join(dir, file);
  if (!existsSync(path)) throw new RegisterError('import-v0', 'file not found', path);
  const out: Row[] = [];
  for await (const { header, rows } of readCsv(path, file)) {
    for (const r of rows) out.push(Object.fromEntries(header.map((h, i) => [h, r[i]])));
  }
  return out;
}

/** Transfermarkt partitions its IDs; the v0 files hold clubs (`verein`) and competitions (`wettbewerb`). */
const namespaceFor = (provider: string, type: EntityType): string =>
  provider !== 'transfermarkt' ? '' : type === 'team' ? 'verein' : type === 'competition' ? 'wettbewerb' : '';

/** Is `inner` found in `outer` as whole words (not glued to a letter or digit on either side)? */
function containsWords(outer: string, inner: string): boolean {
  const edge = /[\p{L}\p{N}]/u;
  for (let at = outer.indexOf(inner); at >= 0; at = outer.indexOf(inner, at + 1)) {
    const before = at === 0 ? '' : outer[at - 1];
    const after = outer[at + inner.length] ?? '';
    if (!edge.test(before) && !edge.test(after)) return true;
  }
  return false;
}

export async function importV0(options: ImportV0Options): Promise<ReleaseManifest> {
  if (options.demoEdits && !options.prior) throw new RegisterError('import-v0', 'demonstration edits need a prior release to differ from (--prior)');
  const from = options.from ?? DEFAULT_V0_DIR;
  const stamp = options.stamp ?? basename(options.out);
  const generatedAt = stampToIso(stamp);
  const [teams, competitions, seasons, matches] = await Promise.all(
    ['teams.csv', 'competitions.csv', 'seasons.csv', 'match_dictionary.csv'].map((f) => readTable(from, f)),
  );

  // Register IDs are minted from a hash of the v0 ID (a match: of its FBref URL), so re-imports give the same IDs.
  const minted = new Map<string, string>();
  const mint = (type: EntityType, key: string): string => {
    const id = 'r' + TYPE_LETTER[type] + createHash('sha256').update(key).digest('hex').slice(0, 14);
    const had = minted.get(id);
    if (had !== undefined && had !== key) throw new RegisterError('import-v0', `register ID collision between ${had} and ${key}`);
    minted.set(id, key);
    return id;
  };

  const entities: string[][] = [];
  const teamRows: string[][] = [];
  const competitionRows: string[][] = [];
  const seasonRows: string[][] = [];
  const matchRows: string[][] = [];
  const bridges: string[][] = [];
  const overlay: string[][] = [];
  const relationships: string[][] = [];
  const seenV0 = new Set<string>();
  let skipped = 0;

  const bridge = (provider: string, type: EntityType, externalId: string, id: string) => {
    if (!externalId) return;
    bridges.push([provider, namespaceFor(provider, type), externalId, id, '']);
  };
  const entity = (type: EntityType, id: string, label: string, country: string, qid: string) => {
    entities.push([id, type, 'active', label, '', country, '', '', '']);
    if (QID.test(qid)) overlay.push([id, qid, '', '', type, '0', '[]']);
  };
  /** One bridge per `key_<provider>` column; the QID column feeds the overlay instead (never a bridge). */
  const keyColumns = (row: Row) => Object.keys(row).filter((k) => k.startsWith('key_') && k !== 'key_wikidata');

  const teamIdsByName = new Map<string, { id: string; fbref: boolean; bridged: boolean }[]>();
  for (const t of teams) {
    if (!t.reep_id || seenV0.has(t.reep_id)) {
      skipped++;
      continue;
    }
    seenV0.add(t.reep_id);
    const id = mint('team', t.reep_id);
    entity('team', id, t.name, t.country ?? '', t.key_wikidata ?? '');
    teamRows.push([id, 'active', t.name, '', t.country ?? '']);
    const keys = keyColumns(t);
    for (const k of keys) bridge(k.slice(4), 'team', t[k], id);
    const list = teamIdsByName.get(t.name) ?? [];
    list.push({ id, fbref: !!t.key_fbref, bridged: keys.some((k) => !!t[k]) });
    teamIdsByName.set(t.name, list);
  }

  const comps: { id: string; name: string; bridges: number; order: number }[] = [];
  for (const c of competitions) {
    if (!c.reep_id || seenV0.has(c.reep_id)) {
      skipped++;
      continue;
    }
    seenV0.add(c.reep_id);
    const id = mint('competition', c.reep_id);
    entity('competition', id, c.name, c.country ?? '', c.key_wikidata ?? '');
    competitionRows.push([id, 'active', c.name, '', c.country ?? '']);
    const keys = keyColumns(c);
    for (const k of keys) bridge(k.slice(4), 'competition', c[k], id);
    comps.push({ id, name: c.name, bridges: keys.filter((k) => !!c[k]).length, order: comps.length });
  }

  // competition_reep_id is empty throughout v0: the parent is the competition whose name the season's name contains
  // (longest name first, so "2. Bundesliga" beats "Bundesliga"; on a tie the better-bridged one, e.g. the English
  // "Premier League" over the Ukrainian one).
  const byPreference = [...comps].sort((a, b) => b.name.length - a.name.length || b.bridges - a.bridges || a.order - b.order);
  for (const s of seasons) {
    if (!s.reep_id || seenV0.has(s.reep_id)) {
      skipped++;
      continue;
    }
    seenV0.add(s.reep_id);
    const id = mint('season', s.reep_id);
    entity('season', id, s.name, '', s.key_wikidata ?? '');
    seasonRows.push([id, 'active', s.name]);
    const parent = s.competition_reep_id
      ? comps.find((c) => c.id === mint('competition', s.competition_reep_id))
      : byPreference.find((c) => c.name && containsWords(s.name, c.name));
    if (parent) relationships.push([id, parent.id, 'season_of']);
  }

  // FBref names a side by its short name ("Arsenal"); only a club FBref itself knows, or failing that a club some
  // provider knows, is trusted with that exact name (the only club named "Arsenal" in v0 is Lesotho's, unbridged).
  const resolveTeam = (name: string): string => {
    const all = teamIdsByName.get(name) ?? [];
    const fb = all.filter((t) => t.fbref);
    if (fb.length === 1) return fb[0].id;
    if (fb.length > 1) return '';
    const bridged = all.filter((t) => t.bridged);
    return bridged.length === 1 ? bridged[0].id : '';
  };
  const seenMatches = new Set<string>();
  for (const m of matches) {
    const url = m.MatchURL ?? '';
    const fbref = /\/matches\/([0-9a-f]+)(?:\/|$)/.exec(url)?.[1] ?? '';
    if (!url || seenMatches.has(url)) {
      skipped++;
      continue;
    }
    seenMatches.add(url);
    const id = mint('match', url);
    const home = m.fbref_home_team ?? '';
    const away = m.fbref_away_team ?? '';
    const label = home && away ? `${home} v ${away}` : m.matchup || url;
    entity('match', id, label, '', '');
    const hs = m.home_goals ?? '';
    const as = m.away_goals ?? '';
    // v0 holds FBref's goals and nothing on how they were reached: a scored match's result_form is `unknown` (not
    // `regular`, which v0 cannot tell from extra time) and its score_basis `single_source` (FBref alone, nothing
    // corroborated). No score, no form or basis; v0 has no shoot-out, leg or aggregate columns, so those stay empty.
    const scored = hs !== '' && as !== '';
    matchRows.push([
      id, 'active', label, hs, as, scored ? 'unknown' : '', '', '', scored ? 'single_source' : '', resolveTeam(home), resolveTeam(away),
      m.date ?? '', '', '', scored ? 'played' : '',
    ]);
    bridge('fbref', 'match', fbref, id);
    for (const [column, provider] of MATCH_PROVIDER_COLUMNS) bridge(provider, 'match', m[column] ?? '', id);
  }

  const prior = options.prior ? await readPrior(options.prior, stamp) : null;
  const added: string[][] = [];
  if (options.demoEdits) {
    const edits = applyDemoEdits({ entities, teamRows, matchRows, bridges, overlay, relationships });
    added.push(edits.redirect);
    for (const line of edits.lines) options.onEdit?.(line);
  }
  const redirects = prior ? carriedRedirects(prior, new Set(entities.map((e) => e[0])), added) : [];
  const w = await ReleaseWriter.create(options.out, { stamp, generatedAt, gzipLevel: options.gzipLevel, overwrite: options.overwrite, prior: prior?.stamp ?? null });
  try {
    await w.writeTable('entities', entities);
    await w.writeTable('teams', teamRows);
    await w.writeTable('competitions', competitionRows);
    await w.writeTable('seasons', seasonRows);
    await w.writeTable('matches', matchRows);
    await w.writeTable('bridges', bridges);
    await w.writeTable('relationships', relationships);
    await w.writeTable('overlay_links', overlay);
    if (prior) await w.writeTable('redirects', redirects);
    // Counted from the rows written (a demonstration merge drops the bridges the two clubs shared).
    const perProvider = new Map<string, number>();
    for (const b of bridges) perProvider.set(b[0], (perProvider.get(b[0]) ?? 0) + 1);
    const providers = [...perProvider.keys()].sort();
    await w.writeTable('providers', providers.map((p) => [p, 'canonical_bridge']));
    const count = (type: string) => String(entities.filter((e) => e[1] === type).length);
    await w.writeTable('coverage', [
      ['release', 'stamp', stamp],
      ['release', 'source', 'v0-register'],
      ['release', 'entities', String(entities.length)],
      ['release', 'skipped_v0_rows', String(skipped)],
      ...['competition', 'match', 'season', 'team'].map((t) => ['entities', t, count(t)]),
      ['tables', 'bridges', String(bridges.length)],
      ['tables', 'relationships', String(relationships.length)],
      ['tables', 'overlay_links', String(overlay.length)],
      ...(prior ? [['release', 'prior', prior.stamp], ['tables', 'redirects', String(redirects.length)]] : []),
      ...providers.map((p) => ['bridges_by_provider', p, String(perProvider.get(p))]),
    ]);
    return await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  }
}
