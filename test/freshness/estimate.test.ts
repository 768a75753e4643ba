import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  defaultParams,
  estimate,
  foldInterval,
  freshnessParams,
  lastModifiedEstimate,
  newFreshnessRecord,
  noChangeRatioEstimate,
  observeChange,
  usesLastModified,
  datedAge,
  posteriorRate,
  seedIntervals,
  type FreshnessRecord,
} from '../../src/freshness/index.js';
import { mulberry32 } from '../../src/core/mix.js';

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

  it('is the harmonic posterior mean of its counts, unchanged exposure at the mean interval', () => {
    // 11 fetches = 10 intervals over 240 h: 3 changed (72 h), 7 unchanged (168 h).
    expect(estimate(rec(11, 3, 240), p)).toBeCloseTo(posteriorRate(3, 168, 72, p), 12);
  });

  it('uses the reference rate as the prior before any interval is observed', () => {
    expect(estimate(newFreshnessRecord(), p)).toBe(p.refRate);
    expect(estimate(rec(1, 0, 0), p)).toBe(p.refRate);
  });

  it('lets evidence of no change lower the rate toward minRate, and a fast history reach maxRate', () => {
    const quiet = [10, 100, 1000].map((days) => estimate(rec(11, 0, days * 24), p));
    expect(quiet[1]!).toBeLessThan(quiet[0]!);
    expect(quiet[2]!).toBeLessThan(quiet[1]!);
    expect(quiet[2]!).toBeGreaterThanOrEqual(p.minRate);
    expect(estimate(rec(101, 0, 100 * 24 * 365), p) / p.minRate).toBeCloseTo(1, 9);
    expect(estimate(rec(201, 200, 200 * 0.05), p)).toBeGreaterThan(p.maxRate / 2); // changed every 3 minutes
  });

  it('keeps rising when every interval changed (the page heads for the starved side), unlike the saturating ratio', () => {
    const all = [5, 20, 80, 320].map((n) => estimate(rec(n + 1, n, n * 24), p));
    for (let i = 1; i < all.length; i++) expect(all[i]!).toBeGreaterThan(all[i - 1]!);
    // The ratio estimator stops at ln(2n + 1) per mean interval; the posterior goes past it.
    expect(all[3]!).toBeGreaterThan(noChangeRatioEstimate(320, 320, 0.5) / 24);
  });

  it('is consistent on Poisson histories with irregular gaps (seeded)', () => {
    const rand = mulberry32(2112);
    for (const perDay of [0.05, 0.3, 1, 3]) {
      const lambda = perDay / 24;
      // 2,000 intervals of 12–36 h: λĪ from 0.05 to 3 changes per interval. (The record keeps
      // counts and the span, not each gap, so irregular gaps bias the estimate by up to ~10 %
      // low at 3 changes per interval — measured over seeds 7, 99, 2112.)
      let span = 0;
      let changes = 0;
      for (let i = 0; i < 2000; i++) {
        const gap = 12 + 24 * rand();
        span += gap;
        if (rand() < -Math.expm1(-lambda * gap)) changes++;
      }
      const est = estimate(rec(2001, changes, span), p);
      expect(est / lambda).toBeGreaterThan(0.8);
      expect(est / lambda).toBeLessThan(1.25);
    }
  });

  it('uses trusted Last-Modified exposure once two changes are known, with the no-change streak pull', () => {
    const r = newFreshnessRecord({ crawlCount: 11, changeCount: 10, firstCrawled: 0, lastCrawled: 240, lmHours: 20 });
    expect(estimate(r, p)).toBeCloseTo(9 / 20, 10);
    const posterior = posteriorRate(10, 0, 240, p);
    expect(estimate(r, freshnessParams({ trustLastModified: false }))).toBeCloseTo(posterior, 10);
    expect(estimate({ ...r, lmHours: -1 }, p)).toBeCloseTo(posterior, 10);
    expect(estimate({ ...r, changeCount: 1 }, p)).toBeCloseTo(posteriorRate(1, 216, 24, p), 10);
    // A streak of quiet intervals pulls the Last-Modified rate down, half-way at s = H = 8.
    const lm = newFreshnessRecord({ crawlCount: 41, changeCount: 20, firstCrawled: 0, lastCrawled: 40 * 24, lmHours: 200 });
    const base = estimate(lm, p);
    const s8 = estimate({ ...lm, noChangeStreak: 8 }, p);
    expect(Math.log(s8)).toBeCloseTo(0.5 * (Math.log(base) + Math.log(p.alpha / (8 * 24))), 10);
  });

  it('never returns NaN or a value outside the band on garbage counters', () => {
    for (const r of [rec(5, 9, 100), rec(5, 2, -10), rec(0, 0, 0), rec(3, 1, Number.NaN)]) {
      const l = estimate(r, p);
      expect(l).toBeGreaterThanOrEqual(p.minRate);
      expect(l).toBeLessThanOrEqual(p.maxRate);
    }
  });
});

