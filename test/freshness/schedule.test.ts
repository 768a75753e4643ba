import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import {
  awaitsTest,
  defaultParams,
  desiredRate,
  freshnessParams,
  fundedRate,
  hostClampedRate,
  newFreshnessRecord,
  reviseNextDue,
  setNextDue,
  starvationTest,
  targetInterval,
  valueDensity,
  hostWaterLevel,
  insuredReprobeRate,
  optimalRates,
} from '../../src/freshness/index.js';
import { UrlStatus } from '../../src/model/index.js';

const p = defaultParams();

describe('valueDensity', () => {
  it('is a hump in λ: low for near-static and hyper-volatile pages', () => {
    const vd = (lambda: number) => valueDensity(newFreshnessRecord({ lambda, priority: 1 }), p);
    const slow = vd(1 / 2000);
    const mid = vd(1 / 24);
    const fast = vd(3);
    expect(mid).toBeGreaterThan(slow * 10);
    expect(mid).toBeGreaterThan(fast * 10);
    expect(valueDensity(newFreshnessRecord({ lambda: 1 / 24, priority: 3 }), p)).toBeCloseTo(3 * mid, 12);
    expect(valueDensity(newFreshnessRecord({ lambda: 1 / 24, priority: 0 }), p)).toBe(0);
  });
});

