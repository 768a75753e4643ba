/**
 * From an estimated change rate to a concrete next-due time: the per-URL optimality condition,
 * the politeness clamp, and deterministic spacing.
 *
 * ## Per-URL rate (DESIGN §8)
 * At the water level τ a URL of importance w and rate λ is worth crawling at the rate where
 * its marginal freshness meets τ: f = λ / g⁻¹(τλ/w) (see model.ts). When w/λ ≤ τ even the
 * first crawl is worth less than τ and the page is starved — it keeps only the slow re-probe
 * rate, so a page that comes back to life is eventually noticed. The funded rate is then kept
 * within the global band [reprobeRate/16, 1/minReprobeGap]: a funded page may be crawled less
 * often than a starved page is re-probed when that is what its rate is worth (a near-static
 * page under a small budget), but never less often than the most stretched re-probe.
 * (Flooring funded rates at reprobeRate instead cost 2 points of the optimum at a budget of
 * 0.1 crawls/page/day: the slowest pages were crawled every fortnight.)
 *
 * ## Host clamp (Kolobov, Peres, Lubetzky & Horvitz 2019, "Optimal freshness crawl under
 * politeness constraints")
 * A host allows at most C crawls/hour. When its demand at τ exceeds C, the optimum gives the
 * host its own, higher water level τ_h — its Lagrange multiplier — at which its demand is C:
 * its least valuable URLs (the fastest, relative to their weight) are starved first instead of
 * every URL being slowed alike. `hostWaterLevel` finds τ_h by bisection and `targetInterval`
 * prices the host's URLs at max(τ, τ_h) (funded rates within 4 % of `optimalRates` on small
 * cases; the simulator with true λ and tight caps went from 0.948 to 0.987 of the optimum).
 * Proportional scaling C/D remains the fallback when only the demand is known, and the guard
 * where re-probe floors alone exceed C; without a demand figure each URL gets the equal share
 * C/n. The clamp may go below the re-probe rate: politeness is a hard limit.
 *
 * ## Re-probes of starved pages
 * A starved page (w/λ ≤ τ) is still re-probed, so a page that slows down is noticed; but each
 * re-probe spends budget the optimum spends elsewhere. The further below the line (margin
 * m = τλ/w ≥ 1), the rarer: reprobeRate/m, at most 16 times rarer (true-λ simulator: 0.970 →
 * 0.991 of the optimum together with the host levels; margin² or a stretch of 64 did no better)
 * — but never rarer than the rate that insures against a change of the page's rate
 * (`insuredReprobeRate`, √(w·h/(2τ)) for a hazard h, `rateChangeHazard` or the one learned from
 * the crawl's change points, hazard.ts): a page that slowed down is only noticed at its next
 * re-probe, and the stretch alone left some for months.
 * On a saturated host priced at its own level τ_h > τ, a re-probe costs τ_h, not τ: its rate is
 * scaled by τ/τ_h, so re-probes take the same value of the host's scarce capacity as they take
 * of the global budget. (Unscaled, 21 % of a narrow-capped host's crawls went to pages the
 * optimum never crawls, 16 % with the true λ, against 5 % and 3 % on uncapped hosts; scaled,
 * 13 % and 6 %, and the estimator gained 0.25 points at the low budget and with narrow caps,
 * DESIGN §20 "Re-probes priced at the host's level". √(τ/τ_h) gained about two thirds of that.)
 *
 * ## A test before starving
 * A funded page whose new estimate takes it over the line (margin from < 1 to [1, 4)) is first
 * fetched once more after T = τ/w (`starvationTest`): near the line a funded page's intervals
 * almost always end changed, so its estimate wanders, and a page starved on noise stays starved
 * (its weeks-apart re-probes find a change whatever its rate). The test's answer either brings
 * the estimate back under the line or confirms it; the background passes leave it in place
 * (`awaitsTest`). `confirmStarvation: false` turns it off.
 *
 * ## Spacing (Coffman, Liu & Weber 1998, "Optimal robot scheduling for web search engines")
 * Even spacing beats random spacing at the same rate (F(λ, f) above versus f/(λ + f) for
 * Poisson crawling), so the next due time is simply the crawl time plus the interval I. Two
 * deterministic corrections, both derived from the URL's own hash (`spreadKey`):
 * - Host spread. A host's URLs are often first crawled in one burst and given similar
 *   intervals; due together, they would slam the host's politeness queue every time. So the
 *   first recrawl (crawlCount ≤ 1) is shifted by (u − ½)·min(I, W), u = spreadKey/2³² uniform
 *   in [0, 1), W = hostSpreadWindow: the host's URLs fan out over up to W hours once, and even
 *   spacing keeps them apart afterwards. (Phase-locking every crawl to a per-URL grid would
 *   also do it, but a grid's points jump when I changes by a hair, which would make every
 *   small change of τ reshuffle the schedule.)
 * - Dithered rounding. Due times are whole epoch-hours (the URL table's unit). Plain rounding
 *   would turn I = 2.4 h into 2 h forever; instead due = ⌊now + I + d⌋ with d ∈ [0, 1) a hash
 *   of (spreadKey, crawlCount), so E[due − now] = I exactly (2.4 h becomes 2 or 3, 40% of
 *   the time 3) and the same inputs always give the same hour.
 * The result is continuous in I (up to the hour), so `reviseNextDue` can re-time waiting URLs
 * without churn, and it is never earlier than now + minReprobeGap.
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
  /**
   * Optional: the host's own water level τ_h (≥ the partition's τ), solved so the host's
   * demand at τ_h fits its capacity (`hostWaterLevel`). When given, every URL of the host is
   * priced at max(τ, τ_h), and `demandPerHour` should be the demand at that level (the
   * proportional scaling then only acts where re-probe floors alone exceed the capacity).
   */
  readonly tau?: number | undefined;
}

