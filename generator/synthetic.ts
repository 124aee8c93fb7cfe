// Synthetic release generator: a whole register (entities, bridges, matches, overlay, redirects, notices) scaled
// from the real release's row counts, deterministic for a seed, streamed to disk so 2M entities fit in memory.
import { basename } from 'node:path';
import { RegisterError } from '../common/errors.ts';
import type { EntityType } from '../common/ids.ts';
import { csvField } from '../common/csv-records.ts';
import { competitionName, isKnockout, personName, STAGE_NAMES, teamName, type PersonName } from './names.ts';
import { kindFor, makeFinding, noticeBatchJson, noticePath, type NoticeSubject } from './notices.ts';
import { ExternalIds, namespaceOf, PROVIDERS, propertyOf } from './providers.ts';
import { feistelHex56, hash32, saltOf, unit } from './random.ts';
import { ReleaseWriter, stampToIso, type ReleaseManifest } from './release-writer.ts';
import { TYPE_LETTER, TYPE_TABLE, type TableName } from './tables.ts';
import { deriveSuccessor } from './successor.ts';
import type { ProgressLine } from './release-writer.ts';

export interface GenerateOptions {
  /** Release directory to create, e.g. `releases/20261005T180536Z`; its basename is the stamp. */
  out: string;
  /** Live entities of a fresh release. Default 10,000. Ignored when `prior` is set (the prior fixes the size). */
  entities?: number;
  /** Seed of every random choice; the same seed gives byte-identical files. Default 1. */
  seed?: number | string;
  /** A prior release directory: derive a successor from it (about 1% of entities changed) instead. */
  prior?: string;
  /** gzip level of the CSV tables. Default 6. */
  gzipLevel?: number;
  /** Replace an existing release directory. Default false. */
  overwrite?: boolean;
  /** A progress line for the rows written (see ReleaseWriterOptions). Default none. */
  progress?: ProgressLine;
}

/** Row counts of the 2026-10-05 real release (RELEASE-FORMAT.md); every synthetic table is scaled from these. */
const REAL_COUNTS = {
  entities: 2_037_806,
  player: 438_178,
  coach: 31_052,
  referee: 32_509,
  team: 28_911,
  competition: 1_518,
  season: 10_157,
  stage: 27_570,
  match: 1_467_911,
  aliases: 684_236,
  bridges: 10_038_804,
  redirects: 2_012,
  relationships: 2_054_922,
  overlay_links: 156_236,
  overlay_aliases: 587_431,
  overlay_xids: 978_456,
  observed_clubs: 175_289,
} as const;

/** Generates a fresh synthetic release, or with `prior` a successor of an existing one. */
export async function generateRelease(options: GenerateOptions): Promise<ReleaseManifest> {
  const seed = options.seed ?? 1;
  if (options.prior) {
    return deriveSuccessor({ prior: options.prior, out: options.out, seed, gzipLevel: options.gzipLevel, overwrite: options.overwrite, progress: options.progress });
  }
  const entities = options.entities ?? 10_000;
  if (!Number.isInteger(entities) || entities < MIN_ENTITIES || entities > MAX_ENTITIES) {
    throw new RegisterError('generate', `--entities must be an integer from ${MIN_ENTITIES} to ${MAX_ENTITIES}, got ${entities}`);
  }
  const stamp = basename(options.out);
  const generatedAt = stampToIso(stamp);
  const u = new Universe(entities, seed);
  const w = await ReleaseWriter.create(options.out, {
    stamp, generatedAt, gzipLevel: options.gzipLevel, overwrite: options.overwrite, progress: options.progress, expectRows: expectedRows(entities),
  });
  try {
    await writeRelease(u, w, stamp, generatedAt);
    return await w.finish();
  } catch (e) {
    await w.abort();
    throw e;
  }
}

/** About how many rows a release of `n` entities holds (the real release's tables scaled), for an ETA. */
function expectedRows(n: number): number {
  const c = REAL_COUNTS;
  const perEntity = (2 * c.entities + c.aliases + c.bridges + c.redirects + c.relationships + c.overlay_links + c.overlay_aliases + c.overlay_xids + c.observed_clubs) / c.entities;
  return Math.round(n * perEntity);
}

export const MIN_ENTITIES = 60;
/** Ordinals must stay below the numeric-ID prime (providers.ts) so provider IDs stay distinct. */
export const MAX_ENTITIES = 5_000_000;