/** A record after fetches separated by `gaps` (hours), `changed[k]` telling whether gap k ended in a change, with the interval statistics kept. */
function history(gaps: readonly number[], changed: readonly boolean[]): FreshnessRecord {
  const r = newFreshnessRecord({ crawlCount: 1, firstCrawled: 1000, lastCrawled: 1000, lmHours: -1, unchangedHours: 0, changedLogHours: 0 });
  for (let k = 0; k < gaps.length; k++) {
    foldInterval(r, gaps[k]!, changed[k]!);
    r.crawlCount++;
    if (changed[k]) r.changeCount++;
    r.lastCrawled += gaps[k]!;
  }
  return r;
}

/** The same record without the interval statistics (what a build before format minor 4 kept). */
const countsOnly = (r: FreshnessRecord): FreshnessRecord => ({ ...r, unchangedHours: Number.NaN, changedLogHours: Number.NaN });

describe('estimate with the interval statistics (irregular gaps)', () => {
  it('keeps a fast page fast when long re-probe gaps follow short changed intervals', () => {
    // 30 six-hour intervals, all changed, then four fortnightly re-probes, all changed: the
    // short intervals say λ ≳ 1/6 h; the counts and span alone average them into 1/(≈ 40 h).
    const gaps = [...Array<number>(30).fill(6), 336, 336, 336, 336];
    const r = history(gaps, gaps.map(() => true));
    const kept = estimate(r, p);
    expect(kept).toBeGreaterThan(1 / 6);
    expect(kept / estimate(countsOnly(r), p)).toBeGreaterThan(3);
    // With regular gaps the statistics add nothing: the same estimate either way.
    const even = history(Array<number>(20).fill(12), [...Array<boolean>(10).fill(true), ...Array<boolean>(10).fill(false)]);
    expect(estimate(even, p)).toBeCloseTo(estimate(countsOnly(even), p), 6);
  });

  it('is consistent on Poisson histories with irregular gaps, short and long mixed (fast-check)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.02, max: 3, noNaN: true }), fc.integer({ min: 1, max: 0x7fffffff }), (perDay, seed) => {
        const lambda = perDay / 24;
        const rand = mulberry32(seed);
        const gaps: number[] = [];
        const changed: boolean[] = [];
        // 2,000 intervals: three in four of 2–48 h, one in four a re-probe-like 5–30 days. The
        // posterior is sharp, so the harmonic mean lands within about one grid step (1.31×).
        for (let i = 0; i < 2000; i++) {
          const gap = rand() < 0.75 ? 2 + 46 * rand() : 24 * (5 + 25 * rand());
          gaps.push(gap);
          changed.push(rand() < -Math.expm1(-lambda * gap));
        }
        const ratio = estimate(history(gaps, changed), p) / lambda;
        expect(ratio).toBeGreaterThan(0.8);
        expect(ratio).toBeLessThan(1.4);
      }),
      { seed: 2112, numRuns: 25 },
    );
  });

  it('all-changed histories: at least one change per longest gap, rising with the evidence, lowered by a quiet interval (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.5, max: 400, noNaN: true }), { minLength: 5, maxLength: 60 }), fc.double({ min: 0.5, max: 400, noNaN: true }), (gaps, quiet) => {
        const all = gaps.map(() => true);
        const est = estimate(history(gaps, all), p);
        expect(est).toBeGreaterThanOrEqual(Math.min(p.maxRate, 1 / Math.max(...gaps)));
        // The same gaps seen twice: the likelihood squared (it rises with λ), so the estimate rises.
        expect(estimate(history([...gaps, ...gaps], [...all, ...all]), p)).toBeGreaterThanOrEqual(est * (1 - 1e-9));
        // One more interval without a change can only lower it.
        expect(estimate(history([...gaps, quiet], [...all, false]), p)).toBeLessThanOrEqual(est * (1 + 1e-9));
      }),
      { seed: 77, numRuns: 200 },
    );
  });

  it('never-changed histories: about one change per quiet span at most, falling toward minRate as quiet time adds up (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.5, max: 2000, noNaN: true }), { minLength: 1, maxLength: 60 }), (gaps) => {
        const none = gaps.map(() => false);
        const quiet = gaps.reduce((a, b) => a + b, 0);
        const est = estimate(history(gaps, none), p);
        expect(est).toBeGreaterThanOrEqual(p.minRate);
        // At most 1/U on a continuous log-flat prior while U ≪ 1/minRate (the 48-point grid adds
        // up to one step); once U nears 1/minRate the floor holds it within twice minRate.
        expect(est).toBeLessThanOrEqual(Math.max(2 * p.minRate, 1.31 / quiet));
        expect(estimate(history([...gaps, 24], [...none, false]), p)).toBeLessThanOrEqual(est * (1 + 1e-9));
      }),
      { seed: 78, numRuns: 200 },
    );
  });

  it('rebuilds missing statistics from the counts as the counts-only estimator saw them, and leaves kept ones alone', () => {
    const r = countsOnly(history([10, 30, 20, 40], [true, false, true, false]));
    seedIntervals(r, 4, 2, 100);
    expect(r.unchangedHours).toBeCloseTo(50, 12);
    expect(r.changedLogHours).toBeCloseTo(2 * Math.log(25), 12);
    expect(estimate(r, p)).toBeCloseTo(estimate(countsOnly(r), p), 9);
    const kept = history([10, 30], [true, false]);
    seedIntervals(kept, 2, 1, 40);
    expect(kept.unchangedHours).toBe(30);
    expect(kept.changedLogHours).toBeCloseTo(Math.log(10), 12);
  });

  it('folds what observeChange sees when given fetch times: exact unchanged hours and Σ ln of the changed gaps', () => {
    const r = newFreshnessRecord();
    const at = (fp: bigint, h: number): void => void observeChange(r, { row: 0, url: 'u', status: 200, contentFp: fp, simhash: fp * 0x9e3779b97f4a7c15n & 0xffffffffffffffffn }, h, p);
    at(1n, 100);
    at(1n, 130); // 30 h unchanged
    at(2n, 135); // 5 h changed
    at(3n, 235); // 100 h changed
    expect(r.unchangedHours).toBe(30);
    expect(r.changedLogHours).toBeCloseTo(Math.log(5) + Math.log(100), 12);
    // Without a time the interval is unknown: not kept from then on (the estimate falls back to the counts).
    observeChange(r, { row: 0, url: 'u', status: 304 }, undefined, p);
    expect(r.unchangedHours).toBeNaN();
  });
});

