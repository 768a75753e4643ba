import { describe, expect, it } from 'vitest';
import { simulate, type Policy } from '../../bench/freshness/engine.js';
import { MeguriFrontierPolicy } from '../../bench/freshness/frontier-policy.js';
import { MeguriEstimatorPolicy, optimumPolicy, politeOptimumPolicy, worldPages } from '../../bench/freshness/policies.js';
import { optimalRates } from '../../src/freshness/index.js';
import { compare } from '../../bench/freshness/run.js';
import { makeWorld } from '../../bench/freshness/world.js';
import { BANDS, DRIFT_GROUPS, RATIO_GROUPS, bandLosses, bandOf, capSplits, driftLosses, horizonOf, learningCurve, ratioGroupOf, ratioLosses, scenariosFor } from '../../bench/freshness/scenarios.js';

// The simulator at small size (N = 1500, 150 days, 30 of warm-up): the bench runs it at
// 10,000 and 100,000. Bounds are loose enough for any seed, tight enough to catch a
// regression in the estimator, the allocation or the controller.
describe('freshness simulator (small)', () => {
  const c = compare({ n: 1500, seed: 7 });
  const row = (name: string) => c.rows.find((r) => r.policy === name)!;

  it('shows every policy the identical change history', () => {
    const changes = new Set(c.rows.map((r) => r.totalChanges));
    expect(changes.size).toBe(1);
    expect([...changes][0]).toBeGreaterThan(1500 * 150 * 0.5);
  });

  it('measures fixed-rate policies close to their expected freshness', () => {
    for (const name of ['uniform', 'proportional', 'optimum']) {
      const r = row(name);
      expect(Math.abs(r.freshness - r.expected)).toBeLessThan(0.02);
    }
  });

  it('orders the policies: optimum > meguri > uniform > proportional', () => {
    expect(row('optimum').freshness).toBeGreaterThan(row('meguri-estimator').freshness);
    expect(c.meguriOverOptimum).toBeGreaterThan(0.88);
    expect(c.meguriOverUniform).toBeGreaterThan(1.05);
    expect(row('uniform').freshness).toBeGreaterThan(row('proportional').freshness);
  });

  it('the real Frontier with withFreshness: on budget (±5 %), within every cap, beating uniform', () => {
    const f = row('meguri-frontier');
    expect(f.budgetUse).toBeGreaterThan(0.95);
    expect(f.budgetUse).toBeLessThan(1.05);
    expect(f.capViolations).toBe(0);
    // The frontier's politeness interval is the cap: never above it, beyond window-edge rounding.
    expect(f.worstCapRatio).toBeLessThan(1.02);
    expect(f.freshness).toBeGreaterThan(row('uniform').freshness * 1.05);
    expect(c.frontierOverOptimum).toBeGreaterThan(0.88);
    // It schedules what the column-level estimator policy schedules, up to the frontier's
    // whole-hour timestamps and per-host queues.
    expect(Math.abs(f.freshness / row('meguri-estimator').freshness - 1)).toBeLessThan(0.02);
  });

  it('splits each policy against the optimum on capped and uncapped hosts (capSplits)', () => {
    const split = capSplits(c);
    expect([...split.keys()].sort()).toEqual(['meguri-estimator', 'meguri-frontier', 'proportional']);
    // By hand for the frontier: its crawls on capped hosts and weighted fresh time on each side, over the optimum's.
    const w = c.world;
    const sums = (name: string) => {
      const r = row(name);
      let crawls = 0;
      let capped = 0;
      let uncapped = 0;
      for (let i = 0; i < w.n; i++) {
        const f = w.weight[i]! * r.pageFreshHours[i]!;
        if (w.hostCap[w.host[i]!]! < Number.POSITIVE_INFINITY) {
          crawls += r.pageCrawls[i]!;
          capped += f;
        } else uncapped += f;
      }
      return { crawls, capped, uncapped };
    };
    const o = sums('optimum');
    const f = sums('meguri-frontier');
    const got = split.get('meguri-frontier')!;
    expect(got.cappedCrawls).toBeCloseTo(f.crawls / o.crawls, 12);
    expect(got.cappedFresh).toBeCloseTo(f.capped / o.capped, 12);
    expect(got.uncappedFresh).toBeCloseTo(f.uncapped / o.uncapped, 12);
    // The estimator books a capped host's whole cap and fetches on time; the frontier spaces each
    // fetch by the crawl delay and never exceeds the cap.
    expect(Math.abs(split.get('meguri-estimator')!.cappedCrawls - 1)).toBeLessThan(0.05);
    expect(got.cappedCrawls).toBeLessThan(1.02);
    expect(got.cappedCrawls).toBeGreaterThan(0.85);
  });

  it('keeps every policy on budget and within the host caps', () => {
    for (const r of c.rows) {
      expect(r.budgetUse).toBeGreaterThan(0.97);
      expect(r.budgetUse).toBeLessThan(1.03);
      expect(r.capViolations).toBe(0);
      expect(r.cappedHosts).toBeGreaterThan(0);
    }
  });

  it('measures the learning curve: the window is the mean of the slices it covers, a shorter last slice by its own length, and a learner gains on the optimum', () => {
    const c = compare({ n: 400, seed: 4, days: 90, warmupDays: 30 }, [optimumPolicy(), new MeguriEstimatorPolicy()]);
    for (const r of c.rows) {
      expect(r.sliceFreshness.length).toBe(3);
      // Slices 1 and 2 are the window [30, 90) days: equal lengths, so its freshness is their mean.
      expect((r.sliceFreshness[1]! + r.sliceFreshness[2]!) / 2).toBeCloseTo(r.freshness, 12);
      for (const v of r.sliceFreshness) expect(v > 0 && v < 1).toBe(true);
    }
    // A 75-day run measured over days 60–75: the third slice is 15 days long, and is the window.
    const short = simulate(makeWorld({ n: 400, seed: 4, days: 75, warmupDays: 60 }), optimumPolicy(), () => 0);
    expect(short.sliceFreshness.length).toBe(3);
    expect(short.sliceFreshness[2]).toBeCloseTo(short.freshness, 12);
    // The curve is policy / optimum per slice, the optimum left out; the learner starts further below
    // the optimum (its first estimates are priors) and gains on it.
    const curve = learningCurve(c);
    expect([...curve.keys()]).toEqual(['meguri-estimator']);
    const x = curve.get('meguri-estimator')!;
    expect(x[0]).toBeCloseTo(c.rows[1]!.sliceFreshness[0]! / c.rows[0]!.sliceFreshness[0]!, 12);
    expect(x[0]!).toBeLessThan(x[2]! - 0.005); // measured 0.968 → 0.977
  });

  it('is deterministic', () => {
    const world = makeWorld({ n: 300, seed: 3, days: 60, warmupDays: 10 });
    const a = simulate(world, new MeguriEstimatorPolicy(), () => 0);
    const b = simulate(world, new MeguriEstimatorPolicy(), () => 0);
    expect(b).toEqual(a);
    const p = new MeguriFrontierPolicy();
    const q = new MeguriFrontierPolicy();
    p.log = [];
    q.log = [];
    expect(simulate(world, q, () => 0)).toEqual(simulate(world, p, () => 0));
    expect(q.log).toEqual(p.log);
    expect(p.log.length).toBeGreaterThan(300 * 60 * 0.2 * 0.9);
  });

  it('trusts Last-Modified exactly on the hosts that serve it honestly', () => {
    const world = makeWorld({ n: 600, seed: 11, days: 40, warmupDays: 10 });
    const policy = new MeguriEstimatorPolicy();
    simulate(world, policy, () => 0);
    const trusted = [0, 0, 0];
    const total = [0, 0, 0];
    let stampLike = 0;
    for (let i = 0; i < world.n; i++) {
      const mode = world.hostLastModified[world.host[i]!]!;
      total[mode]!++;
      if (policy.lmHours[i]! >= 0) trusted[mode]!++;
      // A reliable page first fetched less than a minute after a change looks stamped (firstFetchAge).
      else if (mode === 1 && policy.lmAgeHours[i]! === 0) stampLike++;
    }
    expect(total[1]).toBeGreaterThan(50);
    expect(total[2]).toBeGreaterThan(5);
    expect(trusted[0]).toBe(0); // no Last-Modified at all
    expect(trusted[1]! + stampLike).toBe(total[1]); // reliable: every page stays trusted, but for…
    expect(stampLike).toBeLessThanOrEqual(2); // …the rare first fetch within a minute of a change (1 here)
    expect(trusted[2]).toBe(0); // stamped with the response time: caught
  });

  it('refuses a policy that crawls outside the hour it is advancing', () => {
    const world = makeWorld({ n: 10, days: 2, warmupDays: 1 });
    const rogue: Policy = {
      name: 'rogue',
      observes: false,
      start: () => undefined,
      advance: (from, _to, crawl) => {
        crawl(0, from + 5);
      },
    };
    expect(() => simulate(world, rogue)).toThrow(/rogue: crawl of page 0/);
  });
});