describe('targetInterval', () => {
  it('funds a page at the rate where its marginal value meets τ', () => {
    const r = newFreshnessRecord({ lambda: 1 / 24, priority: 2 });
    const tau = 10;
    expect(1 / targetInterval(r, undefined, tau, p)).toBeCloseTo(fundedRate(1 / 24, 2, tau), 12);
  });

  it('starves a page to a re-probe when w/λ ≤ τ, stretched by how far below the line it is, and faster pages first', () => {
    const tau = 30;
    const fast = newFreshnessRecord({ lambda: 1 / 20, priority: 1 }); // w/λ = 20 ≤ 30: margin τλ/w = 1.5
    const slower = newFreshnessRecord({ lambda: 1 / 60, priority: 1 }); // w/λ = 60 > 30
    // Close to the line (margin < 4) the re-probes come in pairs at the same average rate: a
    // long gap, then a test one threshold interval τ/w = 30 h later (odd crawl count: test next).
    expect(desiredRate(fast, tau, p)).toBeCloseTo(p.reprobeRate / 1.5, 12);
    expect(targetInterval(fast, undefined, tau, p)).toBeCloseTo(2 * (1.5 / p.reprobeRate) - 30, 9);
    fast.crawlCount = 1;
    expect(targetInterval(fast, undefined, tau, p)).toBeCloseTo(30, 9);
    expect(targetInterval(slower, undefined, tau, p)).toBeLessThan(1 / p.reprobeRate);
    // Far below the line: at most 16 re-probe intervals apart without a rate-change hazard…
    const hyper = newFreshnessRecord({ lambda: 4, priority: 1 }); // margin 120
    const steady = freshnessParams({ rateChangeHazard: 0 });
    expect(targetInterval(hyper, undefined, tau, steady)).toBeCloseTo(16 / p.reprobeRate, 9);
    // …and with one, at most √(2τ/(w·h)) apart: 60 days here, against 224 days of stretch.
    expect(targetInterval(hyper, undefined, tau, p)).toBeCloseTo(Math.sqrt((2 * tau) / p.rateChangeHazard), 9);
    expect(targetInterval(hyper, undefined, tau, p)).toBeLessThan(16 / p.reprobeRate);
    // Funded pages are untouched by the stretch: just above the line they are crawled faster than a re-probe.
    const edge = newFreshnessRecord({ lambda: 1 / 30.5, priority: 1 });
    expect(targetInterval(edge, undefined, tau, p)).toBeLessThan(1 / p.reprobeRate);
  });

  it('re-probes a starved page at least at the rate that insures against a change of its rate: √(w·h/(2τ))', () => {
    const h = p.rateChangeHazard;
    expect(insuredReprobeRate(2, 50, h)).toBeCloseTo(Math.sqrt((2 * h) / 100), 15);
    expect(insuredReprobeRate(2, 50, 0)).toBe(0);
    expect(insuredReprobeRate(0, 50, h)).toBe(0);
    fc.assert(
      fc.property(fc.double({ min: 1e-4, max: 4, noNaN: true }), fc.double({ min: 0.01, max: 100, noNaN: true }), fc.double({ min: 1e-3, max: 1e5, noNaN: true }), (lambda, w, tau) => {
        const r = newFreshnessRecord({ lambda, priority: w });
        const steady = freshnessParams({ rateChangeHazard: 0 });
        const starved = !(fundedRate(lambda, w, tau) > 0);
        // A starved page's rate is the stretched re-probe or the insured one, whichever is higher; a funded page's is untouched.
        const want = starved ? Math.max(desiredRate(r, tau, steady), insuredReprobeRate(w, tau, p.rateChangeHazard)) : desiredRate(r, tau, steady);
        expect(desiredRate(r, tau, p)).toBeCloseTo(want, 12);
      }),
      { seed: 2112, numRuns: 300 },
    );
  });

  it('stays within the global band', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 10, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 1e-9, max: 1e6, noNaN: true }), (lambda, priority, tau) => {
        const i = targetInterval(newFreshnessRecord({ lambda, priority }), undefined, tau, p);
        expect(i).toBeGreaterThanOrEqual(p.minReprobeGap * (1 - 1e-12));
        expect(i).toBeLessThanOrEqual((16 / p.reprobeRate) * (1 + 1e-12));
      }),
      { seed: 8101, numRuns: 300 },
    );
  });

  it("clamps to the host's share of its politeness capacity", () => {
    const r = newFreshnessRecord({ lambda: 1 / 10, priority: 5 });
    const free = 1 / targetInterval(r, undefined, 1, p);
    // Equal share: 1 crawl/hour over 100 URLs.
    expect(1 / targetInterval(r, { capacityPerHour: 1, urlCount: 100 }, 1, p)).toBeCloseTo(0.01, 12);
    // Demand known and 4× the capacity: everyone scaled by 1/4.
    expect(1 / targetInterval(r, { capacityPerHour: 1, urlCount: 100, demandPerHour: 4 }, 1, p)).toBeCloseTo(free / 4, 12);
    // Demand within capacity: untouched.
    expect(1 / targetInterval(r, { capacityPerHour: 10, urlCount: 100, demandPerHour: 4 }, 1, p)).toBeCloseTo(free, 12);
    // Politeness beats the re-probe floor; a closed host never comes due.
    expect(hostClampedRate(p.reprobeRate, { capacityPerHour: 0.0001, urlCount: 1000 })).toBeLessThan(p.reprobeRate);
    expect(targetInterval(r, { capacityPerHour: 0, urlCount: 3 }, 1, p)).toBe(Number.POSITIVE_INFINITY);
    expect(hostClampedRate(0.5, { capacityPerHour: Number.POSITIVE_INFINITY, urlCount: 3 })).toBe(0.5);
  });

  it('treats a record without an estimate as changing at the reference rate', () => {
    const r = newFreshnessRecord({ priority: 1 });
    expect(desiredRate(r, 5, p)).toBe(desiredRate(newFreshnessRecord({ priority: 1, lambda: p.refRate }), 5, p));
  });
});

