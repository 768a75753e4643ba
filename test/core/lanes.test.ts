// u64 ⇄ u32 lanes through a scratch BigUint64Array (issue 19: no BigInt arithmetic on the
// report path) must agree with the arithmetic definition for every u64 and every lane pair.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lanesToU64, u64Lanes } from '../../src/core/lanes.js';

describe('u64 lanes', () => {
  it('split and join agree with BigInt arithmetic (fast-check)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (v) => {
        const [lo, hi] = u64Lanes(v);
        expect(lo).toBe(Number(v & 0xffffffffn));
        expect(hi).toBe(Number(v >> 32n));
        expect(lanesToU64(lo, hi)).toBe(v);
      }),
      { seed: 1964, numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), (lo, hi) => {
        expect(lanesToU64(lo, hi)).toBe((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
      }),
      { seed: 1965, numRuns: 2000 },
    );
  });

  it('keeps the edges: 0, 2^32 − 1, 2^32, 2^64 − 1, safe integers, and refuses the rest', () => {
    expect(u64Lanes(0n)).toEqual([0, 0]);
    expect(u64Lanes(0xffffffffn)).toEqual([0xffffffff, 0]);
    expect(u64Lanes(1n << 32n)).toEqual([0, 1]);
    expect(u64Lanes((1n << 64n) - 1n)).toEqual([0xffffffff, 0xffffffff]);
    expect(u64Lanes(2 ** 53 - 1)).toEqual([0xffffffff, 0x1fffff]);
    expect(() => u64Lanes(1n << 64n)).toThrow();
    expect(() => u64Lanes(-1n)).toThrow();
    expect(() => u64Lanes(-1)).toThrow();
  });
});