// The scenario options of the world (issue 21's bench scenarios): static pages and a mid-run drift.
describe('freshness simulator scenarios', () => {
  it('static pages never change and the base draws are untouched; the optimum fetches them once and keeps them fresh', () => {
    const base = makeWorld({ n: 600, seed: 5, days: 40, warmupDays: 10 });
    const world = makeWorld({ n: 600, seed: 5, days: 40, warmupDays: 10, staticFraction: 1 / 3 });
    const still = [...world.lambda.keys()].filter((i) => world.lambda[i] === 0);
    expect(still.length).toBeGreaterThan(150);
    expect(still.length).toBeLessThan(250);
    for (let i = 0; i < 600; i++) {
      expect(world.weight[i]).toBe(base.weight[i]);
      if (world.lambda[i] !== 0) expect(world.lambda[i]).toBe(base.lambda[i]);
    }
    const c = compare({ n: 600, seed: 5, days: 40, warmupDays: 10, staticFraction: 1 / 3 }, [optimumPolicy()]);
    const r = c.rows[0]!;
    const window = (40 - 10) * 24;
    for (const i of still) {
      expect(r.pageCrawls[i]).toBe(0); // fetched once, in the warm-up
      expect(r.pageFreshHours[i]).toBeCloseTo(window, 6);
    }
  });

  it('dates each page\'s last change before the run as a Poisson page would have it (t0 less an exponential wait, or its creation)', () => {
    const world = makeWorld({ n: 4000, seed: 21, days: 10, warmupDays: 1, staticFraction: 0.1 });
    let scaled = 0;
    let counted = 0;
    for (let i = 0; i < world.n; i++) {
      const last = world.lastChangeAtStart[i]!;
      expect(last).toBeGreaterThanOrEqual(world.created[i]!);
      expect(last).toBeLessThan(world.t0);
      if (world.lambda[i] === 0) {
        expect(last).toBe(world.created[i]); // a static page was last modified when it was made
        continue;
      }
      // Pages made long before their mean wait: λ·(t0 − last) is then exponential with mean 1.
      if (world.lambda[i]! * (world.t0 - world.created[i]!) > 20) {
        scaled += world.lambda[i]! * (world.t0 - last);
        counted++;
      }
    }
    expect(counted).toBeGreaterThan(2000);
    expect(scaled / counted).toBeGreaterThan(0.95);
    expect(scaled / counted).toBeLessThan(1.05);
  });

  it('a drift switches the redrawn pages to their new rate at the drift (changes counted on each side)', () => {
    const world = makeWorld({ n: 2000, seed: 9, days: 80, warmupDays: 10, driftFraction: 0.5, driftDay: 40 });
    expect(world.driftAt).toBe(world.t0 + 40 * 24);
    const moved = [...world.lambda.keys()].filter((i) => world.lambdaAfter[i] !== world.lambda[i]);
    expect(moved.length).toBeGreaterThan(800);
    expect(moved.length).toBeLessThan(1200);
    // Expected changes: Σ λ × 40 days before and Σ λ' × 40 days after; a crawl-everything policy sees them all.
    let expected = 0;
    for (let i = 0; i < world.n; i++) expected += 24 * 40 * (world.lambda[i]! + world.lambdaAfter[i]!);
    const optimum = optimumPolicy();
    const r = simulate(world, optimum);
    expect(Math.abs(r.totalChanges / expected - 1)).toBeLessThan(0.03);
    // The offline optimum follows the drift: after it, the allocation of the new rates.
    const { pages, caps } = worldPages(world, true);
    expect(Array.from(optimum.rates)).toEqual(Array.from(optimalRates(pages, world.budgetPerHour, caps)));
    expect(Array.from(optimum.rates)).not.toEqual(Array.from(optimalRates(worldPages(world).pages, world.budgetPerHour, caps)));
  });
});

