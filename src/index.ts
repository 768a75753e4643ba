/**
 * meguri — the Node entry. Everything the browser entry offers, plus the Node-only parts:
 * the synchronous core loader (so no `await loadCore()` is needed in Node).
 *
 * The simulated web (src/sim) lives at its own subpath, `meguri/sim`: only tests, benchmarks
 * and the demo need it. The names it had here are kept, listed one by one so the root surface
 * does not grow with the sim's; new sim exports go to `meguri/sim` only.
 */
export * from './browser.js';
export { CORE_WASM_URL, loadCoreSync } from './core/node.js';
export { readPartition, writePartition } from './format/file.js';
export { Journal, type JournalOptions, type JournalReplay, MAX_RECORD_BYTES, parseJournal } from './journal/index.js';
export * from './fetch/index.js';
// Kept for compatibility (contracts): import these from `meguri/sim`.
export {
  DEFAULT_SIM_EPOCH_MS,
  PLAIN_MIX,
  type PolitenessReport,
  type PolitenessReportOptions,
  type RobotsMode,
  SIM_VIOLATION_KINDS,
  type SimBurst,
  SimClock,
  SimGroundTruth,
  type SimHostFeatures,
  type SimHostile,
  type SimHostTruth,
  type SimMix,
  type SimRedirect,
  type SimRequest,
  type SimResourceKind,
  type SimRobotsRules,
  type SimSnapshot,
  type SimSoft404Farm,
  type SimTrapFamily,
  type SimViolation,
  type SimViolationKind,
  SimWeb,
  type SimWebInit,
  type SimWebOptions,
  acceleratedClock,
  createSimWeb,
  formatPolitenessReport,
} from './sim/index.js';
export * from './engine/index.js';
export * from './urlfrontier/index.js';
export * from './cluster/index.js';
export * from './warc/index.js';
export { type WarcCounts, type WarcLocation, WarcWriter, type WarcWriterOptions } from './cli/warc.js';
export * from './observe/index.js';
