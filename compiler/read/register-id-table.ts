// Live register IDs → a small number (their partition, or partition and type), for stage 1's ~20 million lookups at
// full size. A Map keyed by the ID strings was a large share of stage 1's CPU there: each lookup hashes a fresh
// substring of a row, then compares it with its key's characters, and 2 million keys scattered over the heap miss
// the CPU cache. A register ID (`r`, a lowercase letter, 14 lowercase hex digits) is 61 bits, so the table keeps
// those bits in two typed arrays, open-addressed: a lookup parses the ID's 16 characters and probes adjacent slots,
// with no string kept and none made. Stage 1 looks IDs up straight from the CSV bytes (the `...In` methods), so most
// rows never become strings at all.
import type { CsvRecord } from './csv-reader.ts';

/** Slots of the smallest table; it doubles whenever it would be more than half full. */
const FIRST_BITS = 16;
/** Marks an empty slot in `hi`, which otherwise holds 29 bits (the letter and 6 hex digits), never negative. */
const EMPTY = -1;

/**
 * The value of each byte as a lowercase hex digit, or -1: one load per character instead of two range tests, and a
 * parse ORs the loads to learn of a bad digit once, at the end, rather than branching per character.
 */
const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) HEX['0123456789abcdef'.charCodeAt(d)] = d;

export class RegisterIdTable {
  private bits = FIRST_BITS;
  private hi = new Int32Array(1 << FIRST_BITS).fill(EMPTY);
  private lo = new Int32Array(1 << FIRST_BITS);
  private values = new Int32Array(1 << FIRST_BITS);
  private count = 0;
  /** The key `parse` found last: the letter and the first 6 digits, and the last 8 digits. */
  private keyHi = 0;
  private keyLo = 0;
  /** A string ID's characters, for `parse`. */
  private readonly scratch = Buffer.alloc(16);

  get size(): number {
    return this.count;
  }

  /** Whether `id` has a register ID's shape, so that `set` takes it. */
  fits(id: string): boolean {
    return this.parse(id);
  }

  /** The value of `id`, or -1 when the table does not hold it (as for any string that is not a register ID). */
  get(id: string): number {
    if (!this.parse(id)) return -1;
    const at = this.find();
    return at < 0 ? -1 : this.values[at];
  }

  has(id: string): boolean {
    return this.get(id) >= 0;
  }

  /** Sets `id`'s value, a non-negative int32; throws for a string that is not a register ID (see `fits`). */
  set(id: string, value: number): void {
    const at = this.findOrInsert(id, value);
    if (at >= 0) this.values[at] = value;
  }

  /** `get` of field `k` of a record. */
  getIn(record: CsvRecord, k: number): number {
    if (!this.parseIn(record, k)) return -1;
    const at = this.find();
    return at < 0 ? -1 : this.values[at];
  }

  /** `fits` of field `k` of a record. */
  fitsIn(record: CsvRecord, k: number): boolean {
    return this.parseIn(record, k);
  }

  /** `set` of field `k` of a record, which must fit (see `fitsIn`). */
  setIn(record: CsvRecord, k: number, value: number): void {
    if (!this.parseIn(record, k)) throw new Error(`${JSON.stringify(record.text(k))} is not a register ID`);
    const at = this.findOrInsertParsed(value);
    if (at >= 0) this.values[at] = value;
  }

  /** `add` of field `k` of a record, which must fit (see `fitsIn`). */
  addIn(record: CsvRecord, k: number, value: number): boolean {
    if (!this.parseIn(record, k)) throw new Error(`${JSON.stringify(record.text(k))} is not a register ID`);
    return this.findOrInsertParsed(value) < 0;
  }

  /**
   * Sets `id` to `value` unless the table holds it already; returns whether it did. One parse and one probe, where
   * `has` then `set` take two of each. Throws as `set` does.
   */
  add(id: string, value: number): boolean {
    return this.findOrInsert(id, value) < 0;
  }

