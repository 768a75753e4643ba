/**
 * The governor's jitter source: a small seeded PRNG, so a run's delays are reproducible from
 * its seed and tests can assert exact sequences.
 *
 * Generator: xoshiro128** (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", 2018) — four 32-bit words of state, period 2^128 − 1, one output per step
 * computed with `Math.imul` and unsigned shifts, so it runs on plain JS numbers with no
 * BigInt. The all-zero state is the one fixed point and must be avoided; the seed is spread
 * over the four words with the murmur3 32-bit finalizer (a bijective avalanche mix) applied to
 * seed-derived words, and a zero result is replaced by a constant.
 *
 * Range draws use one step each: `lo + ⌊u · (hi − lo + 1)⌋` with `u = x / 2^32`, capped at
 * `hi`. For integer bounds this is uniform over the integers of [lo, hi] up to a bias below
 * (hi − lo + 1) / 2^32 — under 2·10⁻⁵ for a one-minute window — which is irrelevant for
 * request spacing.
 */
import { fmix32 } from '../core/mix.js';
import { InvalidArgumentError } from '../errors/index.js';

const TWO_POW_32 = 4294967296;
/** Replaces an all-zero state (the generator's only fixed point). */
const ZERO_STATE_FALLBACK = 0x9e3779b9;

/** murmur3's fmix32: a bijective avalanche on 32-bit words. */
const mix32 = fmix32;

/** Reproducible 32-bit random numbers from a seed (xoshiro128**). */
export class SeededRandom {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /**
   * @param seed any safe integer (negative allowed); equal seeds give equal sequences.
   * @throws InvalidArgumentError when `seed` is not a safe integer.
   */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) {
      throw new InvalidArgumentError(`SeededRandom: expected a safe integer seed, received ${String(seed)}`);
    }
    const lo = seed >>> 0;
    const hi = Math.floor(seed / TWO_POW_32) >>> 0;
    // Distinct odd offsets keep the four words unequal even for seed 0.
    this.#s0 = mix32(lo ^ 0x243f6a88);
    this.#s1 = mix32(hi ^ 0x85a308d3);
    this.#s2 = mix32((lo + 0x13198a2e) ^ mix32(hi));
    this.#s3 = mix32((hi + 0x03707344) ^ mix32(lo));
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = ZERO_STATE_FALLBACK;
  }

  /** The next value, uniform over [0, 2^32). Advances the state by one step. */
  nextU32(): number {
    const s1 = this.#s1;
    const x = Math.imul(s1, 5);
    const result = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = (this.#s3 << 11) | (this.#s3 >>> 21);
    return result;
  }

  /**
   * A draw in [lo, max(lo, hi)] using exactly one step. With integer bounds the result is an
   * integer. The caller validates the bounds (finite, lo ≥ 0).
   */
  between(lo: number, hi: number): number {
    const u = this.nextU32() / TWO_POW_32;
    if (!(hi > lo)) return lo;
    const v = lo + Math.floor(u * (hi - lo + 1));
    return v > hi ? hi : v;
  }
}

/** A fresh random seed (32 bits) for generators the caller did not seed. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 4294967296);
}
