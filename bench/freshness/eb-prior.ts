/**
 * Experiment (DESIGN §20, "Empirical-Bayes prior (not kept)"): the posterior of `estimate`
 * with a prior learned from the crawl's own URLs instead of the flat-in-ln-λ one. It lives in
 * the bench, not src: it measured no gain worth its state (see DESIGN), and is kept only so
 * the measurement can be re-run (`MEGURI_EB=1` switches the estimator column onto it).
 *
 * The prior is a histogram over `estimate`'s 48-point log grid. Each fetch adds its URL's
 * normalized posterior (under the current prior), weighted by the hours of the interval that
 * fetch closed, so a URL counts by the time it was watched and fast-crawled pages do not
 * dominate; at each background tick the prior is rebuilt as the histogram mixed with a share
 * of the flat prior (no bin reaches zero), the histogram optionally decayed. The batch variant
 * (`fitBatch`) instead refits the prior at a tick by EM over every URL's current likelihood.
 */
import { datedAge, estimate, usesLastModified, type FreshnessParams, type FreshnessRecord } from '../../src/freshness/index.js';

/**
 * Grid points, as `posteriorRate`'s. The grid, the two-atom likelihood and the summary below are
 * a deliberate copy of src/freshness/estimate.ts `posteriorRate` with a prior term added: keep in
 * sync (the fast-check property in test/freshness/eb-prior.test.ts fails if they drift apart).
 */
export const EB_GRID = 48;

/** The learned prior's state: the histogram and the log prior the posterior uses. */
export class LearnedPrior {
  readonly hist = new Float64Array(EB_GRID);
  /** ln prior per grid point (up to a constant); all zero = flat. */
  readonly logPrior = new Float64Array(EB_GRID);
  /** The last posterior computed (normalized), for `observe`. */
  readonly post = new Float64Array(EB_GRID);
  readonly #mix: number;
  readonly #decay: number;

  /** `mix`: the flat prior's share; `decayPerTick`: the histogram's factor at each refresh (1 = none). */
  constructor(mix = 0.1, decayPerTick = 1) {
    this.#mix = mix;
    this.#decay = decayPerTick;
  }

  /** Adds the last posterior with weight `hours`. */
  observe(hours: number): void {
    if (!(hours > 0)) return;
    for (let k = 0; k < EB_GRID; k++) this.hist[k]! += hours * this.post[k]!;
  }

