/**
 * From an estimated change rate to a concrete next-due time: the per-URL optimality condition,
 * the politeness clamp, and deterministic spacing.
 *
 * ## Per-URL rate (DESIGN §8)
 * At the water level τ a URL of importance w and rate λ is worth crawling at the rate where
 * its marginal freshness meets τ: f = λ / g⁻¹(τλ/w) (see model.ts). When w/λ ≤ τ even the
 * first crawl is worth less than τ and the page is starved — it keeps only the slow re-probe
 * rate, so a page that comes back to life is eventually noticed. The funded rate is then kept
 * within the global band [reprobeRate, 1/minReprobeGap].
 *
 * ## Host clamp (Kolobov et al. 2019, "Staying up to date with online content changes using
 * reinforcement learning for scheduling", the politeness-constrained refinement)
 * A host allows at most C crawls/hour. If the frontier tracks the host's total demand D (the
 * sum of its URLs' `desiredRate`s) and D > C, every URL of the host is scaled by C/D, so the
 * host's schedule sums to exactly C and its most valuable pages keep the largest share.
 * Without a demand figure, each URL gets the equal share C/n. The clamp may go below the
 * re-probe rate: politeness is a hard limit, the band is a preference.
 *
 * ## Spacing (Coffman, Liu & Weber 1998, "Optimal robot scheduling for web search engines")
 * Even spacing beats random spacing at the same rate, so the next due time is the previous
 * crawl plus the interval — but a host's URLs, often first crawled in one burst and given
 * similar intervals, would then keep arriving together and slam the host's politeness queue.
 * So each URL is phase-locked to its own grid: with period P = I when I ≤ W (the host spread
 * window) and P = I/⌈I/W⌉ otherwise (so I is a whole number of periods), the URL is due at the
 * grid point φ + kP nearest to now + I, where φ = (spreadKey/2³²)·P is fixed by the URL's hash.
 * Successive crawls at a steady interval land exactly I apart (the grid repeats every I), the
 * URLs of a host are spread uniformly over up to W hours, and a change of interval costs at
 * most one step of P/2. Due times are whole epoch-hours (the URL table's unit); rounding onto
 * the absolute grid keeps the long-run mean interval exact (2.4 h becomes 2, 3, 2, 3, 2 …).
 * Finally the due time is never earlier than now + minReprobeGap.
 */
import { UrlStatus } from '../model/index.js';
import { InvalidArgumentError } from '../errors/index.js';
import { fundedRate, marginalFreshness } from './model.js';
import type { FreshnessParams } from './params.js';
import type { FreshnessRecord } from './record.js';

/** The minimal view of a host the rate clamp needs. */
export interface HostCapacity {
  /** Most crawls per hour the host's politeness allows (Infinity: uncapped). */
  readonly capacityPerHour: number;
  /** URLs of the host that share the capacity (used for the equal share). */
  readonly urlCount: number;
  /**
   * Optional: the sum of the host's URLs' `desiredRate`s, crawls/hour. When given, a host whose
   * demand exceeds its capacity scales every URL by capacity/demand instead of an equal share.
   */
  readonly demandPerHour?: number | undefined;
}

const TWO_POW_32 = 4294967296;
const U32_MAX = 0xffffffff;

function lambdaOf(rec: FreshnessRecord, p: FreshnessParams): number {
  const l = rec.lambda > 0 ? rec.lambda : p.refRate;
  return l < p.minRate ? p.minRate : l > p.maxRate ? p.maxRate : l;
}

/**
 * Value density: the importance-weighted marginal freshness one more unit of crawl rate buys,
 * measured at the reference rate, w·∂F/∂f(λ, refRate) = (w/λ)·g(λ/refRate). It is small for
 * near-static pages (crawling them more adds little) and for hyper-volatile ones (they go
 * stale again at once) and peaks in between: the hump the allocation exploits. Use it to rank
 * URLs for recrawl; the starvation test itself is w/λ ≤ τ (the value at rate → 0).
 */
export function valueDensity(rec: FreshnessRecord, params: FreshnessParams): number {
  const w = rec.priority;
  if (!(w > 0)) return 0;
  return w * marginalFreshness(lambdaOf(rec, params), params.refRate);
}

/**
 * The crawl rate (per hour) this URL asks for at water level `tau`, before any host clamp:
 * the funded rate λ/g⁻¹(τλ/w), or the re-probe rate if starved (w/λ ≤ τ), kept within
 * [reprobeRate, 1/minReprobeGap]. λ is `rec.lambda` (the prior refRate if not yet estimated).
 * Frontiers that track a host's demand sum these.
 */
