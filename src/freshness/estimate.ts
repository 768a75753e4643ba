/**
 * Change-rate estimation from a URL's tiny sufficient statistic.
 *
 * ## Problem
 * A page changes as a Poisson process of unknown rate λ. We fetched it n + 1 times, so we have
 * n observed intervals of mean length Ī, and X of them ended in a meaningful change. A fetch
 * only tells us *whether* the page changed, not how often, so the naive X/(nĪ) is biased low
 * and saturates at 1/Ī however fast the page really changes.
 *
 * ## No-change-ratio estimator (Cho & Garcia-Molina 2003, "Estimating frequency of change")
 * An interval of length I passes without change with probability e^(−λI). The fraction of
 * unchanged intervals, (n − X)/n, is observed exactly, so −ln((n − X)/n) estimates λĪ. It is
 * infinite when X = n; the paper's smoothed form adds a pseudo-count α to both counts:
 *
 *     r̂ = −ln((n − X + α)/(n + α)),        λ̂ = r̂ / Ī.
 *
 * With α = 0.5 the bias is small over the useful range of λĪ (the paper's analysis), and:
 * r̂(10, 3) = ln(10.5/7.5) = 0.336472; r̂(10, 10) = ln 21; r̂(n, 0) = 0. Ī is measured as
 * (lastCrawled − firstCrawled)/n: the estimator assumes equal intervals, and the scheduler's
 * even spacing keeps them close to that.
 *
 * ## Known modification times (Cho & Garcia-Molina 2003, the "last date of change" case)
 * When the server's Last-Modified is trustworthy (rules in `observeChange`), each changed
 * interval also reveals Tᵢ, the time from the last change to the fetch; an unchanged interval
 * contributes its whole length. The likelihood is then that of censored exponential waiting
 * times, λ^X e^(−λ ΣTᵢ), with maximum X/ΣTᵢ — a far sharper estimate than the ratio, and one
 * that does not saturate on pages that change every interval. We use a bias-reduced form (the
 * one the paper proposes for this case, as far as we reconstruct it; the two limits below are
 * what we rely on, and what the tests check)
 *
 *     λ̂ = (X − 1 + c)/ΣTᵢ,        c = −(X/n) / ln(1 − X/n)   (c = 0 when X = n),
 *
 * which is (X − 1)/ΣTᵢ — unbiased for a Gamma sum — when every interval changed, and tends to
 * the MLE X/ΣTᵢ when changes are rare. The first fetch's Last-Modified counts too, once later
 * fetches have proven the server's dates: the page's age A at its first fetch (`lmAgeHours`)
 * is one more dated change and quiet, as if an interval before the first fetch had ended in a
 * change — X + 1 changes over n + 1 intervals and ΣTᵢ + A (see `firstFetchAge`). The estimate
 * is used once that makes two dated changes (with one, (X − 1 + c) is dominated by the
 * correction term), the URL is still trusted (`lmHours ≥ 0`) and `params.trustLastModified`
 * is on; otherwise the posterior below stands.
 *
 * ## Posterior (the estimate used without a trusted Last-Modified)
 * The ratio r̂ above assumes equal intervals and saturates: when every interval saw a change it
 * cannot exceed ln(2n + 1) changes per mean interval, so a page changing far faster than it is
 * crawled looks only a few times faster, and the long re-probe gap of a starved page drags Ī
 * (and the estimate) down, so it is funded again at once. `estimate` therefore works with the
 * likelihood of what was seen. An interval of length I ends unchanged with probability
 * e^(−λI) and changed with 1 − e^(−λI), so with U the total length of the unchanged intervals
 * and I_j the changed ones (Cho & Garcia-Molina's irregular-access likelihood)
 *
 *     ℓ(λ) = −λU + Σ_j ln(1 − e^(−λ I_j)),
 *
 * evaluated on 48 log-spaced points of [minRate, maxRate] with a prior flat in ln λ. The
 * record keeps two interval statistics besides the counts and the span (`FreshnessRecord`):
 * U exactly, and Σ ln I_j. With the span they give the changed intervals' arithmetic mean A
 * and geometric mean G; the sum over them is taken as over a log-normal with those two means
 * (σ² = 2 ln(A/G)), at two equal atoms G·e^(∓σ). Both ends of ln(1 − e^(−x)) are then right:
 * for λI ≪ 1 it is ln λ + ln I, whose sum Σ ln I is kept exactly, and for λI ≫ 1 it vanishes.
 * That matters for a starved page: its fortnightly re-probes find a change whatever its rate,
 * and with only the mean changed interval they averaged away the short changed intervals that
 * proved it fast, so it was funded again (finding 1 of issue 21). On Poisson histories mixing
 * 2–48 h gaps with 5–30-day ones the estimate is within 0.95–1.35 of λ (the grid's step is
 * 1.31×). Without the statistics (a record from before format minor 4, until its next fetch
 * rebuilds them: `seedIntervals`) U is (n − X)·Ī and every changed interval is taken at the
 * mean, as before. The summary is the harmonic mean
 * 1/E[1/λ]: the value of the first crawl of a page at rate → 0 is w·E[1/λ], so this is the
 * point estimate that makes the starvation test w/λ ≤ τ the posterior-correct one. With
 * every interval changed the posterior keeps rising with n (a page proven too fast heads for
 * the starved side, as the water-filling rule wants); with no change it falls like 1/U toward
 * minRate (a page proven static is crawled less and less). Measured on the simulator: see
 * DESIGN §8 and `npm run bench freshness` (every scenario, several seeds).
 *
 * ## The first fetch's date before trust (posterior path)
 * The first response's Last-Modified age A (`lmAgeHours`) is a sample of the backward
 * recurrence time, exponential at λ, so it contributes λ·e^(−λA) to the likelihood whether or
 * not later fetches have proven the server's dates yet. The Last-Modified path waits for that
 * proof; the posterior does not: while the dates stand (`lmHours` ≥ 0, not disproven) it adds
 * ln λ − λA at each grid point, and a URL fetched once — no interval yet, so before this the
 * prior refRate — is estimated at e^(−γ)/A (`datedAge`). That is the geometric mean of the
 * posterior λ | A ∝ e^(−λA) (flat prior in ln λ): unbiased in ln λ, where the harmonic mean
 * would be held down by the band's floor. Ages under `minReprobeGap` are not read: a date of
 * seconds or minutes back is more often a server stamping its response time than a page
 * changed just then. A server whose dates a later fetch disproves drops out of both paths.
 * On Poisson pages with honest dates a URL fetched once is estimated with mean |ln(λ̂/λ)| 0.96,
 * against 2.11 at the prior (pages of 0.03–0.5 changes a day; test/freshness/estimate.test.ts).
 *
 * ## Recency pull (Last-Modified path)
 * Counts over the whole history react slowly when a page goes quiet. A streak of s unchanged
 * intervals on its own implies the Jeffreys-posterior mean rate α/(sĪ) (prior λ^(−1/2), zero
 * events in time sĪ, posterior Gamma(½, sĪ)); the Last-Modified estimate is pulled toward it,
 * geometrically in log-rate, with weight ω = 1 − 2^(−s/H) where H = recencyHalfLife (8
 * intervals → half-way after 8 quiet intervals). The pull only ever lowers λ. (On the
 * posterior path it did not help: 0.9681 with it, 0.9685 without, N = 5,000.)
 *
 * ## Clamp
 * Finally λ̂ is clamped to [minRate, maxRate]: a page never seen to change keeps a small rate
 * (never zero, so the allocation still re-probes it), and the ceiling keeps the numbers finite
 * for pages that change faster than we can tell.
 *
 * Before any interval has been observed (crawlCount ≤ 1) there is nothing to estimate from but
 * the first response's date (above); without one the prior is the reference rate (one change
 * per reference interval), clamped.
 */