  /**
   * Batch variant: the prior as the (mixed) maximum-likelihood mixing distribution of `count`
   * URLs' likelihoods (`lik`, `count` × 48, each scaled to a maximum of 1), by `iterations`
   * EM steps warm-started from the current prior, each URL one vote.
   */
  fitBatch(lik: Float64Array, count: number, iterations: number): void {
    if (count === 0) return;
    const g = new Float64Array(EB_GRID);
    for (let k = 0; k < EB_GRID; k++) g[k] = Math.exp(this.logPrior[k]!);
    const next = new Float64Array(EB_GRID);
    for (let it = 0; it < iterations; it++) {
      next.fill(0);
      for (let i = 0; i < count; i++) {
        const o = i * EB_GRID;
        let m = 0;
        for (let k = 0; k < EB_GRID; k++) m += lik[o + k]! * g[k]!;
        if (!(m > 0)) continue;
        for (let k = 0; k < EB_GRID; k++) next[k]! += (lik[o + k]! * g[k]!) / m;
      }
      let total = 0;
      for (let k = 0; k < EB_GRID; k++) total += next[k]!;
      for (let k = 0; k < EB_GRID; k++) g[k] = (1 - this.#mix) * (next[k]! / total) + this.#mix / EB_GRID;
    }
    for (let k = 0; k < EB_GRID; k++) this.logPrior[k] = Math.log(g[k]!);
  }

  /** Rebuilds the prior from the histogram (at a background tick). */
  refresh(): void {
    let total = 0;
    for (let k = 0; k < EB_GRID; k++) total += this.hist[k]!;
    if (!(total > 0)) return;
    for (let k = 0; k < EB_GRID; k++) {
      this.logPrior[k] = Math.log((1 - this.#mix) * (this.hist[k]! / total) + this.#mix / EB_GRID);
      this.hist[k]! *= this.#decay;
    }
  }
}

let grid: { lo: number; hi: number; lambda: Float64Array } | undefined;
function gridOf(p: FreshnessParams): Float64Array {
  if (grid !== undefined && grid.lo === p.minRate && grid.hi === p.maxRate) return grid.lambda;
  const lo = Math.log(p.minRate);
  const step = (Math.log(p.maxRate) - lo) / (EB_GRID - 1);
  const lambda = new Float64Array(EB_GRID);
  for (let k = 0; k < EB_GRID; k++) lambda[k] = Math.exp(lo + k * step);
  grid = { lo: p.minRate, hi: p.maxRate, lambda };
  return lambda;
}

/**
 * `estimate` with the posterior under `prior` (same likelihood, same summary 1/E[1/λ], same
 * clamp). Returns the rate and whether the posterior path was taken (then `prior.post` holds
 * the normalized posterior); the Last-Modified path and the no-interval case are `estimate`'s.
 */
/**
 * The log-likelihood of `rec`'s history on the grid into `out` (as `posteriorRate` forms it), or
 * false when `estimate` would not take the posterior path (no interval yet, or a trusted
 * Last-Modified with two changes or more).
 */
export function logLikelihood(rec: FreshnessRecord, p: FreshnessParams, out: Float64Array): boolean {
  const n = rec.crawlCount - 1;
  const span = rec.lastCrawled - rec.firstCrawled;
  const X = Math.min(rec.changeCount, n);
  if (n < 1 || !(span > 0) || usesLastModified(rec, p)) return false;
  const meanInterval = span / n;
  let unchanged = rec.unchangedHours;
  const logSum = rec.changedLogHours;
  const kept = unchanged >= 0 && unchanged <= span + 1 && Number.isFinite(logSum);
  if (!kept) unchanged = meanInterval * (n - X);
  if (unchanged > span) unchanged = span;
  const changedHours = span - unchanged;
  const perChange = X > 0 ? changedHours / X : 0;
  let short = perChange;
  let long = perChange;
  if (X >= 2 && kept && perChange > 0) {
    const g = Math.exp(logSum / X);
    if (g < perChange) {
      const spread = Math.exp(Math.sqrt(2 * Math.log(perChange / g)));
      short = g / spread;
      long = g * spread;
    }
  }
  const age = datedAge(rec, p);
  const lam = gridOf(p);
  for (let k = 0; k < EB_GRID; k++) {
    const l0 = lam[k]!;
    let l = -l0 * unchanged;
    if (age > 0) l += Math.log(l0) - l0 * age;
    if (X > 0) {
      l += short === long ? X * Math.log(-Math.expm1(-l0 * short)) : 0.5 * X * (Math.log(-Math.expm1(-l0 * short)) + Math.log(-Math.expm1(-l0 * long)));
    }
    out[k] = l;
  }
  return true;
}

/**
 * `estimate` with the posterior under `prior` (same likelihood, same summary 1/E[1/λ], same
 * clamp). Returns the rate and whether the posterior path was taken (then `prior.post` holds
 * the normalized posterior); the Last-Modified path and the no-interval case are `estimate`'s.
 */
export function estimateWithPrior(rec: FreshnessRecord, p: FreshnessParams, prior: LearnedPrior): { lambda: number; posterior: boolean } {
  const post = prior.post;
  if (!logLikelihood(rec, p, post)) return { lambda: estimate(rec, p), posterior: false };
  const lam = gridOf(p);
  let best = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < EB_GRID; k++) {
    const l = post[k]! + prior.logPrior[k]!;
    post[k] = l;
    if (l > best) best = l;
  }
  let mass = 0;
  let inverse = 0;
  for (let k = 0; k < EB_GRID; k++) {
    const w = Math.exp(post[k]! - best);
    post[k] = w;
    mass += w;
    inverse += w / lam[k]!;
  }
  for (let k = 0; k < EB_GRID; k++) post[k]! /= mass;
  const r = mass / inverse;
  return { lambda: r >= p.minRate ? (r > p.maxRate ? p.maxRate : r) : p.minRate, posterior: true };
}