/** Entity types in ordinal order: parents before children, so a child's parent is computed from its ordinal. */
const TYPE_ORDER: readonly EntityType[] = ['competition', 'season', 'stage', 'team', 'match', 'player', 'coach', 'referee'];
const MIN_PER_TYPE: Record<EntityType, number> = {
  competition: 2, season: 3, stage: 4, team: 6, match: 10, player: 10, coach: 2, referee: 2,
};
/** Relative bridge coverage per type (a team is bridged by more providers than a stage). */
const BRIDGE_WEIGHT: Record<EntityType, number> = {
  match: 4.9, player: 5.5, team: 7, competition: 6, season: 3, stage: 1.5, coach: 3, referee: 2,
};
/** Popularity levels: most entities are obscure, a few are bridged by nearly every provider. */
const POPULARITY: readonly [number, number][] = [
  [0.3, 0.35], [0.7, 0.3], [1.2, 0.2], [2.0, 0.1], [3.5, 0.05],
];
const RUNGS = ['id_crosswalk', 'kb_relay', 'name_dob', 'fixture_match', 'manual_review'];
const KB = 'wikidata';
const KB_TIER = 'wikidata-originated';
const LANGS = ['en', 'de', 'es', 'fr', 'pl', 'pt', 'ru', 'zh', 'ar', 'ja', 'it', 'nl'];
const FOOTBALLER: Record<string, string> = {
  en: ' (footballer)', de: ' (Fußballspieler)', es: ' (futbolista)', fr: ' (footballeur)', pl: ' (piłkarz)',
  pt: ' (futebolista)', ru: ' (футболист)', zh: '（足球运动员）', ar: ' (لاعب كرة قدم)', ja: '（サッカー選手）',
  it: ' (calciatore)', nl: ' (voetballer)',
};
/** Providers carrying a notice batch in synthetic releases. */
const NOTICE_PROVIDERS = ['fbref', 'sofascore'] as const;

const PERSON_TYPES = new Set<EntityType>(['player', 'coach', 'referee']);
const ALIAS_TYPES = new Set<EntityType>(['player', 'coach', 'referee', 'team', 'competition']);
const OVERLAY_TYPES = new Set<EntityType>(['player', 'coach', 'referee', 'team', 'competition', 'season']);

/** A count with the given mean that is zero half the time: aliases and overlay names cluster on some entities. */
function skewedCount(mean: number, u1: number, u2: number): number {
  if (u2 < 0.5) return 0;
  const m2 = 2 * mean;
  return Math.floor(m2) + (u1 < m2 - Math.floor(m2) ? 1 : 0);
}

const decimal = (x: number): string => String(Math.round(x * 1000) / 1000);

interface MatchInfo {
  stage: number;
  season: number;
  home: number;
  away: number;
  knockoutIndex: number;
}

/**
 * The whole synthetic register as pure functions of an entity's ordinal (type, ID, label, bridges, ...), so each
 * table is written in one streaming pass and any table can recompute another's facts without storing them.
 */
class Universe {
  readonly start = {} as Record<EntityType, number>;
  readonly count = {} as Record<EntityType, number>;
  readonly typeOf: Uint8Array;
  readonly targets: Record<string, number>;
  readonly participants: number;
  readonly ext: ExternalIds;
  private readonly idKey: number;
  private readonly salt: (purpose: string) => number;
  private readonly s: Record<string, number>;
  private readonly provSalt: number[];
  private readonly pool = {} as Record<EntityType, number[]>;
  private readonly poolScale = {} as Record<EntityType, number>;
  private readonly ambK = {} as Partial<Record<EntityType, number>>;
  readonly ambProvider: Partial<Record<EntityType, number>>;
  private readonly compLabel: string[] = [];
  private readonly compCountry: string[] = [];
  private readonly seasonLabel: string[] = [];
  private readonly seasonYear: number[] = [];
  private readonly stageLabel: string[] = [];
  private readonly stageName: string[] = [];
  private readonly teamLabel: string[] = [];
  private readonly teamCountry: string[] = [];
  private readonly teamFemale: boolean[] = [];
  readonly aliasMean: number;
  readonly overlayRate: number;
  readonly overlayAliasMean: number;
  readonly overlayXidMean: number;
  readonly observedRate: number;