import type { FreshnessParams } from './params.js';
import type { FreshnessRecord } from './record.js';

/**
 * The raw Cho–Garcia-Molina no-change-ratio estimate r̂ = −ln((n − X + α)/(n + α)), in changes
 * per (mean) interval, before any clamping. `n` intervals observed, `X` of them changed.
 * Returns NaN for inputs outside 0 ≤ X ≤ n, α > 0.
 */
export function noChangeRatioEstimate(n: number, X: number, alpha: number): number {
  if (!(X >= 0 && X <= n && alpha > 0)) return Number.NaN;
  return Math.log((n + alpha) / (n - X + alpha));
}

/**
 * The bias-reduced known-modification-time estimate (X − 1 + c)/ΣT (see the module comment),
 * in changes per unit of `exposure`. `n` intervals, `X` changed, `exposure` = ΣTᵢ > 0.
 * Returns NaN for inputs outside 0 ≤ X ≤ n or a non-positive exposure.
 */
export function lastModifiedEstimate(n: number, X: number, exposure: number): number {
  if (!(X >= 0 && X <= n && n > 0 && exposure > 0)) return Number.NaN;
  if (X === 0) return 0;
  const p = X / n;
  const c = p >= 1 ? 0 : -p / Math.log1p(-p);
  return (X - 1 + c) / exposure;
}