  /** The slot already holding `id`; or, when none does, -1 once `id` is inserted with `value`. Throws as `set` does. */
  private findOrInsert(id: string, value: number): number {
    if (!this.parse(id)) throw new Error(`${JSON.stringify(id)} is not a register ID`);
    return this.findOrInsertParsed(value);
  }

  /** findOrInsert of the key `parse` or `parseIn` found last. */
  private findOrInsertParsed(value: number): number {
    if ((value | 0) !== value || value < 0) throw new Error(`register ID table value ${value} is not a non-negative int32`);
    const at = this.find();
    if (at >= 0) return at;
    if ((this.count + 1) * 2 > this.hi.length) this.grow();
    this.insert(this.keyHi, this.keyLo, value);
    this.count++;
    return -1;
  }

  /**
   * Parses a string ID by copying its characters into a 16-byte buffer and parsing that: the byte path (parseIn) is
   * the hot one, and one parser serves both. A character above 0xff is no ID's, so it fails the parse as 0 does.
   */
  private parse(id: string): boolean {
    if (id.length !== 16) return false;
    const b = this.scratch;
    for (let i = 0; i < 16; i++) {
      const c = id.charCodeAt(i);
      b[i] = c > 0xff ? 0 : c;
    }
    return this.parseBytes(b, 0);
  }

  /** `parse` of field `k` of a record: of its bytes when it is plain. */
  private parseIn(record: CsvRecord, k: number): boolean {
    if (record.quoted) return this.parse(record.quoted[k]);
    const start = record.fieldStart(k);
    return record.ends[k] - start === 16 && this.parseBytes(record.buf, start);
  }

  /** Parses the 16 bytes at `b[start]` into keyHi and keyLo; false when they are no register ID. */
  private parseBytes(b: Buffer, start: number): boolean {
    if (b[start] !== 114) return false;
    const letter = b[start + 1] - 97;
    if (letter < 0 || letter > 25) return false;
    let hi = letter;
    let bad = 0;
    for (let i = start + 2; i < start + 8; i++) {
      const d = HEX[b[i]];
      bad |= d;
      hi = (hi << 4) | d;
    }
    let lo = 0;
    for (let i = start + 8; i < start + 16; i++) {
      const d = HEX[b[i]];
      bad |= d;
      lo = (lo << 4) | d;
    }
    if (bad < 0) return false;
    this.keyHi = hi;
    this.keyLo = lo;
    return true;
  }

  /** First slot to probe for a key: its bits mixed (IDs need not be random), top bits taken. */
  private slotOf(hi: number, lo: number): number {
    let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 15;
    h = Math.imul(h, 0xc2b2ae35);
    return (h ^ (h >>> 13)) >>> (32 - this.bits);
  }

  /** The slot holding the parsed key, or -1. */
  private find(): number {
    const mask = this.hi.length - 1;
    const kh = this.keyHi;
    const kl = this.keyLo;
    for (let at = this.slotOf(kh, kl); ; at = (at + 1) & mask) {
      const h = this.hi[at];
      if (h === EMPTY) return -1;
      if (h === kh && this.lo[at] === kl) return at;
    }
  }

  private insert(kh: number, kl: number, value: number): void {
    const mask = this.hi.length - 1;
    let at = this.slotOf(kh, kl);
    while (this.hi[at] !== EMPTY) at = (at + 1) & mask;
    this.hi[at] = kh;
    this.lo[at] = kl;
    this.values[at] = value;
  }

  private grow(): void {
    const { hi, lo, values } = this;
    this.bits++;
    this.hi = new Int32Array(1 << this.bits).fill(EMPTY);
    this.lo = new Int32Array(1 << this.bits);
    this.values = new Int32Array(1 << this.bits);
    for (let at = 0; at < hi.length; at++) if (hi[at] !== EMPTY) this.insert(hi[at], lo[at], values[at]);
  }
}
