// `node bin/run-ts.mjs bench/name-match.ts`: precision and recall of name matching (runtime/release/name-match.ts)
// per score band, over a labelled set built at run time from the real v0 register (../shared/real-data, never
// committed). Options: `--v0 DIR`, `--out DIR` (scratch: the held-out copy, its release and dist; default
// bench/out/name-match), `--results FILE` (default bench/name-match.json), `--size N` (also compile a generated
// release of N entities and report what the name keys add to it; 0, the default, skips it).
//
// The labelled set. v0 holds one name per team, so the queries are variants of real names, each labelled with the
// team it names: the name as it is, upper-cased, diacritics dropped, German-style transliterated (ü -> ue), words
// moved, club affixes dropped, a misspelling, the first word as an initial. Every team is put in one of three
// parts by a hash of its v0 ID (fnv1a32, so the split never moves): a tenth is left out of the compiled release
// (its queries are the negatives: none of them should match; halved again by hash between the two parts below),
// four tenths are the tuning part, and half is held out of any tuning: weights and thresholds are set looking at
// the tuning part's figures and wrong matches only, and the held-out part is reported first.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { compileAll } from '../compiler/compile.ts';
import { parseCsvText } from '../compiler/read/csv-reader.ts';
import { fnv1a32 } from '../common/hash.ts';
import { nameTokens } from '../common/name-keys.ts';
import { csvLine } from '../common/csv-records.ts';
import { DEFAULT_V0_DIR, importV0 } from '../generator/from-v0.ts';
import { generateRelease } from '../generator/synthetic.ts';
import { createBucketCache } from '../runtime/release/bucket-family-reader.ts';
import { isClearMatch, matchNames, type NameCandidate } from '../runtime/release/name-match.ts';
import { loadRelease, type Release } from '../runtime/release/open-release.ts';
import { createFsSource } from '../runtime/source/fs-source.ts';

const STAMP = '20260401T000000Z';

type Part = 'held_out' | 'tuning' | 'left_out';

/** The part of a team, by its v0 ID: 0-1 of 20 left out of the release, 2-9 tuning, 10-19 held out of tuning. */
function partOf(v0Id: string): Part {
  const h = fnv1a32(v0Id) % 20;
  return h < 2 ? 'left_out' : h < 10 ? 'tuning' : 'held_out';
}

/** The register ID import-v0 mints for a v0 team (generator/from-v0.ts). */
const teamId = (v0Id: string): string => 'rt' + createHash('sha256').update(v0Id).digest('hex').slice(0, 14);

interface Team {
  v0: string;
  id: string;
  name: string;
  country: string;
  part: Part;
}

/** Club affixes as contributors' files add and drop them (the words alone, as written; dotted forms too). */
const CLUB_AFFIX = /^(f\.?c\.?|a\.?f\.?c\.?|c\.?f\.?|s\.?c\.?|a\.?c\.?|s\.?v\.?|f\.?k\.?|n\.?k\.?|c\.?d\.?|club|football club)$/i;
const GERMAN: Record<string, string> = { ä: 'ae', ö: 'oe', ü: 'ue', Ä: 'Ae', Ö: 'Oe', Ü: 'Ue', ß: 'ss' };
const MISSPELL: [RegExp, string][] = [[/ll/, 'l'], [/ss/, 's'], [/tt/, 't'], [/nn/, 'n'], [/ff/, 'f'], [/ph/, 'f'], [/y/, 'i'], [/c(?=[aou])/, 'k'], [/k/, 'c']];
const stripMarks = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '');

