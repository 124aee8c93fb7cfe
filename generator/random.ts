// Deterministic randomness for the generators: integer hashes of (seed, salt, ordinal), keyed bijections for IDs
// that must never collide, and a small sequential PRNG. Nothing here reads the clock, Math.random or the locale.
import { fnv1a32 } from '../common/hash.ts';

/** The murmur3 32-bit finaliser: a cheap, well-mixed bijection on u32. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A u32 key from any seed and a purpose label, so that each use of randomness draws from its own stream. */
export function saltOf(seed: number | string, purpose: string): number {
  return fmix32(fnv1a32(`${seed}\u0000${purpose}`));
}

/** u32 hash of a non-negative integer (up to 2^53) under a salt. */
export function hash32(n: number, salt: number): number {
  const lo = n >>> 0;
  const hi = Math.floor(n / 0x100000000) >>> 0;
  return fmix32(fmix32(lo ^ salt) + Math.imul(hi ^ 0x9e3779b9, 0x85ebca6b));
}

/** Uniform in [0, 1) from (n, salt). */
export const unit = (n: number, salt: number): number => hash32(n, salt) / 0x100000000;

const MASK28 = 0xfffffff;
const TWO28 = 0x10000000;

/**
 * A keyed permutation of [0, 2^56), written as 14 hex digits. Four Feistel rounds over 28-bit halves: being a
 * bijection, distinct ordinals can never give the same register ID, whatever the seed.
 */
export function feistelHex56(n: number, key: number): string {
  let l = Math.floor(n / TWO28) & MASK28;
  let r = n % TWO28;
  for (let round = 0; round < 4; round++) {
    const f = fmix32((r ^ Math.imul(key + round, 0x9e3779b1)) >>> 0) & MASK28;
    const t = l ^ f;
    l = r;
    r = t;
  }
  return l.toString(16).padStart(7, '0') + r.toString(16).padStart(7, '0');
}

/** A keyed permutation of u32 (Feistel over 16-bit halves): distinct inputs give distinct outputs. */
export function feistel32(n: number, key: number): number {
  let l = (n >>> 16) & 0xffff;
  let r = n & 0xffff;
  for (let round = 0; round < 4; round++) {
    const f = fmix32((r ^ Math.imul(key + round, 0x9e3779b1)) >>> 0) & 0xffff;
    const t = l ^ f;
    l = r;
    r = t;
  }
  return ((l << 16) | r) >>> 0;
}

/** sfc32: a small, fast sequential PRNG for choices whose order is fixed by the generator's own loop. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | string, purpose: string) {
    this.a = saltOf(seed, purpose + '/a');
    this.b = saltOf(seed, purpose + '/b');
    this.c = saltOf(seed, purpose + '/c');
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextU32(); // let the state mix before first use
  }

  nextU32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 0x100000000;
  }

  /** Integer in [0, k). */
  int(k: number): number {
    return Math.floor(this.next() * k);
  }

  /** One element of a non-empty array. */
  of<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

/** Uniform draws in [0, 1) from an Rng: for callers that only need a seeded sequence (benchmarks, test loops). */
export function seededRandom(seed: number | string, purpose = 'random'): () => number {
  const r = new Rng(seed, purpose);
  return () => r.next();
}