describe('setNextDue', () => {
  it('never schedules in the past (nor closer than minReprobeGap) and moves the URL to DueRecrawl', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-6, max: 10000, noNaN: true }),
        fc.double({ min: 0, max: 4e6, noNaN: true }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.constantFrom(0, 1, 24, 168),
        fc.constantFrom(0.25, 1, 6),
        (interval, now, spreadKey, window, gap) => {
          const params = freshnessParams({ hostSpreadWindow: window, minReprobeGap: gap, reprobeRate: 1 / 336 });
          const r = newFreshnessRecord({ spreadKey, status: UrlStatus.Crawled });
          const due = setNextDue(r, interval, now, params);
          expect(due).toBe(r.nextDue);
          expect(Number.isInteger(due)).toBe(true);
          expect(due).toBeGreaterThanOrEqual(now + gap);
          expect(r.status).toBe(UrlStatus.DueRecrawl);
          // Never further than half a period (≤ W/2) plus rounding from the target.
          if (interval >= 2 * gap + 2) expect(Math.abs(due - (now + interval))).toBeLessThanOrEqual(Math.min(interval, window || 0) / 2 + 1);
        },
      ),
      { seed: 8102, numRuns: 500 },
    );
  });

  it("spreads a host's URLs across the window", () => {
    const counts = new Array<number>(24).fill(0);
    let s = 99;
    for (let u = 0; u < 480; u++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const r = newFreshnessRecord({ spreadKey: s });
      const due = setNextDue(r, 24, 1000, p);
      expect(due).toBeGreaterThanOrEqual(1000 + 12);
      expect(due).toBeLessThanOrEqual(1000 + 36);
      counts[due % 24]!++;
    }
    // 480 URLs over 24 hours: 20 per hour expected; every hour used, none far above its share.
    expect(Math.min(...counts)).toBeGreaterThan(5);
    expect(Math.max(...counts)).toBeLessThan(40);
  });

  it('keeps a steady interval exactly, and the mean of a fractional one (dithered rounding)', () => {
    for (const interval of [7, 30, 2.4, 100]) {
      const r = newFreshnessRecord({ spreadKey: 0x9e3779b9 });
      let now = 500;
      const gaps: number[] = [];
      for (let k = 0; k < 200; k++) {
        r.crawlCount = k + 1;
        const due = setNextDue(r, interval, now, p);
        if (k > 0) gaps.push(due - now);
        now = due;
      }
      const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
      expect(mean).toBeCloseTo(interval, 1);
      if (Number.isInteger(interval)) expect(new Set(gaps.slice(1))).toEqual(new Set([interval]));
      else expect(new Set(gaps.slice(1))).toEqual(new Set([Math.floor(interval), Math.ceil(interval)]));
    }
  });

  it('parks an infinite interval and rejects nonsense', () => {
    const r = newFreshnessRecord();
    expect(setNextDue(r, Number.POSITIVE_INFINITY, 10, p)).toBe(0xffffffff);
    expect(() => setNextDue(r, Number.NaN, 10, p)).toThrow(InvalidArgumentError);
    expect(() => setNextDue(r, -1, 10, p)).toThrow(/positive interval.*-1/);
    expect(() => setNextDue(r, 5, Number.NaN, p)).toThrow(/now NaN/);
  });
});

describe('reviseNextDue', () => {
  it('brings a waiting URL forward onto its grid when its interval shrinks, never into the past', () => {
    const r = newFreshnessRecord({ spreadKey: 12345, lastCrawled: 1000 });
    setNextDue(r, 336, 1000, p); // parked at the re-probe interval
    const parked = r.nextDue;
    expect(reviseNextDue(r, 24, 1010, p)).toBe(true);
    expect(r.nextDue).toBeLessThan(parked);
    expect(Math.abs(r.nextDue - 1024)).toBeLessThanOrEqual(12);
    expect(r.nextDue).toBeGreaterThanOrEqual(1011);
    // Already overdue at the new interval: due as soon as the gap allows.
    const q = newFreshnessRecord({ spreadKey: 12345, lastCrawled: 1000 });
    setNextDue(q, 336, 1000, p);
    expect(reviseNextDue(q, 2, 1100, p)).toBe(true);
    expect(q.nextDue).toBe(1101);
  });

  it('is a no-op at an unchanged or slightly changed interval, and pushes back a much longer one', () => {
    const r = newFreshnessRecord({ spreadKey: 777, lastCrawled: 2000 });
    setNextDue(r, 48, 2000, p);
    const due = r.nextDue;
    expect(reviseNextDue(r, 48, 2001, p)).toBe(false);
    expect(reviseNextDue(r, 50, 2001, p)).toBe(false);
    expect(r.nextDue).toBe(due);
    expect(reviseNextDue(r, 500, 2001, p)).toBe(true);
    expect(r.nextDue).toBeGreaterThan(2400);
    expect(() => reviseNextDue(r, 0, 2001, p)).toThrow(/reviseNextDue: expected a positive interval/);
  });
});

