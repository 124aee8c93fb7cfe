// The few distinct values of a low-cardinality column (a bridge's provider, an entity's type), recognised straight
// from a record's bytes: stage 1 meets the provider in 10 million bridge rows at full size, and decoding it to a
// string for each was a large share of that thread's time.
import { fnv1a32, fnv1a32Bytes } from '../../common/hash.ts';
import type { CsvRecord } from './csv-reader.ts';

export class FieldInterner {
  /** The distinct values, in the order they were first met. */
  readonly values: string[] = [];
  /** Indexes in `values` by the value's fnv1a32 (the hash of its UTF-8 bytes, so bytes and strings agree). */
  private readonly byHash = new Map<number, number[]>();

  /** The index in `values` of field `k` of a record, the value added when it is new. */
  indexIn(record: CsvRecord, k: number): number {
    if (record.quoted || !record.ascii) return this.indexOf(record.text(k));
    const b = record.buf;
    const start = record.fieldStart(k);
    const length = record.ends[k] - start;
    const hash = fnv1a32Bytes(b, start, start + length);
    const seen = this.byHash.get(hash);
    if (seen) {
      next: for (const i of seen) {
        const value = this.values[i];
        if (value.length !== length) continue;
        for (let j = 0; j < length; j++) if (value.charCodeAt(j) !== b[start + j]) continue next;
        return i;
      }
    }
    return this.add(record.text(k), hash);
  }

  /** The index in `values` of `value`, added when it is new. */
  indexOf(value: string): number {
    const hash = fnv1a32(value);
    for (const i of this.byHash.get(hash) ?? []) if (this.values[i] === value) return i;
    return this.add(value, hash);
  }

  private add(value: string, hash: number): number {
    const i = this.values.push(value) - 1;
    const seen = this.byHash.get(hash);
    if (seen) seen.push(i);
    else this.byHash.set(hash, [i]);
    return i;
  }
}
