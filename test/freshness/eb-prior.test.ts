import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EB_GRID, LearnedPrior, estimateWithPrior, logLikelihood } from '../../bench/freshness/eb-prior.js';
import { MeguriEstimatorPolicy, optimumPolicy } from '../../bench/freshness/policies.js';
import { compare } from '../../bench/freshness/run.js';
import { defaultParams, estimate, newFreshnessRecord } from '../../src/freshness/index.js';

// The empirical-Bayes experiment of DESIGN §20 (bench only): its posterior must be `estimate`'s
// when the prior is flat, or the measurement compares two things at once.
describe('empirical-Bayes prior (bench experiment)', () => {
  const p = defaultParams();
  const record = fc
    .record({
      n: fc.integer({ min: 1, max: 60 }),
      changedShare: fc.double({ min: 0, max: 1, noNaN: true }),
      span: fc.integer({ min: 1, max: 3000 }),
      unchangedShare: fc.double({ min: 0, max: 1, noNaN: true }),
      spreadLog: fc.double({ min: 0, max: 2, noNaN: true }),
      kept: fc.boolean(),
      lm: fc.constantFrom(0, -1, 50),
    })
    .map(({ n, changedShare, span, unchangedShare, spreadLog, kept, lm }) => {
      const X = Math.round(changedShare * n);
      const unchanged = X === n ? 0 : X === 0 ? span : unchangedShare * span;
      const perChange = X > 0 ? (span - unchanged) / X : 0;
      return newFreshnessRecord({
        firstCrawled: 1000,
        lastCrawled: 1000 + span,
        crawlCount: n + 1,
        changeCount: X,
        lmHours: lm,
        unchangedHours: kept ? unchanged : Number.NaN,
        changedLogHours: kept ? (X > 0 && perChange > 0 ? X * (Math.log(perChange) - spreadLog) : 0) : Number.NaN,
      });
    });

  it('with the flat prior, estimateWithPrior is estimate (every path)', () => {
    fc.assert(
      fc.property(record, (rec) => {
        const prior = new LearnedPrior();
        const a = estimate(rec, p);
        const b = estimateWithPrior(rec, p, prior).lambda;
        expect(Math.abs(b / a - 1)).toBeLessThan(1e-9);
      }),
    );
  });

  it('its posterior is normalized and follows the prior: a prior with no mass above a rate caps a one-sided page there', () => {
    const rec = newFreshnessRecord({ firstCrawled: 0, lastCrawled: 500, crawlCount: 6, changeCount: 5, unchangedHours: 0, changedLogHours: 5 * Math.log(100) });
    const flat = new LearnedPrior();
    const free = estimateWithPrior(rec, p, flat);
    expect(free.posterior).toBe(true);
    expect(flat.post.reduce((a, x) => a + x, 0)).toBeCloseTo(1, 12);
    // Histogram all in the lower half of the grid, 1 % flat: the harmonic mean drops.
    const low = new LearnedPrior(0.01);
    for (let k = 0; k < EB_GRID / 2; k++) low.hist[k] = 1;
    low.refresh();
    const cut = estimateWithPrior(rec, p, low);
    expect(cut.lambda).toBeLessThan(free.lambda / 2);
  });

  it('fitBatch puts the mass where the likelihoods agree and keeps every bin at least mix / 48', () => {
    const row = new Float64Array(EB_GRID);
    const lik = new Float64Array(200 * EB_GRID);
    // 200 pages at about one change per 10 days, each seen over 30 intervals of 5 days.
    for (let i = 0; i < 200; i++) {
      const X = 10 + (i % 5);
      const rec = newFreshnessRecord({ firstCrawled: 0, lastCrawled: 3600, crawlCount: 31, changeCount: X, unchangedHours: 120 * (30 - X), changedLogHours: X * Math.log(120) });
      expect(logLikelihood(rec, p, row)).toBe(true);
      const best = Math.max(...row);
      for (let k = 0; k < EB_GRID; k++) lik[i * EB_GRID + k] = Math.exp(row[k]! - best);
    }
    const prior = new LearnedPrior(0.05);
    prior.fitBatch(lik, 200, 50);
    const g = Array.from(prior.logPrior, Math.exp);
    expect(g.reduce((a, x) => a + x, 0)).toBeCloseTo(1, 9);
    for (const x of g) expect(x).toBeGreaterThanOrEqual(0.05 / EB_GRID - 1e-12);
    const top = g.indexOf(Math.max(...g));
    const lo = Math.log(p.minRate);
    const step = (Math.log(p.maxRate) - lo) / (EB_GRID - 1);
    const rate = Math.exp(lo + top * step) * 24;
    expect(rate).toBeGreaterThan(0.05);
    expect(rate).toBeLessThan(0.2);
  });

  it('the estimator column with a frozen (flat) learned prior is the default column exactly', () => {
    const a = compare({ n: 400, seed: 3 }, [optimumPolicy(), new MeguriEstimatorPolicy()]);
    const b = compare({ n: 400, seed: 3 }, [optimumPolicy(), new MeguriEstimatorPolicy({ learnedPrior: { frozen: true } })]);
    expect(b.meguriOverOptimum).toBe(a.meguriOverOptimum);
  });
});
