// The change-point rule (record.ts `rateFell`, `restartOnSurprise`): a fetch too improbable
// under a URL's estimate restarts its statistics. On simulated Poisson histories a fall in rate
// is caught within a few fetches, and stationary histories restart rarely; the frontier's hook
// restarts exactly as observeChange does, and the restarted counts survive a checkpoint.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/core/mix.js';
import {
  type FreshnessParams,
  type FreshnessRecord,
  Frontier,
  type Outcome,
  estimate,
  foldOrRestart,
  freshnessParams,
  newFreshnessRecord,
  observeChange,
  rateFell,
  restartOnSurprise,
  withFreshness,
} from '../../src/index.js';

const HOUR = 3_600_000;
const T0 = 480_000;

describe('rateFell', () => {
  it('fires exactly when a quiet stretch had less than p* probability: λ̂·q > −ln p*', () => {
    const p = 1e-5; // −ln p* = 11.51
    expect(rateFell(1, 11.5, p)).toBe(false);
    expect(rateFell(1, 11.52, p)).toBe(true);
    expect(rateFell(0.5, 23.1, p)).toBe(true);
    expect(rateFell(0.5, 23, p)).toBe(false);
    // Off, no estimate, nothing quiet.
    expect(rateFell(1, 1e9, 0)).toBe(false);
    expect(rateFell(0, 1e9, p)).toBe(false);
    expect(rateFell(Number.NaN, 1e9, p)).toBe(false);
    expect(rateFell(1, 0, p)).toBe(false);
  });
});

/** A record whose counters already count a fetch at `now` (as observeChange leaves them before folding). */
function history(init: Partial<FreshnessRecord>): FreshnessRecord {
  return newFreshnessRecord(init);
}

describe('restartOnSurprise', () => {
  it('restarts a quiet run from the fetch that saw the last change, keeping one changed interval of the old geometric mean', () => {
    // 20 intervals since hour 1000: 12 changed of geometric mean 2 h, then 8 unchanged up to this
    // fetch at hour 1100 (counters count it); the last change was seen at hour 1060.
    const rec = history({
      firstCrawled: 1000,
      crawlCount: 21,
      changeCount: 12,
      noChangeStreak: 8,
      unchangedHours: 30,
      changedLogHours: 12 * Math.log(2),
      lmHours: -1,
      lastChanged: 1060,
    });
    // λ̂ = 1/h: 40 quiet hours are far beyond −ln 1e-5 = 11.5.
    expect(restartOnSurprise(rec, 1, 1100, 1090, false, 0, 1e-5)).toBe(true);
    expect(rec).toMatchObject({ firstCrawled: 1058, crawlCount: 10, changeCount: 1, noChangeStreak: 8, unchangedHours: 40 });
    expect(rec.changedLogHours).toBeCloseTo(Math.log(2), 12);
    expect(rec.lmHours).toBe(-1); // untrusted stays untrusted
    // Estimated from what is left: one 2-h change, then 40 quiet hours.
    const after = estimate({ ...rec, lastCrawled: 1100 }, freshnessParams());
    expect(after).toBeLessThan(0.1);
  });

  it('gives a trusted Last-Modified exposure the quiet run alone (the kept change adds none)', () => {
    const rec = history({ firstCrawled: 1000, crawlCount: 21, changeCount: 12, noChangeStreak: 8, unchangedHours: 30, changedLogHours: 12 * Math.log(2), lmHours: 35, lmAgeHours: 500, lastChanged: 1060 });
    expect(restartOnSurprise(rec, 1, 1100, 1090, false, 0, 1e-5)).toBe(true);
    expect(rec.lmHours).toBe(40);
    expect(rec.unchangedHours).toBe(40);
    expect(rec.lmAgeHours).toBe(0); // the quiet before the first fetch dated the old rate
  });

  it('keeps the first fetch\'s age when it does not restart', () => {
    const rec = history({ firstCrawled: 1000, crawlCount: 21, changeCount: 12, noChangeStreak: 0, unchangedHours: 30, changedLogHours: 12 * Math.log(2), lmHours: 35, lmAgeHours: 500, lastChanged: 1090 });
    expect(restartOnSurprise(rec, 0.1, 1100, 1090, false, 0, 1e-5)).toBe(false); // 0.1 × 10 h is no surprise
    expect(rec.lmAgeHours).toBe(500);
  });

  it('does not fire on a quiet run the estimate explains, nor when off', () => {
    const base = { firstCrawled: 1000, crawlCount: 21, changeCount: 12, noChangeStreak: 8, unchangedHours: 30, changedLogHours: 0, lmHours: -1, lastChanged: 1060 };
    const rec = history(base);
    expect(restartOnSurprise(rec, 0.25, 1100, 1090, false, 0, 1e-5)).toBe(false); // 0.25 × 40 = 10 < 11.5
    expect(rec).toMatchObject(base);
    expect(restartOnSurprise(rec, 100, 1100, 1090, false, 0, 0)).toBe(false);
    expect(rec).toMatchObject(base);
  });

  it('restarts on a change the server dated long after the last, with the exposure of that one interval', () => {
    // Trusted Last-Modified: the change came 30 h before this fetch, 200 h after the previous one.
    const rec = history({ firstCrawled: 1000, crawlCount: 31, changeCount: 30, noChangeStreak: 0, unchangedHours: 0, changedLogHours: 30 * Math.log(1.5), lmHours: 25, lastChanged: 1045 });
    expect(restartOnSurprise(rec, 2, 1275, 1045, true, 30, 1e-5)).toBe(true);
    expect(rec).toMatchObject({ firstCrawled: 1045, crawlCount: 2, changeCount: 1, noChangeStreak: 0, unchangedHours: 0, lmHours: 30 });
    expect(rec.changedLogHours).toBeCloseTo(Math.log(230), 12);
    // An undated change shows nothing quiet: no restart however long the interval.
    const undated = history({ firstCrawled: 1000, crawlCount: 31, changeCount: 30, changedLogHours: 0, unchangedHours: 0, lmHours: -1, lastChanged: 1045 });
    expect(restartOnSurprise(undated, 2, 1275, 1045, true, 0, 1e-5)).toBe(false);
  });

  it('tests a record kept without lastChanged on its last interval alone', () => {
    const rec = history({ firstCrawled: 1000, crawlCount: 11, changeCount: 5, noChangeStreak: 3, unchangedHours: 20, changedLogHours: 0, lmHours: -1, lastChanged: 0 });
    // 10 quiet hours in the last interval at λ̂ = 1: not enough, though the run may be longer.
    expect(restartOnSurprise(rec, 1, 1100, 1090, false, 0, 1e-5)).toBe(false);
    expect(restartOnSurprise(rec, 2, 1100, 1090, false, 0, 1e-5)).toBe(true);
    // Restarted from the previous fetch, after one kept changed interval (geometric mean 1 h).
    expect(rec).toMatchObject({ firstCrawled: 1089, crawlCount: 3, changeCount: 1, noChangeStreak: 1, unchangedHours: 10 });
  });
});

