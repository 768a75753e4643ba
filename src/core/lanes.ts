/**
 * 64-bit values as pairs of u32 lanes. BigInt is slow and allocates; hot paths keep u64s as
 * (lo, hi) pairs in typed arrays and convert at the edges (display, tests) with these helpers.
 */
import { InvalidArgumentError } from '../errors/index.js';

const U64_MAX = (1n << 64n) - 1n;

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
  return [Number(v & 0xffffffffn), Number(v >> 32n)];
}

/** Joins [lo, hi] u32 lanes into a bigint. */
export function lanesToU64(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

/** 16 lowercase hex digits of a u64 given as lanes. */
export function lanesToHex(lo: number, hi: number): string {
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}