export function desiredRate(rec: FreshnessRecord, tau: number, params: FreshnessParams): number {
  const w = rec.priority > 0 ? rec.priority : 0;
  const rate = fundedRate(lambdaOf(rec, params), w, tau);
  const ceiling = 1 / params.minReprobeGap;
  if (!(rate > params.reprobeRate)) return params.reprobeRate;
  return rate > ceiling ? ceiling : rate;
}

/**
 * Applies a host's politeness clamp to a desired rate (see the module comment): the rate
 * scaled by capacity/demand when the host is over capacity and its demand is known, else at
 * most the equal share capacity/urlCount, and never above the whole capacity.
 */
export function hostClampedRate(rate: number, host: HostCapacity | undefined): number {
  if (host === undefined) return rate;
  const cap = host.capacityPerHour;
  if (!(cap < Number.POSITIVE_INFINITY)) return rate;
  if (!(cap > 0)) return 0;
  let r = rate;
  const demand = host.demandPerHour;
  if (demand !== undefined) {
    if (demand > cap) r *= cap / demand;
  } else {
    const share = cap / Math.max(1, host.urlCount);
    if (r > share) r = share;
  }
  return r > cap ? cap : r;
}

/**
 * The recrawl interval in hours for one URL at water level `tau` under its host's
 * politeness: 1 / hostClampedRate(desiredRate(rec, tau, params), host). A host whose
 * capacity is zero yields +Infinity (never again until the host allows it).
 */
export function targetInterval(
  rec: FreshnessRecord,
  host: HostCapacity | undefined,
  tau: number,
  params: FreshnessParams,
): number {
  return 1 / hostClampedRate(desiredRate(rec, tau, params), host);
}

/**
 * Writes the URL's next due time (whole epoch-hours) for a recrawl `intervalHours` after
 * `nowHours`, phase-locked to the URL's own grid so a host's URLs spread over
 * `params.hostSpreadWindow` hours (see the module comment), never before now + minReprobeGap,
 * and moves the URL to `UrlStatus.DueRecrawl`. Deterministic: the same inputs give the same
 * time. An infinite interval parks the URL at the largest u32 hour. Returns the due time.
 */
export function setNextDue(
  rec: FreshnessRecord,
  intervalHours: number,
  nowHours: number,
  params: FreshnessParams,
): number {
  checkTiming('setNextDue', intervalHours, nowHours);
  const floor = Math.ceil(nowHours + params.minReprobeGap);
  let due = gridTime(rec.spreadKey, intervalHours, nowHours + intervalHours, params.hostSpreadWindow);
  if (due < floor) due = floor;
  rec.nextDue = due;
  rec.status = UrlStatus.DueRecrawl;
  return due;
}

/**
 * Brings a URL that is already waiting for its recrawl forward when the interval now wanted
 * (after τ fell, or its λ or host demand moved) would make it due sooner than scheduled: the
 * new due time is lastCrawled + interval on the URL's own grid, but never before
 * now + minReprobeGap. It never pushes a URL later — an over-generous schedule costs at most
 * one interval and is corrected at the next crawl — so a background pass can call it on every
 * waiting URL without churning the schedule. Returns whether `rec.nextDue` moved. Without it,
 * a URL parked at the re-probe interval would ignore a lower τ for up to two weeks.
 */
export function reviseNextDue(
  rec: FreshnessRecord,
  intervalHours: number,
  nowHours: number,
  params: FreshnessParams,
): boolean {
  checkTiming('reviseNextDue', intervalHours, nowHours);
  let due = gridTime(rec.spreadKey, intervalHours, rec.lastCrawled + intervalHours, params.hostSpreadWindow);
  const floor = Math.ceil(nowHours + params.minReprobeGap);
  if (due < floor) due = floor;
  if (!(due < rec.nextDue)) return false;
  rec.nextDue = due;
  return true;
}

function checkTiming(fn: string, intervalHours: number, nowHours: number): void {
  if (Number.isNaN(intervalHours) || !(intervalHours > 0) || !Number.isFinite(nowHours)) {
    throw new InvalidArgumentError(
      `${fn}: expected a positive interval (hours) and a finite now (epoch-hours), received interval ${intervalHours}, now ${nowHours}`,
    );
  }
}

/** The whole hour nearest `target` on the URL's grid (see the module comment). */
function gridTime(spreadKey: number, interval: number, target: number, window: number): number {
  if (interval === Number.POSITIVE_INFINITY) return U32_MAX;
  if (!(window > 0)) return Math.round(target);
  const period = interval <= window ? interval : interval / Math.ceil(interval / window);
  const phase = ((spreadKey >>> 0) / TWO_POW_32) * period;
  return Math.round(phase + period * Math.round((target - phase) / period));
}