describe('foldOrRestart', () => {
  it('starts the statistics at a first fetch, and seeds then folds an interval the estimate explains', () => {
    const first = history({ crawlCount: 1, unchangedHours: Number.NaN, changedLogHours: Number.NaN });
    expect(foldOrRestart(first, 0, 0, 1000, 0, false, 1e-5)).toBe(false);
    expect(first).toMatchObject({ unchangedHours: 0, changedLogHours: 0 });
    // Counters count this fetch: 4 intervals over 40 h before it, 2 changed; statistics not kept.
    const rec = history({ firstCrawled: 1000, crawlCount: 6, changeCount: 3, noChangeStreak: 0, unchangedHours: Number.NaN, changedLogHours: Number.NaN, lmHours: -1, lastChanged: 1050 });
    expect(foldOrRestart(rec, 0.05, -1, 1050, 1040, true, 1e-5)).toBe(false);
    expect(rec.unchangedHours).toBe(20); // seeded: 2 unchanged intervals of the mean 10 h
    expect(rec.changedLogHours).toBeCloseTo(3 * Math.log(10), 12); // 2 seeded + this 10-h one
    expect(rec).toMatchObject({ firstCrawled: 1000, crawlCount: 6, changeCount: 3 });
  });

  it('dates a change by the exposure this fetch added, from the unrounded new exposure', () => {
    // A stored (f32) exposure of ~10,000 h; the server dates this change 30.0004 h before the
    // fetch. Rounded to f32 first (ulp 2⁻¹⁰ h there) the sum would lose the tail's last digits.
    const before = Math.fround(10000.3);
    const tail = 30.0004;
    const rec = history({ firstCrawled: 1000, crawlCount: 31, changeCount: 30, noChangeStreak: 0, unchangedHours: 0, changedLogHours: 30 * Math.log(1.5), lmHours: before + tail, lastChanged: 1045 });
    expect(Math.abs(Math.fround(before + tail) - before - tail)).toBeGreaterThan(1e-5);
    expect(foldOrRestart(rec, 2, before, 1275, 1045, true, 1e-5)).toBe(true);
    expect(rec.lmHours).toBeCloseTo(tail, 9);
    expect(rec).toMatchObject({ firstCrawled: 1045, crawlCount: 2, changeCount: 1 });
    // The same change with the exposure untrusted before it shows nothing quiet: folded, no restart.
    const undated = history({ firstCrawled: 1000, crawlCount: 31, changeCount: 30, unchangedHours: 0, changedLogHours: 0, lmHours: -1, lastChanged: 1045 });
    expect(foldOrRestart(undated, 2, -1, 1275, 1045, true, 1e-5)).toBe(false);
    expect(undated.changedLogHours).toBeCloseTo(Math.log(230), 12);
  });
});