describe('hostWaterLevel', () => {
  it("gives a saturated host its own level: funded rates as the exact offline optimum's, starved pages only re-probed", () => {
    const pages = [
      [1 / 24, 1],
      [1 / 48, 2],
      [1 / 12, 0.5],
      [1 / 100, 1],
      [1 / 6, 0.3],
    ].map(([lambda, weight]) => ({ lambda: lambda!, weight: weight!, host: 'a' }));
    const cap = 0.08;
    const optimum = optimalRates(pages, 1e3, new Map([['a', cap]]));
    const rate = (i: number, tau: number): number => desiredRate(newFreshnessRecord({ lambda: pages[i]!.lambda, priority: pages[i]!.weight }), tau, p);
    const demand = (tau: number): number => pages.reduce((s, _, i) => s + rate(i, tau), 0);
    const level = hostWaterLevel(demand, cap, 1e-9);
    expect(level).toBeGreaterThan(1e-9);
    expect(demand(level)).toBeLessThanOrEqual(cap * (1 + 1e-6));
    pages.forEach((_, i) => {
      if (optimum[i]! > 0) expect(Math.abs(rate(i, level) / optimum[i]! - 1)).toBeLessThan(0.05);
      else expect(rate(i, level)).toBeLessThanOrEqual(p.reprobeRate);
    });
    // A host that fits keeps the partition's level.
    expect(hostWaterLevel(demand, 10, 1e-3)).toBe(1e-3);
  });

  it('matches optimalRates on random small saturated hosts (fast-check)', () => {
    // Re-probes made negligible, so the host's capacity goes to funded pages as in the optimum.
    const q = freshnessParams({ reprobeRate: 1e-6, minReprobeGap: 0.01 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 1 / 500, max: 2, noNaN: true }), fc.double({ min: 0.1, max: 10, noNaN: true })), { minLength: 2, maxLength: 8 }),
        fc.double({ min: 0.05, max: 0.9, noNaN: true }),
        (spec, share) => {
          const pages = spec.map(([lambda, weight]) => ({ lambda, weight, host: 'h' }));
          const rate = (i: number, tau: number): number => desiredRate(newFreshnessRecord({ lambda: pages[i]!.lambda, priority: pages[i]!.weight }), tau, q);
          const demand = (tau: number): number => pages.reduce((sum, _, i) => sum + rate(i, tau), 0);
          // The cap: a share of what the host would take at a level that funds nearly everything.
          const cap = share * demand(1e-3);
          const optimum = optimalRates(pages, 1e6, new Map([['h', cap]]));
          const level = hostWaterLevel(demand, cap, 1e-9);
          expect(demand(level)).toBeLessThanOrEqual(cap * (1 + 1e-6));
          pages.forEach((_, i) => expect(Math.abs(rate(i, level) - optimum[i]!)).toBeLessThanOrEqual(0.01 * cap + 1e-5));
        },
      ),
      { seed: 4242, numRuns: 200 },
    );
  });
});

describe('desiredRate reads only the weight and λ', () => {
  // The background passes fill only priority and lambda of one shared view (DESIGN §20: a rule
  // that read the change count there once saw another URL's and overspent the budget 1.18×).
  it('gives the same rate whatever the other fields of the record hold', () => {
    const p = defaultParams();
    fc.assert(
      fc.property(
        fc.double({ min: 1e-5, max: 4, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 1e-9, max: 1e6, noNaN: true }),
        fc.record({
          crawlCount: fc.integer({ min: 0, max: 1e6 }),
          changeCount: fc.integer({ min: 0, max: 1e6 }),
          noChangeStreak: fc.integer({ min: 0, max: 65535 }),
          firstCrawled: fc.integer({ min: 0, max: 4e6 }),
          lastCrawled: fc.integer({ min: 0, max: 4e6 }),
          nextDue: fc.integer({ min: 0, max: 4e6 }),
          lmHours: fc.double({ min: -1, max: 1e5, noNaN: true }),
          unchangedHours: fc.double({ min: 0, max: 1e5, noNaN: true }),
          changedLogHours: fc.double({ min: -10, max: 1e5, noNaN: true }),
          spreadKey: fc.integer({ min: 0, max: 0xffffffff }),
        }),
        (lambda, priority, tau, other) => {
          const bare = newFreshnessRecord({ lambda, priority });
          const full = newFreshnessRecord({ lambda, priority, ...other });
          expect(desiredRate(full, tau, p)).toBe(desiredRate(bare, tau, p));
        },
      ),
      { seed: 20261202 },
    );
  });
});