  constructor(
    readonly n: number,
    readonly seed: number | string,
  ) {
    this.salt = (purpose) => saltOf(seed, purpose);
    this.idKey = this.salt('register-id');
    this.s = Object.fromEntries(
      ['name', 'pop', 'rung', 'gender', 'ov', 'match', 'team', 'misc']
        .map((k) => [k, this.salt(k)]),
    );
    this.provSalt = PROVIDERS.map((p) => this.salt('provider/' + p.key));
    this.ext = new ExternalIds(seed);
    const scale = n / REAL_COUNTS.entities;

    // Entity type mix: each type scaled from the real counts (with a floor), matches absorb the rounding.
    let assigned = 0;
    for (const t of TYPE_ORDER) {
      if (t === 'match') continue;
      this.count[t] = Math.max(MIN_PER_TYPE[t], Math.round(REAL_COUNTS[t] * scale));
      assigned += this.count[t];
    }
    this.count.match = n - assigned;
    if (this.count.match < MIN_PER_TYPE.match) throw new RegisterError('generate', `too few entities (${n})`);
    let at = 0;
    this.typeOf = new Uint8Array(n);
    for (const [i, t] of TYPE_ORDER.entries()) {
      this.start[t] = at;
      this.typeOf.fill(i, at, at + this.count[t]);
      at += this.count[t];
    }

    this.targets = {
      aliases: Math.round(REAL_COUNTS.aliases * scale),
      bridges: Math.round(REAL_COUNTS.bridges * scale),
      redirects: Math.max(6, Math.round(REAL_COUNTS.redirects * scale)),
      relationships: Math.round(REAL_COUNTS.relationships * scale),
      overlay_links: Math.round(REAL_COUNTS.overlay_links * scale),
      overlay_aliases: Math.round(REAL_COUNTS.overlay_aliases * scale),
      overlay_xids: Math.round(REAL_COUNTS.overlay_xids * scale),
      observed_clubs: Math.round(REAL_COUNTS.observed_clubs * scale),
      slack: Math.max(1, Math.round(n / 200_000)),
    };

    const { competition: C, season: S, stage: G, team: T, match: M } = this.count;
    const participation = this.targets.relationships - S - G - M;
    this.participants = Math.max(2, Math.min(T, Math.round(participation / S)));

    this.calibrateBridges();
    this.ambProvider = { team: PROVIDERS.findIndex((p) => p.key === 'transfermarkt'), player: PROVIDERS.findIndex((p) => p.key === 'fbref') };
    // Real data has ~0.1% of Transfermarkt club IDs on two clubs; keep at least two such pairs in small releases.
    this.ambK.team = Math.max(2, Math.min(1000, Math.floor((T - 4) / 2)));
    this.ambK.player = Math.max(2, Math.min(5000, Math.floor((this.count.player - 4) / 2)));

    const eligible = (types: Set<EntityType>) => [...types].reduce((s, t) => s + this.count[t], 0);
    this.aliasMean = this.targets.aliases / eligible(ALIAS_TYPES);
    this.overlayRate = Math.min(1, this.targets.overlay_links / eligible(OVERLAY_TYPES));
    const linked = Math.max(1, this.overlayRate * eligible(OVERLAY_TYPES));
    this.overlayAliasMean = this.targets.overlay_aliases / linked;
    this.overlayXidMean = this.targets.overlay_xids / linked;
    this.observedRate = Math.min(1, this.targets.observed_clubs / (this.count.player + this.count.coach));

    // Structural labels are few (at most ~70k at full scale) and reused by every match: compute them once.
    for (let c = 0; c < C; c++) {
      const { label, country } = competitionName(c, (k) => hash32(c * 16 + k, this.s.misc));
      this.compLabel.push(label);
      this.compCountry.push(country);
    }
    for (let s = 0; s < S; s++) {
      const c = this.competitionOfSeason(s);
      const year = 2025 - (s - Math.ceil((c * S) / C));
      this.seasonYear.push(year);
      this.seasonLabel.push(`${this.compLabel[c]} ${year}–${String((year + 1) % 100).padStart(2, '0')}`);
    }
    for (let g = 0; g < G; g++) {
      const s = this.seasonOfStage(g);
      const k = g - Math.ceil((s * G) / S);
      const name = STAGE_NAMES[k % STAGE_NAMES.length];
      this.stageName.push(name);
      this.stageLabel.push(`${this.seasonLabel[s]} – ${name}`);
    }
    for (let t = 0; t < T; t++) {
      const female = t >= 28 && unit(t, this.s.gender) < 0.08;
      const { label, country } = teamName(t, (k) => hash32(t * 16 + k, this.s.team), female);
      this.teamLabel.push(label);
      this.teamCountry.push(country);
      this.teamFemale.push(female);
    }
  }

  /** Finds per type the coverage scale whose expected bridges per entity meets that type's share of the target. */
  private calibrateBridges(): void {
    const total = TYPE_ORDER.reduce((s, t) => s + this.count[t] * BRIDGE_WEIGHT[t], 0);
    for (const t of TYPE_ORDER) {
      this.pool[t] = PROVIDERS.flatMap((p, j) => (p.cover[t] ? [j] : []));
      const want = (BRIDGE_WEIGHT[t] * this.targets.bridges) / total;
      const expected = (sc: number) =>
        POPULARITY.reduce((sum, [f, q]) => sum + q * this.pool[t].reduce((a, j) => a + Math.min(1, sc * f * PROVIDERS[j].cover[t]!), 0), 0);
      let lo = 0;
      let hi = 50;
      for (let i = 0; i < 40; i++) {
        const mid = (lo + hi) / 2;
        if (expected(mid) < want) lo = mid;
        else hi = mid;
      }
      this.poolScale[t] = hi;
    }
  }

