/**
 * 64-bit values as pairs of u32 lanes. BigInt is slow and allocates; hot paths keep u64s as
 * (lo, hi) pairs in typed arrays and convert at the edges (display, tests) with these helpers.
 */
import { InvalidArgumentError } from '../errors/index.js';

const U64_MAX = (1n << 64n) - 1n;

/**
 * One u64 seen as two u32 lanes: a BigInt stored into the u64 view is split by the store
 * itself, and the lanes read back as numbers — no BigInt arithmetic, which allocates a BigInt
 * per operation (four per conversion; the report path converts three fingerprints a page).
 */
const SCRATCH64 = new BigUint64Array(1);
const SCRATCH32 = new Uint32Array(SCRATCH64.buffer);
/** Lane indices of the low and high halves in the platform's byte order. */
const LO = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HI = 1 - LO;

/** Splits a u64 given as bigint or a safe non-negative integer into [lo, hi] u32 lanes. */
export function u64Lanes(value: bigint | number, what = 'value'): [number, number] {
  // Fast path: small numbers (the common seeds) need no BigInt arithmetic at all.
  if (typeof value === 'number' && value >= 0 && value <= 0xffffffff && Number.isInteger(value)) return [value, 0];
  let v: bigint;
  if (typeof value === 'bigint') {
    v = value;
  } else if (Number.isSafeInteger(value) && value >= 0) {
    v = BigInt(value);
  } else {
    throw new InvalidArgumentError(`${what}: expected a u64 as a bigint or a non-negative safe integer, received ${String(value)}`);
  }
  if (v < 0n || v > U64_MAX) {
    throw new InvalidArgumentError(`${what}: expected a u64 in [0, 2^64), received ${v}`);
  }
  SCRATCH64[0] = v;
  return [SCRATCH32[LO]!, SCRATCH32[HI]!];
}

/** Joins [lo, hi] u32 lanes into a bigint. */
export function lanesToU64(lo: number, hi: number): bigint {
  SCRATCH32[LO] = lo;
  SCRATCH32[HI] = hi;
  return SCRATCH64[0]!;
}

/** 16 lowercase hex digits of a u64 given as lanes. */
export function lanesToHex(lo: number, hi: number): string {
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}