/** One fetch of a simulated page: a new random fingerprint and simhash per version, Last-Modified = the last change. */
function outcome(version: number, lastChangeHours: number, withLastModified: boolean): Outcome {
  const r = mulberry32(version * 7919 + 17);
  const hi = BigInt(Math.floor(r() * 2 ** 32));
  const lo = BigInt(Math.floor(r() * 2 ** 32));
  return {
    row: 0,
    url: 'https://sim.example/p',
    status: 200,
    contentFp: BigInt(version + 1),
    simhash: (hi << 32n) | lo,
    ...(withLastModified ? { lastModified: Math.floor(lastChangeHours * 3600) } : {}),
  };
}

/**
 * Fetches a Poisson page (rate `before` per hour until `fallAt`, `after` from then on) at the
 * hours `at(k)` through observeChange → estimate, as a frontier would. Returns the fetch index
 * of each restart and λ̂ after each fetch.
 */
function simulate(seed: number, before: number, after: number, fallAt: number, fetches: number, at: (k: number) => number, lm: boolean, params: FreshnessParams) {
  const rand = mulberry32(seed);
  let version = 0;
  let lastChange = T0 - 1000;
  let next = T0 - Math.log(1 - rand()) / before;
  const rec = newFreshnessRecord();
  const restarts: number[] = [];
  const lambdas: number[] = [];
  for (let k = 0; k < fetches; k++) {
    const t = at(k);
    while (next <= t) {
      version++;
      lastChange = next;
      const rate = next < fallAt ? before : after;
      next = next - Math.log(1 - rand()) / rate;
      // The memoryless switch: a change drawn past the fall at the old rate is redrawn at the new one.
      if (lastChange < fallAt && next >= fallAt) next = fallAt - Math.log(1 - rand()) / after;
    }
    const crawls = rec.crawlCount;
    observeChange(rec, outcome(version, lastChange, lm), t, params);
    if (crawls >= 1 && rec.crawlCount <= crawls) restarts.push(k);
    rec.lambda = estimate(rec, params);
    lambdas.push(rec.lambda);
  }
  return { restarts, lambdas };
}