const TWO_POW_32 = 4294967296;
/** Largest factor by which a deeply starved URL's re-probes are stretched beyond `reprobeRate`. */
const REPROBE_STRETCH = 16;
const U32_MAX = 0xffffffff;
/** Below this margin τλ/w a starved URL's re-probes come in pairs with a test interval (`recrawlInterval`). */
const PROBE_TEST_MARGIN = 4;

function lambdaOf(rec: FreshnessRecord, p: FreshnessParams): number {
  return clampRate(rec.lambda > 0 ? rec.lambda : p.refRate, p);
}

function clampRate(l: number, p: FreshnessParams): number {
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
 * the funded rate λ/g⁻¹(τλ/w), kept within [reprobeRate/16, 1/minReprobeGap], or the
 * (stretched) re-probe rate if starved (w/λ ≤ τ), scaled by baseTau/tau when `tau` is a
 * saturated host's level above the global `baseTau`, at least `insuredReprobeRate` for
 * `hazard` and at most 1/minReprobeGap. λ is `rec.lambda` (the prior refRate if not yet
 * estimated).
 * Frontiers that track a host's demand sum these. Reads only `rec.priority` and `rec.lambda`:
 * the background passes (withFreshness's tick, the simulator's) fill only those two fields of
 * a shared view, so a rule that read a count here would see another URL's.
 */
export function desiredRate(
  rec: FreshnessRecord,
  tau: number,
  params: FreshnessParams,
  baseTau: number = tau,
  hazard: number = params.rateChangeHazard,
): number {
  const w = rec.priority > 0 ? rec.priority : 0;
  const rate = fundedRate(lambdaOf(rec, params), w, tau);
  const ceiling = 1 / params.minReprobeGap;
  if (!(rate > params.reprobeRate)) {
    // Starved: re-probe, the less often the further below the water line (margin m = τλ/w ≥ 1),
    // at most REPROBE_STRETCH times slower than reprobeRate.
    if (!(rate > 0) && w > 0) {
      const margin = (tau * lambdaOf(rec, params)) / w;
      let probe = margin > 1 ? params.reprobeRate / (margin < REPROBE_STRETCH ? margin : REPROBE_STRETCH) : params.reprobeRate;
      // Priced at a saturated host's own level: the host's crawls are worth τ_h, not τ.
      if (tau > baseTau && baseTau > 0) probe *= baseTau / tau;
      const insured = insuredReprobeRate(w, tau, hazard);
      const r = probe > insured ? probe : insured;
      return r < ceiling ? r : ceiling;
    }
    const floor = params.reprobeRate / REPROBE_STRETCH;
    return rate > floor ? rate : floor;
  }
  return rate > ceiling ? ceiling : rate;
}

/**
 * The re-probe rate below which a starved page of importance w is not left at water level τ
 * when its change rate may itself change at `hazard` per hour: 1/T with T = √(2τ / (w·h)).
 * A page proven too fast to fund is worth re-probing only in case its rate changed; if it
 * did (hazard h per hour) and it is now worth up to w of freshness per hour, a re-probe every
 * T hours notices after T/2 on average, losing h·w·T/2 per hour, while the re-probes cost τ/T
 * (τ is what a crawl is worth at the water level); the sum is least at T = √(2τ/(h·w)). The
 * margin's stretch (above) bets that a page far over the line stays there; this bounds that
 * bet by what a rate change would cost. 0 when the hazard is 0 (no bound).
 */
export function insuredReprobeRate(weight: number, tau: number, hazard: number): number {
  if (!(hazard > 0) || !(weight > 0)) return 0;
  if (!(tau > 0)) return Number.POSITIVE_INFINITY;
  return Math.sqrt((weight * hazard) / (2 * tau));
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
 * politeness: 1 / hostClampedRate(desiredRate(rec, level, params, tau, hazard), host), the
 * level being the host's own τ_h when above `tau`. A host whose capacity is zero yields
 * +Infinity (never again until the host allows it). `previousLambda` (the estimate before
 * this fetch) enables the test before starving; `hazard` is the rate-change hazard in use
 * (`params.rateChangeHazard` unless learned, see hazard.ts).
 */
export function targetInterval(
  rec: FreshnessRecord,
  host: HostCapacity | undefined,
  tau: number,
  params: FreshnessParams,
  previousLambda?: number,
  hazard: number = params.rateChangeHazard,
): number {
  const level = host?.tau !== undefined && host.tau > tau ? host.tau : tau;
  const rate = hostClampedRate(desiredRate(rec, level, params, tau, hazard), host);
  if (previousLambda !== undefined && params.confirmStarvation && rate > 0) {
    const test = starvationTest(rec, previousLambda, level, params);
    if (test > 0) return test;
  }
  return recrawlInterval(rec, rate, level, params);
}

/**
 * The test interval owed by a fetch whose new estimate took the URL over the water line, or 0.
 * A funded page near the line is crawled at λ/f ≈ 2–7 changes per interval, where an interval
 * says little about λ (it almost always changed), so its estimate wanders by ±30 % after 25
 * fetches; once it drifts over the line the page is starved, its re-probes weeks apart find a
 * change whatever its rate, and it stays starved — over-estimates are absorbed, under-estimates
 * (crawled more) correct themselves. So the fetch that crosses the line (margin τλ/w below 1
 * on the estimate before it, in [1, PROBE_TEST_MARGIN) on the one after) is followed by one
 * interval T = τ/w, the mean time between changes of a page exactly on the line: a page well
 * below the line is likely unchanged after T, its estimate falls and it is funded again; one
 * over it has likely changed and goes to its re-probes. (Measured on the simulator: the
 * estimator +0.0011 to +0.0022 of the optimum in every scenario, the real frontier up to
 * +0.0030; DESIGN §20 "A test before starving".) The background passes leave the test in
 * place (`awaitsTest`).
 */
export function starvationTest(rec: FreshnessRecord, previousLambda: number, level: number, params: FreshnessParams): number {
  const w = rec.priority;
  if (!(w > 0) || !(level > 0) || rec.crawlCount < 3) return 0;
  const before = (level * clampRate(previousLambda > 0 ? previousLambda : params.refRate, params)) / w;
  const after = (level * lambdaOf(rec, params)) / w;
  if (!(before < 1 && after >= 1 && after < PROBE_TEST_MARGIN)) return 0;
  const test = level / w;
  return test > params.minReprobeGap ? test : params.minReprobeGap;
}

/**
 * Whether a waiting URL's scheduled recrawl is a test interval (`starvationTest`, or the short
 * half of a re-probe pair) that a background pass should leave alone: the URL is starved near
 * the line (margin in [1, PROBE_TEST_MARGIN)) and its next due time is at most two test
 * intervals (plus an hour of rounding) after its last fetch — for most pages far shorter than
 * a re-probe gap; a light page whose test interval is itself weeks long has its re-probes left
 * alone too, until its next fetch re-times it. Reads priority, lambda, lastCrawled and nextDue.
 */
export function awaitsTest(rec: FreshnessRecord, level: number, params: FreshnessParams): boolean {
  const w = rec.priority;
  if (!params.confirmStarvation || !(w > 0) || !(level > 0)) return false;
  const margin = (level * lambdaOf(rec, params)) / w;
  if (!(margin >= 1 && margin < PROBE_TEST_MARGIN)) return false;
  return rec.nextDue - rec.lastCrawled <= 2 * Math.max(level / w, params.minReprobeGap) + 1;
}

/**
 * The interval, hours, after the URL's latest fetch for a URL asking `rate` crawls/hour (its
 * host-clamped desired rate at water level `level`): 1/rate — except for a starved URL whose
 * estimate sits less than PROBE_TEST_MARGIN times above the line (w/λ ≤ τ, margin τλ/w), whose
 * re-probes come in pairs at the same average rate: a long gap 2/rate − T, then a test T = τ/w
 * later, T being the mean time between changes of a page exactly on the line. A re-probe
 * after weeks almost always finds a change whatever the rate, so it cannot tell a page just
 * over the line from one far over it; a pair's short interval can, and the interval statistics
 * keep that answer when the next long gap comes (see `estimate`). The pair's order follows the
 * crawl count's parity (odd: the test is next), so the background pass re-times a waiting URL
 * to the same due time as the fetch did.
 */
export function recrawlInterval(rec: FreshnessRecord, rate: number, level: number, params: FreshnessParams): number {
  const base = 1 / rate;
  const w = rec.priority;
  if (!(w > 0) || !(rate > 0)) return base;
  const lambda = lambdaOf(rec, params);
  const margin = (level * lambda) / w;
  if (!(margin >= 1 && margin < PROBE_TEST_MARGIN)) return base;
  const test = level / w;
  if (!(2 * test < base)) return base;
  return (rec.crawlCount & 1) === 1 ? test : 2 * base - test;
}

/**
 * A saturated host's own water level (Kolobov et al. 2019's per-host multiplier): the
 * smallest τ_h ≥ `tau` at which the host's demand `demandAt(τ_h)` fits `capacity`, by
 * bisection in log τ (60 steps). Returns `tau` itself when the host already fits, and
 * +Infinity-free values only: when even the re-probe floor exceeds the capacity the result is
 * the top of the range, where every URL asks the re-probe rate.
 */
export function hostWaterLevel(demandAt: (tau: number) => number, capacity: number, tau: number): number {
  if (!(capacity < Number.POSITIVE_INFINITY) || demandAt(tau) <= capacity) return tau;
  let lo = Math.log(tau);
  let hi = Math.log(1e12);
  if (demandAt(1e12) > capacity) return 1e12;
  for (let k = 0; k < 60 && hi - lo > 1e-6; k++) {
    const m = 0.5 * (lo + hi);
    if (demandAt(Math.exp(m)) > capacity) lo = m;
    else hi = m;
  }
  return Math.exp(hi);
}

/**
 * Writes the URL's next due time (whole epoch-hours) for a recrawl `intervalHours` after
 * `nowHours`: evenly spaced, with the first recrawl spread over the host window and a
 * deterministic rounding dither (see the module comment), never before now + minReprobeGap,
 * and moves the URL to `UrlStatus.DueRecrawl`. Call it after `observeChange`, so crawlCount
 * counts this fetch. The same inputs always give the same time. An infinite interval parks
 * the URL at the largest u32 hour. Returns the due time.
 */
export function setNextDue(
  rec: FreshnessRecord,
  intervalHours: number,
  nowHours: number,
  params: FreshnessParams,
  leadHours = 0,
): number {
  checkTiming('setNextDue', intervalHours, nowHours);
  // A fetch its lead let start before its time: the next interval runs from that time, so
  // starting early never raises the URL's rate (a late start still delays the next).
  const previous = rec.nextDue + leadHours;
  const base = leadHours > 0 && rec.crawlCount > 1 && rec.nextDue <= nowHours && previous > nowHours ? previous : nowHours;
  const due = dueTime(rec, intervalHours, base, nowHours, params, leadHours);
  rec.nextDue = due;
  rec.status = UrlStatus.DueRecrawl;
  return due;
}

/**
 * Re-times a URL that is already waiting for its recrawl when the interval now wanted has
 * moved (τ changed, or its host's demand): the due time becomes lastCrawled + interval on the
 * URL's own grid, never before now + minReprobeGap — but only when that differs from the
 * scheduled time by more than `tolerance` × interval (and at least an hour), so a background
 * pass over every waiting URL does not churn the schedule on small wobbles. It moves URLs both
 * ways: forward, so a URL parked at the re-probe interval answers a lower τ at once instead
 * of two weeks later; back, so a host whose demand rose does not keep the old, faster
 * schedule and run over its cap. Returns whether `rec.nextDue` moved.
 */
export function reviseNextDue(
  rec: FreshnessRecord,
  intervalHours: number,
  nowHours: number,
  params: FreshnessParams,
  tolerance = 0.1,
  leadHours = 0,
): boolean {
  checkTiming('reviseNextDue', intervalHours, nowHours);
  // A URL that started up to the lead early was timed from its own time, not from
  // lastCrawled (re-timing from lastCrawled would take the lead off every interval, as a first
  // version did: +24 % crawls on a free host). That time is not stored; the one the current
  // due hour implies for the new interval, kept within [lastCrawled, lastCrawled + lead], is
  // exact when the interval did not move and off by less than the lead when it did.
  const lc = rec.lastCrawled;
  const own = rec.nextDue + leadHours - intervalHours;
  const base = leadHours > 0 ? (own < lc ? lc : own > lc + leadHours ? lc + leadHours : own) : lc;
  const due = dueTime(rec, intervalHours, base, nowHours, params, leadHours);
  const slack = Math.max(1, tolerance * intervalHours);
  if (!(Math.abs(due - rec.nextDue) > slack)) return false;
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

/**
 * ⌊base + I + spread + dither⌋, at least ⌈now + minReprobeGap⌉ (see the module comment);
 * the largest u32 hour for an infinite interval.
 */
function dueTime(rec: FreshnessRecord, interval: number, base: number, now: number, p: FreshnessParams, lead: number): number {
  if (interval === Number.POSITIVE_INFINITY) return U32_MAX;
  const key = rec.spreadKey >>> 0;
  let t = base + interval - lead;
  if (rec.crawlCount <= 1) {
    const span = interval < p.hostSpreadWindow ? interval : p.hostSpreadWindow;
    t += (key / TWO_POW_32 - 0.5) * span;
  }
  t = Math.floor(t + dither(key, rec.crawlCount));
  const floor = Math.ceil(now + p.minReprobeGap);
  return t < floor ? floor : t > U32_MAX ? U32_MAX : t;
}

/**
 * How many hours ahead of its time a URL on a host of `capacityPerHour` is made due: `slots`
 * of the host's crawl intervals (0 for a host without a finite capacity). See
 * `WithFreshnessOptions.leadSlots`.
 */
export function leadHours(capacityPerHour: number, slots: number): number {
  return slots > 0 && capacityPerHour > 0 && capacityPerHour < Number.POSITIVE_INFINITY ? slots / capacityPerHour : 0;
}

/** A hash of (key, n) uniform in [0, 1): the rounding dither. */
function dither(key: number, n: number): number {
  let h = Math.imul(key ^ Math.imul(n + 0x9e3779b9, 0x85ebca6b), 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x27d4eb2f);
  h ^= h >>> 13;
  return (h >>> 0) / TWO_POW_32;
}