describe('the first fetch\'s Last-Modified age (lmAgeHours)', () => {
  it('counts as one more dated change and its quiet, once the dates are trusted', () => {
    // Two fetches 10 h apart, the second saw a change dated 4 h before it; the first was dated 50 h old.
    const r = newFreshnessRecord({ crawlCount: 2, changeCount: 1, firstCrawled: 100, lastCrawled: 110, lmHours: 4, lmAgeHours: 50, unchangedHours: 0, changedLogHours: Math.log(10) });
    expect(usesLastModified(r, p)).toBe(true);
    expect(estimate(r, p)).toBeCloseTo(lastModifiedEstimate(2, 2, 54), 12);
    expect(estimate(r, p)).toBeCloseTo(1 / 54, 12); // every "interval" changed: (X − 1)/ΣT with X = 2
    // Without the age one dated change is not enough: the posterior decides, as before.
    const none = { ...r, lmAgeHours: 0 };
    expect(usesLastModified(none, p)).toBe(false);
    expect(estimate(none, p)).toBeCloseTo(posteriorRate(1, 0, 10, p, Math.log(10)), 12);
    // Untrusted dates, or trust switched off: the age is never read.
    expect(estimate({ ...r, lmHours: -1 }, p)).toBe(estimate({ ...none, lmHours: -1 }, p));
    expect(estimate(r, freshnessParams({ trustLastModified: false }))).toBe(estimate(none, freshnessParams({ trustLastModified: false })));
    // An unchanged second fetch: one dated change (the age) over the age and the quiet interval.
    const quiet = newFreshnessRecord({ crawlCount: 3, changeCount: 1, firstCrawled: 100, lastCrawled: 130, lmHours: 24, lmAgeHours: 50, noChangeStreak: 1 });
    const lm = lastModifiedEstimate(3, 2, 74);
    const streak = p.alpha / 15;
    const pulled = streak < lm ? Math.exp((1 - (1 - 2 ** (-1 / p.recencyHalfLife))) * Math.log(lm) + (1 - 2 ** (-1 / p.recencyHalfLife)) * Math.log(streak)) : lm;
    expect(estimate(quiet, p)).toBeCloseTo(pulled, 12);
  });

  it('leaves every estimate without an age exactly as it was (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 60 }), fc.integer({ min: 0, max: 60 }), fc.double({ min: 1, max: 5000, noNaN: true }), fc.double({ min: -1, max: 5000, noNaN: true }), (crawls, changes, span, lmHours) => {
        const x = Math.min(changes, crawls - 1);
        const r = newFreshnessRecord({ crawlCount: crawls, changeCount: x, firstCrawled: 0, lastCrawled: span, lmHours: lmHours < 0 ? -1 : lmHours });
        // The rule before the age existed: trusted, positive exposure, two changes seen.
        const old = lmHours > 0 && x >= 2;
        expect(usesLastModified(r, p)).toBe(old);
        if (old) expect(estimate(r, p)).toBeCloseTo(Math.max(p.minRate, Math.min(p.maxRate, lastModifiedEstimate(crawls - 1, x, r.lmHours))), 12);
      }),
    );
  });

  it('before the dates are proven: a URL fetched once is estimated at e^(−γ)/A, later posteriors add λe^(−λA)', () => {
    const eg = Math.exp(-0.5772156649015329);
    const once = (lmAgeHours: number, lmHours = 0) => newFreshnessRecord({ crawlCount: 1, changeCount: 0, firstCrawled: 100, lastCrawled: 100, lmHours, lmAgeHours });
    expect(estimate(once(50), p)).toBeCloseTo(eg / 50, 12);
    expect(datedAge(once(50), p)).toBe(50);
    // No age, an age under minReprobeGap (a server stamping its response time), dates disproven,
    // or trust switched off: the prior, as before.
    for (const r of [once(0), once(0.5), once(50, -1)]) {
      expect(datedAge(r, p)).toBe(0);
      expect(estimate(r, p)).toBe(p.refRate);
    }
    expect(estimate(once(50), freshnessParams({ trustLastModified: false }))).toBe(p.refRate);
    // Clamped to the band: a page dated ten years back, one dated an hour back.
    expect(estimate(once(87600), p)).toBe(p.minRate);
    expect(estimate(once(1), p)).toBeCloseTo(eg, 12);
    // A second fetch that found no change: one dated change, the age and the quiet interval.
    const quiet = newFreshnessRecord({ crawlCount: 2, changeCount: 0, firstCrawled: 100, lastCrawled: 124, lmHours: 24, lmAgeHours: 500, unchangedHours: 24, changedLogHours: 0, noChangeStreak: 1 });
    expect(usesLastModified(quiet, p)).toBe(false);
    expect(estimate(quiet, p)).toBeCloseTo(posteriorRate(0, 24, 0, p, 0, 500), 12);
    // Told apart before a change is seen: quiet three weeks before we came, or changed 5 h before.
    const age = (lmAgeHours: number): number => estimate({ ...quiet, lmAgeHours }, p);
    expect(age(5)).toBeGreaterThan(5 * age(500));
    expect(age(500)).toBeLessThan(age(50));
    expect(estimate({ ...quiet, lmHours: -1 }, p)).toBe(estimate({ ...quiet, lmHours: -1, lmAgeHours: 0 }, p));
  });

  it('a URL fetched once: unbiased in ln λ on Poisson pages with honest dates, and far closer than the prior (seeded)', () => {
    // λ log-uniform over 0.03–0.5 changes a day (where the clamp and the hour's floor on the age
    // seldom act); the age is the backward recurrence time, exponential at λ, so
    // ln(λ̂/λ) = −γ − ln(λA) has mean 0.
    const rand = mulberry32(2112);
    let bias = 0;
    let err = 0;
    let errPrior = 0;
    let used = 0;
    const pages = 20000;
    for (let i = 0; i < pages; i++) {
      const lambda = Math.exp(Math.log(0.03) + Math.log(0.5 / 0.03) * rand()) / 24;
      const age = -Math.log(1 - rand()) / lambda;
      if (age < p.minReprobeGap) continue;
      used++;
      const r = newFreshnessRecord({ crawlCount: 1, firstCrawled: 0, lastCrawled: 0, lmHours: 0, lmAgeHours: age });
      const e = Math.log(estimate(r, p) / lambda);
      bias += e;
      err += Math.abs(e);
      errPrior += Math.abs(Math.log(p.refRate / lambda));
    }
    // Measured: mean ln(λ̂/λ) −0.027 (the ages under an hour left out lean it low), mean
    // |ln(λ̂/λ)| 0.96 against 2.11 at the prior (one change a day), 19,876 pages read an age.
    expect(used).toBeGreaterThan(0.98 * pages);
    expect(Math.abs(bias / used)).toBeLessThan(0.05);
    expect(err / used).toBeLessThan(0.6 * (errPrior / used));
  });

  it('is sharper after two fetches on Poisson pages with honest dates (seeded)', () => {
    // 4,000 pages, λ log-uniform over 0.01–10 changes a day, each last changed an exponential
    // wait before its first fetch (the backward recurrence time), fetched twice a day apart.
    const rand = mulberry32(404);
    const expo = (rate: number): number => -Math.log(1 - rand()) / rate;
    let errWith = 0;
    let errWithout = 0;
    let used = 0;
    let stamps = 0;
    for (let i = 0; i < 4000; i++) {
      const lambda = Math.exp(Math.log(0.01) + Math.log(1000) * rand()) / 24;
      const t1 = 480_000;
      const lastBefore = t1 - expo(lambda);
      const r = newFreshnessRecord();
      let version = 1n;
      observeChange(r, { row: 0, url: 'u', status: 200, contentFp: version, lastModified: Math.floor(lastBefore * 3600) }, t1, p);
      const t2 = t1 + 24;
      let at = t1 + expo(lambda);
      let lastChange = lastBefore;
      if (at <= t2) {
        while (at <= t2) {
          lastChange = at;
          at += expo(lambda);
        }
        version++;
      }
      observeChange(r, { row: 0, url: 'u', status: 200, contentFp: version, lastModified: Math.floor(lastChange * 3600) }, t2, p);
      if (t1 - lastBefore < 1 / 60) {
        stamps++; // first fetched within a minute of a change: taken for a stamp (firstFetchAge), never trusted
        expect(r.lmHours).toBe(-1);
        continue;
      }
      expect(r.lmHours).toBeGreaterThanOrEqual(0); // honest dates stay trusted
      expect(r.lmAgeHours).toBeCloseTo(t1 - Math.floor(lastBefore * 3600) / 3600, 6);
      // The age is read once it makes two dated changes: here, when the second fetch saw a change.
      expect(usesLastModified(r, p)).toBe(version === 2n);
      if (version === 1n) continue;
      errWith += Math.abs(Math.log(estimate(r, p) / lambda));
      errWithout += Math.abs(Math.log(estimate({ ...r, lmAgeHours: 0 }, p) / lambda));
      used++;
    }
    // Mean |ln(λ̂/λ)| over the pages whose estimate reads the age: measured 0.72 with it against
    // 1.30 without (1,668 pages; seeds 7 and 99: 0.70 / 1.28, 0.71 / 1.26; 72 h apart 0.70–0.72
    // against 1.51–1.54).
    expect(used).toBeGreaterThan(1000);
    expect(stamps).toBeLessThan(40); // 1 % of the pages at most (λ·60 s, λ up to 10 a day)
    expect(errWith / used).toBeLessThan(0.65 * (errWithout / used));
  });
});
