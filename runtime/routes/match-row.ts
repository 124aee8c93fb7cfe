// One /matches row as JSON text, its fields in the contract's order, written straight from the index's row.
import { jsonString } from '../../common/json-string.ts';
import { MATCH_STATES, type MatchRowValue } from '../../common/match-index.ts';
import { isPromise, type MaybePromise } from '../interfaces.ts';
import type { MatchIndex } from '../release/match-index.ts';

/** `"state":…` by state code: the known states quoted, anything else null. */
const STATE_TEXT = (code: number) => (code < MATCH_STATES.length ? `"${MATCH_STATES[code]}"` : 'null');

/**
 * A row as the contract lists its fields, in that order; `wanted` lists the providers whose bridges it shows (null:
 * all). At once when the index keeps the text of each reference the row names (a page's usual case), else once they
 * are read.
 */
export function rowText(row: MatchRowValue, generation: string, index: MatchIndex, wanted: readonly string[] | null): MaybePromise<string> {
  const refs: string[] = [];
  let pending: Promise<unknown>[] | null = null;
  // home, away, competition, season, stage: fields 3 to 7.
  for (let i = 0; i < 5; i++) {
    const id = row[3 + i] as string | null;
    if (id === null) {
      refs.push('null');
      continue;
    }
    const text = index.reference(id);
    if (isPromise(text)) {
      refs.push('');
      (pending ??= []).push(text.then((t) => (refs[i] = t)));
    } else refs.push(text);
  }
  return pending === null ? compose(row, generation, index, wanted, refs) : Promise.all(pending).then(() => compose(row, generation, index, wanted, refs));
}

function compose(row: MatchRowValue, generation: string, index: MatchIndex, wanted: readonly string[] | null, refs: string[]): string {
  const [id, playedOn, state, , , , , , hs, as, form, shH, shA, basis, leg, aggregateOf, b] = row;
  const str = (v: string | null) => (v === null ? 'null' : jsonString(v));
  const num = (v: number | null) => (v === null ? 'null' : String(v));
  let bridges = '';
  for (let i = 0; i < b.length; i += 3) {
    const p = b[i] as number;
    if (wanted !== null && !wanted.includes(index.provider(p))) continue;
    bridges += `${bridges ? ',' : ''}${index.bridgeStart(p)}${jsonString(String(b[i + 1]))},"external_id":${jsonString(String(b[i + 2]))}}`;
  }
  return (
    `{"reep_id":"${id}","generation":"${generation}","played_on":${str(playedOn)},"state":${STATE_TEXT(state)},` +
    `"home":${refs[0]},"away":${refs[1]},"competition":${refs[2]},"season":${refs[3]},"stage":${refs[4]},` +
    `"home_score":${num(hs)},"away_score":${num(as)},"result_form":${str(form)},"shootout_home":${num(shH)},"shootout_away":${num(shA)},` +
    `"score_basis":${str(basis)},"leg":${str(leg)},"aggregate_of":${str(aggregateOf)},"bridges":[${bridges}]}`
  );
}
