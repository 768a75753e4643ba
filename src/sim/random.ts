/**
 * Deterministic randomness for the simulated web: a string hash that turns (seed, host, path,
 * …) into 32 bits, a small seeded generator (sfc32) for everything drawn in sequence, and the
 * pseudo-word vocabulary page text is written in.
 *
 * Everything the sim generates is derived from `hashParts(seed, …)` of the thing being
 * generated, never from a shared generator advanced in request order, so a page's content does
 * not depend on which pages were asked for before it. This file is plain arithmetic: no clock,
 * no `Math.random`.
 */

import { fmix32 } from '../core/mix.js';

/**
 * Hashes a seed and a list of parts to an unsigned 32-bit integer. Parts are separated, so
 * `("ab", "c")` and `("a", "bc")` differ. Numbers hash by their decimal text.
 */
export function hashParts(seed: number, ...parts: readonly (string | number)[]): number {
  let h = fmix32((seed >>> 0) ^ 0x9e3779b9);
  for (const part of parts) {
    const s = typeof part === 'number' ? String(part) : part;
    for (let i = 0; i < s.length; i++) {
      h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
      h ^= h >>> 15;
    }
    h = fmix32(h ^ 0x2f ^ (s.length << 8));
  }
  return h;
}

/** A 64-bit hex digest (two independent 32-bit hashes) of a string, for ETags. */
export function hexDigest(text: string): string {
  const a = hashParts(0x51a7e, text);
  const b = hashParts(0x0e7a6, text);
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}

/**
 * sfc32 (Chris Doty-Humphrey's small fast counting generator): 128 bits of state, passes
 * PractRand to many terabytes, and needs only 32-bit integer arithmetic.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d = 1;

  /** Seeds from a 32-bit value; the parts are mixed in like `hashParts`. */
  constructor(seed: number, ...parts: readonly (string | number)[]) {
    const base = hashParts(seed, ...parts);
    this.a = hashParts(base, 'a');
    this.b = hashParts(base, 'b');
    this.c = hashParts(base, 'c');
    // Discard the first outputs: sfc32 mixes its seed within a dozen steps.
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform unsigned 32-bit integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  float(): number {
    const hi = this.u32() >>> 5; // 27 bits
    const lo = this.u32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** A uniform double in [0, 1) with 32 random bits: enough for picks and coin flips, half the cost of `float`. */
  unit(): number {
    return this.u32() / 4294967296;
  }

  /** A uniform integer in [0, n) (n well below 2³²). */
  int(n: number): number {
    return Math.floor(this.unit() * n);
  }

  /** A uniform integer in [lo, hi] (inclusive). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.unit() < p;
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** An exponential variate with the given rate (mean 1/rate). */
  exp(rate: number): number {
    // 1 - float() is in (0, 1], so the log is finite.
    return -Math.log(1 - this.float()) / rate;
  }

  /** Shuffles in place (Fisher–Yates) and returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = items[i] as T;
      items[i] = items[j] as T;
      items[j] = t;
    }
    return items;
  }
}

const SYLLABLES = [
  'ka', 'ri', 'to', 'mo', 'na', 'shi', 'ru', 've', 'lo', 'pa', 'den', 'mar', 'sel', 'tor', 'quin',
  'bel', 'gra', 'fo', 'li', 'zu', 'ar', 'en', 'ot', 'um', 'is', 'bro', 'cal', 'dri', 'fen', 'gol',
  'han', 'jor', 'kel', 'lun', 'mes', 'nor', 'pil', 'ras', 'sto', 'tev', 'ul', 'vin', 'wex', 'yor',
] as const;

/** Size of the shared vocabulary page text draws from. */
export const VOCABULARY_SIZE = 8192;

let vocabulary: readonly string[] | undefined;

/**
 * The sim's fixed vocabulary: distinct pseudo-words of two to four syllables. It does not
 * depend on the seed (every sim speaks the same language), so it is built once per process.
 */
export function words(): readonly string[] {
  if (vocabulary) return vocabulary;
  const rng = new Rng(0x70c4b, 'vocabulary');
  const seen = new Set<string>();
  const out: string[] = [];
  while (out.length < VOCABULARY_SIZE) {
    const n = rng.range(2, 4);
    let w = '';
    for (let i = 0; i < n; i++) w += rng.pick(SYLLABLES);
    if (!seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  vocabulary = out;
  return out;
}

/** Capitalizes the first letter. */
export function capitalize(word: string): string {
  return word.length === 0 ? word : word[0]!.toUpperCase() + word.slice(1);
}
