// The learned rate-change hazard (src/freshness/hazard.ts) and re-probes priced at a saturated
// host's own level (`desiredRate`'s baseTau): the estimate's algebra, then through the real
// Frontier with withFreshness — a stationary crawl lowers the hazard below its prior, a crawl
// where many pages stop changing raises it — and its durable state (freshness state version 4).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type Outcome, defaultParams, desiredRate, freshnessParams, insuredReprobeRate, newFreshnessRecord, withFreshness } from '../../src/index.js';
import {
  CHANGES_PER_CHANGE_POINT,
  HAZARD_HALF_LIFE_HOURS,
  PRIOR_WATCHED_HOURS,
  decayHazard,
  hazardInUse,
  hazardRate,
  newHazardEvidence,
  observeHazard,
} from '../../src/index.js';

const HOUR = 3_600_000;
const T0 = 480_000;

describe('the learned hazard: the estimate', () => {
  it('is the prior while nothing has been watched, and a weighted mean of the prior and k·R/W after', () => {
    const prior = 0.25 / 8760;
    expect(hazardRate(newHazardEvidence(), prior)).toBe(prior);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500 }), fc.double({ min: 1, max: 1e9, noNaN: true }), fc.double({ min: 0, max: 1e-3, noNaN: true }), (r, w, h0) => {
        const e = { changePoints: r, watchedHours: w };
        const h = hazardRate(e, h0);
        const data = Math.min(1, (CHANGES_PER_CHANGE_POINT * r) / w);
        expect(h).toBeGreaterThanOrEqual(Math.min(h0, data) * (1 - 1e-12));
        expect(h).toBeLessThanOrEqual(Math.max(h0, data) * (1 + 1e-12));
        expect(h).toBeLessThanOrEqual(1);
      }),
    );
    // Watching without a change point pulls it down; change points push it up.
    const quiet = newHazardEvidence();
    observeHazard(quiet, 3 * PRIOR_WATCHED_HOURS, false);
    expect(hazardRate(quiet, prior)).toBeCloseTo(prior / 4, 15);
    const busy = newHazardEvidence();
    observeHazard(busy, PRIOR_WATCHED_HOURS, false);
    for (let i = 0; i < 40; i++) observeHazard(busy, 0, true);
    expect(hazardRate(busy, prior)).toBeCloseTo((CHANGES_PER_CHANGE_POINT * 40 + prior * PRIOR_WATCHED_HOURS) / (2 * PRIOR_WATCHED_HOURS), 15);
  });

  it('is what a scheduler uses: learned with learnHazard, the configured hazard without, 0 when that is 0', () => {
    const e = { changePoints: 10, watchedHours: 1e6 };
    const p = defaultParams();
    expect(hazardInUse(e, p)).toBe(hazardRate(e, p.rateChangeHazard));
    expect(hazardInUse(e, freshnessParams({ learnHazard: false }))).toBe(p.rateChangeHazard);
    expect(hazardInUse(e, freshnessParams({ rateChangeHazard: 0 }))).toBe(0);
    expect(hazardInUse(e, freshnessParams({ rateChangeHazard: 0, learnHazard: false }))).toBe(0);
  });

  it('halves its evidence every half-life and ignores intervals that are no length', () => {
    const e = newHazardEvidence();
    observeHazard(e, 1000, true);
    observeHazard(e, Number.NaN, false);
    observeHazard(e, Number.POSITIVE_INFINITY, false);
    observeHazard(e, -5, false);
    expect(e).toEqual({ changePoints: 1, watchedHours: 1000 });
    decayHazard(e, HAZARD_HALF_LIFE_HOURS);
    expect(e.changePoints).toBeCloseTo(0.5, 12);
    expect(e.watchedHours).toBeCloseTo(500, 9);
    decayHazard(e, 0);
    decayHazard(e, -10);
    expect(e.changePoints).toBeCloseTo(0.5, 12);
    // A burst is forgotten: 2 half-lives later a quarter of it is left, and the prior weighs more.
    const prior = 1e-5;
    const burst = { changePoints: 100, watchedHours: 1e6 };
    const before = hazardRate(burst, prior);
    decayHazard(burst, 2 * HAZARD_HALF_LIFE_HOURS);
    expect(hazardRate(burst, prior)).toBeLessThan(before);
    expect(hazardRate(burst, prior)).toBeGreaterThan(prior);
  });
});

describe('re-probes priced at a saturated host\'s own level', () => {
  const p = freshnessParams({ rateChangeHazard: 0 });
  const starved = newFreshnessRecord({ priority: 1, lambda: 0.5 });
  const funded = newFreshnessRecord({ priority: 1, lambda: 0.01 });

  it('scales a starved page\'s re-probe rate by τ/τ_h, leaves a funded page and an unsaturated host alone', () => {
    const tau = 1;
    const level = 4 * tau;
    // Starved at both levels (w/λ = 2 ≤ τ_h): the margin stretches the re-probe, the price scales it.
    const plain = desiredRate(starved, level, p);
    expect(desiredRate(starved, level, p, tau)).toBeCloseTo(plain / 4, 15);
    expect(desiredRate(starved, level, p, level)).toBe(plain);
    expect(desiredRate(starved, level, p, 2 * level)).toBe(plain); // a base above the level is no saturated host
    // Funded (w/λ = 100 > τ_h): its rate is what the level says, whatever the base.
    expect(desiredRate(funded, level, p, tau)).toBe(desiredRate(funded, level, p));
  });

  it('still insures the re-probe at the hazard given, at the host\'s own level', () => {
    const h = 1 / 8760;
    const insured = insuredReprobeRate(1, 4, h);
    expect(desiredRate(starved, 4, p, 1, h)).toBeCloseTo(Math.max(desiredRate(starved, 4, p, 1), insured), 15);
    expect(desiredRate(starved, 4, defaultParams())).toBe(desiredRate(starved, 4, defaultParams(), 4, defaultParams().rateChangeHazard));
  });
});