describe('freshness bench: run length', () => {
  it('--days, --warmup and --drift-day reach the world; defaults stay the world\'s; nonsense is refused', () => {
    expect(horizonOf(undefined, undefined, undefined)).toEqual({});
    const o = horizonOf('300', '150', '225');
    expect(o).toEqual({ days: 300, warmupDays: 150, driftDay: 225 });
    const world = makeWorld({ n: 50, seed: 3, driftFraction: 0.3, ...o });
    expect(world.hours).toBe(300 * 24);
    expect(world.warmupHours).toBe(150 * 24);
    expect(world.driftAt).toBe(world.t0 + 225 * 24);
    expect(() => horizonOf('abc', undefined, undefined)).toThrow(/--days/);
    expect(() => horizonOf('100', '100', undefined)).toThrow(/--warmup/);
    expect(() => horizonOf(undefined, '200', undefined)).toThrow(/--warmup/); // default 150 days
    expect(() => horizonOf('300', '150', '300')).toThrow(/--drift-day/);
    // The drift scenario's description names this run's drift day.
    expect(scenariosFor(['drift'])[0]!.what).toContain('on day 75 (of 150)');
    expect(scenariosFor(['drift'], o)[0]!.what).toContain('on day 225 (of 300)');
    expect(scenariosFor(['drift'], { days: 200 })[0]!.what).toContain('on day 100 (of 200)');
  });
});