  type(ord: number): EntityType {
    return TYPE_ORDER[this.typeOf[ord]];
  }

  /** Register ID of a live entity. */
  id(ord: number): string {
    return this.idAs(ord, this.type(ord));
  }

  /** Register ID for any ordinal (beyond `n`: redirects, tombstones and never-published IDs) with a type hint. */
  idAs(ord: number, type: EntityType): string {
    return 'r' + TYPE_LETTER[type] + feistelHex56(ord, this.idKey);
  }

  competitionOfSeason(s: number): number {
    return Math.floor((s * this.count.competition) / this.count.season);
  }

  seasonOfStage(g: number): number {
    return Math.floor((g * this.count.season) / this.count.stage);
  }

  stageOfMatch(m: number): number {
    return Math.floor((m * this.count.stage) / this.count.match);
  }

  /** Team index of the k-th participant of season s: a competition keeps its clubs from season to season. */
  participant(s: number, k: number): number {
    return (this.competitionOfSeason(s) * this.participants + k) % this.count.team;
  }

  match(m: number): MatchInfo {
    const stage = this.stageOfMatch(m);
    const season = this.seasonOfStage(stage);
    const P = this.participants;
    const ord = this.start.match + m;
    // The first match is always the first two clubs (Arsenal v Chelsea), a fixed point for search and docs.
    const k1 = m === 0 ? 0 : hash32(ord * 4, this.s.match) % P;
    const k2 = m === 0 ? 1 : (k1 + 1 + (hash32(ord * 4 + 1, this.s.match) % (P - 1))) % P;
    const first = Math.ceil((stage * this.count.match) / this.count.stage);
    return { stage, season, home: this.participant(season, k1), away: this.participant(season, k2), knockoutIndex: m - first };
  }

  stageNameOf(g: number): string {
    return this.stageName[g];
  }

  person(ord: number): PersonName {
    return personName((k) => hash32(ord * 8 + k, this.s.name));
  }

  label(ord: number): string {
    const t = this.type(ord);
    const i = ord - this.start[t];
    switch (t) {
      case 'competition':
        return this.compLabel[i];
      case 'season':
        return this.seasonLabel[i];
      case 'stage':
        return this.stageLabel[i];
      case 'team':
        return this.teamLabel[i];
      case 'match': {
        const mi = this.match(i);
        return `${this.teamLabel[mi.home]} v ${this.teamLabel[mi.away]}`;
      }
      default:
        return this.person(ord).label;
    }
  }

  /** Team ordinal (for IDs) of a team index. */
  teamOrd(t: number): number {
    return this.start.team + t;
  }

  /** Is this entity the first of an ambiguous pair (its provider ID is also attached to ord + 1)? */
  ambiguousLead(ord: number): boolean {
    const t = this.type(ord);
    const k = this.ambK[t];
    if (k === undefined) return false;
    const i = ord - this.start[t];
    return i % k === 3 && i + 1 < this.count[t];
  }

  /** Indices (into PROVIDERS) of the providers bridging this entity, in catalogue order. */
  providers(ord: number): number[] {
    const t = this.type(ord);
    const u = unit(ord, this.s.pop);
    let f = POPULARITY[POPULARITY.length - 1][0];
    let acc = 0;
    for (const [level, q] of POPULARITY) {
      acc += q;
      if (u < acc) {
        f = level;
        break;
      }
    }
    const sc = this.poolScale[t] * f;
    const forced = this.ambiguousLead(ord) ? this.ambProvider[t] : -1;
    const out: number[] = [];
    for (const j of this.pool[t]) {
      if (j === forced || unit(ord, this.provSalt[j]) < sc * PROVIDERS[j].cover[t]!) out.push(j);
    }
    return out;
  }

  rung(ord: number, j: number): string {
    const h = hash32(ord * 64 + j, this.s.rung);
    return h % 100 < 12 ? '' : RUNGS[h % RUNGS.length];
  }

  gender(ord: number): string {
    const t = this.type(ord);
    const u = unit(ord, this.s.gender);
    switch (t) {
      case 'player':
        return u < 0.1 ? 'female' : 'male';
      case 'coach':
        return u < 0.05 ? 'female' : 'male';
      case 'team':
        return this.teamFemale[ord - this.start.team] ? 'female' : 'male';
      case 'competition':
        return /Women|Frauen/.test(this.compLabel[ord - this.start.competition]) ? 'female' : 'male';
      default:
        return '';
    }
  }

