import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { expectedFreshness, freshness, marginalFreshness, optimalRates, type PageRate } from '../../src/freshness/index.js';

const five: PageRate[] = [1, 2, 3, 4, 5].map((lambda) => ({ lambda, weight: 1 }));

/**
 * Slow, obviously-correct reference: hand out the budget in small equal slices, each to the
 * page (whose host still has room) with the largest freshness gain for that slice. F is
 * concave in f, so this greedy converges to the optimum as the slice shrinks.
 */
function greedy(pages: readonly PageRate[], budget: number, caps: ReadonlyMap<string, number>, slice: number): number[] {
  const f = pages.map(() => 0);
  const used = new Map<string, number>();
  let left = budget;
  while (left > 1e-12) {
    let best = -1;
    let gain = 0;
    let give = 0;
    for (let i = 0; i < pages.length; i++) {
      const p = pages[i]!;
      const cap = p.host !== undefined ? caps.get(p.host) : undefined;
      const room = Math.min(left, slice, cap === undefined ? Infinity : cap - (used.get(p.host!) ?? 0));
      if (!(room > 1e-12)) continue;
      const g = (p.weight * (freshness(p.lambda, f[i]! + room) - freshness(p.lambda, f[i]!))) / room;
      if (g > gain) {
        gain = g;
        best = i;
        give = room;
      }
    }
    if (best < 0) break;
    f[best]! += give;
    left -= give;
    const h = pages[best]!.host;
    if (h !== undefined) used.set(h, (used.get(h) ?? 0) + give);
  }
  return f;
}

