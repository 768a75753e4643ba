/**
 * src/engine: the live crawler a Node program embeds — the frontier driven against the
 * network with crash safety.
 *
 * Owns: the dispatch loop (`Engine`, `crawl`): slots, sleeping until the frontier's next
 * eligible host or a completion, feeding outcomes back; the robots.txt and DNS seams it fills
 * for the frontier (robots before a host's first page, requests paced like fetches); the
 * crawl's scope (seeds, scope, include/exclude globs) and its saved settings; soft-404
 * and trap detection around the frontier's admission; checkpoints (`.meguri`) plus the journal
 * of outcomes since, and recovery from both; signals; progress stats and per-host idle
 * reasons (`hostStates`, `readHostStates`).
 *
 * Never: decide what to fetch or when (the frontier and its politeness policy do; the engine
 * never dispatches past them), parse HTML or robots.txt itself (src/fetch), or lose a fetch
 * it has recorded — an outcome is journaled before the frontier hears of it, and only after
 * the embedder has taken the page.
 *
 * Node-only (node:fs, node:events, undici through src/fetch): exported from `src/index.ts`.
 */
export { CHECKPOINT_FILE, type CheckpointFallbackInfo, JOURNAL_FILE, PREV_CHECKPOINT_FILE, PREV_JOURNAL_FILE } from './datadir.js';
export { type CrawlSummary, type EngineEvents, type RecoveryInfo, type RefusedSeed, type RobotsCapture, type SeedRedirect, type StopReason, type UnreachableRobots } from './run-types.js';
export { Engine } from './engine.js';
export { crawl, readHostStates } from './crawl.js';
export { type EngineOptions, type EnginePoliteness, type EngineResolve, enginePolitenessConfig, resolveEngineOptions } from './options.js';
export { CRAWL_SCOPES, type CrawlScope, SCOPE_REASONS, Scope, type ScopeReason } from './scope.js';
export { type CrawlSettings, SAVED_SETTINGS, SETTINGS_FILE, type SavedSetting, type SettingChange, readCrawlSettings } from './settings.js';
export { type CrawlCounts, type FailingHost, type HandlerFailure, type PolicyReason, type UnresolvedHost } from './tally.js';
export { type Page, type PageChange, type PageHeaders, type PageTiming, changeOf } from './page.js';
export {
  type HostCategory,
  type HostCounts,
  type HostExtra,
  type HostStatus,
  type HostWhy,
  type Progress,
  type RobotsOutageRecord,
  clockTime,
  countHosts,
  duration,
  explainHost,
  hostStatesFromPartition,
} from './status.js';
export { Waker } from './waker.js';
