// The synthetic provider catalogue: which entity types each provider covers, how often, how its IDs look
// (numeric, 8-hex, slugs, Flashscore's `slug/code`), its namespaces and its role. Modelled on the real register.
import type { EntityType, ProviderRole } from '../common/ids.ts';
import { feistel32, saltOf } from './random.ts';
import { slugify } from './names.ts';

type IdFormat = 'num' | 'hex8' | 'prefixed' | 'slug' | 'flash';

export interface ProviderSpec {
  key: string;
  role: ProviderRole;
  /** Listed in providers.csv; an unlisted bridge provider defaults to canonical_bridge, which readers must honour. */
  listed: boolean;
  format: IdFormat;
  /** Relative coverage per entity type (before calibration to the target bridge count). */
  cover: Partial<Record<EntityType, number>>;
  /** Knowledge-base property relaying this provider's IDs (overlay_xids), when there is one. */
  property?: string;
}

const P = (
  key: string,
  format: IdFormat,
  cover: Partial<Record<EntityType, number>>,
  extra: { role?: ProviderRole; listed?: boolean; property?: string } = {},
): ProviderSpec => ({
  key,
  role: extra.role ?? 'canonical_bridge',
  listed: extra.listed ?? true,
  format,
  cover,
  property: extra.property,
});

export const PROVIDERS: readonly ProviderSpec[] = [
  P('transfermarkt', 'num', { player: 0.9, coach: 0.8, team: 0.9, competition: 0.9 }, { property: 'P2446' }),
  P('fbref', 'hex8', { player: 0.8, team: 0.7, competition: 0.6, season: 0.6, match: 0.9 }, { property: 'P5750' }),
  P('opta', 'prefixed', { player: 0.5, team: 0.5, competition: 0.4, season: 0.3, match: 0.7, referee: 0.3 }, { property: 'P8736' }),
  P('fotmob', 'num', { player: 0.6, team: 0.6, competition: 0.5, match: 0.8, coach: 0.3 }, { property: 'P11146' }),
  P('sofascore', 'num', { player: 0.6, team: 0.6, competition: 0.4, season: 0.3, match: 0.8, referee: 0.5, coach: 0.3 }, { property: 'P12302' }),
  P('flashscore', 'flash', { player: 0.4, team: 0.5, match: 0.6 }, { property: 'P8259' }),
  P('whoscored', 'num', { player: 0.4, team: 0.4, match: 0.5 }, { property: 'P8268' }),
  P('understat', 'num', { player: 0.2, team: 0.2, match: 0.3 }),
  P('espn', 'num', { player: 0.3, team: 0.4, match: 0.5, competition: 0.3 }, { property: 'P3681' }),
  P('soccerway', 'num', { player: 0.4, team: 0.5, competition: 0.3, season: 0.3, match: 0.4, coach: 0.3, referee: 0.2 }, { property: 'P2369' }),
  P('worldfootball', 'slug', { player: 0.3, team: 0.4, competition: 0.3, season: 0.3, coach: 0.3, referee: 0.3 }, { property: 'P2020' }),
  P('kicker', 'slug', { player: 0.2, team: 0.2 }, { property: 'P6812' }),
  P('playmakerstats', 'num', { player: 0.3, team: 0.3, coach: 0.2 }),
  P('footballdatabase_eu', 'num', { player: 0.2, team: 0.3 }, { property: 'P3537' }),
  P('uefa', 'num', { player: 0.2, team: 0.2, competition: 0.2, match: 0.15, referee: 0.2 }, { property: 'P2276' }),
  P('fifa', 'num', { player: 0.1, team: 0.1, competition: 0.2, referee: 0.2 }, { property: 'P1469' }),
  P('sofifa', 'num', { player: 0.3, team: 0.2 }, { property: 'P1998' }),
  P('clubelo', 'slug', { team: 0.1 }),
  P('sportmonks', 'num', { player: 0.2, team: 0.2, competition: 0.3, season: 0.3, stage: 0.4, match: 0.3, referee: 0.2, coach: 0.2 }),
  P('api_football', 'num', { player: 0.2, team: 0.2, competition: 0.3, season: 0.2, match: 0.3, coach: 0.2 }),
  P('statsbomb', 'num', { player: 0.1, team: 0.1, competition: 0.1, season: 0.1, match: 0.1 }),
  P('wyscout', 'num', { player: 0.2, team: 0.2, competition: 0.2, season: 0.2, match: 0.2, referee: 0.1, coach: 0.1 }),
  P('instat', 'num', { player: 0.1, team: 0.1, match: 0.1 }),
  P('besoccer', 'num', { player: 0.1, team: 0.1, match: 0.1 }, { role: 'bridge_only' }),
  P('soccerbase', 'num', { player: 0.1, team: 0.1, coach: 0.1 }, { property: 'P2193' }),
  P('eleven_v_eleven', 'slug', { player: 0.05, team: 0.05, match: 0.05 }),
  P('national_football_teams', 'num', { player: 0.05 }, { property: 'P2574' }),
  P('eu_football_info', 'num', { player: 0.05, team: 0.05, referee: 0.05, match: 0.05 }),
  P('worldreferee', 'num', { referee: 0.3 }, { property: 'P4904' }),
  P('zerozero', 'num', { player: 0.1, team: 0.1, coach: 0.1, competition: 0.1 }, { property: 'P3047' }),
  P('bdfutbol', 'slug', { player: 0.05, team: 0.05, coach: 0.05 }, { property: 'P3655' }),
  P('fussballdaten', 'slug', { player: 0.05, team: 0.05, match: 0.05 }, { property: 'P2021' }),
  P('lequipe', 'num', { player: 0.05, team: 0.05 }, { property: 'P3665' }),
  P('thesportsdb', 'num', { player: 0.05, team: 0.1, competition: 0.1 }, { role: 'bridge_only', property: 'P8549' }),
  P('footystats', 'num', { team: 0.05, competition: 0.05, match: 0.05 }, { role: 'bridge_only' }),
  P('goalcom', 'hex8', { player: 0.05, team: 0.05 }, { role: 'bridge_only' }),
  P('bbc', 'slug', { team: 0.05, competition: 0.05 }),
  P('impect', 'num', { player: 0.05, team: 0.05 }, { listed: false }),
  P('skillcorner', 'num', { player: 0.05, team: 0.05, match: 0.05 }, { listed: false }),
  P('footballcritic', 'num', { player: 0.05, team: 0.05 }, { role: 'bridge_only' }),
  P('rsssf', 'slug', { competition: 0.1, season: 0.1 }),
];

