// The scoreline's checks: the byte-level fast path the compile reads rows with agrees with the checks that name a
// problem, value by value, and the scoreline object comes out in contract order with nulls for what fails.
import { describe, expect, it } from 'vitest';
import { admitsBytes, scorelineOf, scorelineProblem, SCORELINE_FIELDS, type FieldKind } from '../../common/scoreline.ts';

const VALUES: Record<Exclude<FieldKind, 'id'>, string[]> = {
  count: ['0', '7', '007', '123456789', '1234567890', '-1', '1.5', ' 1', '1 ', '+1', 'x', '٣'],
  form: ['regular', 'extra_time', 'penalties', 'golden_goal', 'awarded', 'abandoned', 'unknown', 'Regular', 'regularx', 'ft', 'aet', 'pen', 'regula'],
  basis: ['corroborated', 'single_source', 'operator_ruling', 'full_time', 'single', 'corroborated '],
  date: [
    '2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '2024-04-30', '2024-04-31', '2024-12-31', '2024-13-01', '2024-00-10',
    '2024-01-00', '0024-01-01', '24-01-01', '2024/01/01', '2024-1-01', '2024-01-1x', '20240101',
  ],
};

describe('scoreline checks', () => {
  it('admitsBytes says yes exactly where scorelineProblem finds nothing', () => {
    for (const [kind, values] of Object.entries(VALUES) as [Exclude<FieldKind, 'id'>, string[]][]) {
      for (const v of values) {
        const bytes = Buffer.from(`,${v},`);
        expect(admitsBytes(kind, bytes, 1, bytes.length - 1), `${kind} ${JSON.stringify(v)}`).toBe(scorelineProblem(kind, v) === null);
      }
    }
    expect(scorelineProblem('date', '2023-02-29')).toBe('not a date (YYYY-MM-DD)');
    expect(scorelineProblem('id', 'rt0123456789abcd')).toBeNull();
    expect(scorelineProblem('id', 'reep_t0871097b')).toBe('not a register ID');
  });

  it('the scoreline lists every field in contract order, null for an empty, failing or dropped value', () => {
    const cells: Record<string, string> = {
      home_score: '3', away_score: '', result_form: 'aet', shootout_home: '4', shootout_away: '-2', score_basis: 'corroborated',
      home_id: 'rt0123456789abcd', away_id: 'rt0123456789abce', played_on: '2024-05-01',
    };
    const s = scorelineOf((n) => cells[n], new Set(['away_id']));
    expect(Object.keys(s)).toEqual(SCORELINE_FIELDS.map(([n]) => n));
    expect(s).toEqual({
      home_score: 3, away_score: null, result_form: null, shootout_home: 4, shootout_away: null, score_basis: 'corroborated',
      home_id: 'rt0123456789abcd', away_id: null, played_on: '2024-05-01',
    });
  });
});
