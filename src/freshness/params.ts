/**
 * The rescheduler's knobs (DESIGN §8) and their validation.
 *
 * Rates are changes (or crawls) per hour and intervals are hours, the unit of the URL table's
 * epoch-hour timestamps (DESIGN §4). The defaults are starting points to be checked against
 * the simulator (bench/freshness) and real crawl data, not proven optimums.
 */
import { booleanField, defineOptions, numberField } from '../options/index.js';

/** Tunable parameters of the freshness model. All rates per hour, all intervals in hours. */
export interface FreshnessParams {
  /** Smoothing pseudo-count of the no-change-ratio estimator (Cho & Garcia-Molina's 0.5). */
  readonly alpha: number;
  /** λ floor, changes/hour: a page never seen to change is still assumed to change about yearly. */
  readonly minRate: number;
  /** λ ceiling, changes/hour: numeric safety; the allocation starves pages this fast anyway. */
  readonly maxRate: number;
  /** Observed intervals over which a no-change streak pulls λ halfway to the streak's rate. */
  readonly recencyHalfLife: number;
  /** Hamming distance at or below which two simhashes are the same text (cosmetic churn). */
  readonly simhashNearDupThreshold: number;
  /** Reference crawl rate, crawls/hour, at which `valueDensity` measures a page's marginal value. */
  readonly refRate: number;
  /** Crawls/hour for starved pages: slow enough to be cheap, fast enough to notice a revival. */
  readonly reprobeRate: number;
  /** Fewest hours between a crawl and the next due time. */
  readonly minReprobeGap: number;
  /** Hours over which a host's due times are spread so they do not all fall in one hour. */
  readonly hostSpreadWindow: number;
  /**
   * Whether a server's Last-Modified may sharpen the estimate once it has proven consistent
   * with the content (see `observeChange` and `estimate`).
   */
  readonly trustLastModified: boolean;
  /**
   * The change-point test's p*: a fetch whose quiet time had less than this probability under
   * the URL's estimate restarts the URL's statistics (`restartOnSurprise`). 0 = never.
   */
  readonly changePointP: number;
  /**
   * Changes of a page's change rate per hour that a starved page's re-probes insure against:
   * its re-probe interval is at most √(2τ / (w·h)) (`desiredRate`). The prior of the learned
   * hazard while `learnHazard` is on. 0 = no such bound, learned or not.
   */
  readonly rateChangeHazard: number;
  /**
   * Whether the hazard is learned from the change points the crawl detects, with
   * `rateChangeHazard` as its prior (hazard.ts; DESIGN §20, "Re-probes priced at the host's
   * level, and a learned hazard"). When false the
   * hazard is `rateChangeHazard` throughout.
   */
  readonly learnHazard: boolean;
  /**
   * Whether a fetch whose new estimate takes a funded URL just over the water line (margin
   * τλ/w in [1, 4)) is followed by one test interval τ/w before the URL is re-probed as
   * starved (`targetInterval`'s `previousLambda`), so a page is not starved on the noise of its
   * estimate (DESIGN §20, "A test before starving").
   */
  readonly confirmStarvation: boolean;
}

const HOURS_PER_YEAR = 8760;

const resolve = defineOptions<FreshnessParams>(
  'FreshnessParams',
  {
    alpha: numberField({ above: 0, max: 100, default: 0.5 }),
    minRate: numberField({ above: 0, default: 1 / HOURS_PER_YEAR }),
    maxRate: numberField({ above: 0, default: 4 }),
    recencyHalfLife: numberField({ above: 0, default: 8 }),
    simhashNearDupThreshold: numberField({ min: 0, max: 64, integer: true, default: 3 }),
    refRate: numberField({ above: 0, default: 1 / 24 }),
    reprobeRate: numberField({ above: 0, default: 1 / (14 * 24) }),
    minReprobeGap: numberField({ above: 0, max: 24 * 365, default: 1 }),
    hostSpreadWindow: numberField({ min: 0, max: 24 * 365, default: 24 }),
    trustLastModified: booleanField(true),
    changePointP: numberField({ min: 0, max: 0.5, default: 1e-5 }),
    rateChangeHazard: numberField({ min: 0, max: 1, default: 0.25 / HOURS_PER_YEAR }),
    learnHazard: booleanField(true),
    confirmStarvation: booleanField(true),
  },
  (p) => {
    if (p.minRate >= p.maxRate) return `minRate (${p.minRate}) must be below maxRate (${p.maxRate})`;
    if (p.refRate < p.minRate || p.refRate > p.maxRate) {
      return `refRate (${p.refRate}) must lie within [minRate, maxRate] = [${p.minRate}, ${p.maxRate}]`;
    }
    if (p.reprobeRate > 1 / p.minReprobeGap) {
      return `reprobeRate (${p.reprobeRate}/h) is faster than one crawl per minReprobeGap (${p.minReprobeGap} h)`;
    }
    return undefined;
  },
);

const DEFAULTS = resolve();

/**
 * The section-12 defaults: α = 0.5; λ within [1/8760, 4] changes/hour (yearly floor, four per
 * hour ceiling); a recency half-life of 8 intervals; simhash threshold 3; a reference rate of
 * one crawl a day; a fortnightly re-probe; a one-hour minimum gap; a one-day host spread
 * window; Last-Modified trusted once proven; a change point at p* = 1e-5; a rate change once
 * in four years per page insured against (DESIGN §20, "Change points") as the prior of a hazard
 * learned from the crawl's change points; a test interval before
a funded page is starved. The returned object is frozen and shared.
 */
export function defaultParams(): FreshnessParams {
  return DEFAULTS;
}

/**
 * Validates `input` (any subset of the fields) and returns frozen, fully defaulted params.
 * Throws `InvalidArgumentError` naming the field and the value received, or the pair of
 * fields that contradict each other (minRate ≥ maxRate, refRate outside the λ band, a
 * re-probe rate faster than the minimum gap allows).
 */
export function freshnessParams(input?: Partial<FreshnessParams> | null): FreshnessParams {
  return input == null ? DEFAULTS : resolve(input);
}
