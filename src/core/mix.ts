/**
 * 32-bit integer mixing shared by the seeded generators (politeness jitter, the simulated
 * web, tests, benchmarks and the demo), so each is one definition rather than a copy per file.
 *
 * `fmix32` is MurmurHash3's 32-bit finalizer (Appleby, smhasher): xor-shift 16, multiply by
 * 0x85ebca6b, xor-shift 13, multiply by 0xc2b2ae35, xor-shift 16. It is a bijection on u32 in
 * which every input bit affects every output bit with probability close to ½ (avalanche).
 *
 * `mulberry32` (Tommy Ettinger, 2017) is a one-word generator: a Weyl step of 0x6d2b79f5 and
 * an output tempering; period 2^32, fine for reproducible synthetic data and test streams, not
 * for statistics that need long periods (sim's `Rng`, sfc32, is that).
 *
 * Plain arithmetic on JS numbers with `Math.imul`: no BigInt, no allocation per call.
 */

/** MurmurHash3's 32-bit finalizer: a bijective avalanche on u32 (returns an unsigned value). */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const MULBERRY_STEP = 0x6d2b79f5;

/** mulberry32's output for state word `s` (already stepped), as a u32. */
function temper(s: number): number {
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

/** A seeded mulberry32 stream: each call returns the next value, uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + MULBERRY_STEP) >>> 0;
    return temper(a) / 4294967296;
  };
}

/**
 * One mulberry32 step on an external state word (`state[i]`, updated in place): the same
 * sequence as `mulberry32(state[i])`, for many independent streams kept in one typed array.
 */
export function mulberry32Step(state: Uint32Array, i: number): number {
  const s = (state[i]! + MULBERRY_STEP) >>> 0;
  state[i] = s;
  return temper(s) / 4294967296;
}