describe('optimalRates', () => {
  it('reproduces the five-page oracle to 3 decimals', () => {
    const f = optimalRates(five, 5);
    const want = [1.1499, 1.3584, 1.3538, 1.1379, 0];
    for (let i = 0; i < 5; i++) expect(f[i]!).toBeCloseTo(want[i]!, 3);
    expect(f.reduce((a, b) => a + b, 0)).toBeCloseTo(5, 10);
    expect(expectedFreshness(five, f)).toBeCloseTo(0.3739, 3);
    expect(expectedFreshness(five, [1, 1, 1, 1, 1])).toBeCloseTo(0.3651, 3);
    expect(expectedFreshness(five, [1 / 3, 2 / 3, 1, 4 / 3, 5 / 3])).toBeCloseTo(0.3167, 3);
  });

  it('meets the KKT conditions: equal marginal value on funded pages, w/λ ≤ τ on starved ones', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            lambda: fc.double({ min: 0.01, max: 10, noNaN: true }),
            weight: fc.double({ min: 0.05, max: 20, noNaN: true }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.double({ min: 0.01, max: 50, noNaN: true }),
        (pages, budget) => {
          const f = optimalRates(pages, budget);
          const sum = f.reduce((a, b) => a + b, 0);
          
          expect(Math.abs(sum - budget)).toBeLessThanOrEqual(1e-9 * budget);
          const levels: number[] = [];
          for (let i = 0; i < pages.length; i++) if (f[i]! > 0) levels.push(pages[i]!.weight * marginalFreshness(pages[i]!.lambda, f[i]!));
          const tau = levels.reduce((a, b) => a + b, 0) / levels.length;
          for (const l of levels) expect(Math.abs(l - tau)).toBeLessThanOrEqual(1e-6 * tau);
          for (let i = 0; i < pages.length; i++) {
            if (f[i] === 0) expect(pages[i]!.weight / pages[i]!.lambda).toBeLessThanOrEqual(tau * (1 + 1e-6));
          }
        },
      ),
      { seed: 8001, numRuns: 200 },
    );
  });

  it('agrees with a greedy slice-by-slice allocation (the slow reference)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            lambda: fc.double({ min: 0.05, max: 5, noNaN: true }),
            weight: fc.double({ min: 0.2, max: 5, noNaN: true }),
            host: fc.constantFrom('a', 'b', 'c'),
          }),
          { minLength: 2, maxLength: 6 },
        ),
        fc.double({ min: 0.5, max: 10, noNaN: true }),
        fc.double({ min: 0.1, max: 3, noNaN: true }),
        (pages, budget, capA) => {
          const caps = new Map([['a', capA]]);
          const f = optimalRates(pages, budget, caps);
          const g = greedy(pages, budget, caps, budget / 4000);
          const fo = expectedFreshness(pages, f);
          const go = expectedFreshness(pages, g);
          // The optimum is at least as good as the greedy, and the greedy gets within its slice error.
          expect(fo).toBeGreaterThanOrEqual(go - 1e-9);
          expect(fo - go).toBeLessThan(2e-3);
          const onA = pages.reduce((s, p, i) => s + (p.host === 'a' ? f[i]! : 0), 0);
          expect(onA).toBeLessThanOrEqual(capA * (1 + 1e-9));
        },
      ),
      { seed: 8002, numRuns: 40, endOnFailure: true },
    );
  });

  it('makes a saturated host share exactly its cap and gives the rest to everyone else', () => {
    const pages: PageRate[] = [
      ...Array.from({ length: 10 }, (_, i) => ({ lambda: 0.5 + i * 0.1, weight: 1 + (i % 3), host: 'capped.example' })),
      ...Array.from({ length: 10 }, (_, i) => ({ lambda: 0.5 + i * 0.1, weight: 1 + (i % 3), host: 'free.example' })),
    ];
    const budget = 12;
    const uncapped = optimalRates(pages, budget);
    const cappedDemand = uncapped.slice(0, 10).reduce((a, b) => a + b, 0);
    const cap = cappedDemand / 3; // binds hard
    const f = optimalRates(pages, budget, new Map([['capped.example', cap]]));
    const onCapped = f.slice(0, 10).reduce((a, b) => a + b, 0);
    const onFree = f.slice(10).reduce((a, b) => a + b, 0);
    expect(onCapped).toBeCloseTo(cap, 9);
    expect(onCapped + onFree).toBeCloseTo(budget, 9);
    // The freed budget went to the free host: each of its pages gets more than before.
    for (let i = 10; i < 20; i++) expect(f[i]!).toBeGreaterThanOrEqual(uncapped[i]!);
    // Inside the capped host, the marginal rule still holds at the host's own (higher) level.
    const levels = [...f.slice(0, 10)].map((r, i) => (r > 0 ? pages[i]!.weight * marginalFreshness(pages[i]!.lambda, r) : Number.NaN)).filter((x) => !Number.isNaN(x));
    for (const l of levels) expect(l).toBeCloseTo(levels[0]!, 6);
    // A cap that does not bind changes nothing.
    const loose = optimalRates(pages, budget, new Map([['capped.example', cappedDemand * 2]]));
    for (let i = 0; i < 20; i++) expect(loose[i]!).toBeCloseTo(uncapped[i]!, 9);
  });

  it('leaves budget unspent when every page sits on a host whose cap is below its share', () => {
    const pages: PageRate[] = [
      { lambda: 1, weight: 1, host: 'a' },
      { lambda: 2, weight: 1, host: 'b' },
    ];
    const f = optimalRates(pages, 10, new Map([['a', 1], ['b', 0.5]]));
    expect(f[0]!).toBeCloseTo(1, 9);
    expect(f[1]!).toBeCloseTo(0.5, 9);
    expect(optimalRates(pages, 10, new Map([['a', 0]]))[0]).toBe(0);
  });

  it('handles the degenerate inputs', () => {
    expect(optimalRates([], 5)).toEqual(new Float64Array(0));
    expect([...optimalRates(five, 0)]).toEqual([0, 0, 0, 0, 0]);
    const f = optimalRates([{ lambda: 0, weight: 1 }, { lambda: 1, weight: 0 }, { lambda: 1, weight: 1 }], 2);
    expect(f[0]).toBe(0);
    expect(f[1]).toBe(0);
    expect(f[2]!).toBeCloseTo(2, 9);
  });

  it('rejects bad input with the offending value named', () => {
    expect(() => optimalRates(five, -1)).toThrow(InvalidArgumentError);
    expect(() => optimalRates(five, Number.NaN)).toThrow(/budget >= 0, received NaN/);
    expect(() => optimalRates([{ lambda: -1, weight: 1 }], 1)).toThrow(/pages\[0\]\.lambda.*received -1/);
    expect(() => optimalRates([{ lambda: 1, weight: Number.POSITIVE_INFINITY }], 1)).toThrow(/pages\[0\]\.weight/);
    expect(() => optimalRates([{ lambda: 1, weight: 1, host: 'h' }], 1, new Map([['h', -2]]))).toThrow(/hostCaps\["h"\].*-2/);
    expect(() => expectedFreshness(five, [1])).toThrow(/5 pages but 1 rates/);
  });
});
