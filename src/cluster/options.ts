/**
 * `ClusterNode`'s options, validated by one table (STYLE habit 3): every option named, typed,
 * ranged and defaulted here, and a frozen, fully defaulted object out.
 */
import type { Redis } from 'ioredis';
import type { Fetcher } from '../fetch/index.js';
import type { RobotsSnapshot } from '../fetch/robots-cache.js';
import { type Frontier, type FrontierOptions, resolveFrontierOptions } from '../frontier/index.js';
import { booleanField, customField, defineOptions, functionField, numberField } from '../options/index.js';
import type { Durability } from './routing.js';
import type { CrawlSettings } from './settings.js';

/** Points where a test may inject a crash (kill -9 of the node process). */
export type FaultPoint = 'applied' | 'snapshot' | 'checkpointed' | 'accepted' | 'handoff-flushed';

/** A slot opened from its previous checkpoint because its current one was damaged (`ClusterNode`). */
export interface ClusterCheckpointFallback {
  readonly slot: number;
  /** The epoch the slot was opened at. */
  readonly epoch: number;
  /** The damaged checkpoint (its path in the store, relative to the crawl's directory). */
  readonly damaged: string;
  /** The previous checkpoint the slot was opened from instead. */
  readonly used: string;
  /** Why the damaged one was refused. */
  readonly error: Error;
}

/**
 * What a node rebuilt from the checkpoint store because Redis had lost it (a restart without
 * AOF, a flushed database): the crawl's settings record (`kind: 'settings'`, from the store's
 * `crawl.json`), or a slot opened from the newest valid checkpoint in the store while its
 * record named none (`kind: 'slot'`; links routed to it that only Redis held are lost).
 */
export type ClusterStoreRestore =
  | { readonly kind: 'settings'; /** The file the settings were read from. */ readonly file: string }
  | {
      readonly kind: 'slot';
      readonly slot: number;
      /** The epoch the slot was opened at: past every epoch in its store. */
      readonly epoch: number;
      /** The checkpoint it was opened from (its path in the store, relative to the crawl's directory). */
      readonly used: string;
      /** Newer checkpoints skipped because they failed validation, with why. */
      readonly skipped: readonly { readonly rel: string; readonly error: Error }[];
    };

/**
 * The node stopped or went back to dispatching. `paused`: its heartbeat has not been renewed
 * for ttl/2 (Redis unreachable or stalled), so it sends nothing — it may lose its slots at ttl.
 * `resumed`: a renewal came through in time and it dispatches again, its slots kept.
 * `rejoined`: its entry had expired, so it dropped its slots (their next owners recover them
 * from their checkpoints) and joined again as a new member.
 */
export type ClusterPause =
  | {
      readonly kind: 'paused';
      /** Ms since the last renewal that went through was sent. */
      readonly sinceRenewalMs: number;
      /** The last error the node's Redis connection reported, if any. */
      readonly error: string | undefined;
    }
  | { readonly kind: 'resumed'; /** Ms the node did not dispatch. */ readonly pausedMs: number }
  | { readonly kind: 'rejoined'; /** Slots the node held when its entry expired. */ readonly slotsDropped: number };

/** A page fetched by a node. */
export interface ClusterPage {
  readonly slot: number;
  readonly epoch: number;
  readonly request: import('../model/index.js').FetchRequest;
  readonly outcome: import('../model/index.js').Outcome;
  /** Clock at which the request was seen leaving (or the fetch started, without the send gate). */
  readonly startedAtMs: number;
  /**
   * Clock at which the node last confirmed, right before sending, that it may: its lease younger
   * than TTL/2 and the slot its own and not moving (undefined: never sent). This is what fencing
   * guarantees precedes any start of a newer owner of the slot; the send itself (`startedAtMs`)
   * can come later when the process stalls in between (a pause, a SIGSTOP, a starved CPU) — a
   * web server takes no fencing token, so no lease can rule that out.
   */
  readonly approvedAtMs: number | undefined;
}