/**
 * Recomputes a URL's change rate λ (changes/hour) from its counters, timestamps and interval
 * statistics: the harmonic posterior mean (`posteriorRate`, with the first response's date
 * while it stands), or the Last-Modified estimate when trusted, pulled toward a no-change
 * streak's rate; for a URL fetched once, e^(−γ)/A from that date or else the prior refRate;
 * clamped to [minRate, maxRate]. Pure: reads `rec`, writes nothing (the caller stores the
 * result in `rec.lambda`).
 */
export function estimate(rec: FreshnessRecord, params: FreshnessParams): number {
  const n = rec.crawlCount - 1;
  const span = rec.lastCrawled - rec.firstCrawled;
  const age = datedAge(rec, params);
  if (n < 1) return clamp(age > 0 ? E_MINUS_GAMMA / age : params.refRate, params);
  if (!(span > 0)) return clamp(params.refRate, params);
  const X = Math.min(rec.changeCount, n);
  const meanInterval = span / n;
  let lambda: number;
  if (usesLastModified(rec, params)) {
    // The first fetch's own date is one more dated change and its quiet: an interval before
    // the history that ended in a change, as every changed interval does here.
    const before = rec.lmAgeHours > 0 ? 1 : 0;
    lambda = lastModifiedEstimate(n + before, X + before, rec.lmHours + before * rec.lmAgeHours);
    const s = Math.min(rec.noChangeStreak, n);
    if (s > 0) {
      const streakRate = params.alpha / (s * meanInterval);
      if (streakRate < lambda) {
        const w = 1 - Math.pow(2, -s / params.recencyHalfLife);
        lambda = Math.exp((1 - w) * Math.log(lambda) + w * Math.log(streakRate));
      }
    }
    return clamp(lambda, params);
  }
  // With the interval statistics kept (and consistent with the span): the unchanged total
  // exactly, and the changed intervals' geometric mean beside their arithmetic one. Without
  // them (a record from an older file, or a caller that never passed fetch times): the
  // unchanged total at the mean interval and the changed intervals taken as equal.
  let unchanged = rec.unchangedHours;
  const logSum = rec.changedLogHours;
  const kept = unchanged >= 0 && unchanged <= span + 1 && Number.isFinite(logSum);
  if (!kept) unchanged = meanInterval * (n - X);
  if (unchanged > span) unchanged = span;
  return clamp(posteriorRate(X, unchanged, span - unchanged, params, kept ? logSum : undefined, age), params);
}

/** e^(−γ), γ Euler's constant: the geometric mean of an Exp(A) variable is e^(−γ)/A. */
const E_MINUS_GAMMA = 0.5614594835668851;

/**
 * The first fetch's Last-Modified age as the posterior path reads it (see the module comment,
 * "The first fetch's date before trust"): `lmAgeHours` while the server's dates have not been
 * disproven (`lmHours` ≥ 0) and `params.trustLastModified` is on, and only from
 * `minReprobeGap` up — an age of seconds or minutes is more often a server stamping the
 * response time than a page changed just then; else 0.
 */
export function datedAge(rec: FreshnessRecord, params: FreshnessParams): number {
  if (!params.trustLastModified || !(rec.lmHours >= 0)) return 0;
  const a = rec.lmAgeHours;
  return a >= params.minReprobeGap ? a : 0;
}

/**
 * Whether `estimate` takes the Last-Modified path for `rec`: the server's dates are trusted
 * (`lmHours` ≥ 0, `params.trustLastModified` on) and give two dated changes or more — the
 * changes seen, plus one for the first fetch's age when kept (`lmAgeHours` > 0) — over a
 * positive exposure. (With one, (X − 1 + c) is dominated by its correction term.)
 */
