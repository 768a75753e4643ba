/**
 * src/prioritize: what the front bank orders by — OPIC online importance, cross-host
 * in-degree (which also raises a host's crawl budget) and imported PageRank / host scores.
 *
 * Owns per-URL cash, history and imported rank, and per-host linking-domain sets. Never
 * decides *when* a URL is fetched (politeness and the scheduler do) and never reads the
 * network or a clock: it is arithmetic over what the frontier tells it, so a recovered
 * frontier recomputes the same priorities.
 */
export { Prioritizer, type PrioritizerParams, domainHash, resolvePrioritizerParams } from './opic.js';