/** An accepted checkpoint of one of the node's slots. */
export interface ClusterCheckpoint {
  readonly slot: number;
  readonly epoch: number;
  /** The checkpoint's sequence number within the epoch. */
  readonly seq: number;
  /** Clock at the snapshot: every outcome the slot was told before it is in the checkpoint. */
  readonly atMs: number;
  /** Partition bytes written. */
  readonly bytes: number;
  /** URLs the slot's partition holds (every status). */
  readonly urls: number;
  /** Snapshot to acceptance, ms (the outbox barrier, the write and the fenced accept). */
  readonly ms: number;
  /** The snapshot itself, ms: the one synchronous step, during which the node's other slots wait. */
  readonly snapshotMs: number;
  /** The slot leaves this node with it (a hand-off, or the node leaving). */
  readonly leaving: boolean;
  /**
   * Sent fetches the checkpoint holds as schedulable because their outcome was not in at the
   * snapshot (only when `leaving`): the next owner fetches each again. The hand-off drain waits
   * up to `handoffDrainMs` for them, then cuts them.
   */
  readonly refetch: number;
}

/**
 * The robots.txt entries of each slot's origins (the Engine's `RobotsCache`, src/engine
 * slot-robots.ts): they travel in the slot's checkpoint, so the slot's next owner neither asks
 * its origins again nor forgets a Retry-After one of them answered.
 */
export interface SlotRobotsSeam {
  /** The entries of `slot`'s origins now, for the checkpoint being snapshotted (synchronous). */
  export(slot: number): RobotsSnapshot[];
  /** A slot opened here from a checkpoint carrying `entries` (before it dispatches anything). */
  import(slot: number, entries: readonly RobotsSnapshot[]): void;
  /**
   * Whether a robots.txt request for one of `slot`'s origins is out (or on its way out): a
   * hand-off's drain waits for it, within its bound, so the answer is in the checkpoint rather
   * than asked again by the next owner — a Retry-After in it included.
   */
  loading(slot: number): boolean;
  /** The slot was handed off: its entries are its next owner's (the accepted checkpoint holds them). */
  forget(slot: number): void;
}

