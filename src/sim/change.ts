/**
 * The change process of a simulated page: a homogeneous Poisson process on the simulated
 * timeline, started at the sim's epoch.
 *
 * A Poisson process of rate λ has independent exponential gaps with mean 1/λ, so the event
 * times are the running sums of Exp(λ) draws from a generator seeded by the page alone. The
 * page's version at simulated time t is the number of events in (epoch, t]; before the epoch
 * it is 0. That makes the version a pure function of (seed, host, path, t), whatever order
 * the sim is queried in, and gives the properties the freshness code relies on:
 *   E[N(t)] = Var[N(t)] = λt,   P(no change in an interval Δ) = e^(−λΔ).
 * Event times are generated lazily and kept, so a query costs a binary search once the
 * timeline has been extended past it (about λ·t events of memory per page).
 */
import { Rng } from './random.js';

const MS_PER_HOUR = 3_600_000;

/** One page's Poisson event timeline (rate per simulated hour). */
export class ChangeProcess {
  /** Event offsets from the epoch, ms, ascending. */
  private readonly times: number[] = [];
  private readonly rng: Rng | undefined;
  private readonly ratePerMs: number;
  private horizon = 0;

  /** `ratePerHour` 0 gives a page that never changes. */
  constructor(
    readonly ratePerHour: number,
    seed: number,
    ...parts: readonly (string | number)[]
  ) {
    this.ratePerMs = ratePerHour / MS_PER_HOUR;
    this.rng = ratePerHour > 0 ? new Rng(seed, 'change', ...parts) : undefined;
  }

  private extendPast(offsetMs: number): void {
    const rng = this.rng;
    if (!rng) return;
    while (this.horizon <= offsetMs) {
      this.horizon += rng.exp(this.ratePerMs);
      this.times.push(this.horizon);
    }
  }

  /** Number of events in (0, offsetMs]. */
  countAt(offsetMs: number): number {
    if (!this.rng || offsetMs <= 0) return 0;
    this.extendPast(offsetMs);
    // Upper bound: the first index whose time is > offsetMs.
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) <= offsetMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Offset (ms from the epoch) of the k-th event, k ≥ 1; undefined for k = 0 or a static page. */
  timeOf(k: number): number | undefined {
    if (!this.rng || k < 1) return undefined;
    while (this.times.length < k) this.extendPast(this.horizon);
    return this.times[k - 1];
  }
}