/**
 * A 90-day crawl of 40 hosts × 5 pages through the real Frontier; page i changes every
 * 4·(1 + i mod 7) hours until `stopDay`, when the pages with `stops(i)` stop changing for good.
 * Returns the hook's hazard at each day and the hook.
 */
function crawl(params: Parameters<typeof withFreshness>[0], stopDay: number, stops: (i: number) => boolean) {
  const hook = withFreshness(params, 200 / 24);
  const f = new Frontier(1, T0, { freshness: hook, scheduleIndex: true, stateMachine: true });
  for (let i = 0; i < 200; i++) f.seed(`https://h${i % 40}.example/p/${i}`, `h${i % 40}.example`, 1 + (i % 3), T0, T0, 1000);
  const fetch = (r: FetchRequest, atMs: number): Outcome => {
    const i = Number(r.url.slice(r.url.lastIndexOf('/') + 1));
    const hours = atMs / HOUR - T0;
    const until = stops(i) ? Math.min(hours, stopDay * 24) : hours;
    const version = Math.floor(until / (4 * (1 + (i % 7))));
    return { row: r.row, url: r.url, status: 200, contentFp: BigInt(1 + i * 100_003 + version), simhash: (BigInt(i * 7919 + version) * 0x9e3779b97f4a7c15n) & 0xffff_ffff_ffff_ffffn };
  };
  const daily: number[] = [];
  for (let d = 1; d <= 90; d++) {
    f.drain((T0 + 24 * (d - 1)) * HOUR, fetch, { untilMs: (T0 + 24 * d) * HOUR });
    daily.push(hook.hazard());
  }
  return { daily, hook, frontier: f };
}

describe('the learned hazard through withFreshness', () => {
  const prior = defaultParams().rateChangeHazard;

  it('falls below its prior in a stationary crawl and rises above it when half the pages stop changing', () => {
    const steady = crawl(null, 1000, () => false);
    // The prior at first (a day's 4,800 watched hours weigh little against its 10⁶), then lower.
    expect(steady.daily[0]!).toBeLessThan(prior);
    expect(steady.daily[0]!).toBeGreaterThan(0.99 * prior);
    expect(steady.daily[89]!).toBeLessThan(prior);
    const stop = crawl(null, 45, (i) => i % 2 === 0);
    // Level with the stationary crawl before day 45 (the same fetches), well above it after.
    expect(stop.daily.slice(0, 44)).toEqual(steady.daily.slice(0, 44));
    const after = Math.max(...stop.daily.slice(50));
    expect(after).toBeGreaterThan(10 * prior); // measured: 0.22/year before the stop, 14.9 at most after
    // And it decays once the change points stop coming: 30 days on, below its peak.
    expect(stop.daily[89]!).toBeLessThan(after);
    expect(after).toBeGreaterThan(10 * steady.daily[89]!);
    steady.frontier.free();
    stop.frontier.free();
  });

  it('keeps its hazard and evidence in the state (version 4); off, the hazard is the prior and the state version 2', () => {
    const run = crawl(null, 45, (i) => i % 2 === 0);
    const state = run.hook.exportState(Uint32Array.of(...Array.from({ length: 40 }, (_, h) => h)));
    const dv = new DataView(state.buffer);
    expect(dv.getUint16(4, true)).toBe(4);
    const at = state.length - 24;
    expect(dv.getFloat64(at, true)).toBe(run.hook.hazard());
    expect(dv.getFloat64(at + 8, true)).toBeGreaterThan(0); // change points
    const again = withFreshness(null, 200 / 24);
    again.importState(state);
    expect(again.hazard()).toBe(run.hook.hazard());
    expect(again.exportState(Uint32Array.of(...Array.from({ length: 40 }, (_, h) => h)))).toEqual(state);
    // Damaged hazard fields are refused, by name.
    for (const [offset, value] of [
      [0, -1],
      [0, 2],
      [0, Number.NaN],
      [8, -1],
      [16, Number.POSITIVE_INFINITY],
    ] as const) {
      const bad = state.slice();
      new DataView(bad.buffer).setFloat64(at + offset, value, true);
      expect(() => withFreshness(null, 1).importState(bad)).toThrow(/hazard/);
    }
    // A version-2 state (from before, or written with the hazard off) loads with the prior.
    const off = crawl({ learnHazard: false }, 45, (i) => i % 2 === 0);
    expect(new Set(off.daily)).toEqual(new Set([prior]));
    const v2 = off.hook.exportState(Uint32Array.of(0));
    expect(new DataView(v2.buffer).getUint16(4, true)).toBe(2);
    const loaded = withFreshness(null, 1);
    loaded.importState(v2);
    expect(loaded.hazard()).toBe(prior);
    // A learning hook's state read by a hook with learning off uses the prior.
    const notLearning = withFreshness({ learnHazard: false }, 1);
    notLearning.importState(state);
    expect(notLearning.hazard()).toBe(prior);
    run.frontier.free();
    off.frontier.free();
  });
});