/** Options of `new ClusterNode(...)` (resolved: every default filled). */
export interface ClusterNodeOptions {
  /** Redis URL (or a connected client the node will not close). Required. */
  readonly redis: string | Redis;
  /** The crawl's name (letters, digits, '.', '_', '-'). Required. */
  readonly crawl: string;
  /** Checkpoint store directory (shared by every node of the crawl). Required. */
  readonly store: string;
  /** Fetches one URL (src/fetch's `HttpFetcher`, or any `Fetcher`). Required. */
  readonly fetcher: Fetcher;
  /** Crawl-wide settings given to this node (recorded at creation; verified when joining). */
  readonly settings: Partial<CrawlSettings>;
  /** Local frontier options (DNS seam…); grouping and politeness come from the crawl record. */
  readonly frontier: Partial<FrontierOptions>;
  /** Max fetches in flight over all slots (default 64). */
  readonly concurrency: number;
  /** Heartbeat TTL, ms (default 10 000); the node stops dispatching at TTL/2 without a renewal. */
  readonly heartbeatTtlMs: number;
  /** Checkpoint period per slot, ms (default 10 000). */
  readonly checkpointMs: number;
  /** How often slot records are re-read, ms (default 200). */
  readonly pollMs: number;
  /** Longest wait for a moving slot's in-flight fetches, ms (default 5 000). */
  readonly handoffDrainMs: number;
  /** Sender barrier: 'none' (default), 'aof' (Redis with appendfsync always) or `{ replicas, timeoutMs }` (WAIT). */
  readonly durability: Durability;
  /** Stop once every slot is drained and every inbox empty (default true). */
  readonly campaign: boolean;
  /** Cross-process per-IP gate (default true). */
  readonly ipGate: boolean;
  /** A "not shared" IP verdict's life, ms (default 2 000). */
  readonly ipVerdictMs: number;
  /** Node id (default host-pid-random). */
  readonly nodeId: string | undefined;
  /** Clock in epoch ms (default performance.timeOrigin + performance.now()). */
  readonly now: () => number;
  /** Called with every page fetched by this node. */
  readonly onPage: ((page: ClusterPage) => void) | undefined;
  /**
   * Shapes an outcome before its slot's frontier is told it (the Engine's scope filter, soft-404
   * and redirect rules); the identity when absent.
   */
  readonly shape: ((request: import('../model/index.js').FetchRequest, outcome: import('../model/index.js').Outcome) => import('../model/index.js').Outcome) | undefined;
  /**
   * Called with every URL that enters one of this node's slots before it can be dispatched:
   * seeds and links, local or from an inbox, and each URL of the checkpoint a slot opens from.
   */
  readonly admitted: ((url: string) => void) | undefined;
  /**
   * Called with a slot's frontier when the slot opens here from a checkpoint, after its URLs
   * passed `admitted` and before it dispatches, and when a hand-off of it did not happen and it
   * runs here again (synchronous; the frontier is the caller's to `reconsider` then). The Engine
   * queues again there the `Refused` rows none of its own rules refuses now: a row a learned
   * lesson refused carries no lesson with it, and the lesson was its last owner's (or this
   * process's before a restart), which this node neither holds nor can lift.
   */
  readonly opened: ((slot: number, frontier: Frontier) => void) | undefined;
  /**
   * Called before inbox entries holding seeds are applied (awaited; a failure is ignored): the
   * Engine re-reads the crawl's scope seeds there, so a seed given on another node — recorded
   * before it was routed (`addSeeds`) — is in this node's scope before the seed can be fetched.
   */
  readonly beforeSeeds: (() => Promise<void>) | undefined;
  /** Called with every accepted checkpoint of the node's slots. */
  readonly onCheckpoint: ((checkpoint: ClusterCheckpoint) => void) | undefined;
  /**
   * Called when a slot is opened from its previous checkpoint because its current one failed
   * validation (a flipped byte, a truncated file, a damaged `cluster.json`): what the damaged one
   * held since the previous one is redone — its inbox entries replayed, its fetches repeated.
   * Counted in `checkpointFallbacks` either way.
   */
  readonly onCheckpointFallback: ((fallback: ClusterCheckpointFallback) => void) | undefined;
  /**
   * Called for each periodic checkpoint not written because the slot's accepted checkpoint
   * already holds its state (an idle slot; `ClusterNodeStats.checkpointsSkipped`).
   */
  readonly onCheckpointSkipped: ((skipped: { readonly slot: number; readonly epoch: number; readonly atMs: number }) => void) | undefined;
  /**
   * Called when Redis had lost what the store still holds and the node rebuilt it from there:
   * the crawl's settings record, or a slot's state (counted in `slotsRestored`).
   */
  readonly onStoreRestore: ((restore: ClusterStoreRestore) => void) | undefined;
  /** Called when the node stops dispatching for want of a heartbeat renewal, starts again, or rejoins (`ClusterPause`). */
  readonly onPause: ((pause: ClusterPause) => void) | undefined;
  /** robots.txt entries carried in each slot's checkpoint (none when absent). */
  readonly robots: SlotRobotsSeam | undefined;
  /** Crash injection for tests. */
  readonly faults: ((point: FaultPoint, slot: number) => void) | undefined;
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);
const REQUIRED = ['redis', 'crawl', 'store', 'fetcher'] as const;