/** The query variants of one real name, by kind; a kind that would not change the name is left out. */
function variants(name: string): [string, string][] {
  const out: [string, string][] = [['exact', name], ['upper_case', name.toUpperCase()]];
  const plain = stripMarks(name);
  if (plain !== name) out.push(['no_diacritics', plain]);
  if (/[äöüÄÖÜß]/.test(name)) out.push(['transliterated', stripMarks(name.replace(/[äöüÄÖÜß]/g, (c) => GERMAN[c]))]);
  const words = name.split(/\s+/).filter(Boolean);
  if (words.length >= 2) out.push(['word_order', [...words.slice(1), words[0]].join(' ')]);
  const kept = words.filter((w) => !CLUB_AFFIX.test(w));
  if (kept.length && kept.length < words.length) out.push(['affix_dropped', kept.join(' ')]);
  const rule = MISSPELL.find(([re]) => re.test(name.slice(1)));
  if (rule) out.push(['misspelt', name[0] + name.slice(1).replace(rule[0], rule[1])]);
  if (words.length >= 2 && /^\p{L}{3,}$/u.test(words[0]) && !CLUB_AFFIX.test(words[0])) out.push(['initial', `${words[0][0]}. ${words.slice(1).join(' ')}`]);
  return out;
}

/** A band of the answer to one query, from the best candidate; `match` only for a clear match (isClearMatch). */
const BANDS = ['match >= 0.95', 'match 0.85-0.95', 'candidate >= 0.70', 'below 0.70 or none'] as const;
type Band = (typeof BANDS)[number];
/** What each band stands for in the contributions check's bands (issue 48), for a name with nothing else. */
const ISSUE_BAND: Record<Band, string> = {
  'match >= 0.95': '0.90 review',
  'match 0.85-0.95': '0.80 candidate only',
  'candidate >= 0.70': 'below: no write (candidates shown)',
  'below 0.70 or none': 'below: no write',
};

function bandOf(c: NameCandidate[]): Band {
  const top = c[0];
  if (top && isClearMatch(c)) return top.score >= 0.95 ? 'match >= 0.95' : 'match 0.85-0.95';
  return top && top.score >= 0.7 ? 'candidate >= 0.70' : 'below 0.70 or none';
}

interface Tally {
  positives: number;
  /** Positives whose best candidate is the team named. */
  correct: number;
  negatives: number;
}

interface PartReport {
  queries: number;
  negatives: number;
  bands: { band: Band; issue_band: string; positives: number; negatives: number; precision: number | null; recall_at_or_above: number }[];
  match: {
    precision: number | null;
    recall: number;
    false_match_rate_on_negatives: number;
    /** The same, over the negatives whose normalised name no released team bears (a namesake makes a match fair). */
    false_match_rate_on_negatives_without_namesake: number;
  };
  by_variant: Record<string, { queries: number; clear_match_correct: number; in_top5: number }>;
  /** The first wrong matches, to read: [query, the team it names or "left out", the match's label and score]. */
  wrong_matches: [string, string, string, number][];
}

const ratio = (a: number, b: number): number | null => (b ? Math.round((a / b) * 1000) / 1000 : null);