describe('a test before starving (starvationTest, awaitsTest)', () => {
  // Weight 2 at τ = 48: the line is λ* = w/τ = 1/24 per hour, the test interval τ/w = 24 h.
  const tau = 48;
  const w = 2;
  const page = (lambda: number, crawlCount = 10) => newFreshnessRecord({ lambda, priority: w, crawlCount, changeCount: crawlCount - 2 });

  it('owes one interval τ/w exactly when the new estimate took a funded page over the line (margin in [1, 4))', () => {
    expect(starvationTest(page(1.5 / 24), 0.8 / 24, tau, p)).toBeCloseTo(24, 12);
    expect(starvationTest(page(1 / 24), 0.99 / 24, tau, p)).toBeCloseTo(24, 12); // margin exactly 1 is starved
    expect(starvationTest(page(1.5 / 24), 1.2 / 24, tau, p)).toBe(0); // starved before too: its re-probes decide
    expect(starvationTest(page(0.9 / 24), 0.5 / 24, tau, p)).toBe(0); // still funded
    expect(starvationTest(page(5 / 24), 0.8 / 24, tau, p)).toBe(0); // far over the line (margin ≥ 4): no doubt to test
    expect(starvationTest(page(1.5 / 24, 2), 0.8 / 24, tau, p)).toBe(0); // one interval seen: the pair tests cover it
    expect(starvationTest(newFreshnessRecord({ lambda: 1.5 / 24, priority: 0, crawlCount: 10 }), 0.8 / 24, tau, p)).toBe(0);
    // Never shorter than minReprobeGap (a very heavy page's τ/w is minutes).
    expect(starvationTest(newFreshnessRecord({ lambda: 1.5, priority: 500, crawlCount: 10 }), 0.5, 480, p)).toBe(p.minReprobeGap);
  });

  it('targetInterval takes it only with the previous estimate given and the param on; otherwise as before', () => {
    const r = page(1.5 / 24);
    const plain = targetInterval(r, undefined, tau, p);
    expect(plain).toBeGreaterThan(24 * 14); // starved: the (stretched) re-probe
    expect(targetInterval(r, undefined, tau, p, 0.8 / 24)).toBeCloseTo(24, 12);
    expect(targetInterval(r, undefined, tau, freshnessParams({ confirmStarvation: false }), 0.8 / 24)).toBe(plain);
    // A host with no capacity left gets no test either.
    expect(targetInterval(r, { capacityPerHour: 0, urlCount: 1 }, tau, p, 0.8 / 24)).toBe(Number.POSITIVE_INFINITY);
  });

  it('with the estimate unchanged by a fetch, targetInterval is what it was without the previous estimate (property)', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-4, max: 4, noNaN: true }), fc.double({ min: 0.01, max: 100, noNaN: true }), fc.double({ min: 0.01, max: 1e4, noNaN: true }), fc.integer({ min: 0, max: 50 }), (lambda, weight, level, n) => {
        const r = newFreshnessRecord({ lambda, priority: weight, crawlCount: n });
        expect(targetInterval(r, undefined, level, p, lambda)).toBe(targetInterval(r, undefined, level, p));
      }),
    );
  });

  it('a background pass leaves a scheduled test alone, and only that', () => {
    const r = page(1.5 / 24);
    r.lastCrawled = 1000;
    r.nextDue = 1024; // the test
    expect(awaitsTest(r, tau, p)).toBe(true);
    r.nextDue = 1000 + 24 * 14; // a re-probe
    expect(awaitsTest(r, tau, p)).toBe(false);
    const funded = page(0.5 / 24);
    funded.lastCrawled = 1000;
    funded.nextDue = 1024;
    expect(awaitsTest(funded, tau, p)).toBe(false); // funded: re-timed as usual
    const far = page(5 / 24);
    far.lastCrawled = 1000;
    far.nextDue = 1024;
    expect(awaitsTest(far, tau, p)).toBe(false);
    r.nextDue = 1024;
    expect(awaitsTest(r, tau, freshnessParams({ confirmStarvation: false }))).toBe(false);
  });
});