/** Validates `ClusterNode` options and fills defaults. */
export const resolveClusterNodeOptions = defineOptions<ClusterNodeOptions>(
  'ClusterNodeOptions',
  {
    redis: customField('a redis:// URL or an ioredis client', (v): v is string | Redis =>
      (typeof v === 'string' && /^rediss?:\/\//.test(v)) || (isObject(v) && typeof (v as { pipeline?: unknown }).pipeline === 'function'),
    ),
    crawl: customField("a name of 1–100 letters, digits, '.', '_' or '-'", (v): v is string => typeof v === 'string' && /^[A-Za-z0-9._-]{1,100}$/.test(v)),
    store: customField('a directory path', (v): v is string => typeof v === 'string' && v !== ''),
    fetcher: customField('an object with fetch(request, signal)', (v): v is Fetcher => isObject(v) && typeof (v as { fetch?: unknown }).fetch === 'function'),
    settings: customField('a CrawlSettings object', (v): v is Partial<CrawlSettings> => isObject(v), () => ({})),
    frontier: customField('a FrontierOptions object', (v): v is Partial<FrontierOptions> => isObject(v), () => ({})),
    concurrency: numberField({ default: 64, min: 1, max: 100_000, integer: true }),
    heartbeatTtlMs: numberField({ default: 10_000, min: 100, integer: true }), // a PX/PEXPIRE argument: whole ms
    checkpointMs: numberField({ default: 10_000, min: 10 }),
    pollMs: numberField({ default: 200, min: 1 }),
    handoffDrainMs: numberField({ default: 5_000, min: 0 }),
    durability: customField(
      "'none', 'aof' or { replicas, timeoutMs }",
      (v): v is Durability =>
        v === 'none' ||
        v === 'aof' ||
        (isObject(v) &&
          Number.isInteger((v as { replicas?: unknown }).replicas) &&
          ((v as { replicas: number }).replicas >= 1) &&
          Number.isInteger((v as { timeoutMs?: unknown }).timeoutMs) && // WAIT's argument: whole ms
          (v as { timeoutMs: number }).timeoutMs >= 0),
      () => 'none',
    ),
    campaign: booleanField(true),
    ipGate: booleanField(true),
    ipVerdictMs: numberField({ default: 2_000, min: 10, integer: true }), // a PEXPIRE argument: whole ms
    nodeId: customField('a non-empty id without spaces', (v): v is string => typeof v === 'string' && /^\S{1,200}$/.test(v)),
    now: functionField<() => number>(() => performance.timeOrigin + performance.now()),
    onPage: customField('a function', (v): v is (page: ClusterPage) => void => typeof v === 'function'),
    shape: customField('a function', (v): v is ClusterNodeOptions['shape'] & object => typeof v === 'function'),
    admitted: customField('a function', (v): v is (url: string) => void => typeof v === 'function'),
    opened: customField('a function', (v): v is NonNullable<ClusterNodeOptions['opened']> => typeof v === 'function'),
    beforeSeeds: customField('a function', (v): v is () => Promise<void> => typeof v === 'function'),
    onCheckpoint: customField('a function', (v): v is (checkpoint: ClusterCheckpoint) => void => typeof v === 'function'),
    onCheckpointFallback: customField('a function', (v): v is (fallback: ClusterCheckpointFallback) => void => typeof v === 'function'),
    onCheckpointSkipped: customField('a function', (v): v is (skipped: { readonly slot: number; readonly epoch: number; readonly atMs: number }) => void => typeof v === 'function'),
    onStoreRestore: customField('a function', (v): v is (restore: ClusterStoreRestore) => void => typeof v === 'function'),
    onPause: customField('a function', (v): v is (pause: ClusterPause) => void => typeof v === 'function'),
    robots: customField('an object with export, import, loading and forget', (v): v is SlotRobotsSeam =>
      isObject(v) && ['export', 'import', 'loading', 'forget'].every((k) => typeof (v as Record<string, unknown>)[k] === 'function'),
    ),
    faults: customField('a function', (v): v is (point: FaultPoint, slot: number) => void => typeof v === 'function'),
  },
  (o) => {
    const missing = REQUIRED.filter((k) => o[k] === undefined);
    if (missing.length) return `missing required option(s) ${missing.join(', ')}`;
    // The node opens a Frontier per slot with these options, possibly minutes later and on
    // every node alike: a mistake in them (an unknown key, storeDir without memoryBudget) is
    // reported here, at construction, instead of at the first slot the node takes.
    try {
      resolveFrontierOptions(o.frontier);
    } catch (err) {
      return `frontier: ${err instanceof Error ? err.message : String(err)}`;
    }
    return undefined;
  },
);
