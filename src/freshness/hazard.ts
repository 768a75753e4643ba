/**
 * The rate-change hazard learned from the crawl: how often a page's change rate itself
 * changes, per page per hour, estimated from the change points the crawl detects.
 *
 * Owns two decayed sums — change points detected (`restartOnSurprise` restarting a URL's
 * history) and hours watched by the fetches that could have detected one (the intervals closed
 * by a URL's second and later fetches) — and turns them into the hazard that bounds a starved
 * page's re-probe interval (`insuredReprobeRate`). It never reads the frontier's rows and never
 * decides a schedule: `withFreshness` and the simulator feed it and read it.
 *
 * Why: a fixed hazard is a bet on the web being crawled. In the simulator, a fixed 0.25 per year
 * left the pages whose rate fell on day 75 starved and re-probed months apart, while 1 per year
 * cost 0.5 points in the stationary low-budget scenario (DESIGN §20, "Re-probes priced at the
 * host's level, and a learned hazard"). The
 * crawl itself says which world it is in: in 30 days of a stationary run the change-point test
 * fires about 1–2 times over ~4·10⁶ watched page-hours; after 30 % of the pages drew new rates
 * it fires about 25 times.
 *
 * The estimate: h = (k·R + h₀·P) / (W + P), where R and W are the detected change points and
 * watched hours, each decayed by half every `HAZARD_HALF_LIFE_HOURS`; k = `CHANGES_PER_CHANGE_POINT`
 * rate changes per detected change point (the test sees only falls, and only on pages crawled
 * often enough to notice a quiet run; in the simulator's drift about 1,500 redrawn rates gave
 * 25–30 change points in the following month); h₀ = `params.rateChangeHazard` is the prior,
 * weighted as `PRIOR_WATCHED_HOURS` of watching, so a crawl that has seen nothing yet uses
 * exactly the configured hazard. Measured k = 12 / 25 / 40 / 60 and half-lives of 15 / 30 / 60
 * days scored within ±0.001 of one another in every scenario (estimator over columns, 3 seeds).
 */

import type { FreshnessParams } from './params.js';

/** Rate changes assumed per detected change point (see the module comment for the measurement). */
export const CHANGES_PER_CHANGE_POINT = 25;

/** Half-life of the evidence, hours: a burst of change points raises the hazard for weeks, not for good. */
export const HAZARD_HALF_LIFE_HOURS = 30 * 24;

/** Weight of the configured hazard as a prior, in watched page-hours. */
export const PRIOR_WATCHED_HOURS = 1e6;

/** Decayed counts of detected change points and watched page-hours (see the module comment). */
export interface HazardEvidence {
  /** Change points detected, decayed. */
  changePoints: number;
  /** Page-hours watched by fetches that could detect one, decayed. */
  watchedHours: number;
}

/** No evidence yet: the hazard is the prior. */
export function newHazardEvidence(): HazardEvidence {
  return { changePoints: 0, watchedHours: 0 };
}

/**
 * Adds one fetch: `intervalHours` of watching (the interval the fetch closed) and whether its
 * change-point test restarted the URL's history. Only a fetch that closes an interval (a URL's
 * second fetch or later) can restart it; the caller passes those alone.
 */
export function observeHazard(e: HazardEvidence, intervalHours: number, restarted: boolean): void {
  if (intervalHours > 0 && Number.isFinite(intervalHours)) e.watchedHours += intervalHours;
  if (restarted) e.changePoints += 1;
}

/** Ages the evidence by `hours` (halved every `HAZARD_HALF_LIFE_HOURS`); a non-positive age is a no-op. */
export function decayHazard(e: HazardEvidence, hours: number): void {
  if (!(hours > 0)) return;
  const f = 2 ** (-hours / HAZARD_HALF_LIFE_HOURS);
  e.changePoints *= f;
  e.watchedHours *= f;
}

/**
 * The hazard a scheduler with `params` uses: learned (`hazardRate` with `rateChangeHazard` as
 * the prior) when `learnHazard` is on, else `rateChangeHazard`; 0 whenever `rateChangeHazard`
 * is 0, which turns the insured re-probes off altogether.
 */
export function hazardInUse(e: HazardEvidence, params: Pick<FreshnessParams, 'learnHazard' | 'rateChangeHazard'>): number {
  return learnsHazard(params) ? hazardRate(e, params.rateChangeHazard) : params.rateChangeHazard;
}

/** Whether a scheduler with `params` learns its hazard (`learnHazard` on and a prior above 0). */
export function learnsHazard(params: Pick<FreshnessParams, 'learnHazard' | 'rateChangeHazard'>): boolean {
  return params.learnHazard && params.rateChangeHazard > 0;
}

/**
 * The hazard, changes of a page's change rate per page per hour: (k·R + h₀·P) / (W + P), in
 * [0, 1]. Equals `prior` while nothing has been watched.
 */
export function hazardRate(e: HazardEvidence, prior: number): number {
  const h = (CHANGES_PER_CHANGE_POINT * e.changePoints + prior * PRIOR_WATCHED_HOURS) / (e.watchedHours + PRIOR_WATCHED_HOURS);
  return h > 1 ? 1 : h > 0 ? h : 0;
}
