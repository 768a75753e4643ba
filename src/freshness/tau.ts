/**
 * The water level τ: one number per partition, the shadow price of a refresh crawl.
 *
 * ## Problem
 * Each URL schedules itself at the rate where its marginal freshness meets τ (schedule.ts), so
 * the partition's total scheduled rate S(τ) is a decreasing function of τ. We want S(τ) = B,
 * the refresh budget, without ever re-solving the whole partition: the estimates and the
 * schedule co-evolve while τ is nudged on a slow cadence (Edwards, McCurley & Tomlin 2001, "An
 * adaptive model for optimizing performance of an incremental web crawler", made incremental).
 *
 * ## Update rule
 * A multiplicative (log-space) proportional step with a dead band:
 *
 *     e = ln(S/B);   if |S/B − 1| ≤ δ: hold;   else ln τ ← ln τ + clamp(k·e, −ln m, +ln m)
 *
 * Over budget raises τ (starving more pages), under budget lowers it. Near the fixed point the
 * demand behaves like S ∝ τ^(−ε) with elasticity ε, so the log error evolves as
 * e' = (1 − kε)·e: it shrinks monotonically, with no overshoot, whenever kε ≤ 1, and still
 * converges (damped) for kε < 2. With the default k = 0.5 that is no overshoot for ε ≤ 2 — the
 * freshness demand has ε = ½ for pages crawled far faster than they change (f ∝ τ^(−½)) and
 * grows toward starvation, aggregating near 1 — and every step is at most a factor m = 1.25,
 * so a wild reading cannot throw τ far. The dead band δ = 1% keeps τ still once the schedule
 * fits, so it does not hunt on noise. τ stays within [1e-12, 1e12].
 *
 * The measurement S should respond to τ promptly: the demand at the current τ over the current
 * estimates (all URLs or a fixed sample), rather than the sum of rates as last scheduled, which
 * lags τ by up to a re-probe interval; a lagged S needs a much smaller k.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';

/** Tuning of a `TauController`. */
export interface TauControllerOptions {
  /** Starting water level (restore a checkpointed τ here). Default 1e-3: funds almost everything. */
  readonly initialTau: number;
  /** Fraction k of the log error corrected per tick (0 < k ≤ 1). */
  readonly gain: number;
  /** Largest factor m by which one tick may move τ (> 1). */
  readonly maxStep: number;
  /** Relative dead band δ around the budget inside which τ holds still. */
  readonly deadBand: number;
}

const TAU_MIN = 1e-12;
const TAU_MAX = 1e12;

const resolveOptions = defineOptions<TauControllerOptions>('TauControllerOptions', {
  initialTau: numberField({ min: TAU_MIN, max: TAU_MAX, default: 1e-3 }),
  gain: numberField({ above: 0, max: 1, default: 0.5 }),
  maxStep: numberField({ above: 1, max: 100, default: 1.25 }),
  deadBand: numberField({ min: 0, max: 0.5, default: 0.01 }),
});

/**
 * Maintains a partition's water level τ so the total scheduled refresh rate tracks a budget
 * (see the module comment). Budget and scheduled rate share a unit (e.g. crawls/hour).
 * A non-positive budget funds nothing: `tau()` is +Infinity, so every URL is starved to the
 * re-probe rate.
 */
export class TauController {
  #budget: number;
  #logTau: number;
  readonly #gain: number;
  readonly #maxLogStep: number;
  readonly #deadBand: number;

  constructor(budget: number, options?: Partial<TauControllerOptions> | null) {
    const o = resolveOptions(options);
    this.#budget = checkBudget(budget);
    this.#logTau = Math.log(o.initialTau);
    this.#gain = o.gain;
    this.#maxLogStep = Math.log(o.maxStep);
    this.#deadBand = o.deadBand;
  }

  /** The current water level: a URL is funded only while its w/λ exceeds it. */
  tau(): number {
    return this.#budget > 0 ? Math.exp(this.#logTau) : Number.POSITIVE_INFINITY;
  }

  /** The budget being tracked. */
  budget(): number {
    return this.#budget;
  }

  /** Retargets the controller (τ is kept, so the schedule moves smoothly to the new budget). */
  setBudget(budget: number): void {
    this.#budget = checkBudget(budget);
  }

  /**
   * ln τ exactly as the controller holds it. Checkpoint this, not `tau()`: exp then ln does
   * not always round-trip to the same double, and a recovered partition must continue with
   * the identical τ.
   */
  logTau(): number {
    return this.#logTau;
  }

  /** Restores a level saved with `logTau()` (clamped to τ's range; NaN is refused). */
  setLogTau(logTau: number): void {
    if (typeof logTau !== 'number' || Number.isNaN(logTau)) {
      throw new InvalidArgumentError(`TauController.setLogTau: expected a number, received ${String(logTau)}`);
    }
    const lo = Math.log(TAU_MIN);
    const hi = Math.log(TAU_MAX);
    this.#logTau = logTau < lo ? lo : logTau > hi ? hi : logTau;
  }

  /**
   * Folds the partition's current total scheduled rate into τ: one bounded multiplicative
   * step toward the budget, or none inside the dead band. Returns the new τ.
   */
  tick(scheduledRate: number): number {
    if (Number.isNaN(scheduledRate) || scheduledRate < 0) {
      throw new InvalidArgumentError(`TauController.tick: expected a scheduled rate >= 0, received ${scheduledRate}`);
    }
    const b = this.#budget;
    if (!(b > 0)) return this.tau();
    const ratio = scheduledRate / b;
    if (Math.abs(ratio - 1) <= this.#deadBand) return this.tau();
    let step = this.#gain * Math.log(ratio); // ±Infinity for 0 or Infinity: clamped below
    const m = this.#maxLogStep;
    if (step > m) step = m;
    else if (step < -m) step = -m;
    const lo = Math.log(TAU_MIN);
    const hi = Math.log(TAU_MAX);
    const next = this.#logTau + step;
    this.#logTau = next < lo ? lo : next > hi ? hi : next;
    return this.tau();
  }
}

function checkBudget(budget: number): number {
  if (typeof budget !== 'number' || Number.isNaN(budget) || budget === Number.POSITIVE_INFINITY) {
    throw new InvalidArgumentError(`TauController: expected a finite budget (crawls per period), received ${String(budget)}`);
  }
  return budget;
}

/**
 * The water level at which a decreasing demand curve meets the budget, by bisection on ln τ
 * over [1e-12, 1e12] (60 halvings): for seeding a `TauController` on a fresh crawl, where no
 * checkpointed τ exists, from one or a few passes over the priors. `demand(τ)` is the total
 * scheduled rate at level τ (for example Σ desiredRate over a partition). Returns the upper end
 * of the final bracket (demand ≤ budget there); 1e12 if even that overspends, 1e-12 if even
 * that underspends.
 */
export function solveWaterLevel(demand: (tau: number) => number, budget: number): number {
  if (typeof budget !== 'number' || !(budget > 0) || budget === Number.POSITIVE_INFINITY) {
    throw new InvalidArgumentError(`solveWaterLevel: expected a finite budget > 0, received ${String(budget)}`);
  }
  let lo = Math.log(TAU_MIN);
  let hi = Math.log(TAU_MAX);
  for (let k = 0; k < 60; k++) {
    const m = 0.5 * (lo + hi);
    if (demand(Math.exp(m)) > budget) lo = m;
    else hi = m;
  }
  return Math.exp(hi);
}