describe('on simulated Poisson histories', () => {
  const p = freshnessParams();
  const off = freshnessParams({ changePointP: 0 });

  it('a funded page that falls from 4 to 0.02 changes a day restarts within four days (eight at worst) and is estimated slow', () => {
    const fall = T0 + 40 * 24;
    const fallFetch = (40 * 24) / 6;
    let within4 = 0;
    for (let seed = 1; seed <= 20; seed++) {
      // Half the pages date their changes (Last-Modified): the recency pull of that estimate
      // lowers λ̂ as the quiet grows, so λ̂·q stays small and those need no restart.
      const lm = seed % 2 === 0;
      const run = simulate(seed, 4 / 24, 0.02 / 24, fall, fallFetch + 80, (k) => T0 + 6 * k, lm, p);
      // Eight days after the fall the estimate is below 1 change a day.
      expect(run.lambdas[fallFetch + 32]! * 24, `seed ${seed}`).toBeLessThan(1);
      if (lm) continue;
      // The quiet run starts at the last change seen, so a late change (before the fall or, at
      // 0.02 a day, after it) delays the restart.
      const first = run.restarts.find((k) => k >= fallFetch);
      expect(first, `seed ${seed}`).toBeDefined();
      expect(first! - fallFetch, `seed ${seed}`).toBeLessThanOrEqual(32);
      if (first! - fallFetch <= 16) within4++;
      // Without the rule the old evidence still holds λ̂ above 1 a day.
      const stale = simulate(seed, 4 / 24, 0.02 / 24, fall, fallFetch + 33, (k) => T0 + 6 * k, lm, off);
      expect(stale.restarts).toEqual([]);
      expect(stale.lambdas[fallFetch + 32]! * 24, `seed ${seed}`).toBeGreaterThan(1);
    }
    expect(within4).toBeGreaterThanOrEqual(8);
  });

  it('a starved page re-probed every 14 days restarts at its first quiet re-probe after a fall from 5 to 0.01 a day', () => {
    // Known fast from 20 fetches 6 h apart, then re-probed every 14 days; the rate falls
    // between re-probes 10 and 11 (fetches 29 and 30).
    const at = (k: number): number => (k < 20 ? T0 + 6 * k : T0 + 114 + (k - 19) * 336);
    const fall = T0 + 114 + 10.5 * 336;
    let caughtAt = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const run = simulate(seed, 5 / 24, 0.01 / 24, fall, 36, at, false, p);
      // Before the fall every re-probe finds a change: nothing to restart on.
      expect(run.restarts.filter((k) => k >= 2 && k <= 29), `seed ${seed}`).toEqual([]);
      const first = run.restarts.find((k) => k >= 30);
      expect(first, `seed ${seed}`).toBeDefined();
      // Fetch 30 straddles the fall (it sees the changes before it); a quiet 31 restarts.
      expect(first!, `seed ${seed}`).toBeLessThanOrEqual(34);
      if (first === 31) caughtAt++;
    }
    expect(caughtAt).toBeGreaterThanOrEqual(15);
  });

  it('stationary histories restart rarely: a count over 300 pages × 150 days (fixed seed)', () => {
    const rand = mulberry32(20261202);
    let fetches = 0;
    let restarts = 0;
    let loose = 0;
    for (let i = 0; i < 300; i++) {
      const rate = Math.exp(Math.log(0.01) + rand() * Math.log(1000)) / 24; // 0.01–10 a day
      const every = Math.exp(Math.log(2) + rand() * Math.log(360)); // 2 h – 30 days
      const n = Math.max(3, Math.floor((150 * 24) / every));
      const lm = i % 3 === 0;
      const seed = Math.floor(rand() * 2 ** 31);
      restarts += simulate(seed, rate, rate, Number.POSITIVE_INFINITY, n, (k) => T0 + Math.round(k * every), lm, p).restarts.length;
      loose += simulate(seed, rate, rate, Number.POSITIVE_INFINITY, n, (k) => T0 + Math.round(k * every), lm, freshnessParams({ changePointP: 1e-2 })).restarts.length;
      fetches += n;
    }
    // Measured: 13 restarts in 79,493 fetches at p* = 1e-5, 72 at p* = 1e-2. More than p* per
    // change would give: λ̂ is an estimate, and a young one can be far above the truth (a
    // restart then corrects it).
    expect(fetches).toBe(79_493);
    expect(restarts).toBeLessThanOrEqual(20);
    expect(loose).toBeGreaterThan(3 * restarts);
  });
});

