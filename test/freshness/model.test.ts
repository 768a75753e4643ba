import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { freshness, fundedRate, inverseMarginal, marginalFreshness } from '../../src/freshness/index.js';

/** g(x) = 1 − (1 + x)e^(−x), computed the plain way as the reference. */
const g = (x: number): number => 1 - (1 + x) * Math.exp(-x);

describe('the freshness model', () => {
  it('F(λ, f) matches the closed form and its limits', () => {
    expect(freshness(1, 1)).toBeCloseTo(1 - Math.exp(-1), 15);
    expect(freshness(2, 1)).toBeCloseTo((1 - Math.exp(-2)) / 2, 15);
    expect(freshness(1e-12, 1)).toBeCloseTo(1, 11);
    expect(freshness(1, 0)).toBe(0);
    expect(freshness(0, 1)).toBe(1);
  });

  it('∂F/∂f agrees with a central difference', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 10, noNaN: true }), fc.double({ min: 0.01, max: 10, noNaN: true }), (lambda, f) => {
        const h = 1e-6 * f;
        const numeric = (freshness(lambda, f + h) - freshness(lambda, f - h)) / (2 * h);
        expect(marginalFreshness(lambda, f)).toBeCloseTo(numeric, 6);
      }),
      { seed: 8201, numRuns: 200 },
    );
    expect(marginalFreshness(2, 0)).toBe(0.5);
  });

  it('g⁻¹ inverts g from x = 1e-12 to 20 (beyond, y itself rounds to 1)', () => {
    fc.assert(
      fc.property(fc.double({ min: -12, max: 1.3, noNaN: true }), (log10x) => {
        const x = Math.pow(10, log10x);
        const y = x < 1e-3 ? x * x * (0.5 - x / 3) : g(x);
        const back = inverseMarginal(y);
        expect(Math.abs(back - x) / x).toBeLessThan(1e-9);
      }),
      { seed: 8202, numRuns: 500 },
    );
    expect(inverseMarginal(0)).toBe(0);
    expect(inverseMarginal(1)).toBe(Number.POSITIVE_INFINITY);
    expect(inverseMarginal(Number.NaN)).toBe(Number.POSITIVE_INFINITY);
  });

  it('funded rate falls with τ and reaches 0 exactly at τ = w/λ', () => {
    let prev = Number.POSITIVE_INFINITY;
    for (const tau of [1e-6, 1e-3, 0.1, 0.5, 1, 1.9, 1.999]) {
      const f = fundedRate(0.5, 1, tau);
      expect(f).toBeLessThan(prev);
      prev = f;
    }
    expect(fundedRate(0.5, 1, 2)).toBe(0);
    expect(fundedRate(0.5, 1, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(fundedRate(0, 1, 1)).toBe(0);
    expect(fundedRate(1, 0, 1)).toBe(0);
  });
});