/** Transfermarkt partitions its IDs by kind of thing; every other provider has an empty namespace. */
export function namespaceOf(provider: string, type: EntityType): string {
  if (provider !== 'transfermarkt') return '';
  switch (type) {
    case 'player':
      return 'spieler';
    case 'coach':
      return 'trainer';
    case 'team':
      return 'verein';
    case 'competition':
      return 'wettbewerb';
    default:
      return '';
  }
}

/** The knowledge-base property for a provider's IDs of one type (Transfermarkt uses one per namespace). */
export function propertyOf(spec: ProviderSpec, type: EntityType): string | undefined {
  if (spec.key === 'transfermarkt') {
    return { player: 'P2446', coach: 'P2447', team: 'P7223', competition: 'P7287' }[type as string] ?? undefined;
  }
  return spec.property;
}

const OPTA_PREFIX: Partial<Record<EntityType, string>> = {
  player: 'p', team: 't', match: 'g', competition: 'c', season: 's', referee: 'o',
};

/** A prime above any ordinal we mint: `ordinal * a + b mod PRIME` is then a bijection, so numeric IDs never clash. */
const PRIME = 9_999_991;
const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

function base62(n: number, width: number): string {
  let s = '';
  for (let i = 0; i < width; i++) {
    s = BASE62[n % 62] + s;
    n = Math.floor(n / 62);
  }
  return s;
}

/** Formats provider IDs for one seed; distinct ordinals always give distinct IDs within a provider. */
export class ExternalIds {
  private readonly mult: number[];
  private readonly add: number[];
  private readonly key: number[];

  constructor(seed: number | string) {
    this.mult = PROVIDERS.map((p) => 1 + (saltOf(seed, 'mult/' + p.key) % (PRIME - 1)));
    this.add = PROVIDERS.map((p) => saltOf(seed, 'add/' + p.key) % PRIME);
    this.key = PROVIDERS.map((p) => saltOf(seed, 'key/' + p.key));
  }

  /** The ID provider `p` (index into PROVIDERS) gives the entity with `ordinal`, `type` and `label`. */
  format(p: number, ordinal: number, type: EntityType, label: string): string {
    const spec = PROVIDERS[p];
    switch (spec.format) {
      case 'num':
        return String(((ordinal * this.mult[p] + this.add[p]) % PRIME) + 1);
      case 'prefixed':
        return (OPTA_PREFIX[type] ?? 'x') + String(((ordinal * this.mult[p] + this.add[p]) % PRIME) + 1);
      case 'hex8':
        return feistel32(ordinal, this.key[p]).toString(16).padStart(8, '0');
      case 'slug':
        return `${slugify(label)}-${ordinal.toString(36)}`;
      case 'flash': {
        // Flashscore: `lastname-firstname/code`; the slash is part of the ID (URL-encoded in a resolve path).
        const words = slugify(label).split('-');
        const slug = type === 'player' && words.length > 1 ? [...words.slice(1), words[0]].join('-') : words.join('-');
        return `${slug}/${base62(feistel32(ordinal, this.key[p]), 8)}`;
      }
    }
  }
}