describe('freshness bench: where the shortfall lies', () => {
  it('bandLosses per band and driftLosses per drift group each sum to 1 − policy/optimum', () => {
    const c = compare({ n: 1200, seed: 11, days: 80, warmupDays: 10, driftFraction: 0.4, driftDay: 40 }, [optimumPolicy(), new MeguriEstimatorPolicy()]);
    const ratio = c.meguriOverOptimum;
    const bands = bandLosses(c).get('meguri-estimator')!;
    expect(bands).toHaveLength(BANDS.length);
    expect(bands.reduce((a, b) => a + b, 0)).toBeCloseTo(1 - ratio, 12);
    const drift = driftLosses(c).get('meguri-estimator')!;
    expect(drift).toHaveLength(DRIFT_GROUPS.length);
    expect(drift.reduce((a, b) => a + b, 0)).toBeCloseTo(1 - ratio, 12);
    // By hand for one band and one group: the pages whose rate fell at the drift.
    const w = c.world;
    const opt = c.rows.find((r) => r.policy === 'optimum')!;
    const me = c.rows.find((r) => r.policy === 'meguri-estimator')!;
    let total = 0;
    let fell = 0;
    let slowest = 0;
    for (let i = 0; i < w.n; i++) {
      const o = w.weight[i]! * opt.pageFreshHours[i]!;
      const d = o - w.weight[i]! * me.pageFreshHours[i]!;
      total += o;
      if (w.lambdaAfter[i]! < w.lambda[i]!) fell += d;
      if (bandOf(w.lambda[i]! * 24) === 1) slowest += d;
    }
    expect(drift[1]).toBeCloseTo(fell / total, 12);
    expect(bands[1]).toBeCloseTo(slowest / total, 12);
    // Without a drift there is no drift split.
    expect(driftLosses(compare({ n: 300, seed: 3, days: 40, warmupDays: 10 }, [optimumPolicy(), new MeguriEstimatorPolicy()])).size).toBe(0);
  });

  it('ratioLosses groups the shortfall by crawls over the optimum\'s: it sums to 1 − ratio and counts every page once', () => {
    expect([ratioGroupOf(0, 4), ratioGroupOf(2, 4), ratioGroupOf(3, 4), ratioGroupOf(4, 4), ratioGroupOf(5, 4), ratioGroupOf(7, 4), ratioGroupOf(8, 4), ratioGroupOf(3, 0)]).toEqual([
      0, 1, 1, 2, 3, 3, 4, 5,
    ]);
    const c = compare({ n: 1200, seed: 5, days: 80, warmupDays: 10, budgetPerPageDay: 0.1 }, [optimumPolicy(), new MeguriEstimatorPolicy()]);
    const x = ratioLosses(c).get('meguri-estimator')!;
    expect(x.points).toHaveLength(RATIO_GROUPS.length);
    expect(x.points.reduce((a, b) => a + b, 0)).toBeCloseTo(1 - c.meguriOverOptimum, 12);
    expect(x.pages.reduce((a, b) => a + b, 0)).toBe(1200);
    // By hand: the pages the optimum recrawls that the learner crawled less than half as often.
    const w = c.world;
    const opt = c.rows.find((r) => r.policy === 'optimum')!;
    const me = c.rows.find((r) => r.policy === 'meguri-estimator')!;
    let total = 0;
    let starved = 0;
    let count = 0;
    for (let i = 0; i < w.n; i++) {
      total += w.weight[i]! * opt.pageFreshHours[i]!;
      if (opt.pageCrawls[i]! > 0 && me.pageCrawls[i]! < 0.5 * opt.pageCrawls[i]!) {
        starved += w.weight[i]! * (opt.pageFreshHours[i]! - me.pageFreshHours[i]!);
        count++;
      }
    }
    expect(count).toBeGreaterThan(0);
    expect(x.pages[0]).toBe(count);
    expect(x.points[0]).toBeCloseTo(starved / total, 12);
  });

  it('the polite optimum spaces a capped host\'s fetches by 1/C and is the optimum itself where no host is capped', () => {
    const capped = compare({ n: 1500, seed: 9, days: 60, warmupDays: 10, cappedHostFraction: 0.6 }, [optimumPolicy(), politeOptimumPolicy(), politeOptimumPolicy('from-due')]);
    const w = capped.world;
    let gaps = 0;
    for (const name of ['optimum-polite', 'optimum-polite-grid']) {
      const r = capped.rows.find((x) => x.policy === name)!;
      for (let h = 0; h < w.hostCount; h++) {
        const starts = r.cappedStarts[h];
        if (starts === undefined) continue;
        for (let k = 1; k < starts.length; k++) {
          expect(starts[k]! - starts[k - 1]!).toBeGreaterThanOrEqual(1 / w.hostCap[h]! - 1e-9);
          gaps++;
        }
      }
    }
    expect(gaps).toBeGreaterThan(1000);
    // The optimum itself crowds some capped host closer than 1/C (so the spacing above is the policy's doing).
    const opt = capped.rows.find((x) => x.policy === 'optimum')!;
    let closer = 0;
    for (let h = 0; h < w.hostCount; h++) {
      const starts = opt.cappedStarts[h];
      if (starts === undefined) continue;
      for (let k = 1; k < starts.length; k++) if (starts[k]! - starts[k - 1]! < 1 / w.hostCap[h]! - 1e-9) closer++;
    }
    expect(closer).toBeGreaterThan(0);
    const free = compare({ n: 800, seed: 9, days: 40, warmupDays: 10, cappedHostFraction: 0 }, [optimumPolicy(), politeOptimumPolicy()]);
    expect(free.rows[1]!.freshness).toBe(free.rows[0]!.freshness);
    expect(free.rows[1]!.crawls).toBe(free.rows[0]!.crawls);
  });
});
