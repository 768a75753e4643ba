import { describe, expect, it } from 'vitest';
import {
  defaultParams,
  estimate,
  freshnessParams,
  lastModifiedEstimate,
  newFreshnessRecord,
  noChangeRatioEstimate,
} from '../../src/freshness/index.js';

const p = defaultParams();

describe('noChangeRatioEstimate', () => {
  it('matches the published values at α = 0.5', () => {
    expect(noChangeRatioEstimate(10, 3, 0.5)).toBeCloseTo(0.336472, 6);
    expect(noChangeRatioEstimate(10, 10, 0.5)).toBeCloseTo(Math.log(21), 12);
    expect(noChangeRatioEstimate(10, 0, 0.5)).toBe(0);
  });

  it('is NaN outside its domain', () => {
    expect(noChangeRatioEstimate(3, 4, 0.5)).toBeNaN();
    expect(noChangeRatioEstimate(3, -1, 0.5)).toBeNaN();
    expect(noChangeRatioEstimate(3, 1, 0)).toBeNaN();
  });

  it('is nearly unbiased for moderate λI, unlike the naive X/n (seeded Monte Carlo)', () => {
    let s = 12345;
    const rand = (): number => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return (s + 0.5) / 4294967296;
    };
    const lambdaI = 1; // one change per interval on average
    const n = 50;
    let sum = 0;
    let naive = 0;
    const trials = 4000;
    for (let t = 0; t < trials; t++) {
      let X = 0;
      for (let k = 0; k < n; k++) if (rand() < 1 - Math.exp(-lambdaI)) X++;
      sum += noChangeRatioEstimate(n, X, 0.5);
      naive += X / n;
    }
    expect(Math.abs(sum / trials - lambdaI)).toBeLessThan(0.03);
    expect(naive / trials).toBeLessThan(0.7); // the naive count saturates at 1 − e^(−1) ≈ 0.632
  });
});

describe('lastModifiedEstimate', () => {
  it('interpolates between (X − 1)/T and X/T', () => {
    expect(lastModifiedEstimate(10, 10, 5)).toBeCloseTo(9 / 5, 12);
    // Rare changes: c → 1, so the estimate tends to the MLE X/T.
    expect(lastModifiedEstimate(100000, 3, 1000)).toBeCloseTo(3 / 1000, 5);
    expect(lastModifiedEstimate(10, 0, 5)).toBe(0);
    expect(lastModifiedEstimate(10, 11, 5)).toBeNaN();
    expect(lastModifiedEstimate(10, 1, 0)).toBeNaN();
  });
});

describe('estimate', () => {
  const rec = (crawls: number, changes: number, spanHours: number, streak = 0) =>
    newFreshnessRecord({ crawlCount: crawls, changeCount: changes, firstCrawled: 1000, lastCrawled: 1000 + spanHours, noChangeStreak: streak, lmHours: -1 });

  it('is r̂ per mean interval', () => {
    // 11 fetches = 10 intervals over 240 h: Ī = 24 h.
    expect(estimate(rec(11, 3, 240), p)).toBeCloseTo(Math.log(10.5 / 7.5) / 24, 12);
  });

  it('uses the reference rate as the prior before any interval is observed', () => {
    expect(estimate(newFreshnessRecord(), p)).toBe(p.refRate);
    expect(estimate(rec(1, 0, 0), p)).toBe(p.refRate);
  });

  it('clamps to [minRate, maxRate]', () => {
    expect(estimate(rec(11, 0, 240), p)).toBe(p.minRate);
    expect(estimate(rec(11, 10, 1), p)).toBe(p.maxRate); // ln 21 per 0.1 h ≈ 30/h
  });

  it('pulls toward a no-change streak, more for longer streaks, never upward', () => {
    const base = estimate(rec(41, 20, 40 * 24), p);
    const s4 = estimate(rec(41, 20, 40 * 24, 4), p);
    const s16 = estimate(rec(41, 20, 40 * 24, 16), p);
    expect(s4).toBeLessThan(base);
    expect(s16).toBeLessThan(s4);
    // At s = H = 8 the log-rate is half-way to the streak rate α/(sĪ).
    const s8 = estimate(rec(41, 20, 40 * 24, 8), p);
    const streakRate = p.alpha / (8 * 24);
    expect(Math.log(s8)).toBeCloseTo(0.5 * (Math.log(base) + Math.log(streakRate)), 10);
    // A streak implying a *higher* rate than the history does nothing.
    const slow = estimate(rec(101, 1, 100 * 24), p);
    expect(estimate(rec(101, 1, 100 * 24, 1), p)).toBe(slow);
  });

  it('uses trusted Last-Modified exposure once two changes are known', () => {
    const r = newFreshnessRecord({ crawlCount: 11, changeCount: 10, firstCrawled: 0, lastCrawled: 240, lmHours: 20 });
    expect(estimate(r, p)).toBeCloseTo(9 / 20, 10);
    expect(estimate(r, freshnessParams({ trustLastModified: false })).toFixed(8)).toBe((Math.log(21) / 24).toFixed(8));
    expect(estimate({ ...r, lmHours: -1 }, p)).toBeCloseTo(Math.log(21) / 24, 10);
    expect(estimate({ ...r, changeCount: 1 }, p)).toBeCloseTo(noChangeRatioEstimate(10, 1, 0.5) / 24, 10);
  });

  it('never returns NaN or a value outside the band on garbage counters', () => {
    for (const r of [rec(5, 9, 100), rec(5, 2, -10), rec(0, 0, 0), rec(3, 1, Number.NaN)]) {
      const l = estimate(r, p);
      expect(l).toBeGreaterThanOrEqual(p.minRate);
      expect(l).toBeLessThanOrEqual(p.maxRate);
    }
  });
});
