import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { SeededRandom, waitJitter } from '../../src/politeness/index.js';
import { VirtualClock } from './virtual-clock.js';

const SEED = 0x7177e4;

describe('SeededRandom', () => {
  it('is reproducible from its seed and differs across seeds, including 0 and negatives', () => {
    const seq = (seed: number) => {
      const r = new SeededRandom(seed);
      return Array.from({ length: 8 }, () => r.nextU32());
    };
    expect(seq(42)).toEqual(seq(42));
    const seeds = [0, 1, -1, 42, 2 ** 32, 2 ** 53 - 1, -(2 ** 53 - 1)];
    const firsts = new Set(seeds.map((s) => seq(s).join()));
    expect(firsts.size).toBe(seeds.length);
    for (const s of seeds) expect(seq(s).every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32)).toBe(true);
    expect(seq(0).some((x) => x !== 0)).toBe(true);
  });

  it('rejects a seed that is not a safe integer', () => {
    for (const s of [1.5, Number.NaN, 2 ** 53, Number.POSITIVE_INFINITY]) {
      expect(() => new SeededRandom(s)).toThrow(InvalidArgumentError);
    }
  });

  it('between stays in bounds and uses one step per draw', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: -10, max: 1e9 }), (seed, lo, span) => {
        const a = new SeededRandom(seed);
        const b = new SeededRandom(seed);
        const hi = lo + span;
        const v = a.between(lo, hi);
        expect(Number.isInteger(v)).toBe(true);
        expect(v).toBeGreaterThanOrEqual(lo);
        expect(v).toBeLessThanOrEqual(Math.max(lo, hi));
        b.nextU32();
        expect(a.nextU32()).toBe(b.nextU32());
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('is uniform over a small range (chi-square, 10 bins, 20 000 draws)', () => {
    const r = new SeededRandom(SEED);
    const bins = new Array<number>(10).fill(0);
    const n = 20_000;
    for (let i = 0; i < n; i++) bins[r.between(0, 9)]!++;
    const e = n / 10;
    const chi2 = bins.reduce((acc, o) => acc + (o - e) ** 2 / e, 0);
    // 9 degrees of freedom: P(χ² > 33.7) ≈ 1e-4.
    expect(chi2).toBeLessThan(33.7);
  });
});

describe('waitJitter', () => {
  it('sleeps exactly the delay it returns, within [min, max], reproducibly', async () => {
    const clock = new VirtualClock();
    const random = new SeededRandom(3);
    const twin = new SeededRandom(3);
    const got: number[] = [];
    for (let i = 0; i < 2000; i++) got.push(await waitJitter(200, 800, { random, sleep: clock.sleep }));
    expect(got).toEqual(Array.from({ length: 2000 }, () => twin.between(200, 800)));
    expect(clock.sleeps).toEqual(got);
    expect(Math.min(...got)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...got)).toBeLessThanOrEqual(800);
    // Both ends are reachable over many draws.
    expect(Math.min(...got)).toBeLessThan(210);
    expect(Math.max(...got)).toBeGreaterThan(790);
  });

  it('clamps max up to min, and does not call sleep for a zero delay', async () => {
    const clock = new VirtualClock();
    const random = new SeededRandom(1);
    expect(await waitJitter(500, 100, { random, sleep: clock.sleep })).toBe(500);
    expect(await waitJitter(0, 0, { random, sleep: clock.sleep })).toBe(0);
    expect(clock.sleeps).toEqual([500]);
  });

  it('works with its defaults (zero delay: no real sleep)', async () => {
    expect(await waitJitter(0, 0)).toBe(0);
  });

  it('rejects bad bounds', async () => {
    await expect(waitJitter(-1, 5)).rejects.toThrow(/minMs to be a finite number >= 0, received -1/);
    await expect(waitJitter(0, Number.POSITIVE_INFINITY)).rejects.toThrow(InvalidArgumentError);
    await expect(waitJitter(Number.NaN, 1)).rejects.toThrow(/minMs/);
  });
});