describe('withFreshness: the frontier restarts as observeChange does', () => {
  it('a hook may rewrite firstCrawled and the counts; values outside their columns are ignored', () => {
    const writes: [number, number, number, number][] = [
      [0, -1, 70000, T0 + 999], // all ignored: crawlCount < 1, a negative changeCount, a streak above u16, firstCrawled after lastCrawled
      [2, 1, 0, T0 + 1], // all taken
      [1, 1.5, 1, T0 + 99], // crawlCount and the streak taken; a fractional changeCount and a late firstCrawled ignored
    ];
    let k = 0;
    const f = new Frontier(1, T0, {
      scheduleIndex: true,
      stateMachine: true,
      freshness: (rec, now) => {
        if (rec.crawlCount >= 3 && k < writes.length) {
          const [crawls, changes, streak, first] = writes[k++]!;
          rec.crawlCount = crawls;
          rec.changeCount = changes;
          rec.noChangeStreak = streak;
          rec.firstCrawled = first;
        }
        return now + 1;
      },
    });
    f.seed('https://b.example/', 'b.example', 1, T0, T0, 0);
    const column = (id: number): number => Array.from(f.checkpoint().columns.find((x) => x.id === id)!.data)[0]!;
    const state = (): number[] => [9, 10, 11, 43].map(column);
    let now = T0 * HOUR;
    const after: number[][] = [];
    for (let i = 0; i < 5; i++) {
      let req = f.dispatch(now);
      while (!req && now < (T0 + 100) * HOUR) req = f.dispatch((now += HOUR));
      f.report({ row: req!.row, url: req!.url, status: 200, contentFp: BigInt(i + 1), simhash: BigInt(i) * 0x0f0f_0f0f_0f0f_0f0fn }, now);
      after.push(state());
    }
    expect(after[2]).toEqual([3, 2, 0, T0]); // the first write: nothing taken
    expect(after[3]).toEqual([2, 1, 0, T0 + 1]);
    expect(after[4]).toEqual([1, 2, 1, T0 + 1]); // changeCount: 1 written, + this fetch's change
    f.free();
  });


  it.each([
    ['without', false],
    ['with', true],
  ])('same columns at every fetch (counts, firstCrawled, statistics, exposure, λ) on a server %s Last-Modified, and the restarted counts survive a checkpoint', (_, lm) => {
    // A page that changes every hour for 60 hours, then every 500 hours.
    const changeAt = (h: number): number => (h <= T0 + 60 ? Math.floor(h) : T0 + 60 + Math.floor((h - T0 - 60) / 500) * 500);
    const p = freshnessParams({ reprobeRate: 1 / 48 });
    const options = { freshness: withFreshness(p, 0.5), scheduleIndex: true, stateMachine: true };
    const f = new Frontier(1, T0, options);
    f.seed('https://a.example/page', 'a.example', 2, T0, T0, 0);
    const oracle = newFreshnessRecord({ priority: Math.fround(2), spreadKey: 0 });
    const column = (g: Frontier, id: number): number => Array.from(g.checkpoint().columns.find((x) => x.id === id)!.data)[0]!;
    let now = T0 * HOUR;
    let fetches = 0;
    let restarts = 0;
    while (now < (T0 + 2000) * HOUR) {
      const req = f.dispatch(now);
      if (!req) {
        now = f.nextEligible()!;
        continue;
      }
      const hour = now / HOUR;
      const last = changeAt(hour - 1e-9);
      // Dated 0.37 h before the hour it is seen in, so the dated quiet tails are fractional.
      const o: Outcome = { ...outcome(last, last - 0.37, lm), row: req.row, url: req.url };
      oracle.spreadKey = (req.key[2] ?? 0) >>> 0;
      const crawls = oracle.crawlCount;
      observeChange(oracle, o, hour, p);
      if (crawls >= 1 && oracle.crawlCount <= crawls) restarts++;
      oracle.lmHours = Math.fround(oracle.lmHours);
      oracle.unchangedHours = Math.fround(oracle.unchangedHours);
      oracle.changedLogHours = Math.fround(oracle.changedLogHours);
      oracle.lambda = Math.fround(estimate(oracle, p));
      f.report(o, now);
      fetches++;
      expect(hour).toBe(Math.floor(hour)); // whole hours: the frontier's unit
      expect([9, 10, 11, 43].map((id) => column(f, id))).toEqual([oracle.crawlCount, oracle.changeCount, oracle.noChangeStreak, oracle.firstCrawled]);
      expect([44, 45, 46, 12].map((id) => column(f, id))).toEqual([oracle.lmHours, oracle.unchangedHours, oracle.changedLogHours, oracle.lambda]);
      now = Math.max(now, f.nextEligible()!);
    }
    if (lm) {
      // Trusted to the end, so every change's dated quiet went through the rule (the recency
      // pull of the Last-Modified estimate keeps λ̂·q small here: no restart).
      expect(oracle.lmHours).toBeGreaterThan(0);
    } else {
      expect(restarts).toBeGreaterThanOrEqual(1);
      expect(oracle.crawlCount).toBeLessThan(fetches);
    }
    const bytes = f.checkpointBytes();
    const again = Frontier.recover(bytes, { ...options, freshness: withFreshness(p, 0.5) });
    expect([9, 10, 11, 43, 44, 45, 46, 12].map((id) => column(again, id))).toEqual([9, 10, 11, 43, 44, 45, 46, 12].map((id) => column(f, id)));
    expect(again.checkpointBytes()).toEqual(bytes);
    f.free();
    again.free();
  });
});
