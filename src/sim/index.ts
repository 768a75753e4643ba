/**
 * src/sim: a simulated web on loopback for tests, benchmarks and the `meguri demo` command.
 *
 * Owns: a deterministic generator of hosts, pages, links and misbehaviours from a seed; one
 * node:http server listening on several loopback addresses and answering many virtual hosts
 * by their Host header; a request log taken on the server side; the ground truth a perfect
 * polite crawler would reach; and the politeness verdict over the log. Never: crawling,
 * parsing robots.txt for the crawler, or any network beyond 127.0.0.0/8 — the sim is the
 * referee, so it shares no code with the fetcher, robots layer or frontier it judges.
 *
 * Node-only (node:http, node:net, node:zlib): exported from the Node entry, never the browser one.
 */
export { acceleratedClock, SimClock } from './clock.js';
export { DEFAULT_SIM_EPOCH_MS, PLAIN_MIX, type SimMix, type SimWebInit, type SimWebOptions } from './options.js';
export {
  formatPolitenessReport,
  type PolitenessReport,
  SIM_VIOLATION_KINDS,
  type SimViolation,
  type SimViolationKind,
} from './report.js';
export type {
  RobotsMode,
  SimBurst,
  SimHostFeatures,
  SimHostile,
  SimHostTruth,
  SimRedirect,
  SimRequest,
  SimResourceKind,
  SimRobotsRules,
  SimSnapshot,
  SimSoft404Farm,
  SimTrapFamily,
} from './types.js';
export { createSimWeb, type PolitenessReportOptions, SimGroundTruth, SimWeb } from './web.js';
