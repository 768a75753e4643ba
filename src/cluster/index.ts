/**
 * src/cluster: one crawl over many processes and machines, coordinated through Redis.
 *
 * Owns: the slot function (hash of crawl and host group mod S), the crawl record, node
 * heartbeats and the coordinator's sticky slot map, slot epochs and fenced checkpoint
 * acceptance, the checkpoint store layout, link routing over per-slot inbox streams with the
 * sender barrier and exactly-once application, the cross-process per-IP gate, and
 * `ClusterNode`, which runs a node's slots. Never: scheduling inside a slot (each slot is a
 * plain `Frontier`), fetching (a `Fetcher` is injected), or trusting a node's clock for
 * ownership or IP spacing (every such decision is a Lua script on the Redis clock).
 *
 * Node-only (ioredis, node:fs): exported from the Node entry, never the browser one.
 */
export { balance, moves } from './balance.js';
export { type BudgetKind, type BudgetState, CrawlBudget, readBudgets, reclaimBudgets } from './budget.js';
export { CheckpointStoreError, CrawlSettingsMismatchError, DurabilityError, StaleEpochError } from './errors.js';
export { IpGate, type IpGateOptions } from './gate.js';
export { ClusterKeys, INBOX_GROUP, crawlSalt, slotOf, slotOfKey } from './keys.js';
export { CLOCK_SAMPLES, type ClockOffset, type CoordinateResult, Heartbeat, type SlotRecord, clockShiftMs, coordinate, liveNodes, readSlots } from './membership.js';
export { ClusterNode, type ClusterNodeStats } from './node.js';
export { type ClusterCheckpoint, type ClusterCheckpointFallback, type ClusterNodeOptions, type ClusterPause, type ClusterStoreRestore, type ClusterPage, type FaultPoint, type SlotRobotsSeam, resolveClusterNodeOptions } from './options.js';
export { type Durability, type InboxEntry, Outbox, type RoutedSeed, checkEviction, compareIds, decodeLinks, encodeLinks } from './routing.js';
export { type CrawlSettings as ClusterCrawlSettings, DEFAULT_SLOTS, joinCrawl, readCrawl } from './settings.js';
export { acceptCheckpoint } from './scripts.js';
export { settleBefore } from './settle.js';
export { SlotState, foldDigest } from './slot.js';
export { CRAWL_FILE, CheckpointStore, SLOT_FORMAT_MINOR, type SlotCheckpointMeta, joinStoredCrawl } from './store.js';
export { CLOCK_SPREAD_WARN_MS, type ClusterStatus, type NodeStatus, type SlotStatus, budgetText, clockSpread, clusterStatus, formatClusterStatus } from './status.js';
