// One /matches row as JSON text, its fields in the contract's order, written straight from the index's row.
import { jsonString } from '../../common/json-string.ts';
import { MATCH_REF, MATCH_STATES, type MatchRowValue } from '../../common/match-index.ts';
import type { MatchIndex } from '../release/match-index.ts';

/** A row as the contract lists its fields, in that order. */
export async function rowText(row: MatchRowValue, generation: string, index: MatchIndex, labels: Map<string, string | null>, wanted: (provider: string) => boolean): Promise<string> {
  const ref = async (id: string | null): Promise<string> => {
    if (id === null) return 'null';
    let label = labels.get(id);
    if (label === undefined) {
      const r = await index.ref(id);
      labels.set(id, (label = r && r[MATCH_REF.label] !== '' ? r[MATCH_REF.label] : null));
    }
    return `{"reep_id":"${id}","label":${label === null ? 'null' : jsonString(label)}}`;
  };
  const [id, playedOn, state, home, away, competition, season, stage, hs, as, form, shH, shA, basis, leg, aggregateOf, b] = row;
  const str = (v: string | null) => (v === null ? 'null' : jsonString(v));
  const num = (v: number | null) => (v === null ? 'null' : String(v));
  let bridges = '';
  for (let i = 0; i < b.length; i += 3) {
    const provider = index.provider(b[i] as number);
    if (!wanted(provider)) continue;
    bridges += `${bridges ? ',' : ''}{"provider":${jsonString(provider)},"namespace":${jsonString(String(b[i + 1]))},"external_id":${jsonString(String(b[i + 2]))}}`;
  }
  return (
    `{"reep_id":"${id}","generation":"${generation}","played_on":${str(playedOn)},"state":${state < MATCH_STATES.length ? `"${MATCH_STATES[state]}"` : 'null'},` +
    `"home":${await ref(home)},"away":${await ref(away)},"competition":${await ref(competition)},"season":${await ref(season)},"stage":${await ref(stage)},` +
    `"home_score":${num(hs)},"away_score":${num(as)},"result_form":${str(form)},"shootout_home":${num(shH)},"shootout_away":${num(shA)},` +
    `"score_basis":${str(basis)},"leg":${str(leg)},"aggregate_of":${str(aggregateOf)},"bridges":[${bridges}]}`
  );
}