  country(ord: number, person: PersonName | null): string {
    const t = this.type(ord);
    if (person && t !== 'referee') return person.country;
    if (t === 'team') return this.teamCountry[ord - this.start.team];
    if (t === 'competition') return this.compCountry[ord - this.start.competition];
    return '';
  }

  hasOverlay(ord: number): boolean {
    return OVERLAY_TYPES.has(this.type(ord)) && unit(ord, this.s.ov) < this.overlayRate;
  }

  qid(ord: number): string {
    // Bijective in the ordinal (prime modulus), so no two entities share a QID.
    return 'Q' + String(((ord * 7_919 + (this.s.ov % 1_000_000)) % 99_999_989) + 1);
  }

  seasonCode(s: number): string {
    const y = this.seasonYear[s] ?? 2020;
    return `${y}-${String((y + 1) % 100).padStart(2, '0')}`;
  }
}

/** Abbreviation for a club or competition: initials of its words, e.g. `BHA` for Brighton & Hove Albion. */
function initials(label: string): string {
  const words = label.split(/[\s&\-.,"]+/).filter((w) => /^\p{Lu}/u.test(w));
  const s = words.map((w) => w[0]).join('');
  return s.length >= 2 ? s : label.slice(0, 3).toUpperCase();
}

const asciiFold = (s: string): string =>
  s.normalize('NFKD').replace(/\p{M}+/gu, '').replace(/ł/g, 'l').replace(/Ł/g, 'L').replace(/ø/g, 'o').replace(/Ø/g, 'O').replace(/ß/g, 'ss');

function aliasCandidates(type: EntityType, label: string, person: PersonName | null): [string, string][] {
  const out: [string, string][] = [['full', label]];
  const add = (kind: string, name: string | null) => {
    if (name && !out.some(([, n]) => n === name)) out.push([kind, name]);
  };
  if (person) {
    add('short', person.short);
    add('secondary', person.latin);
    add('secondary', asciiFold(label));
    add('secondary', person.label.split(' ').slice(-1)[0]);
  } else {
    add('short', initials(label));
    add('secondary', asciiFold(label));
    if (type === 'team') add('full', `${label} Football Club`);
  }
  return out;
}

type Pending = Promise<void> | undefined;

async function writeRelease(u: Universe, w: ReleaseWriter, stamp: string, generatedAt: string): Promise<void> {
  const ent = w.table('entities');
  const br = w.table('bridges');
  const al = w.table('aliases');
  const ol = w.table('overlay_links');
  const oa = w.table('overlay_aliases');
  const ox = w.table('overlay_xids');
  const oc = w.table('observed_clubs');
  const perProvider = new Array<number>(PROVIDERS.length).fill(0);
  const s = {
    alias: saltOf(u.seed, 'alias'), alias2: saltOf(u.seed, 'alias2'), aliasR: saltOf(u.seed, 'aliasR'),
    ov: saltOf(u.seed, 'ovc'), ovA: saltOf(u.seed, 'ovA'), ovA2: saltOf(u.seed, 'ovA2'), ovX: saltOf(u.seed, 'ovX'),
    ovX2: saltOf(u.seed, 'ovX2'), obs: saltOf(u.seed, 'obsc'), notice: saltOf(u.seed, 'notice'),
    score: saltOf(u.seed, 'score'),
  };
  let p: Pending;
  const subjects = new Map<string, NoticeSubject[]>(NOTICE_PROVIDERS.map((k) => [k, []]));
  const noticeRate = 40 / u.n;

  for (const type of TYPE_ORDER) {
    const tt = w.table(TYPE_TABLE[type]);
    const first = u.start[type];
    const end = first + u.count[type];
    for (let ord = first; ord < end; ord++) {
      const id = u.id(ord);
      const person = PERSON_TYPES.has(type) ? u.person(ord) : null;
      const label = person ? person.label : u.label(ord);
      const qLabel = csvField(label);
      const gender = u.gender(ord);
      const country = csvField(u.country(ord, person));
      const provs = u.providers(ord);

      // bridges (plus the shared ID of an ambiguous pair, on the second entity)
      const ids: string[] = [];
      for (const j of provs) {
        const x = u.ext.format(j, ord, type, label);
        ids.push(x);
        perProvider[j]++;
        const ns = namespaceOf(PROVIDERS[j].key, type);
        if ((p = br.line(`${PROVIDERS[j].key},${ns},${csvField(x)},${id},${u.rung(ord, j)}\n`))) await p;
      }
      if (ord > first && u.ambiguousLead(ord - 1)) {
        const j = u.ambProvider[type]!;
        const prevLabel = u.label(ord - 1);
        const x = u.ext.format(j, ord - 1, type, prevLabel);
        perProvider[j]++;
        if ((p = br.line(`${PROVIDERS[j].key},${namespaceOf(PROVIDERS[j].key, type)},${csvField(x)},${id},${u.rung(ord, 63)}\n`))) await p;
        if (subjects.has(PROVIDERS[j].key)) {
          subjects.get(PROVIDERS[j].key)!.push({
            reep_id: id, label, entity_type: type, provider: PROVIDERS[j].key, namespace: namespaceOf(PROVIDERS[j].key, type),
            external_id: x, other_reep_id: u.id(ord - 1),
          });
        }
      }
      if (unit(ord, s.notice) < noticeRate) {
        for (const [k, j] of provs.entries()) {
          const key = PROVIDERS[j].key;
          if (subjects.has(key)) {
            subjects.get(key)!.push({ reep_id: id, label, entity_type: type, provider: key, namespace: namespaceOf(key, type), external_id: ids[k] });
          }
        }
      }

      // entities + the per-type table
      const nb = provs.length;
      const grade = nb >= 6 ? 'A' : nb >= 4 ? 'B' : nb >= 2 ? 'C' : 'D';
      const band = nb === 0 ? '' : provs.some((j) => j <= 4) ? 'tier_1' : provs.some((j) => j <= 15) ? 'tier_2' : 'tier_3';
      if ((p = ent.line(`${id},${type},active,${qLabel},${gender},${country},${grade},${nb},${band}\n`))) await p;
      let row: string;
      switch (type) {
        case 'referee':
        case 'season':
        case 'stage':
          row = `${id},active,${qLabel}\n`;
          break;
        case 'match':
          row = matchRow(u, ord, id, qLabel, s.score);
          break;
        default:
          row = `${id},active,${qLabel},${gender},${country}\n`;
      }
      if ((p = tt.line(row))) await p;

      // aliases
      if (ALIAS_TYPES.has(type)) {
        const cands = aliasCandidates(type, label, person);
        const k = Math.min(cands.length, skewedCount(u.aliasMean, unit(ord, s.alias), unit(ord, s.alias2)));
        const ranked = unit(ord, s.aliasR) < 0.8;
        for (let a = 0; a < k; a++) {
          const [kind, name] = cands[a];
          if ((p = al.line(`${id},${csvField(name)},${kind},${ranked ? a + 1 : ''},\n`))) await p;
        }
      }

      // knowledge-base overlay
      if (u.hasOverlay(ord)) {
        const qid = u.qid(ord);
        const conf = decimal(0.55 + 0.45 * unit(ord, s.ov));
        const dob = person && type !== 'referee' ? (['match', 'match', 'match', 'match', 'missing', 'mismatch'] as const)[hash32(ord, s.ov) % 6] : '';
        // relayed IDs: the entity's own bridges first (confirming them), then IDs only the knowledge base knows
        const cands: { j: number; x: string }[] = [];
        for (const [k, j] of provs.entries()) if (propertyOf(PROVIDERS[j], type)) cands.push({ j, x: ids[k] });
        for (const j of PROVIDERS.keys()) {
          if (PROVIDERS[j].cover[type] && propertyOf(PROVIDERS[j], type) && !provs.includes(j)) cands.push({ j, x: u.ext.format(j, ord, type, label) });
        }
        const nx = Math.min(cands.length, Math.max(1, skewedCount(u.overlayXidMean, unit(ord, s.ovX), unit(ord, s.ovX2))));
        const xids = cands.slice(0, nx).map(({ j, x }, k) => ({
          provider: PROVIDERS[j].key,
          property: propertyOf(PROVIDERS[j], type)!,
          external_id: x,
          rank: k === 0 ? 'preferred' : hash32(ord * 32 + k, s.ovX) % 10 === 0 ? 'deprecated' : 'normal',
          confidence: Math.round((0.6 + 0.4 * unit(ord * 32 + k, s.ovX)) * 1000) / 1000,
        }));
        const inherited = xids.slice(0, Math.min(xids.length, 1 + (hash32(ord, s.ovX) % 3))).map((x) => ({
          provider: x.provider, property: x.property, external_id: x.external_id, rank: x.rank, source: KB, source_tier: KB_TIER, confidence: x.confidence,
        }));
        if ((p = ol.line(`${id},${qid},${conf},${dob},${type},${inherited.length},${csvField(JSON.stringify(inherited))}\n`))) await p;
        for (const x of xids) {
          if ((p = ox.line(`${id},${x.provider},${x.property},${csvField(x.external_id)},${x.rank},${x.confidence},${dob},${qid}\n`))) await p;
        }
        const na = skewedCount(u.overlayAliasMean, unit(ord, s.ovA), unit(ord, s.ovA2));
        const folded = asciiFold(label);
        for (let a = 0; a < na; a++) {
          const lang = LANGS[(hash32(ord, s.ovA) + a) % LANGS.length];
          let name: string;
          if (a === 0) name = label;
          else if (person) name = a === 1 && person.latin ? person.latin : label + FOOTBALLER[lang];
          else name = a === 1 && folded !== label ? folded : a === 2 ? initials(label) : `${label} (${type})`;
          const source = a === 0 ? 'label' : a % 3 === 1 ? 'alias' : 'sitelink';
          const c = decimal(0.4 + 0.5 * unit(ord * 16 + a, s.ovA));
          if ((p = oa.line(`${id},${csvField(name)},${lang},${source},${c},${conf},${dob},${qid},${KB},${KB_TIER}\n`))) await p;
        }
      }

      // clubs a player or coach has been seen at
      if ((type === 'player' || type === 'coach') && unit(ord, s.obs) < u.observedRate) {
        const nclubs = 1 + (hash32(ord, s.obs) % 4);
        const clubs: string[] = [];
        for (let c = 0; c < nclubs; c++) {
          const t = hash32(ord * 8 + c, s.obs) % u.count.team;
          const tid = u.id(u.teamOrd(t));
          if (!clubs.includes(tid)) clubs.push(tid);
        }
        const y0 = 2005 + (hash32(ord, s.obs + 1) % 15);
        const y1 = y0 + (hash32(ord, s.obs + 2) % 8);
        const basis = ['lineups', 'squads', 'transfers'][hash32(ord, s.obs + 3) % 3];
        const season = (y: number) => `${y}-${String((y + 1) % 100).padStart(2, '0')}`;
        if ((p = oc.line(`${id},${type},${csvField(JSON.stringify(clubs))},${season(y0)},${season(y1)},${basis}\n`))) await p;
      }
    }
    await w.closeTable(tt);
  }

  // A little referential slack, as in real releases: rows naming register IDs that were never published.
  const slackBase = u.n + u.targets.redirects;
  for (let k = 0; k < u.targets.slack; k++) {
    const ghost = u.idAs(slackBase + k, 'player');
    if ((p = br.line(`fbref,,${(0xdead0000 + k).toString(16)},${ghost},\n`))) await p;
    if ((p = al.line(`${ghost},Ghost Player ${k + 1},full,1,\n`))) await p;
  }
  for (const t of [ent, br, al, ol, oa, ox, oc]) await w.closeTable(t);

  await writeRelationships(u, w, slackBase);
  await writeRedirects(u, w);
  await w.writeTable('providers', PROVIDERS.filter((x) => x.listed).map((x) => [x.key, x.role]));
  await writeCoverage(u, w, stamp, perProvider);
  for (const provider of NOTICE_PROVIDERS) {
    // Ambiguous IDs first: every batch should carry at least one duplicate-ID finding when the data has one.
    const all = subjects.get(provider)!;
    const cap = Math.max(6, Math.min(40, Math.round(u.n / 200)));
    const subs = [...all.filter((x) => x.other_reep_id), ...all.filter((x) => !x.other_reep_id)].slice(0, cap);
    const findings = subs.map((sub, k) => makeFinding(u.seed, sub, kindFor(sub, hash32(k, s.notice)), generatedAt));
    await w.writeFile(noticePath(provider), noticeBatchJson({ provider, batch_id: 1, generated_at: generatedAt, findings }), 'private');
  }
}

function matchRow(u: Universe, ord: number, id: string, qLabel: string, salt: number): string {
  const m = ord - u.start.match;
  const mi = u.match(m);
  const h = (k: number) => hash32(ord * 16 + k, salt);
  const home = u.id(u.teamOrd(mi.home));
  const away = u.id(u.teamOrd(mi.away));
  const year = Number(u.seasonCode(mi.season).slice(0, 4));
  const day = new Date(Date.UTC(year, 7, 1) + (h(0) % 300) * 86_400_000).toISOString().slice(0, 10);
  const r = h(1) % 100;
  const state = r < 92 ? 'played' : r < 95 ? 'scheduled' : r < 97 ? 'postponed' : r < 98 ? 'abandoned' : r < 99 ? 'awarded' : 'played';
  const knockout = isKnockout(u.stageNameOf(mi.stage));
  let hs = '';
  let as = '';
  let form = '';
  let shH = '';
  let shA = '';
  let basis = '';
  if (state === 'played' && h(2) % 50 !== 0) {
    // Goals skew low, as in real football; 2% of played matches have no recorded score (empty, never 0). The form
    // and basis take the published service's values (common/scoreline.ts); most scores rest on agreeing sources.
    const goals = [0, 0, 1, 1, 1, 2, 2, 3, 4, 5];
    hs = String(goals[h(3) % 10]);
    as = String(goals[h(4) % 10]);
    form = 'regular';
    basis = h(8) % 10 === 0 ? 'single_source' : 'corroborated';
    if (knockout && hs === as && h(5) % 3 === 0) {
      // Scores are goals after play; the shoot-out's kicks are counted apart.
      form = 'penalties';
      const a = 3 + (h(6) % 3);
      shH = String(a);
      shA = String(h(7) % 2 ? a - 1 : a + 1);
    } else if (knockout && h(5) % 10 === 1) {
      form = 'extra_time';
    }
  } else if (state === 'awarded') {
    hs = '3';
    as = '0';
    form = 'awarded';
    basis = 'operator_ruling';
  } else if (state === 'abandoned' && h(2) % 2 === 0) {
    // The score when play stopped, where one is recorded.
    hs = String(h(3) % 3);
    as = String(h(4) % 3);
    form = 'abandoned';
    basis = 'single_source';
  }
  let leg = '';
  let aggregateOf = '';
  if (knockout) {
    leg = mi.knockoutIndex % 2 === 0 ? '1' : '2';
    if (leg === '2') aggregateOf = u.id(ord - 1);
  }
  return `${id},active,${qLabel},${hs},${as},${form},${shH},${shA},${basis},${home},${away},${day},${leg},${aggregateOf},${state}\n`;
}

async function writeRelationships(u: Universe, w: ReleaseWriter, slackBase: number): Promise<void> {
  const rel = w.table('relationships');
  let p: Pending;
  const { season: S, stage: G, match: M } = u.count;
  for (let s = 0; s < S; s++) {
    if ((p = rel.line(`${u.id(u.start.season + s)},${u.id(u.start.competition + u.competitionOfSeason(s))},season_of\n`))) await p;
  }
  for (let g = 0; g < G; g++) {
    if ((p = rel.line(`${u.id(u.start.stage + g)},${u.id(u.start.season + u.seasonOfStage(g))},stage_of\n`))) await p;
  }
  for (let m = 0; m < M; m++) {
    if ((p = rel.line(`${u.id(u.start.match + m)},${u.id(u.start.stage + u.stageOfMatch(m))},match_in\n`))) await p;
  }
  for (let s = 0; s < S; s++) {
    const season = u.id(u.start.season + s);
    for (let k = 0; k < u.participants; k++) {
      if ((p = rel.line(`${u.id(u.teamOrd(u.participant(s, k)))},${season},participates_in\n`))) await p;
    }
  }
  for (let k = 0; k < u.targets.slack; k++) {
    if ((p = rel.line(`${u.idAs(slackBase + k, 'match')},${u.id(u.start.stage)},match_in\n`))) await p;
  }
  await w.closeTable(rel);
}

/**
 * Merged IDs and tombstones minted from ordinals past the live range, so they can never be live IDs. The first
 * merge chains through the second (A→B→C with B itself merged), as real registers do after repeated merges.
 */
async function writeRedirects(u: Universe, w: ReleaseWriter): Promise<void> {
  const R = u.targets.redirects;
  const tombstones = Math.max(2, Math.round(R * 0.15));
  const merged = R - tombstones;
  const salt = saltOf(u.seed, 'redirect');
  const survivor = (k: number) => hash32(k, salt) % u.n;
  const rows: string[][] = [];
  for (let k = 0; k < merged; k++) {
    const final = survivor(k === 0 ? 1 : k);
    const type = u.type(final);
    const to = k === 0 ? u.idAs(u.n + 1, type) : u.id(final);
    rows.push([u.idAs(u.n + k, type), to, 'merged']);
  }
  for (let k = merged; k < R; k++) rows.push([u.idAs(u.n + k, u.type(survivor(k))), '', 'de_corroborated']);
  await w.writeTable('redirects', rows);
}

async function writeCoverage(u: Universe, w: ReleaseWriter, stamp: string, perProvider: number[]): Promise<void> {
  const rows: string[][] = [['release', 'stamp', stamp], ['release', 'entities', String(u.n)]];
  for (const t of TYPE_ORDER) rows.push(['entities', t, String(u.count[t])]);
  const tables: TableName[] = ['bridges', 'aliases', 'relationships', 'redirects', 'overlay_links', 'overlay_aliases', 'overlay_xids', 'observed_clubs'];
  for (const t of tables) rows.push(['tables', t, String(w.rowsOf(t))]);
  PROVIDERS.forEach((p, j) => rows.push(['bridges_by_provider', p.key, String(perProvider[j])]));
  await w.writeTable('coverage', rows);
}
