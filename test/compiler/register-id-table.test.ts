// The live-ID table of stage 1 against a Map: the same answers for IDs it holds, IDs it does not, and strings that
// are not register IDs at all, across the growth from a small table to a large one.
import { describe, expect, it } from 'vitest';
import { RegisterIdTable } from '../../compiler/read/register-id-table.ts';
import { REGISTER_ID } from '../../common/ids.ts';

/** Deterministic pseudo-random 32-bit numbers (xorshift32), so a failure replays. */
function numbers(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0').slice(-width);

describe('RegisterIdTable', () => {
  it('answers as a Map does over 200,000 random IDs, including IDs one letter or digit away', () => {
    const next = numbers(7);
    const table = new RegisterIdTable();
    const model = new Map<string, number>();
    const held: string[] = [];
    // Mismatches are gathered and asserted once: an expect() per ID cost most of the test's time.
    const wrong: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      const id = `r${String.fromCharCode(97 + (next() % 26))}${hex(next(), 6)}${hex(next(), 8)}`;
      if (!REGISTER_ID.test(id)) wrong.push(`${id}: not a register ID`);
      const value = next() & 0x7fffffff;
      table.set(id, value);
      model.set(id, value);
      held.push(id);
    }
    expect(table.size).toBe(model.size);
    for (const id of held) if (table.get(id) !== model.get(id)) wrong.push(`${id}: ${table.get(id)}, the Map ${model.get(id)}`);
    // Neighbours: the same bits but for one character.
    for (const id of held.slice(0, 5_000)) {
      for (const at of [1, 2, 7, 8, 15]) {
        const c = id.charCodeAt(at);
        const other = id.slice(0, at) + String.fromCharCode(at === 1 ? (c === 122 ? 97 : c + 1) : c === 102 ? 48 : c === 57 ? 97 : c + 1) + id.slice(at + 1);
        if (table.get(other) !== (model.get(other) ?? -1)) wrong.push(`${other}: ${table.get(other)}, the Map ${model.get(other) ?? -1}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('overwrites a value, keeps the size, and takes only non-negative int32 values', () => {
    const table = new RegisterIdTable();
    table.set('rt000000000000a1', 5);
    table.set('rt000000000000a1', 0);
    expect(table.size).toBe(1);
    expect(table.get('rt000000000000a1')).toBe(0);
    expect(table.has('rt000000000000a1')).toBe(true);
    expect(() => table.set('rt000000000000a2', -1)).toThrow(/not a non-negative int32/);
    expect(() => table.set('rt000000000000a2', 1.5)).toThrow(/not a non-negative int32/);
    expect(table.has('rt000000000000a2')).toBe(false);
  });

  it('adds an ID only when absent, keeping the value it holds, with one answer for which happened', () => {
    const table = new RegisterIdTable();
    expect(table.add('rt000000000000a1', 5)).toBe(true);
    expect(table.add('rt000000000000a1', 9)).toBe(false);
    expect(table.get('rt000000000000a1')).toBe(5);
    expect(table.add('rt000000000000a2', 0)).toBe(true);
    expect(table.size).toBe(2);
    expect(() => table.add('rt000000000000a3', -1)).toThrow(/not a non-negative int32/);
    expect(table.has('rt000000000000a3')).toBe(false);
    // Across growth: every other of 100,000 IDs added twice.
    const wrong: string[] = [];
    for (let i = 0; i < 100_000; i++) if (table.add(`rq${hex(i, 14)}`, i) !== true) wrong.push(`first add of ${i}`);
    for (let i = 0; i < 100_000; i += 2) if (table.add(`rq${hex(i, 14)}`, 0) !== false) wrong.push(`second add of ${i}`);
    expect(wrong).toEqual([]);
    expect(table.size).toBe(100_002);
    expect(table.get(`rq${hex(99_998, 14)}`)).toBe(99_998);
  });

  it('holds no string of another shape, and refuses to be given one', () => {
    const table = new RegisterIdTable();
    table.set('rp0123456789abcd', 1);
    for (const bad of ['', 'rp0123456789abc', 'rp0123456789abcde', 'RP0123456789abcd', 'rP0123456789abcd', 'r10123456789abcd',
      'xp0123456789abcd', 'rp0123456789ABCD', 'rp0123456789abcg', 'rp012345-789abcd', 'rp0123456789abc\u0000',
      // Characters whose low byte is a hex digit's: a digit lookup must not read only the low byte.
      'rp0123456789abc\u0130', 'rp0123456789abc\u0161', 'rp\uff10123456789abcd']) {
      expect(table.fits(bad)).toBe(false);
      expect(table.get(bad)).toBe(-1);
      expect(() => table.set(bad, 1)).toThrow(/is not a register ID/);
      expect(() => table.add(bad, 1)).toThrow(/is not a register ID/);
    }
    expect(table.fits('rp0123456789abcd')).toBe(true);
    expect(table.size).toBe(1);
  });
});
