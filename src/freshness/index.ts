/**
 * src/freshness — the rescheduler: how often each URL comes around again, and why (DESIGN §8).
 *
 * It owns the change model and its policy math: the change classifier that turns an Outcome
 * into "changed or not" (`observeChange`), the change-rate estimator over a URL's tiny
 * sufficient statistic (`estimate`), the per-URL optimality condition and politeness clamp
 * (`targetInterval`), deterministic spacing (`setNextDue`), the partition's water level
 * (`TauController`) and the exact offline allocation (`optimalRates`).
 *
 * It also owns the wiring into a frontier: `withFreshness(params, budgetPerHour)` is the
 * frontier's `freshness` option (per-outcome scheduling plus a background pass that steps τ and
 * re-times waiting URLs), holding only partition-level state (τ, per-host demand).
 *
 * It must never hold per-URL state, read a clock, or touch the network: every function is pure
 * over a `FreshnessRecord` view the caller fills from its columns and writes back, so the
 * frontier keeps one table, checkpoints stay byte-exact, and the same code runs in a browser,
 * in the simulator (bench/freshness) and in the frontier. It allocates nothing on the per-URL
 * path (beyond the bigint conversions of an Outcome's fingerprints).
 */
export { defaultParams, freshnessParams, type FreshnessParams } from './params.js';
export {
  LM_UNTRUSTED,
  MIN_INTERVAL_HOURS,
  firstFetchAge,
  foldInterval,
  foldOrRestart,
  lastModifiedExposure,
  newFreshnessRecord,
  observeChange,
  rateFell,
  restartOnSurprise,
  seedIntervals,
  type ChangeVerdict,
  type FreshnessRecord,
} from './record.js';
export { datedAge, estimate, lastModifiedEstimate, noChangeRatioEstimate, posteriorRate, usesLastModified } from './estimate.js';
export { freshness, fundedRate, inverseMarginal, marginalFreshness } from './model.js';
export {
  awaitsTest,
  desiredRate,
  hostClampedRate,
  hostWaterLevel,
  insuredReprobeRate,
  leadHours,
  recrawlInterval,
  reviseNextDue,
  setNextDue,
  starvationTest,
  targetInterval,
  valueDensity,
  type HostCapacity,
} from './schedule.js';
export { TauController, solveWaterLevel, type TauControllerOptions } from './tau.js';
export {
  CHANGES_PER_CHANGE_POINT,
  HAZARD_HALF_LIFE_HOURS,
  PRIOR_WATCHED_HOURS,
  decayHazard,
  hazardInUse,
  hazardRate,
  newHazardEvidence,
  observeHazard,
  type HazardEvidence,
} from './hazard.js';
export { expectedFreshness, optimalRates, type PageRate } from './optimal.js';
export { DEFAULT_LEAD_SLOTS, FreshnessScheduler, withFreshness, type WithFreshnessOptions } from './wire.js';
