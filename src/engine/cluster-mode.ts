/**
 * The Engine's cluster mode: `new Engine({ …, cluster: { redis, crawl, slots, store } })`.
 *
 * Owns: the `cluster` option (validated here), the mapping of the engine's crawl-wide options
 * onto the crawl record (`crawlSettingsOf`), and the `ClusterNode` built around the engine's
 * seams (`clusterNodeOf`). Never: the slot life cycle, link routing, fencing or the IP gate —
 * those are src/cluster's `ClusterNode`, reused as is, so the engine and a bare node run the
 * same code; nor the engine's per-page rules (scope, soft-404, redirects), which the engine
 * hands in as `shape`.
 *
 * What differs from a single-process crawl, and why:
 * - Durability is the slot checkpoints in the shared store plus the inbox streams, not
 *   `dataDir`'s journal: a slot moves between processes, and a journal is one process's. A
 *   crash re-fetches the pages since the slot's last accepted checkpoint (the bound of issue 24).
 * - An outcome is reported to its slot when the fetch completes, not when the consumer took the
 *   page: the slot's checkpoint is cut on the node's schedule, and a page the consumer had not
 *   taken at a crash is not fetched again. A consumer that must see every page exactly once
 *   after a crash keys its output by URL.
 * - robots.txt answers are not journaled either: each slot's checkpoint carries the entries of
 *   its origins (slot-robots.ts), and the slot's next owner takes them back — rules until
 *   their expiry, an unreachable origin's retry time and Retry-After hold. An answer heard
 *   after the slot's last accepted checkpoint is lost with a killed node and asked again.
 * - `maxPages`/`maxRequests` are crawl-wide, recorded with the other limits and counted over
 *   every node in Redis (src/cluster/budget.ts): a page a killed node fetched after its slot's
 *   last checkpoint is fetched again and counted twice, so such a crawl may stop that many
 *   distinct pages short of the limit.
 * - `memoryBudget` is refused too (options.ts): a slot checkpoint is a full image, which loads
 *   every URL the slot spilled, so a disk tier would not bound a slot's memory (docs/CLUSTER.md).
 */
import type { Fetcher } from '../fetch/index.js';
import type { Frontier, FrontierOptions } from '../frontier/index.js';
import type { FetchRequest, Outcome } from '../model/index.js';
import { ClusterNode } from '../cluster/node.js';
import type { ClusterCheckpoint, ClusterCheckpointFallback, ClusterPage, ClusterPause, ClusterStoreRestore, SlotRobotsSeam } from '../cluster/options.js';
import type { Durability } from '../cluster/routing.js';
import type { CrawlSettings } from '../cluster/settings.js';
import type { EngineOptions } from './options.js';
import { enginePolitenessConfig } from './options.js';

/** `EngineOptions.cluster`: join (or create) crawl `crawl` coordinated through `redis`. */
export interface EngineClusterOptions {
  /** Redis URL, e.g. 'redis://127.0.0.1:6379'. */
  readonly redis: string;
  /** The crawl's name (letters, digits, '.', '_', '-'). */
  readonly crawl: string;
  /** Slots of the crawl (fixed when it is created; default 64; a differing value is refused). */
  readonly slots?: number;
  /** Checkpoint store directory, the same content on every node (a network file system across machines). */
  readonly store: string;
  /** Sender barrier: 'none' (default), 'aof' or `{ replicas, timeoutMs }` (see docs). */
  readonly durability?: Durability;
  /** Heartbeat TTL, ms (default 10 000). */
  readonly heartbeatTtlMs?: number;
  /** Checkpoint period per slot, ms (default: the engine's `checkpointIntervalMs` when given, else 10 000). */
  readonly checkpointMs?: number;
  /** How often slot records are re-read, ms (default 200). */
  readonly pollMs?: number;
  /** This node's id (default host-pid-random). */
  readonly nodeId?: string;
}

const KEYS = ['redis', 'crawl', 'slots', 'store', 'durability', 'heartbeatTtlMs', 'checkpointMs', 'pollMs', 'nodeId'];

/** Whether `v` is a plausible `EngineClusterOptions` (ClusterNode validates each field on start). */
export function isEngineClusterOptions(v: unknown): v is EngineClusterOptions {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return Object.keys(o).every((k) => KEYS.includes(k)) && typeof o['redis'] === 'string' && typeof o['crawl'] === 'string' && typeof o['store'] === 'string';
}

/**
 * The crawl-wide settings this engine's options give, for the crawl record: only those the
 * caller set (`given`), so a node that joins with none of them takes the recorded ones, and
 * one that sets another value is refused naming both.
 */