async function evaluate(release: Release, teams: Team[], negatives: Team[], hasNamesake: (t: Team) => boolean): Promise<PartReport> {
  const tally = new Map<Band, Tally>(BANDS.map((b) => [b, { positives: 0, correct: 0, negatives: 0 }]));
  const byVariant: PartReport['by_variant'] = {};
  let queries = 0;
  let negativeQueries = 0;
  const wrong: PartReport['wrong_matches'] = [];
  const noteWrong = (query: string, expected: string, c: NameCandidate[]) => {
    if (wrong.length < 40 && isClearMatch(c)) wrong.push([query, expected, c[0].label, c[0].score]);
  };
  const ask = async (t: Team, name: string, i: number) => {
    // Half the queries carry the team's country, as a contribution row may; by the ID, so the choice never moves.
    const country = fnv1a32(`${t.v0}\u0000${i}`) % 2 === 0 ? t.country || null : null;
    return matchNames(release, { name, type: 'team', country });
  };
  for (const t of teams) {
    for (const [i, [kind, name]] of variants(t.name).entries()) {
      const c = await ask(t, name, i);
      const band = bandOf(c);
      const s = tally.get(band)!;
      s.positives++;
      queries++;
      const correct = c[0]?.reep_id === t.id;
      if (correct) s.correct++;
      else noteWrong(name, t.name, c);
      const v = (byVariant[kind] ??= { queries: 0, clear_match_correct: 0, in_top5: 0 });
      v.queries++;
      if (correct && isClearMatch(c)) v.clear_match_correct++;
      if (c.slice(0, 5).some((x) => x.reep_id === t.id)) v.in_top5++;
    }
  }
  let plainNegatives = 0;
  let plainFalseMatches = 0;
  for (const t of negatives) {
    for (const [i, [, name]] of variants(t.name).entries()) {
      const c = await ask(t, name, i);
      tally.get(bandOf(c))!.negatives++;
      if (!hasNamesake(t)) {
        plainNegatives++;
        if (isClearMatch(c)) plainFalseMatches++;
      }
      noteWrong(name, `${t.name} (left out)`, c);
      negativeQueries++;
    }
  }
  let correctAbove = 0;
  const bands = BANDS.map((band) => {
    const s = tally.get(band)!;
    correctAbove += s.correct;
    // A negative that lands in a band is wrong there by its label, whatever it matched.
    return { band, issue_band: ISSUE_BAND[band], positives: s.positives, negatives: s.negatives, precision: ratio(s.correct, s.positives + s.negatives), recall_at_or_above: ratio(correctAbove, queries)! };
  });
  const m = [tally.get('match >= 0.95')!, tally.get('match 0.85-0.95')!];
  const matched = m.reduce((n, s) => n + s.positives + s.negatives, 0);
  const right = m.reduce((n, s) => n + s.correct, 0);
  return {
    queries,
    negatives: negativeQueries,
    bands,
    match: { precision: ratio(right, matched), recall: ratio(right, queries)!, false_match_rate_on_negatives: ratio(m.reduce((n, s) => n + s.negatives, 0), negativeQueries) ?? 0,
      false_match_rate_on_negatives_without_namesake: ratio(plainFalseMatches, plainNegatives) ?? 0,
    },
    by_variant: byVariant,
    wrong_matches: wrong,
  };
}

function option(args: string[], name: string, fallback: string): string {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
}

/** What the name keys add to a generated release of `entities` entities: the family's bytes against the rest. */
async function sizeGrowth(out: string, entities: number): Promise<{ entities: number; release_bytes_without: number; names_bytes: number; growth: number }> {
  const releases = join(out, 'size-releases');
  const dist = join(out, 'size-dist');
  rmSync(releases, { recursive: true, force: true });
  rmSync(dist, { recursive: true, force: true });
  await generateRelease({ out: join(releases, STAMP), entities, seed: 1 });
  await compileAll({ releases, dist, progress: false });
  const manifest = JSON.parse(readFileSync(join(dist, STAMP, 'public', 'manifest.json'), 'utf8')) as { files: Record<string, { bytes: number }> };
  let names = 0;
  let total = 0;
  for (const [path, f] of Object.entries(manifest.files)) {
    total += f.bytes;
    if (path.startsWith('names/')) names += f.bytes;
  }
  return { entities, release_bytes_without: total - names, names_bytes: names, growth: ratio(names, total - names)! };
}