export function usesLastModified(rec: FreshnessRecord, params: FreshnessParams): boolean {
  const n = rec.crawlCount - 1;
  if (!params.trustLastModified || !(rec.lmHours >= 0) || n < 1 || !(rec.lastCrawled > rec.firstCrawled)) return false;
  const before = rec.lmAgeHours > 0 ? 1 : 0;
  return Math.min(rec.changeCount, n) + before >= 2 && rec.lmHours + before * rec.lmAgeHours > 0;
}

/** Points of the log-λ grid over [minRate, maxRate] (spacing ln(maxRate/minRate)/47 ≈ 0.27). */
const GRID = 48;

/**
 * The change rate a URL's history supports, as the harmonic posterior mean 1/E[1/λ] (see the
 * module comment, "Posterior"). `X` changed intervals covering `changedHours` in all, and
 * `unchangedHours` of intervals without a change; λ in changes/hour over the grid
 * [minRate, maxRate], flat in log λ. With `changedLogHours` (Σ ln of the changed intervals'
 * lengths) the changed intervals are taken as log-normal with their geometric mean G and
 * arithmetic mean A (σ² = 2 ln(A/G)) and summed at two equal atoms G·e^(∓σ) (two-point
 * Gauss–Hermite), else all at A. `ageHours` > 0 adds the first fetch's dated change, the term
 * λ·e^(−λA) (module comment, "The first fetch's date before trust"). Pure; 48 (or 96) exp/log pairs.
 */
export function posteriorRate(X: number, unchangedHours: number, changedHours: number, params: FreshnessParams, changedLogHours?: number, ageHours = 0): number {
  const { lambda: grid, inverse: inv } = gridOf(params);
  const perChange = X > 0 ? changedHours / X : 0;
  let short = perChange;
  let long = perChange;
  if (X >= 2 && changedLogHours !== undefined && perChange > 0) {
    const g = Math.exp(changedLogHours / X);
    if (g < perChange) {
      const spread = Math.exp(Math.sqrt(2 * Math.log(perChange / g)));
      short = g / spread;
      long = g * spread;
    }
  }
  const half = 0.5 * X;
  // Log-likelihood at each grid point, then weights relative to the best (no underflow).
  let best = Number.NEGATIVE_INFINITY;
  const ll = scratch;
  for (let k = 0; k < GRID; k++) {
    const lambda = grid[k]!;
    let l = -lambda * unchangedHours;
    if (ageHours > 0) l += Math.log(lambda) - lambda * ageHours;
    if (X > 0) {
      l += short === long ? X * Math.log(-Math.expm1(-lambda * short)) : half * (Math.log(-Math.expm1(-lambda * short)) + Math.log(-Math.expm1(-lambda * long)));
    }
    ll[k] = l;
    if (l > best) best = l;
  }
  let mass = 0;
  let inverse = 0;
  for (let k = 0; k < GRID; k++) {
    const w = Math.exp(ll[k]! - best);
    mass += w;
    inverse += w * inv[k]!;
  }
  return mass / inverse;
}

/** The grid points λ_k and 1/λ_k for one [minRate, maxRate], computed once per band (params are frozen and shared). */
let cachedGrid: { lo: number; hi: number; lambda: Float64Array; inverse: Float64Array } | undefined;
function gridOf(params: FreshnessParams): { lambda: Float64Array; inverse: Float64Array } {
  const c = cachedGrid;
  if (c !== undefined && c.lo === params.minRate && c.hi === params.maxRate) return c;
  const lo = Math.log(params.minRate);
  const step = (Math.log(params.maxRate) - lo) / (GRID - 1);
  const lambda = new Float64Array(GRID);
  const inverse = new Float64Array(GRID);
  for (let k = 0; k < GRID; k++) {
    lambda[k] = Math.exp(lo + k * step);
    inverse[k] = Math.exp(-(lo + k * step));
  }
  cachedGrid = { lo: params.minRate, hi: params.maxRate, lambda, inverse };
  return cachedGrid;
}

const scratch = new Float64Array(GRID);

function clamp(lambda: number, p: FreshnessParams): number {
  if (!(lambda >= p.minRate)) return p.minRate; // also catches NaN and 0
  return lambda > p.maxRate ? p.maxRate : lambda;
}