export function crawlSettingsOf(o: Readonly<EngineOptions>, given: ReadonlySet<string>): Partial<CrawlSettings> {
  const c = o.cluster!;
  const s: { -readonly [K in keyof CrawlSettings]?: CrawlSettings[K] } = {};
  if (c.slots !== undefined) s.slots = c.slots;
  if (given.has('grouping')) s.grouping = o.grouping;
  if (given.has('agent')) s.agent = o.agent;
  if (given.has('scope')) s.scope = o.scope;
  if (given.has('include') || given.has('exclude')) s.patterns = [...o.include.map((p) => `+${p}`), ...o.exclude.map((p) => `-${p}`)];
  if (given.has('politeness')) {
    const p = enginePolitenessConfig(o.politeness);
    s.politeness = { floorMs: p.floorMs, defaultIntervalMs: p.defaultIntervalMs, ipFloorMs: p.ipFloorMs, ceilingMs: p.ceilingMs };
  }
  const limits: Record<string, number> = {};
  if (given.has('maxDepth')) limits['maxDepth'] = o.maxDepth;
  if (given.has('maxUrlsPerHost')) limits['maxUrlsPerHost'] = o.maxUrlsPerHost;
  if (given.has('retryLimit')) limits['retryLimit'] = o.retryLimit;
  // Crawl-wide budgets, counted over every node in Redis (src/cluster/budget.ts).
  if (given.has('maxPages') && Number.isFinite(o.maxPages)) limits['maxPages'] = o.maxPages;
  if (given.has('maxRequests') && Number.isFinite(o.maxRequests)) limits['maxRequests'] = o.maxRequests;
  if (Object.keys(limits).length > 0) s.limits = limits;
  return s;
}

/** What the engine hands its node. */
export interface ClusterSeams {
  readonly fetcher: Fetcher;
  /** The engine's frontier options (robots, resolver, traps, freshness…); grouping and politeness come from the crawl record. */
  readonly frontier: Partial<FrontierOptions>;
  readonly shape: (request: FetchRequest, outcome: Outcome) => Outcome;
  readonly admitted: (url: string) => void;
  /** A slot opened here from a checkpoint, or kept after a failed hand-off (`ClusterNodeOptions.opened`): its Refused rows are asked again. */
  readonly opened: (slot: number, frontier: Frontier) => void;
  /** Re-reads the crawl's scope seeds (before seeds from an inbox are applied). */
  readonly beforeSeeds: () => Promise<void>;
  readonly onPage: (page: ClusterPage) => void;
  readonly onCheckpoint: (checkpoint: ClusterCheckpoint) => void;
  readonly onCheckpointFallback: (fallback: ClusterCheckpointFallback) => void;
  readonly onStoreRestore: (restore: ClusterStoreRestore) => void;
  readonly onPause: (pause: ClusterPause) => void;
  /** The robots.txt entries of each slot's origins, carried in its checkpoint (slot-robots.ts). */
  readonly robots: SlotRobotsSeam;
  readonly clock: () => number;
}

/** The engine's `ClusterNode` (not started). */
export function clusterNodeOf(o: Readonly<EngineOptions>, given: ReadonlySet<string>, seams: ClusterSeams): ClusterNode {
  const c = o.cluster!;
  const frontier = { ...seams.frontier };
  delete frontier.grouping;
  return new ClusterNode({
    redis: c.redis,
    crawl: c.crawl,
    store: c.store,
    fetcher: seams.fetcher,
    settings: crawlSettingsOf(o, given),
    frontier,
    concurrency: o.concurrency,
    campaign: !o.recrawl && o.freshness === undefined,
    now: seams.clock,
    shape: seams.shape,
    admitted: seams.admitted,
    opened: seams.opened,
    beforeSeeds: seams.beforeSeeds,
    onPage: seams.onPage,
    onCheckpoint: seams.onCheckpoint,
    onCheckpointFallback: seams.onCheckpointFallback,
    onStoreRestore: seams.onStoreRestore,
    onPause: seams.onPause,
    robots: seams.robots,
    ...(c.durability !== undefined ? { durability: c.durability } : {}),
    ...(c.heartbeatTtlMs !== undefined ? { heartbeatTtlMs: c.heartbeatTtlMs } : {}),
    // The engine's own period, when given, is the slots' period too (`meguri crawl
    // --checkpoint-every` sets it): it was silently ignored in cluster mode.
    ...(c.checkpointMs !== undefined ? { checkpointMs: c.checkpointMs } : given.has('checkpointIntervalMs') ? { checkpointMs: o.checkpointIntervalMs } : {}),
    ...(c.pollMs !== undefined ? { pollMs: c.pollMs } : {}),
    ...(c.nodeId !== undefined ? { nodeId: c.nodeId } : {}),
  });
}