export async function main(args: string[]): Promise<void> {
  const v0 = resolve(option(args, 'v0', DEFAULT_V0_DIR));
  const out = resolve(option(args, 'out', 'bench/out/name-match'));
  const resultsFile = resolve(option(args, 'results', 'bench/name-match.json'));
  const sizeEntities = Number(option(args, 'size', '0'));

  // The labelled set: every team with its part; the left-out part is written out of a copy of v0.
  const [header, ...rows] = parseCsvText(readFileSync(join(v0, 'teams.csv'), 'utf8'));
  const col = (n: string) => header.indexOf(n);
  const seen = new Set<string>();
  const teams: Team[] = [];
  for (const r of rows) {
    const v0Id = r[col('reep_id')];
    if (!v0Id || seen.has(v0Id) || !r[col('name')]) continue;
    seen.add(v0Id);
    teams.push({ v0: v0Id, id: teamId(v0Id), name: r[col('name')], country: r[col('country')] ?? '', part: partOf(v0Id) });
  }
  const copy = join(out, 'v0');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(copy, { recursive: true });
  for (const f of ['competitions.csv', 'seasons.csv', 'match_dictionary.csv']) copyFileSync(join(v0, f), join(copy, f));
  const leftOut = new Set(teams.filter((t) => t.part === 'left_out').map((t) => t.v0));
  writeFileSync(join(copy, 'teams.csv'), csvLine(header) + rows.filter((r) => !leftOut.has(r[col('reep_id')])).map(csvLine).join(''));
  const labelled = teams.flatMap((t) => variants(t.name).map(([kind, q]) => csvLine([t.part, t.part === 'left_out' ? '' : t.id, kind, q, t.country])));
  writeFileSync(join(out, 'labelled-set.csv'), csvLine(['part', 'expected_reep_id', 'variant', 'query', 'country']) + labelled.join(''));

  await importV0({ from: copy, out: join(out, 'releases', STAMP) });
  await compileAll({ releases: join(out, 'releases'), dist: join(out, 'dist'), progress: false });
  const dist = join(out, 'dist');
  const source = createFsSource({ root: dist, reads: 'sync' });
  const manifestSha = createHash('sha256').update(readFileSync(join(dist, STAMP, 'public', 'manifest.json'))).digest('hex');
  const release = await loadRelease(source, STAMP, manifestSha, createBucketCache(64 << 20));

  // How many released teams share each normalised name: a namesake makes a name ambiguous by itself.
  const namesakes = new Map<string, number>();
  for (const t of teams) if (t.part !== 'left_out') namesakes.set(nameTokens(t.name).join(' '), (namesakes.get(nameTokens(t.name).join(' ')) ?? 0) + 1);
  const negatives = teams.filter((t) => t.part === 'left_out');
  
  // The left-out teams are halved the same way, by a hash of the ID: negatives for tuning, negatives held out.
  const heldNegative = (t: Team): boolean => fnv1a32(`negative\u0000${t.v0}`) % 2 === 0;
  const hasNamesake = (t: Team): boolean => namesakes.has(nameTokens(t.name).join(' '));

  const started = performance.now();
  const heldOut = await evaluate(release, teams.filter((t) => t.part === 'held_out'), negatives.filter(heldNegative), hasNamesake);
  const tuning = await evaluate(release, teams.filter((t) => t.part === 'tuning'), negatives.filter((t) => !heldNegative(t)), hasNamesake);
  const seconds = (performance.now() - started) / 1000;
  await source.close();

  const results = {
    what: 'name matching precision and recall per band (bench/name-match.ts)',
    teams: { all: teams.length, held_out: teams.filter((t) => t.part === 'held_out').length, tuning: teams.filter((t) => t.part === 'tuning').length, left_out: negatives.length },
    namesakes: { released_names_borne_by_several_teams: [...namesakes.values()].filter((n) => n > 1).length, left_out_teams_with_a_released_namesake: negatives.filter(hasNamesake).length },
    queries_per_second: Math.round((heldOut.queries + heldOut.negatives + tuning.queries) / seconds),
    held_out: heldOut,
    tuning,
    size: sizeEntities > 0 ? await sizeGrowth(out, sizeEntities) : null,
  };
  writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  const line = (p: PartReport) =>
    p.bands.map((b) => `  ${b.band.padEnd(20)} ${b.issue_band.padEnd(36)} pos ${String(b.positives).padStart(6)}  neg ${String(b.negatives).padStart(5)}  precision ${b.precision ?? '-'}  recall>= ${b.recall_at_or_above}`).join('\n');
  process.stdout.write(`held out of tuning (${heldOut.queries} queries, ${heldOut.negatives} negatives):\n${line(heldOut)}\n  match: ${JSON.stringify(heldOut.match)}\n`);
  process.stdout.write(`tuning (${tuning.queries} queries):\n${line(tuning)}\n  match: ${JSON.stringify(tuning.match)}\n`);
  if (results.size) process.stdout.write(`size: ${JSON.stringify(results.size)}\n`);
  process.stdout.write(`written to ${resultsFile}\n`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`[bench] ${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
