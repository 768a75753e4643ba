/**
 * The freshness model: what one crawl rate buys for one Poisson page, its marginal value,
 * and the inverse of that marginal value (the per-page answer to "how often, at water level τ").
 *
 * ## Problem
 * A page changes as a Poisson process of rate λ (changes per unit time). We crawl it at rate
 * f, evenly spaced (interval I = 1/f). Our copy is fresh from a crawl until the first change
 * after it. Over one interval the expected fresh time is ∫₀ᴵ e^(−λt) dt = (1 − e^(−λI))/λ, so
 * the time-averaged freshness is
 *
 *     F(λ, f) = (f/λ)·(1 − e^(−λ/f)) = (1 − e^(−x))/x,        x = λ/f (changes per interval).
 *
 * F → 1 as f → ∞, F → 0 as f → 0 (F(λ, 0) = 0: a page never crawled is never fresh), and
 * F(0, f) = 1 for f > 0. Even spacing is what makes this the right formula: for a fixed mean
 * rate, Poisson (random) crawling gives strictly less, f/(λ + f) (Coffman, Liu & Weber 1998).
 *
 * ## Marginal value
 * Differentiating,
 *
 *     ∂F/∂f = (1/λ)·g(x),        g(x) = 1 − (1 + x)·e^(−x),
 *
 * where g rises from 0 (x → 0, a page crawled far more often than it changes) to 1 (x → ∞, a
 * page that changes many times per interval). The value a crawl adds to a page of importance
 * w is w·∂F/∂f; it is largest when f → 0, where it equals w/λ.
 *
 * ## The water level
 * Maximizing Σ wᵢ F(λᵢ, fᵢ) subject to Σ fᵢ = B gives, for a funded page,
 * wᵢ ∂F/∂f(λᵢ, fᵢ) = τ, i.e. g(λᵢ/fᵢ) = τλᵢ/wᵢ, and fᵢ = 0 whenever wᵢ/λᵢ ≤ τ (even the first
 * crawl is worth less than τ). Since g < 1, pages that change so fast that wᵢ/λᵢ ≤ τ are
 * starved: the optimum crawls them *less* than slower pages, the non-monotone result of Cho &
 * Garcia-Molina (2000, "Synchronizing a database to improve freshness") and Azar et al. (2018,
 * "Tractable near-optimal policies for crawling"). Solving for fᵢ needs g⁻¹:
 *
 *     fᵢ(τ) = λᵢ / g⁻¹(τλᵢ/wᵢ)   when τλᵢ/wᵢ < 1,   else 0.
 *
 * fᵢ(τ) is continuous and strictly decreasing in τ (∞ at τ = 0, 0 at τ = wᵢ/λᵢ), which is what
 * lets a bisection or a controller find the τ whose total rate meets the budget.
 *
 * ## Inverting g
 * Write L = ln(1 − y). g(x) = y ⇔ h(x) = ln(1 + x) − x − L = 0. h is decreasing and concave on
 * x > 0 (h' = −x/(1+x), h'' = −1/(1+x)²), so Newton's method started at any point with
 * h(x₀) ≤ 0 (to the right of the root) moves monotonically left onto the root: the tangent of
 * a concave function lies above it, so each step lands at or right of the root. The start is
 * x₀ = max(s(1 + s/2), −L + ln(1 − L)) with s = √(2y) (just right of the small-y root
 * s(1 + s/3 + …), and the large-y asymptote), doubled until h ≤ 0: about six steps in all.
 * Below y = 4e-7 (x < 1e-3) ln(1 + x) − x cancels, so Newton runs on g's series instead. Convergence is quadratic: a handful of steps to
 * 1e-14. (Equivalently x = −1 − W₋₁(−(1 − y)/e), Lambert W's lower branch; Newton on h avoids
 * carrying a W implementation.)
 */

/** Expected time-averaged freshness of a page changing at rate λ crawled evenly at rate f. */
export function freshness(lambda: number, f: number): number {
  if (!(f > 0)) return 0;
  if (!(lambda > 0)) return 1;
  const x = lambda / f;
  // −expm1(−x)/x keeps full precision for small x, where 1 − e^(−x) would cancel.
  return -Math.expm1(-x) / x;
}

/** ∂F/∂f at (λ, f): the freshness one more unit of crawl rate buys (per unit of importance). */
export function marginalFreshness(lambda: number, f: number): number {
  if (!(lambda > 0)) return 0;
  if (!(f > 0)) return 1 / lambda;
  const x = lambda / f;
  return changedFraction(x) / lambda;
}

/** g(x) = 1 − (1 + x)e^(−x), computed without cancellation for small x. */
function changedFraction(x: number): number {
  if (x < 1e-3) {
    // Series: x²/2 − x³/3 + x⁴/8 − …
    return x * x * (0.5 - x / 3 + (x * x) / 8);
  }
  return -Math.expm1(-x) - x * Math.exp(-x);
}

/**
 * g⁻¹(y): the changes per interval x = λ/f at which the marginal value ratio g(x) equals y.
 * Returns 0 for y ≤ 0 and +Infinity for y ≥ 1 (or NaN input).
 */
export function inverseMarginal(y: number): number {
  if (!(y < 1)) return Number.POSITIVE_INFINITY;
  if (!(y > 0)) return 0;
  if (y < 4e-7) {
    // x < 1e-3: Newton on the series of g (where ln(1 + x) − x would cancel), from √(2y).
    let x = Math.sqrt(2 * y);
    for (let i = 0; i < 4; i++) x -= (changedFraction(x) - y) / (x * (1 - x + 0.5 * x * x));
    return x;
  }
  const L = Math.log1p(-y);
  const s = Math.sqrt(2 * y);
  let x = Math.max(s * (1 + 0.5 * s), -L + Math.log1p(-L));
  // h(x) = ln(1 + x) − x − L; make sure we start right of the root.
  while (Math.log1p(x) - x - L > 0) x *= 2;
  for (let i = 0; i < 60; i++) {
    const h = Math.log1p(x) - x - L;
    // Newton: x − h/h', h' = −x/(1 + x).
    const next = x + (h * (1 + x)) / x;
    if (!(next < x)) break; // monotone from the right: no progress means converged
    const done = x - next <= 1e-15 * x;
    x = next;
    if (done) break;
  }
  return x;
}

/**
 * The crawl rate at which a page of rate `lambda` and importance `weight` has marginal value
 * exactly `tau`: λ / g⁻¹(τλ/w), or 0 when w/λ ≤ τ (starved). A page with λ ≤ 0 needs no
 * recrawls (0); a non-positive τ funds without limit (+Infinity).
 */
export function fundedRate(lambda: number, weight: number, tau: number): number {
  if (!(lambda > 0) || !(weight > 0)) return 0;
  if (!(tau > 0)) return Number.POSITIVE_INFINITY;
  const y = (tau * lambda) / weight;
  if (!(y < 1)) return 0;
  return lambda / inverseMarginal(y);
}
