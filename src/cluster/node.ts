/**
 * `ClusterNode`: one process's share of a cluster crawl — the slots the coordinator gives it,
 * each a `Frontier` recovered from its accepted checkpoint, driven against a `Fetcher` behind
 * one process-wide send gate, with links routed to other slots over their inbox streams.
 *
 * This file owns the node's loop and the slot life cycle (open → run → checkpoint → hand off
 * or drop); the Redis-side decisions are in scripts.ts, the stream plumbing in routing.ts, the
 * consistent cut of a slot in slot.ts. It is long (≈ 720 lines) because the life cycle's
 * steps read best together: every `await` in it is a point where a slot may have moved, and
 * each is followed by the same re-check (`live`).
 *
 * Invariants:
 * - A slot dispatches only while this node's heartbeat is younger than TTL/2 and the slot
 *   record names this node at the slot's epoch (re-read every `pollMs`).
 * - Links to another slot — owned here or not — go through that slot's inbox, so each slot's
 *   checkpoint stands alone (admitting a link straight into a sibling slot would tie the two
 *   checkpoints together: a crash between them could lose it).
 * - A checkpoint is a synchronous snapshot (partition + cursor, and the robots seam's entries of
 *   the slot's origins), then the outbox barrier, then the write, then the fenced accept, then
 *   XACK/XTRIM — in that order; the trim only behind the checkpoint it replaced, which is the
 *   slot's fallback should this one be found damaged (`fallBack`). A slot opened here gives its
 *   checkpoint's robots entries to the seam, and each of its checkpoint's URLs to `admitted`,
 *   before it dispatches; a slot handed off is forgotten by the robots seam.
 * - Seeds given while running (`addSeeds`, scope seeds or routed only) hold the campaign's end —
 *   no drained verdict while a send is out or from Redis reads a send began during — and the
 *   node leaves only once they settled.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { type ChainableCommander, Redis } from 'ioredis';
import { loadCoreSync } from '../core/node.js';
import { type AdmissionLimits, type FrontierOptions, type RelinkCounts, relinkRoundRuns } from '../frontier/index.js';
import type { Discovery, FetchRequest, Outcome, UrlStatus } from '../model/index.js';
import { type ClusterNodeOptions, resolveClusterNodeOptions } from './options.js';
import { canonicalKey } from '../url/keys.js';
import { CorruptPartitionError, InvalidStateError, MeguriError } from '../errors/index.js';
import { politenessConfig } from '../politeness/index.js';
import { CheckpointStoreError, DurabilityError, StaleEpochError } from './errors.js';
import { IpGate } from './gate.js';
import { SendWatch } from './sends.js';
import { ClusterKeys, INBOX_GROUP, crawlSalt, slotOf, slotOfKey } from './keys.js';
import { type SlotRecord, Heartbeat, clockShiftMs, coordinate, readSlots } from './membership.js';
import { type Durability, type InboxEntry, Outbox, checkDurability, checkEviction, encodeLinks, encodeSeeds, compareIds, resetInbox, settleInbox } from './routing.js';
import { ADOPT, FALLBACK, acceptCheckpoint } from './scripts.js';
import { readDrained, sumRelinkCounts } from './drained.js';
import { type CrawlSettings, readCrawl, readCrawlCreated } from './settings.js';
import { BUDGET_LIMITS, type BudgetKind, CrawlBudget, reclaimBudgets, restoreBudgetCounts } from './budget.js';
import { countsAsPage, isUnchangedSitemap } from '../model/index.js';
import { IDLE_SLOT_CHECKPOINT_MS, SlotState } from './slot.js';
import { settleBefore } from './settle.js';
import { CheckpointStore, type SlotCheckpointMeta, joinStoredCrawl } from './store.js';
import { shiftRobotsSnapshot } from '../fetch/robots-cache.js';

/** A node's counters (also published to Redis for `meguri cluster status`). */
export interface ClusterNodeStats {
  readonly nodeId: string;
  readonly slots: number[];
  readonly moving: number[];
  readonly pages: number;
  readonly pagesPerSec: number;
  readonly inFlight: number;
  readonly linksRouted: number;
  readonly entriesApplied: number;
  readonly checkpoints: number;
  /**
   * Periodic checkpoints not written because the slot's accepted checkpoint already held its
   * state (an idle slot: `IDLE_SLOT_CHECKPOINT_MS`).
   */
  readonly checkpointsSkipped: number;
  readonly handoffs: number;
  /** Sent fetches that hand-offs (and leaving) cut at the drain bound: the next owners fetch them again. */
  readonly handoffRefetches: number;
  /**
   * Slots opened with every host held one interval (`Frontier.holdEveryHost`): from a checkpoint
   * written while its owner still dispatched, or from none after an earlier owner (a killed
   * node's slots) — the fetches it made after its checkpoint are unknown.
   */
  readonly slotsHeld: number;
  readonly canDispatch: boolean;
  readonly ipGateBlocked: boolean;
  readonly sharedIps: number;
  /** Round trips to the Redis IP gate. */
  readonly ipGateCalls: number;
  /** Redis calls that failed and were retried (unreachable, a reply error, a replica WAIT that timed out). */
  readonly redisErrors: number;
  /**
   * Checkpoint store operations that failed and were retried (`CheckpointStoreError`: a network
   * store's I/O error or timeout, a checkpoint not visible yet); a full store device is not
   * retried — `run()` ends with `DiskFullError`.
   */
  readonly storeErrors: number;
  /** Slots this node opened from their previous checkpoint because the current one was damaged (`onCheckpointFallback`). */
  readonly checkpointFallbacks: number;
  /**
   * Slots this node opened from a checkpoint found in the store because their record named none
   * — Redis had lost the crawl's records (`onStoreRestore`).
   */
  readonly slotsRestored: number;
  /**
   * Redis's clock minus this node's, ms, as the heartbeat measured it (`Heartbeat.clockOffset`);
   * undefined before the first renewal. Written into each slot checkpoint, so the next owner puts
   * the slot's windows on its own clock (`clockShiftMs`); `meguri cluster status` flags live nodes
   * differing by more than `CLOCK_SPREAD_WARN_MS`.
   */
  readonly clockOffsetMs: number | undefined;
  /** Bound on `clockOffsetMs`'s error, ms (half the round trip it was read over, plus 1). */
  readonly clockOffsetErrorMs: number | undefined;
  /** Slots opened from a checkpoint whose clock readings were moved onto this node's clock (`clockShiftMs` ≠ 0). */
  readonly clockShifts: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The admission limits a crawl record's limits set (`maxDepth`, `maxUrlsPerHost`), as the frontier names them; absent ones left out. */
function admissionOf(limits: Readonly<Record<string, number>>): AdmissionLimits {
  return {
    ...(limits['maxDepth'] !== undefined ? { depthCap: limits['maxDepth'] } : {}),
    ...(limits['maxUrlsPerHost'] !== undefined ? { urlBudget: limits['maxUrlsPerHost'] } : {}),
  };
}

/** Whether an inbox entry carries seeds (kind 's'). */
function holdsSeeds(entry: InboxEntry): boolean {
  const fields = entry[1];
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'k') return fields[i + 1] === 's';
  return false;
}

/** How long an idle node blocks on its inboxes at a time (whole ms: Redis refuses a fractional BLOCK). */
const IDLE_BLOCK_MS = 50;

/** A slot's state built from a checkpoint, before it is registered. */
interface OpenedSlot {
  readonly state: SlotState;
  readonly source: { meta: SlotCheckpointMeta; partition: Uint8Array } | undefined;
  /** The clock shift applied to the checkpoint's readings (`clockShiftMs`). */
  readonly shift: number;
}

/**
 * Whether an error in the node's loop ends the run rather than being retried: meguri's own
 * errors (a corrupt checkpoint, a refused option, a full disk, a broken invariant) say the
 * same thing at every retry; Redis's (unreachable, a reply error, a replica WAIT that timed
 * out: `DurabilityError`) and the checkpoint store's other file-system errors (a network
 * store's hiccup: `CheckpointStoreError`) may pass.
 */
function isFatal(err: unknown): boolean {
  return err instanceof MeguriError && !(err instanceof DurabilityError) && !(err instanceof StaleEpochError) && !(err instanceof CheckpointStoreError);
}

/**
 * How many TTLs a node keeps renewing its heartbeat while its loop waits for slots to open
 * (`keepingAlive`): a read stalled that long is a hiccup survived; longer, the node is taken as
 * stuck and left to expire.
 */
const KEEPALIVE_TTLS = 3;

/** Whether `err` is the store's read of a checkpoint that is not there (its meta file missing). */
function isMissing(err: unknown): boolean {
  return err instanceof CheckpointStoreError && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

export class ClusterNode {
  readonly nodeId: string;
  readonly keys: ClusterKeys;
  private readonly redis: Redis;
  private readonly ownsRedis: boolean;
  private readonly store: CheckpointStore;
  private readonly now: () => number;
  private readonly o: Readonly<ClusterNodeOptions>;
  private settings: CrawlSettings | undefined;
  private salt: Uint32Array = new Uint32Array(2);
  private hb!: Heartbeat;
  private outbox!: Outbox;
  private gate: IpGate | undefined;
  private sends!: SendWatch;
  private blocker: Redis | undefined;
  private readonly slots = new Map<number, SlotState>();
  private readonly busy = new Set<number>();
  /** Periodic checkpoints under way, by slot. */
  private readonly committing = new Map<number, Promise<void>>();
  private inFlight = 0;
  private stopping = false;
  /** Set while `run()` waits on its loop: starts the stop's bound (see `run`). */
  private stopAsked: (() => void) | undefined;
  private wakeUp: (() => void) | undefined;
  private pages = 0;
  private applied = 0;
  private checkpoints = 0;
  private checkpointsSkipped = 0;
  private handoffs = 0;
  /** Sent fetches cut by hand-off drains (and a leaving node's): re-fetched by the slots' next owners. */
  private handoffRefetches = 0;
  private slotsHeld = 0;
  /** Slots whose checkpoint's clock readings were moved onto this node's clock. */
  private clockShifts = 0;
  private redisErrors = 0;
  /** The last error the Redis connection reported (for `onPause`). */
  private lastRedisError: string | undefined;
  /** Clock at which the node last stopped dispatching for want of a renewal (undefined: dispatching). */
  private pausedAt: number | undefined;
  private storeErrors = 0;
  private checkpointFallbacks = 0;
  private slotsRestored = 0;
  /** The crawl record's creation time (its incarnation: `readCrawlCreated`), written into every slot checkpoint. */
  private crawlCreated: number | undefined;
  private rate = { at: 0, pages: 0, perSec: 0 };
  private rr = 0;
  /** The crawl's per-IP floor (every slot's frontier has the same politeness): the least interval of any IP. */
  private ipFloorMs = 250;
  /** `addSeeds` sends not yet settled (each resolves, failed or not): the crawl is not drained while one is out, and leaving waits for them. */
  private readonly sending = new Set<Promise<void>>();
  /** `addSeeds` sends begun: one that began and ended while `crawlDone` read Redis voids that read. */
  private sendsBegun = 0;
  /** The first `addSeeds` send that failed: the node stops, and `run()` rejects with it once it has left. */
  private sendFailure: { err: unknown } | undefined;
  /** An error of the loop that retrying cannot mend (`isFatal`): `run()` ends with it. */
  private fatal: { err: unknown } | undefined;
  /** Set as the node begins to leave (`shutdown`): `addSeeds` is refused from then on. */
  private leaving = false;
  /** Set once the leaving node's final checkpoints are written: nothing queued after them would be sent. */
  private left = false;
  /** The crawl-wide budgets the recorded limits set (`maxPages`, `maxRequests`): tokens in Redis (budget.ts). */
  private budgets: CrawlBudget[] = [];
  /** Set when the node stopped because a crawl-wide budget was spent. */
  private budgetSpent: BudgetKind | undefined;
  /** Whether the crawl's depth cap binds in some slot (`shareDepthBinds`). */
  private depthBinds = false;

  /**
   * A node of crawl `options.crawl`; nothing is contacted until `start()`.
   * @throws InvalidArgumentError naming a missing or malformed option.
   */
  constructor(options: Partial<ClusterNodeOptions>) {
    const o = resolveClusterNodeOptions(options);
    this.o = o;
    loadCoreSync();
    this.nodeId = o.nodeId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.keys = new ClusterKeys(o.crawl);
    this.ownsRedis = typeof o.redis === 'string';
    this.redis = typeof o.redis === 'string' ? new Redis(o.redis, { maxRetriesPerRequest: null, lazyConnect: false }) : o.redis;
    this.redis.on('error', (err: unknown) => {
      this.redisErrors++;
      this.lastRedisError = err instanceof Error ? err.message : String(err);
    });
    this.store = new CheckpointStore(o.store, o.crawl);
    this.now = o.now;
  }

  /** The crawl's recorded settings (after `start`). */
  get crawlSettings(): CrawlSettings | undefined {
    return this.settings;
  }

  /** Joins (or creates) the crawl and registers the node; a failed start releases the connection it opened. */
  async start(): Promise<void> {
    try {
      await this.join();
    } catch (err) {
      // Refused (settings, durability) or Redis unreachable: nothing may keep the process alive.
      if (this.ownsRedis) this.redis.disconnect();
      throw err;
    }
  }

  private async join(): Promise<void> {
    // Politeness overrides are the frontier's (`PolitenessConfig` names, as the Engine records
    // them): one it refuses would fail every slot open, retried in the loop without end, so it
    // is refused here, naming the option — the given ones before they are recorded, then the
    // crawl's as recorded (another node may have set them).
    politenessConfig({ ...this.o.frontier.politeness, ...this.o.settings?.politeness });
    // A Redis unfit for the crawl is refused before anything is recorded in it.
    await checkEviction(this.redis);
    await checkDurability(this.redis, this.o.durability);
    // The store keeps the crawl's settings too: a Redis that lost its data gets them back from
    // there (a record created afresh from this node's flags could change the slot count).
    const joined = await joinStoredCrawl(this.redis, this.keys, this.store, this.o.settings ?? {});
    this.settings = joined.settings;
    this.crawlCreated = joined.createdAt;
    if (joined.restored !== undefined) this.o.onStoreRestore?.({ kind: 'settings', file: joined.restored });
    politenessConfig({ ...this.o.frontier.politeness, ...this.settings.politeness });
    this.salt = crawlSalt(this.o.crawl);
    this.ipFloorMs = Number(this.settings.politeness['ipFloorMs'] ?? this.o.frontier.politeness?.ipFloorMs ?? 250);
    this.hb = new Heartbeat(this.redis, this.keys, this.nodeId, this.o.heartbeatTtlMs, this.now);
    this.budgets = [];
    await this.takeLimits(this.settings.limits);
    this.outbox = new Outbox(this.redis, this.keys, this.o.durability);
    this.sends = new SendWatch(this.now);
    if (this.o.ipGate) {
      this.gate = new IpGate(this.redis, this.keys, this.nodeId, { verdictMs: this.o.ipVerdictMs, maxIntervalMs: this.ipFloorMs, now: this.now });
    }
    await this.hb.beat();
  }

  /** The slot of a canonical URL's key. */
  slotOfKey(key: Uint32Array): number {
    return slotOfKey(key, 0, this.salt, this.settings!.slots);
  }

  /** The slot of host group `group` (undefined before `start`). */
  slotOfGroup(group: string): number | undefined {
    return this.settings === undefined ? undefined : slotOf(this.o.crawl, group, this.settings.slots, this.salt);
  }

  /** The frontier of the running slot that holds host group `group`, if this node owns it. */
  frontierOf(group: string): import('../frontier/index.js').Frontier | undefined {
    if (this.settings === undefined) return undefined;
    return this.slots.get(slotOf(this.o.crawl, group, this.settings.slots, this.salt))?.frontier;
  }

  /**
   * The frontiers of the slots this node runs now, in slot order (for progress and host
   * states: read them, never dispatch or report through them).
   */
  frontiers(): import('../frontier/index.js').Frontier[] {
    return [...this.slots.values()].sort((a, b) => a.slot - b.slot).map((s) => s.frontier);
  }

  /**
   * Queues again, in each slot running here, the `Refused` and `Disallowed` rows `accept` takes
   * (`Frontier.reconsider`), and wakes the loop: the Engine's lesson lifted. A slot opening or
   * moving now is left out: its checkpoint may be cut already, and it asks of its Refused rows
   * anyway when it opens (here or on its next owner), or resumes here after a hand-off that did
   * not happen (`opened`). Returns how many were queued.
   */
  reconsider(accept: (url: string, status: UrlStatus, depth: number) => boolean): number {
    let queued = 0;
    for (const s of this.slots.values()) if (!s.moving && !this.busy.has(s.slot)) queued += s.frontier.reconsider(accept);
    if (queued > 0) this.wakeUp?.();
    return queued;
  }

  /** Fetches this node has dispatched whose outcome is not in yet (some may still wait at the IP gate). */
  inFlightFetches(): number {
    return this.inFlight;
  }

  /** Re-checks a parked host group (robots.txt or DNS answer arrived) and wakes the loop if it moved. */
  wake(group: string): void {
    if (this.frontierOf(group)?.wake(group) === true) this.wakeUp?.();
  }

  /**
   * Records `urls` among the crawl's scope seeds and returns all of them (every node's): a
   * crawl scoped by its seeds must take the same links on every node, whoever was given them.
   */
  async scopeSeeds(urls: readonly string[]): Promise<string[]> {
    if (urls.length > 0) await this.redis.sadd(this.keys.scopeSeeds, ...urls);
    return this.redis.smembers(this.keys.scopeSeeds);
  }

  /** Routes seeds (raw URLs) to their owning slots' inboxes; returns how many were accepted. */
  async seed(urls: readonly string[], priority = 1): Promise<number> {
    const n = this.routeSeeds(urls, priority);
    await this.outbox.flush(true);
    return n;
  }

  /**
   * URLs the crawl found on its own — the sitemaps a robots.txt answer names — queued for their
   * slots' inboxes without being recorded as scope seeds, like `addSeeds(urls, { scope: false })`
   * but also while the node leaves. A robots.txt answer can land during a leaving node's drain
   * (`drain` waits for it), and the slot's final checkpoint then holds the answer, so the next
   * owner never asks again: dropped there, its Sitemap lines were lost to the crawl. Queued in
   * the outbox instead, they reach their inboxes at that checkpoint's sender barrier (a commit
   * flushes the outbox before it writes), or at the loop's next flush while the node runs; the
   * campaign is not counted drained while the outbox holds them. After the node has left, an
   * answer is in no checkpoint and the next owner asks again, so nothing is queued then.
   * Returns how many were queued (0 before `start()` or after the node has left).
   */
  routeFound(urls: readonly string[]): number {
    if (this.settings === undefined || this.left || urls.length === 0) return 0;
    this.sendsBegun++; // a crawlDone() reading Redis meanwhile must not call the crawl drained
    return this.routeSeeds(urls, 1);
  }

  /** Queues seeds (raw URLs) in the outbox for their owning slots' inboxes; returns how many were accepted. */
  private routeSeeds(urls: readonly string[], priority: number): number {
    const by = new Map<number, { url: string; host: string; priority: number }[]>();
    let n = 0;
    for (const raw of urls) {
      const c = canonicalKey(raw, undefined, this.settings!.grouping);
      if (c === null) continue;
      const s = this.slotOfKey(c.key);
      let list = by.get(s);
      if (list === undefined) by.set(s, (list = []));
      list.push({ url: c.url, host: c.hostGroup, priority });
      n++;
    }
    for (const [s, list] of by) this.outbox.push(s, 's', encodeSeeds(list), list.length);
    return n;
  }

  /** Whether `addSeeds` takes seeds: after `start()`, until the node begins to leave. */
  get acceptsSeeds(): boolean {
    return this.settings !== undefined && !this.leaving;
  }

  /**
   * Seeds (canonical URLs the caller's scope took) given while the node runs: records them
   * among the scope seeds, then routes them to their slots' inboxes — `scopeSeeds`, then
   * `seed`, as at the start of a run. With `scope: false` they are routed only, not recorded:
   * they do not widen a scope drawn from the seeds (the sitemaps robots.txt names are sent so).
   * Until the send settles the campaign is not counted drained (a slot whose inbox is about to
   * get a seed is not idle yet) and the node does not leave (after `stop()` or the campaign's
   * end). Resolves with how many were routed; whether each was new is known only to its slot's
   * frontier.
   *
   * Recording the scope seeds is the step that can fail (a Redis reply error): nothing was
   * routed, and the run ends — the node stops (final checkpoints, as at `stop()`) and `run()`
   * rejects with that error once it has left. The returned promise rejects with it too; a caller
   * that follows `run()` may ignore it. Once routed, the seeds are queued in the outbox like
   * routed links: a failed flush leaves them there and the loop sends them again (so a send with
   * `scope: false` does not fail). While Redis is unreachable the send waits for it, as every
   * other call does.
   * @param options.scope record the seeds among the crawl's scope seeds (default true).
   * @throws InvalidStateError (synchronously) before `start()` or once the node has begun to leave.
   */
  addSeeds(urls: readonly string[], options: { readonly scope?: boolean } = {}): Promise<number> {
    if (!this.acceptsSeeds) throw new InvalidStateError(`ClusterNode.addSeeds: ${this.settings === undefined ? 'the node has not started' : 'the node is leaving the crawl'}`);
    const scope = options.scope ?? true;
    this.sendsBegun++;
    const send = (async (): Promise<number> => {
      if (scope) await this.scopeSeeds(urls);
      const n = this.routeSeeds(urls, 1);
      try {
        await this.outbox.flush(true);
      } catch {
        // Still queued in the outbox: the loop sends them again with the routed links, and the
        // campaign is not drained while the outbox holds them.
      }
      return n;
    })();
    const settled: Promise<void> = send.then(
      () => undefined,
      (err: unknown) => {
        this.sendFailure ??= { err };
        this.stop();
      },
    );
    this.sending.add(settled);
    void settled.then(() => this.sending.delete(settled));
    return send;
  }

  /** Asks the node to stop: it hands its slots back (final checkpoints) and leaves. */
  stop(): void {
    this.stopping = true;
    this.wakeUp?.();
    this.stopAsked?.();
  }

  /** Runs until `stop()` or, for a campaign, until the whole crawl is drained. */
  async run(): Promise<ClusterNodeStats> {
    // The loop itself waits on Redis while it is away (its commands queue), so a timer notices the pause.
    const watch = setInterval(() => this.watchDispatch(), Math.max(50, this.o.heartbeatTtlMs / 20));
    watch.unref();
    // A stop is heard by the loop between its Redis calls; over a frozen link (a partition: no
    // answer, no reset) it never got there and the node never left (Ctrl-C did nothing for 40 s
    // and more). A TTL after the stop the loop is left behind: shutdown's own waits on Redis are
    // bounded, and closing the connection fails the calls the loop still waits on.
    let stopTimer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      this.stopAsked = () => (stopTimer ??= setTimeout(resolve, this.o.heartbeatTtlMs));
      if (this.stopping) this.stopAsked();
    });
    const looping = this.loop();
    try {
      await Promise.race([looping, gaveUp]);
    } finally {
      clearInterval(watch);
      clearTimeout(stopTimer);
      this.stopAsked = undefined;
      looping.catch(() => undefined);
    }
    await this.shutdown();
    if (this.fatal !== undefined) throw this.fatal.err;
    if (this.sendFailure !== undefined) throw this.sendFailure.err;
    return this.stats();
  }

  /** Tells `onPause` when the node's right to dispatch (`Heartbeat.canDispatch`) is lost or back. */
  private watchDispatch(): void {
    const can = this.hb.canDispatch();
    if (!can && this.pausedAt === undefined && !this.hb.expired) {
      this.pausedAt = this.now();
      this.o.onPause?.({ kind: 'paused', sinceRenewalMs: this.hb.age(), error: this.lastRedisError });
    } else if (can && this.pausedAt !== undefined) {
      const pausedMs = this.now() - this.pausedAt;
      this.pausedAt = undefined;
      this.lastRedisError = undefined;
      this.o.onPause?.({ kind: 'resumed', pausedMs });
    }
  }

  /** The node's work until it stops, drains or fails: heartbeat, coordination, inboxes, checkpoints, dispatch. */
  private async loop(): Promise<void> {
    const ttl = this.o.heartbeatTtlMs;
    let lastBeat = this.now();
    let lastPoll = -Infinity;
    let lastCoord = -Infinity;
    let lastDone = -Infinity;
    let lastPublish = -Infinity;
    while (!this.stopping) {
      const now = this.now();
      if (now - lastBeat >= ttl / 4) {
        lastBeat = now;
        if (!(await this.hb.beat()) && this.hb.expired) await this.rejoin();
      }
      try {
        if (now - lastCoord >= Math.min(1_000, ttl / 4)) {
          lastCoord = now;
          const round = await coordinate(this.redis, this.keys, this.nodeId, this.settings!.slots, ttl);
          // The coordinator gives back the tokens of nodes that died holding them.
          if (round.leader && this.budgets.length > 0) await reclaimBudgets(this.redis, this.keys);
        }
        if (now - lastPoll >= this.o.pollMs) {
          lastPoll = now;
          await this.poll();
        }
        await this.pump();
        if (this.outbox.size > 0) await this.outbox.flush();
        this.checkpointDue();
        if (now - lastPublish >= 1_000) {
          lastPublish = now;
          await this.publish();
        }
        if (now - lastDone >= 500) {
          lastDone = now;
          // `meguri cluster limit` may have changed the page or request limit.
          const recorded = await readCrawl(this.redis, this.keys);
          if (recorded !== undefined) await this.takeLimits(recorded.limits);
          await this.shareDepthBinds();
          if (this.budgets.length > 0 && (await this.budgetReached())) break;
          if (this.o.campaign && (await this.crawlDone())) break;
        }
        await this.syncBudgets(now);
      } catch (err) {
        if (err instanceof StaleEpochError) continue;
        if (this.failed(err)) break;
        // Redis unreachable, a reply error, a store hiccup: back off; the heartbeat gate stops dispatching.
        await sleep(Math.min(1_000, ttl / 10));
        continue;
      }
      if (this.fatal !== undefined) break; // a periodic checkpoint in the background met one
      this.dispatch();
      await this.idle();
    }
  }

  // ───────────── slot life cycle ─────────────

  private async poll(): Promise<void> {
    // With the records, the crawl record's incarnation, as checkpoints are to carry it: another
    // node may have created the record again after Redis lost its data (absent: not yet;
    // `restore` creates it). Sent together: one round trip.
    const [recs, created] = await Promise.all([readSlots(this.redis, this.keys, this.settings!.slots), readCrawlCreated(this.redis, this.keys)]);
    this.crawlCreated = created ?? this.crawlCreated;
    // Slots given to this node open together: a joiner takes ⌊S/N⌋ at once, and opening them one
    // by one (read, recover, inbox reset each) held every one of them until the last was open —
    // measured 1.6 s of a 1.8 s hand-off pause for 21 slots on a loaded 2-core machine.
    const opening: Promise<void>[] = [];
    for (const r of recs) {
      const mine = this.slots.get(r.slot);
      if (this.busy.has(r.slot)) continue;
      if (mine !== undefined && (r.owner !== this.nodeId || r.epoch !== mine.epoch)) {
        this.drop(r.slot); // moved on without us (expired, or fenced): no checkpoint
        if (r.owner !== this.nodeId) continue;
      }
      if (r.owner !== this.nodeId) continue;
      const cur = this.slots.get(r.slot);
      if (cur === undefined) {
        opening.push(this.open(r));
        continue;
      }
      // The record names another checkpoint than the one this owner had accepted, at the same
      // epoch: Redis went back (a restart from an older file, a failover to a replica that missed
      // the accept). The next period writes again, unchanged or not (`SlotState.written`).
      if (cur.written !== undefined && !this.committing.has(r.slot) && r.ckpt !== cur.accepted.rel) cur.written = undefined;
      if (r.want !== '' && !cur.moving) void this.handoff(cur);
    }
    if (opening.length > 0) await this.keepingAlive(Promise.all(opening));
  }

  /**
   * Awaits `work` (slot opens: checkpoint reads on a shared store, recoveries) while renewing the
   * heartbeat every ttl/4, as the loop does between its turns: the loop waits for the opens, and
   * a read stalled past the TTL (a network file system's hiccup, a big slot) let the entry
   * expire and the node drop every slot it held to rejoin (the review's script: one read
   * delayed 3 s under a 2-s TTL). A renewal that finds the entry expired is acted on by the
   * loop's next turn. A synchronous stretch (a slot's recovery itself) still holds the timer.
   * Renewals stop `KEEPALIVE_TTLS` TTLs into the wait: a read that never returns (a hard-mounted
   * share that hangs) would otherwise keep a node that does nothing else alive, holding its
   * slots from every other node for ever; past that it expires, as it did before.
   */
  private async keepingAlive<T>(work: Promise<T>): Promise<T> {
    const ttl = this.o.heartbeatTtlMs;
    const until = this.now() + KEEPALIVE_TTLS * ttl;
    const timer = setInterval(() => {
      if (this.now() < until) void this.hb.beat();
    }, ttl / 4);
    try {
      return await work;
    } finally {
      clearInterval(timer);
    }
  }

  private async open(r: SlotRecord): Promise<void> {
    this.busy.add(r.slot);
    try {
      let opened: OpenedSlot | undefined;
      /** Opened from the checkpoint the record names (not restored, rolled forward or fallen back). */
      let openedFromRecordCkpt = false;
      // A record naming no checkpoint while the store holds some: Redis lost the crawl's records.
      if (r.ckpt === '') opened = await this.restore(r);
      try {
        if (opened === undefined) {
          opened = await this.openFrom(r, r.ckpt);
          openedFromRecordCkpt = true;
        }
      } catch (err) {
        if (isMissing(err)) opened = await this.rollForward(r, err as Error);
        else if (!(err instanceof CorruptPartitionError) || r.prev === undefined) throw err;
        else opened = await this.fallBack(r, err);
      }
      const { state, source, shift } = opened;
      // A checkpoint written while its owner still dispatched (a periodic one a killed node left)
      // misses the fetches made after it, and so does no checkpoint at all for a slot that had an
      // owner before (epoch 1 is its first): every host waits one interval from now, so a host
      // whose crawl delay outlasts the takeover is not fetched again at once. A `stopped` one is
      // trusted only as the record's own, written by the owner just before this one (its epoch
      // the one before the record's): an owner between that opened it and was killed before
      // writing its own dispatched past it (a host fetched 0.8 s after that owner's last
      // request, against 8 s: test/cluster/takeover-hold.test.ts).
      const trusted = openedFromRecordCkpt && source?.meta.stopped === true && source.meta.epoch + 1 === r.epoch;
      if (source === undefined ? r.epoch > 1 : !trusted) {
        state.frontier.holdEveryHost(this.now());
        this.slotsHeld++;
      }
      try {
        // Reading resumes after the checkpoint's cursor: what the last owner applied after it is read again.
        await resetInbox(this.redis, this.keys, r.slot, state.cursor, this.nodeId);
      } catch (err) {
        state.free();
        throw err;
      }
      if (shift !== 0) this.clockShifts++;
      // Before the slot dispatches: a Retry-After its last owner heard binds here too.
      this.o.robots?.import(r.slot, (source?.meta.robots ?? []).map((e) => shiftRobotsSnapshot(e, shift)));
      this.slots.set(r.slot, state);
      // Rows refused under a lesson its last owner learned (lessons stay with their process): the
      // Engine queues again those no rule of its own refuses now — with the slot registered, so
      // its rules' questions about the slot's URLs (`frontierOf`) are answered. Nothing dispatches
      // before this returns (no await between).
      if (source !== undefined) {
        try {
          this.o.opened?.(r.slot, state.frontier);
        } catch (err) {
          this.slots.delete(r.slot);
          state.free();
          throw err;
        }
      }
    } finally {
      this.busy.delete(r.slot);
    }
  }

  /**
   * Reads the checkpoint `rel` ('' = none: an empty slot) and builds the slot's state from it,
   * at the record's epoch and the checkpoint's inbox cursor unless `at` says otherwise (`read`: the
   * checkpoint as the caller already read it).
   */
  private async openFrom(
    r: SlotRecord,
    rel: string,
    at?: { readonly epoch: number; readonly cursor: string },
    read?: { meta: SlotCheckpointMeta; partition: Uint8Array },
  ): Promise<OpenedSlot> {
    let source = read ?? (rel === '' ? undefined : await this.store.read(rel));
    if (source !== undefined && at !== undefined) source = { ...source, meta: { ...source.meta, cursor: at.cursor } };
    const s = this.settings!;
    const opts: Partial<FrontierOptions> = {
      // A fetch abandoned before it started (the node lost the right to dispatch) is reported
      // as a transport failure: with the state machine it is retried, never marked crawled.
      stateMachine: true,
      retryLimit: 8,
      ...this.o.frontier,
      grouping: s.grouping,
      politeness: { ...this.o.frontier.politeness, ...s.politeness },
      // Recorded limits hold on every node, whatever this one was given.
      ...admissionOf(s.limits),
      ...(s.limits['retryLimit'] !== undefined ? { retryLimit: s.limits['retryLimit'] } : {}),
      linkRouter: (ds) => this.route(r.slot, ds),
    };
    // The checkpoint's URLs enter this node now: each passes `admitted` like a seed or a link,
    // before the slot dispatches (the Engine learns every origin of their groups from them).
    // Its windows and holds were written on the last owner's clock: moved onto this one's.
    const shift = clockShiftMs(source?.meta, this.hb.clockOffset());
    const state = SlotState.open(this.o.crawl, r.slot, at?.epoch ?? r.epoch, source, opts, this.now(), this.o.admitted, shift);
    // A checkpoint's hosts keep the limits they were admitted under: the crawl's may have
    // changed since (`meguri cluster limit`). The depth cap is set again at every open; the URL
    // budget only when the checkpoint says it was written under another (a host's may have been
    // raised by its in-degree, which setting it again would undo).
    const { depthCap, urlBudget } = admissionOf(s.limits);
    const budgetMoved = urlBudget !== undefined && source?.meta.urlBudget !== undefined && source.meta.urlBudget !== urlBudget;
    if (source !== undefined && (depthCap !== undefined || budgetMoved)) {
      state.frontier.setAdmission({ ...(depthCap !== undefined ? { depthCap } : {}), ...(budgetMoved ? { urlBudget } : {}) }, this.now());
    }
    state.accepted = { rel, cursor: state.cursor };
    return { state, source, shift };
  }

  /**
   * The slot's current checkpoint failed validation: opens the previous one instead and points
   * the slot record back at it (fenced: only this owner, at this epoch, while the record still
   * names the damaged one). Nothing is lost: the inbox is kept from the previous checkpoint's
   * cursor on (the commit trims only behind it), so every link sent to the slot since is applied
   * again, and every fetch whose outcome only the damaged one held is repeated — as after a crash.
   * A damaged previous one too ends the run with the first damage (`CorruptPartitionError`).
   */
  private async fallBack(r: SlotRecord, damage: CorruptPartitionError): Promise<OpenedSlot> {
    const prev = r.prev!;
    let opened: OpenedSlot;
    try {
      opened = await this.openFrom(r, prev.ckpt);
    } catch (err) {
      throw err instanceof CorruptPartitionError ? damage : err;
    }
    const moved = Number(await FALLBACK.run(this.redis, [this.keys.slot(r.slot)], [r.epoch, this.nodeId, r.ckpt]));
    if (moved !== 1) {
      opened.state.free();
      throw new StaleEpochError(r.slot, r.epoch);
    }
    this.checkpointFallbacks++;
    this.o.onCheckpointFallback?.({ slot: r.slot, epoch: r.epoch, damaged: r.ckpt, used: prev.ckpt, error: damage });
    return opened;
  }

  /**
   * The slot's record names no checkpoint. When the store holds checkpoints of the slot written
   * under an earlier incarnation of the crawl record (`crawlCreated`: Redis lost its data, and
   * the record was created again — here, from the store, when it is missing), opens the newest
   * that validates — a damaged one is skipped, the next older tried — instead of an empty slot
   * that would forget every URL the slot had. The record is moved past every epoch in the store
   * and pointed at it (fenced `ADOPT`), and the inbox is read from its start: the stream it was
   * taken from is gone, and an entry applied twice only admits known URLs again. What is lost is
   * what only Redis held: links routed to the slot and not yet applied. A checkpoint of the
   * record's own incarnation is a write that crashed before its acceptance (or written by a build
   * without incarnations): never opened, as before. Undefined when nothing is to be restored.
   * Every restorable checkpoint damaged ends the run with the newest's damage
   * (`CorruptPartitionError`), as a damaged checkpoint without a fallback does.
   */
  private async restore(r: SlotRecord): Promise<OpenedSlot | undefined> {
    const found = await this.store.checkpoints(r.slot);
    if (found.length === 0) return undefined;
    let created = await readCrawlCreated(this.redis, this.keys);
    if (created === undefined) {
      // Gone with the slots: created again from the store's copy of the settings (or, from a
      // store without one, from the settings this node runs with — never the defaults).
      const joined = await joinStoredCrawl(this.redis, this.keys, this.store, this.settings!);
      if (joined.restored !== undefined) this.o.onStoreRestore?.({ kind: 'settings', file: joined.restored });
      created = joined.createdAt;
    }
    this.crawlCreated = created;
    // A checkpoint of the record's own incarnation is passed over (a write that crashed before its acceptance).
    const { opened, epoch, used, skipped } = await this.adoptNewest(r, found, '', (meta) =>
      meta.crawlCreated === undefined || meta.crawlCreated === created ? undefined : '0-0',
    );
    if (opened !== undefined) {
      // The budgets lived in Redis only: the slot's counts come back with it.
      if (this.budgets.length > 0) await restoreBudgetCounts(this.redis, this.keys, opened.state.counted);
      this.o.onStoreRestore?.({ kind: 'slot', slot: r.slot, epoch, used, skipped });
      return opened;
    }
    // Nothing of an earlier incarnation opened: damage matters only if the store holds no
    // checkpoint of this one (which would explain the empty record).
    if (skipped.length > 0 && skipped.length === found.length) throw skipped[0]!.error;
    return undefined;
  }

  /**
   * The slot's record names a checkpoint the store does not hold: Redis came back from an older
   * snapshot (a restart from an older RDB file, a restored backup, a failover to a replica that
   * lagged), and pruning — which keeps a slot's current and previous checkpoints only — removed
   * the one it names since. Opens the newest checkpoint the store holds of the slot that sorts
   * after it and validates (a damaged one skipped for the next older) — or, when the store holds
   * none after it (the store is the one behind: restored from a backup), the newest before it —
   * moves the record past every epoch in the store and points it there (fenced `ADOPT`, while
   * the record still names the missing one). The inbox is read from the record's cursor when it
   * is below that checkpoint's: the record came back with its stream, whose entries past its
   * cursor are either ones the checkpoint applied (applied again: a known URL admitted again
   * changes nothing) or links sent since — which a failover to a replica whose clock is behind
   * numbers below the checkpoint's cursor, where a read after it would never see them. What is lost is what only Redis held after the snapshot: links routed to the slot and
   * not applied. Before, the open failed on the missing file at every poll: the slot never opened
   * and a campaign never ended. No checkpoint of the slot at all: `missing` is thrown.
   */
  private async rollForward(r: SlotRecord, missing: Error): Promise<OpenedSlot> {
    const named = r.ckpt.slice(r.ckpt.lastIndexOf('/') + 1);
    const all = await this.store.checkpoints(r.slot);
    const newer = all.filter(({ rel }) => rel.slice(rel.lastIndexOf('/') + 1) > named);
    const found = newer.length > 0 ? newer : all;
    if (found.length === 0) throw missing;
    const from = r.cursor || '0-0';
    const { opened, epoch, used, skipped } = await this.adoptNewest(r, found, r.ckpt, (meta) => (compareIds(meta.cursor, from) <= 0 ? meta.cursor : from));
    if (opened === undefined) throw skipped[0]!.error;
    this.o.onStoreRestore?.({ kind: 'slot', slot: r.slot, epoch, used, skipped });
    return opened;
  }

  /**
   * Opens the newest of the store's checkpoints `found` (newest first) that `cursorOf` takes
   * (the inbox cursor to read on from; undefined passes it over) and that validates — a damaged
   * one is skipped for the next older — at an epoch past every one of them, and adopts it (fenced
   * `ADOPT`: only the owner at its epoch, only while the record still names `named`, '' for none).
   * Counted in `slotsRestored`. Nothing opened: `opened` undefined, with the damaged ones skipped.
   */
  private async adoptNewest(
    r: SlotRecord,
    found: readonly { readonly rel: string; readonly epoch: number }[],
    named: string,
    cursorOf: (meta: SlotCheckpointMeta) => string | undefined,
  ): Promise<{ opened: OpenedSlot | undefined; epoch: number; used: string; skipped: { rel: string; error: Error }[] }> {
    const epoch = Math.max(r.epoch, found[0]!.epoch) + 1;
    const skipped: { rel: string; error: Error }[] = [];
    for (const { rel } of found) {
      let opened: OpenedSlot;
      let cursor: string | undefined;
      try {
        const read = await this.store.read(rel);
        cursor = cursorOf(read.meta);
        if (cursor === undefined) continue;
        opened = await this.openFrom(r, rel, { epoch, cursor }, read);
      } catch (err) {
        if (!(err instanceof CorruptPartitionError)) throw err;
        skipped.push({ rel, error: err });
        continue;
      }
      const adopted = Number(await ADOPT.run(this.redis, [this.keys.slot(r.slot)], [r.epoch, this.nodeId, epoch, rel, opened.state.applied, named, cursor]));
      if (adopted !== 1) {
        opened.state.free();
        throw new StaleEpochError(r.slot, r.epoch);
      }
      this.slotsRestored++;
      return { opened, epoch, used: rel, skipped };
    }
    return { opened: undefined, epoch, used: '', skipped };
  }

  private drop(slot: number): void {
    const s = this.slots.get(slot);
    if (s === undefined) return;
    this.slots.delete(slot);
    s.free();
  }

  /**
   * Hand-off: stop dispatching the slot, let its sent fetches finish (bounded), flush,
   * checkpoint and release. Starts still waiting at the IP gate are abandoned there unsent
   * (`fetchOne`); sent fetches still out at the bound are cut (`drain`), and the checkpoint
   * counts them in `refetch`.
   */
  private async handoff(s: SlotState): Promise<void> {
    s.moving = true;
    this.busy.add(s.slot);
    try {
      await this.committing.get(s.slot);
      await this.drain([s], this.now() + this.o.handoffDrainMs);
      await this.outbox.flush(true);
      this.o.faults?.('handoff-flushed', s.slot);
      const res = await this.commit(s, true);
      if (res === 1) {
        // Accepted but not released (the move was called off): the slot dispatches again, so the
        // accepted checkpoint must not say it stopped — a crash would leave the next owner
        // trusting windows that fetches after it moved on. One more, not marked, replaces it;
        // if that fails the slot is dropped, not resumed: its next open (here, from the marked
        // checkpoint at its own epoch) holds every host, and it lost nothing since it stopped.
        s.moving = false;
        try {
          await this.commit(s, false);
        } catch {
          this.drop(s.slot);
          return;
        }
      }
      if (res === 2) {
        this.handoffs++;
        this.drop(s.slot);
        // Its robots.txt entries are the next owner's now: the checkpoint just accepted holds them.
        // (A slot lost otherwise — fenced, expired — keeps them here: they may be newer than its
        // last checkpoint, and should it come back, the newer of the two is kept.)
        this.o.robots?.forget(s.slot);
      } else {
        this.resume(s);
      }
    } catch {
      this.resume(s);
    } finally {
      this.busy.delete(s.slot);
    }
  }

  /**
   * Waits until the moving slots' sent fetches are answered or `until` passes, then aborts the
   * rest: their outcomes are never told (a late answer would land after the checkpoint and be
   * lost with the slot anyway), their rows stay in flight and the checkpoint writes them
   * schedulable. The bound keeps a hand-off's pause — and a leaving node's exit — finite
   * whatever a server does; what it costs is exactly the cut fetches, re-fetched by the next
   * owner and counted (`ClusterCheckpoint.refetch`, `ClusterNodeStats.handoffRefetches`).
   */
  private async drain(list: readonly SlotState[], until: number): Promise<void> {
    // A robots.txt answer still out would miss the checkpoint: the next owner would ask again,
    // before a Retry-After in it ended. It is waited for like a page, within the same bound.
    const robots = this.o.robots;
    while (list.some((s) => s.sending > 0 || robots?.loading(s.slot) === true) && this.now() < until) await sleep(10);
    for (const s of list) if (s.sending > 0) s.abort.abort();
    // Let the aborted fetches unwind (park) before the snapshot: each is one microtask chain away.
    if (list.some((s) => s.abort.signal.aborted)) await sleep(0);
  }

  /**
   * A hand-off that did not happen: the slot dispatches again; fetches parked for it are sent
   * (those that never left) or told as transport failures (those the drain cut: retried).
   */
  private resume(s: SlotState): void {
    s.moving = false;
    if (s.abort.signal.aborted) s.abort = new AbortController();
    if (this.slots.get(s.slot) !== s) return;
    const now = this.now();
    for (const p of s.parked.splice(0)) {
      if (!p.sent) {
        s.unsent.push(p.req);
        continue;
      }
      // 'aborted': the crawler's doing, not the machine's — the IP's interval does not widen for it.
      s.frontier.report({ row: p.req.row, url: p.req.url, status: 0, error: 'hand-off abandoned', errorKind: 'aborted' }, now);
    }
    // A lesson lifted while the slot was moving passed it by (`reconsider`), and it does not
    // open again: its Refused rows are asked now, as at an open. A throw here would escape the
    // hand-off (it resumes from its catch): the rows then wait for the slot's next open.
    try {
      this.o.opened?.(s.slot, s.frontier);
    } catch {
      // see above
    }
  }

  /**
   * Writes and accepts one checkpoint of `s`; with `release`, hands the slot to its `want`.
   * Returns ACCEPT's answer (1 accepted, 2 accepted and released); a refusal drops the slot.
   */
  private async commit(s: SlotState, release: boolean, periodic = false): Promise<number> {
    const t0 = performance.now();
    const robots = this.o.robots?.export(s.slot);
    const clock = this.hb.clockOffset();
    const snap = periodic
      ? s.snapshot(robots, clock, this.crawlCreated, { nowMs: this.now(), maxAgeMs: IDLE_SLOT_CHECKPOINT_MS })
      : s.snapshot(robots, clock, this.crawlCreated);
    if (snap === null) {
      // The accepted checkpoint already holds this state: an idle slot writes nothing.
      this.checkpointsSkipped++;
      this.o.onCheckpointSkipped?.({ slot: s.slot, epoch: s.epoch, atMs: this.now() });
      return 1;
    }
    const urls = s.frontier.len(); // what the partition holds: read with it, before any await
    const snapshotMs = performance.now() - t0;
    const atMs = this.now();
    // A moving slot leaves with this checkpoint: sent fetches whose outcome is not in it are fetched again by the next owner.
    const refetch = s.moving ? s.unreported() : 0;
    this.o.faults?.('snapshot', s.slot);
    try {
      await this.outbox.flush(true); // sender barrier: every XADD issued before the snapshot
      const rel = await this.store.write(snap.meta, snap.partition);
      this.o.faults?.('checkpointed', s.slot);
      const res = await acceptCheckpoint(this.redis, this.keys.slot(s.slot), {
        epoch: s.epoch,
        nodeId: this.nodeId,
        ckpt: rel,
        cursor: snap.meta.cursor,
        applied: snap.meta.applied,
        release,
      });
      if (res === 0) {
        this.drop(s.slot);
        throw new StaleEpochError(s.slot, s.epoch);
      }
      this.checkpoints++;
      s.checkpointedAt = this.now();
      s.written = { stateKey: snap.stateKey, atMs };
      this.handoffRefetches += refetch;
      this.o.onCheckpoint?.({ slot: s.slot, epoch: s.epoch, seq: snap.meta.seq, atMs, bytes: snap.partition.length, urls, ms: s.checkpointedAt - atMs, snapshotMs, leaving: s.moving, refetch });
      this.o.faults?.('accepted', s.slot);
      // The checkpoint this one replaces is the slot's fallback now (`fallBack`): the inbox is
      // trimmed, and the store pruned, only behind it.
      const fallback = s.accepted;
      s.accepted = { rel, cursor: snap.meta.cursor };
      await settleInbox(this.redis, this.keys, s.slot, snap.acks, fallback.cursor);
      await this.store.prune(s.slot, fallback.rel === '' ? rel : fallback.rel).catch(() => {});
      return res;
    } catch (err) {
      if (this.slots.get(s.slot) === s) s.unsnapshot(snap);
      throw err;
    }
  }

  /**
   * The one place an error of the node's loop or of a background checkpoint is judged: a fatal
   * one (`isFatal`: a damaged checkpoint, a refused setting, a full disk — retried, it would fail
   * the same way at every turn while the node dispatched nothing) is kept for `run()` to end with
   * after the final checkpoints, as at `stop()`, and true is returned; any other is counted as the
   * store's or Redis's, to be retried.
   */
  private failed(err: unknown): boolean {
    if (isFatal(err)) {
      this.fatal ??= { err };
      return true;
    }
    if (err instanceof CheckpointStoreError) this.storeErrors++;
    else this.redisErrors++;
    return false;
  }

  /**
   * Starts the periodic checkpoints that are due, in the background: the snapshot is
   * synchronous, and the slot keeps dispatching and applying its inbox while the write and the
   * accept are under way (what it does meanwhile goes into the next checkpoint). Measured: an
   * awaited checkpoint round of 16 slots stalled a node's whole loop on its fsyncs.
   */
  private checkpointDue(): void {
    const now = this.now();
    for (const s of this.slots.values()) {
      if (s.moving || this.busy.has(s.slot) || this.committing.has(s.slot) || now - s.checkpointedAt < this.o.checkpointMs) continue;
      s.checkpointedAt = now; // a failed attempt is retried one period later, not at once
      const p = this.commit(s, false, true)
        .then(
          () => {},
          (err: unknown) => {
            // Refused (the slot was dropped): nothing to count. A fatal one (a full store) ends the run.
            if (!(err instanceof StaleEpochError) && this.failed(err)) this.wakeUp?.();
          },
        )
        .finally(() => this.committing.delete(s.slot));
      this.committing.set(s.slot, p);
    }
  }

  /**
   * Reads and applies new inbox entries of every running slot: one XREADGROUP naming every
   * running slot's stream (measured: a pipeline of one read per slot cost more node and Redis
   * CPU per page than the pages it fed once a node ran 16+ mostly quiet slots). Several streams
   * in one command needs one Redis: on a Redis Cluster every inbox is its own hash slot (its own
   * tag, so the inboxes spread), a multi-key command across them is refused (CROSSSLOT), and the
   * read would be one command per inbox — docs/CLUSTER.md "Redis Cluster" lists this with the
   * other changes one needs.
   */
  private async pump(): Promise<void> {
    await this.readInboxes(this.redis, undefined);
  }

  /** `pump`, blocking up to `ms` for the first entry, on a connection of its own (a blocked connection holds back every command queued behind it). */
  private async blockOnInboxes(ms: number): Promise<void> {
    if (this.blocker === undefined) {
      // Fails fast while Redis is away (the loop's own calls wait and retry with backoff).
      this.blocker = this.redis.duplicate({ maxRetriesPerRequest: 0, commandTimeout: ms + 1_000 });
      this.blocker.on('error', () => {});
    }
    try {
      if (!(await this.readInboxes(this.blocker, ms))) await sleep(ms);
    } catch {
      this.redisErrors++;
      await sleep(ms);
    }
  }

  /**
   * One XREADGROUP over the running slots' inboxes; false when no slot runs, or when the node may
   * not dispatch. A node whose last renewal is older than TTL/2 (paused, stalled, its entry maybe
   * expired) may have lost its slots without knowing: the group's position is shared, so a read
   * it made then took entries the slot's next owner, which reset the group to its checkpoint's
   * cursor, would never see — links lost (the review's script: a node stalled between its poll
   * and its read, woken after the takeover). So it reads nothing then, and a blocking read
   * waits no longer than the time left before TTL/2.
   */
  private async readInboxes(conn: Redis, blockMs: number | undefined): Promise<boolean> {
    if (!this.hb.canDispatch()) return false;
    if (blockMs !== undefined) {
      blockMs = Math.floor(Math.min(blockMs, this.o.heartbeatTtlMs / 2 - this.hb.age()));
      if (blockMs <= 0) return false;
    }
    const running = [...this.slots.values()].filter((s) => !this.busy.has(s.slot)).map((s) => s.slot);
    if (running.length === 0) return false;
    const keys = running.map((s) => this.keys.inbox(s));
    const args: (string | number)[] = ['GROUP', INBOX_GROUP, this.nodeId, 'COUNT', 1_000];
    if (blockMs !== undefined) args.push('BLOCK', blockMs);
    args.push('STREAMS', ...keys, ...keys.map(() => '>'));
    const res = (await conn.call('XREADGROUP', ...args)) as [string, InboxEntry[]][] | null;
    const got = new Map<number, InboxEntry[]>();
    for (const [key, entries] of res ?? []) if (entries.length > 0) got.set(running[keys.indexOf(key)]!, entries);
    if (this.o.beforeSeeds !== undefined && [...got.values()].some((es) => es.some(holdsSeeds))) {
      try {
        await this.o.beforeSeeds();
      } catch {
        // The entries are read: they are applied whatever the hook met (the scope catches up at its next poll).
      }
    }
    this.applyRead(got);
    return true;
  }

  private applyRead(got: Map<number, InboxEntry[]>): void {
    const now = this.now();
    for (const [slot, entries] of got) {
      const s = this.slots.get(slot);
      if (s === undefined) continue; // dropped while reading: the next owner resets the group
      s.apply(entries, now, this.o.admitted);
      this.applied += entries.length;
      this.o.faults?.('applied', slot);
    }
  }

  /** The frontier's link router: links of the slot itself stay; the rest go to their inboxes, one entry per target slot. */
  private route(from: number, ds: Discovery[]): readonly Discovery[] {
    const local: Discovery[] = [];
    let by: Map<number, Discovery[]> | undefined;
    const S = this.settings!.slots;
    for (const d of ds) {
      const t = d.key === undefined ? from : slotOfKey(d.key, 0, this.salt, S);
      if (t === from) {
        this.o.admitted?.(d.url);
        local.push(d);
        continue;
      }
      by ??= new Map();
      let list = by.get(t);
      if (list === undefined) by.set(t, (list = []));
      list.push(d);
    }
    if (by !== undefined) for (const [t, list] of by) this.outbox.push(t, 'l', encodeLinks(list), list.length);
    return local;
  }

  // ───────────── dispatch ─────────────

  private dispatch(): void {
    if (!this.hb.canDispatch()) return;
    const list = [...this.slots.values()].filter((s) => !s.moving);
    if (list.length === 0) return;
    // First what the node could not send while it was paused (their rows are in flight).
    for (const s of list) {
      while (s.unsent.length > 0 && this.inFlight < this.o.concurrency && this.budgetsAvailable()) {
        for (const b of this.budgets) b.take();
        void this.fetchOne(s, s.unsent.shift()!);
      }
    }
    let idleRound = 0;
    while (this.inFlight < this.o.concurrency && idleRound < list.length && this.budgetsAvailable()) {
      const s = list[this.rr++ % list.length]!;
      const req = this.busy.has(s.slot) ? undefined : s.frontier.dispatch(this.now());
      if (req === undefined) {
        idleRound++;
        continue;
      }
      idleRound = 0;
      for (const b of this.budgets) b.take();
      void this.fetchOne(s, req);
    }
  }

  /**
   * Makes the node's budgets those `limits` set: a new limit starts a budget, a changed one
   * moves its limit, a removed one gives its tokens back and ends it.
   */
  private async takeLimits(limits: Readonly<Record<string, number>>): Promise<void> {
    const was = this.settings?.limits;
    if (was !== undefined) {
      // The admission limits hold in every open slot from now on (a slot opened later takes them
      // at its open); a widened one admits what it parked.
      const next = admissionOf(limits);
      const prev = admissionOf(was);
      const change = {
        ...(next.depthCap !== undefined && next.depthCap !== prev.depthCap ? { depthCap: next.depthCap } : {}),
        ...(next.urlBudget !== undefined && next.urlBudget !== prev.urlBudget ? { urlBudget: next.urlBudget } : {}),
      };
      if (Object.keys(change).length > 0) {
        let released = 0;
        for (const s of this.slots.values()) if (!this.busy.has(s.slot)) released += s.frontier.setAdmission(change, this.now());
        if (released > 0) this.wakeUp?.();
      }
    }
    for (const kind of Object.keys(BUDGET_LIMITS) as BudgetKind[]) {
      const raw = limits[BUDGET_LIMITS[kind]];
      const limit = raw !== undefined && Number.isFinite(raw) ? raw : undefined;
      const i = this.budgets.findIndex((b) => b.kind === kind);
      if (i < 0) {
        if (limit !== undefined) this.budgets.push(new CrawlBudget(this.redis, this.keys, this.nodeId, kind, limit));
      } else if (limit === undefined) {
        const [gone] = this.budgets.splice(i, 1);
        await gone!.release();
      } else this.budgets[i]!.limit = limit;
    }
    if (this.settings !== undefined) this.settings = { ...this.settings, limits: { ...limits } };
  }

  /**
   * A fetched page whose depth falls below the cap is fetched again for its links in a round at
   * its frontier's idle point, when at least as many URLs are parked past the cap as the round
   * would fetch (`relinkRoundRuns`); a slot's page may lead into another slot's parked URLs, so
   * the rule is applied to the crawl's sums. The first node to see a slot park a URL sets the
   * crawl's flag (until then one GET per look); from then on every node, at each look (every
   * 0.5 s), writes its slots' counts (`Frontier.relinkCounts`, O(rows) each) to the crawl's
   * hash, reads every slot's back, and tells each open slot the sums (`bindDepthCap`) and runs
   * its idle point (so a slot the node does not dispatch from still gets its round).
   */
  private async shareDepthBinds(): Promise<void> {
    if (!this.depthBinds && !(await this.announceDepthBinds()) && (await this.redis.get(this.keys.depthBinds)) === null) return;
    this.depthBinds = true;
    const p = this.redis.pipeline();
    this.publishRelinkCounts(p);
    p.hgetall(this.keys.relinkCounts);
    const res = (await p.exec()) ?? [];
    const [err, all] = res[res.length - 1] ?? [];
    if (err) throw err;
    const crawl = sumRelinkCounts(all as Record<string, string>);
    let queued = 0;
    for (const s of this.slots.values()) {
      if (s.moving || this.busy.has(s.slot)) continue;
      s.frontier.bindDepthCap(this.now(), crawl);
      queued += s.frontier.relinkWhenIdle(this.now());
    }
    if (queued > 0) this.wakeUp?.();
  }

  /** Adds to `p` the write of this node's slots' relink counts (nothing until the flag is seen). */
  private publishRelinkCounts(p: ChainableCommander): void {
    if (!this.depthBinds || this.slots.size === 0) return;
    const fields: Record<string, string> = {};
    for (const s of this.slots.values()) {
      const c = s.frontier.relinkCounts();
      fields[String(s.slot)] = `${c.parked} ${c.marked}`;
    }
    p.hset(this.keys.relinkCounts, fields);
  }

  /** Sets the crawl's depth-binds flag when a slot here has parked a URL past the cap; returns whether it did. */
  private async announceDepthBinds(): Promise<boolean> {
    if (![...this.slots.values()].some((s) => s.frontier.depthCapBinds)) return false;
    await this.redis.set(this.keys.depthBinds, '1');
    return true;
  }

  /** Whether every crawl-wide budget has a token free here (true without budgets). */
  private budgetsAvailable(): boolean {
    for (const b of this.budgets) if (!b.available) return false;
    return true;
  }

  /** Whether a slot here has a URL due now (so tokens taken now would be used at once). */
  private hasDue(now: number): boolean {
    if (!this.hb.canDispatch()) return false;
    for (const s of this.slots.values()) {
      if (s.moving || this.busy.has(s.slot)) continue;
      const at = s.frontier.nextEligible();
      if (at !== undefined && at <= now) return true;
    }
    return false;
  }

  /**
   * Reports spent tokens and holds as many as this node can dispatch now: its free fetch slots
   * while a URL is due, none otherwise (tokens held by a node whose hosts wait would starve the
   * others). One round trip per budget, only when something changes.
   */
  private async syncBudgets(now: number): Promise<void> {
    if (this.budgets.length === 0) return;
    const want = this.hasDue(now) ? Math.max(0, this.o.concurrency - this.inFlight) : 0;
    for (const b of this.budgets) await b.sync(want, now, this.o.pollMs);
  }

  /** A crawl-wide budget is spent and none of this node's fetches are out: the node stops (`stopReason`). */
  private async budgetReached(): Promise<boolean> {
    for (const b of this.budgets) {
      await b.refresh();
      if (b.reached()) {
        this.budgetSpent = b.kind;
        return true;
      }
    }
    return false;
  }

  /** Why `run()` ended: a crawl-wide budget spent ('maxPages' / 'maxRequests'), or undefined (drained or stopped). */
  get stopReason(): 'maxPages' | 'maxRequests' | undefined {
    return this.budgetSpent === undefined ? undefined : BUDGET_LIMITS[this.budgetSpent];
  }

  private async fetchOne(s: SlotState, req: FetchRequest): Promise<void> {
    this.inFlight++;
    s.inFlight++;
    let outcome: Outcome;
    let startedAt = this.now();
    let sent = false;
    let approvedAt: number | undefined;
    // Asked right before the request goes (after the wait at the gate, which may outlive the
    // right to dispatch): the node paused, the slot moved or is moving — then it never leaves.
    const mayGo = (): boolean => {
      // Read before the check: a stall between the two can only make the check fail.
      const at = this.now();
      if (!this.hb.canDispatch() || this.slots.get(s.slot) !== s || s.moving) return false;
      approvedAt = at;
      sent = true;
      s.sending++;
      return true;
    };
    try {
      // The fetcher's own timeouts bound the request (`--timeout`, `http.totalTimeoutMs`), as in a
      // single process; a fixed 2-minute abort here cut every longer --timeout short, counted
      // from dispatch, so a wait at the IP gate left the request less than it was given.
      const r = await this.gatedFetch(req, s.abort.signal, mayGo);
      outcome = r.outcome;
      startedAt = r.startedAt;
      if (r.gated && this.slots.get(s.slot) === s && startedAt > req.dispatchedAtMs) s.frontier.recordStart(req.host, req.ip, startedAt, true);
    } catch (err) {
      outcome = { row: req.row, url: req.url, status: 0, error: String(err), errorKind: 'network' };
    }
    s.inFlight--;
    this.inFlight--;
    if (sent) s.sending--;
    // The slot may have been handed off or dropped meanwhile: then its state is gone, and the
    // URL is fetched again by the next owner (it was in flight at the checkpoint).
    if (this.slots.get(s.slot) === s) {
      if (s.moving && (!sent || s.abort.signal.aborted)) {
        // Leaving with the slot: never sent, or cut by the drain bound. Not told (see `drain`).
        s.parked.push({ req, sent });
        for (const b of this.budgets) b.complete(false);
      } else if (!sent) {
        // Never sent, the slot still ours: the node paused (or its gate failed) while the request
        // waited. No answer to tell: a transport failure here cost the URL a retry and widened
        // its host and IP (and, through the gate, every node's view of the IP) for nothing.
        s.unsent.push(req);
        for (const b of this.budgets) b.complete(false);
      } else {
        // Unshaped (a node used on its own), a 304 of a sitemap is still no page.
        const shaped = this.o.shape !== undefined ? this.o.shape(req, outcome) : isUnchangedSitemap(req, outcome) ? { ...outcome, sitemap: true } : outcome;
        const ok = countsAsPage(shaped);
        for (const b of this.budgets) b.complete(b.kind === 'requests' || ok);
        s.counted.requests++;
        if (ok) s.counted.pages++;
        s.frontier.report(shaped, this.now());
        // The outcome may have moved the slot's view of the IP's interval: the gate spaces by it from now on.
        if (req.ip !== undefined) this.gate?.note(req.ip, s.frontier.ipIntervalMs(req.ip), String(s.slot));
        this.pages++;
        this.o.onPage?.({ slot: s.slot, epoch: s.epoch, request: req, outcome, startedAtMs: startedAt, approvedAtMs: approvedAt });
      }
    } else {
      // The slot moved on: its next owner fetches the URL again, on its own token.
      for (const b of this.budgets) b.complete(false);
    }
    this.wakeUp?.();
  }

  /**
   * Fetches `req` with the node's fetcher behind the process-wide IP gate (and, for an IP
   * another node fetches from too, the Redis gate): the IP is held until the request is seen
   * leaving, and `startedAt` is that moment. The start is spaced by the largest current view of
   * the IP's interval (this slot's frontier's adaptive per-IP interval among the others').
   * `mayGo` is asked after the wait at the gate; false abandons the fetch unstarted (it throws).
   * The Engine sends its robots.txt requests through `gated` too, so they are spaced against
   * the other nodes' starts like any page.
   */
  async gatedFetch(req: FetchRequest, signal: AbortSignal, mayGo: () => boolean = () => true): Promise<{ outcome: Outcome; startedAt: number; gated: boolean }> {
    if (this.gate === undefined || req.ip === undefined) {
      if (!mayGo()) throw new Error('slot no longer dispatchable');
      return { outcome: await this.o.fetcher.fetch(req, signal), startedAt: this.now(), gated: false };
    }
    const r = await this.gated(req.ip, req.url, () => this.o.fetcher.fetch(req, signal), mayGo, req.host);
    return { outcome: r.value, startedAt: r.startedAt, gated: true };
  }

  /**
   * `gatedFetch` for any request to `url` at `ip` that `send` makes (the Engine's robots.txt
   * loads). `group` is the URL's host group when the caller knows it (else it is derived from
   * `url`): its slot's frontier, when this node runs the slot, gives the view of the IP's interval.
   */
  async gated<T>(ip: string, url: string, send: () => Promise<T>, mayGo: () => boolean = () => true, group?: string): Promise<{ value: T; startedAt: number }> {
    if (this.gate === undefined) return { value: await send(), startedAt: this.now() };
    const view = this.ipView(ip, group ?? canonicalKey(url, undefined, this.settings?.grouping)?.hostGroup);
    const ticket = await this.gate.acquire(ip, view.intervalMs, view.source);
    if (!mayGo()) {
      this.gate.release(ticket, this.now());
      throw new Error('slot no longer dispatchable');
    }
    // Hold the IP until the request is seen leaving (or ends without leaving).
    const watch = this.sends.expect(url);
    let pending: Promise<T>;
    try {
      pending = send();
    } catch (err) {
      pending = Promise.reject(err);
    }
    const startedAt = await Promise.race([watch.sent, pending.then(this.now, this.now)]);
    watch.cancel();
    this.gate.release(ticket, startedAt);
    return { value: await pending, startedAt };
  }

  /**
   * A view of `ip`'s interval for a start of host group `group`: the group's slot frontier's
   * (its adaptive per-IP interval, issue 22), named by the slot, when this node runs that slot;
   * the crawl's IP floor otherwise.
   */
  private ipView(ip: string, group: string | undefined): { intervalMs: number; source: string } {
    if (group !== undefined && this.settings !== undefined) {
      const slot = slotOf(this.o.crawl, group, this.settings.slots, this.salt);
      const f = this.slots.get(slot)?.frontier;
      if (f !== undefined) return { intervalMs: f.ipIntervalMs(ip), source: String(slot) };
    }
    return { intervalMs: this.ipFloorMs, source: '' };
  }

  private async idle(): Promise<void> {
    let wait = this.o.pollMs;
    const now = this.now();
    // Without a token a due URL waits for the next sync (pollMs), not in a spin.
    if (this.hb.canDispatch() && this.inFlight < this.o.concurrency && this.budgetsAvailable()) {
      for (const s of this.slots.values()) {
        if (s.moving) continue;
        const at = s.frontier.nextEligible();
        if (at !== undefined) wait = Math.min(wait, Math.max(0, at - now));
      }
    }
    if (wait <= 0) return;
    if (this.inFlight === 0 && this.outbox.size === 0 && wait >= IDLE_BLOCK_MS) {
      // Nothing can wake the node but an inbox entry, and nothing is due for a while: wait on
      // the inboxes themselves. A fetch due sooner is waited for with a timer instead: Redis
      // times a BLOCK out on its own tick (measured: 30 ms blocks ended after ~100 ms at the
      // default hz 10), which would make every short politeness interval late by up to a tick.
      await this.blockOnInboxes(IDLE_BLOCK_MS);
      return;
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.min(wait, 50));
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wakeUp = done;
    });
    this.wakeUp = undefined;
  }

  // ───────────── ending ─────────────

  /** Whether every slot is owned, idle at its owner and has no unread inbox entry. */
  private async crawlDone(): Promise<boolean> {
    for (const s of this.slots.values()) if (!s.idle() || s.moving) return false;
    if (this.inFlight > 0 || this.outbox.size > 0 || this.sending.size > 0) return false;
    const begun = this.sendsBegun;
    await this.publishIdle();
    const r = await readDrained(this.redis, this.keys, this.settings!.slots);
    // Seeds were sent meanwhile: what was read may predate their inbox entries.
    if (this.sending.size > 0 || this.sendsBegun !== begun) return false;
    // A flag this node has not seen yet (`shareDepthBinds`: its own counts are not written yet).
    if (!this.depthBinds && r.depthBinds) return false;
    return r.drained;
  }

  /** Marks this node's slots idle (with the epoch and the cursor they are idle at) or busy, after their relink counts. */
  private async publishIdle(): Promise<void> {
    const p = this.redis.pipeline();
    this.publishRelinkCounts(p);
    for (const s of this.slots.values()) p.hset(this.keys.slot(s.slot), 'idle', s.idle() ? `${s.epoch}` : '', 'idleCursor', s.cursor);
    await p.exec();
  }

  private async publish(): Promise<void> {
    const st = this.stats();
    await this.redis.set(this.keys.nodeInfo(this.nodeId), JSON.stringify({ ...st, at: Date.now() }), 'PX', this.o.heartbeatTtlMs * 3);
    const p = this.redis.pipeline();
    for (const s of this.slots.values()) if (!s.idle()) p.hset(this.keys.slot(s.slot), 'idle', '');
    await p.exec();
  }

  private async rejoin(): Promise<void> {
    const slotsDropped = this.slots.size;
    // Held paused until the new entry is in: the new heartbeat has no renewal yet, which the
    // dispatch watch would otherwise report as a fresh pause.
    this.pausedAt ??= this.now();
    for (const slot of [...this.slots.keys()]) this.drop(slot);
    // The entry expired, so the coordinator gives this node's tokens back.
    for (const b of this.budgets) b.forget();
    this.hb = new Heartbeat(this.redis, this.keys, this.nodeId, this.o.heartbeatTtlMs, this.now);
    // Cleared in the same turn as the renewal's answer, so no watch tick sees it first (it would say 'resumed').
    if (await this.hb.beat()) {
      this.pausedAt = undefined;
      this.lastRedisError = undefined;
    }
    this.o.onPause?.({ kind: 'rejoined', slotsDropped });
  }

  private async shutdown(): Promise<void> {
    // Every wait on Redis below ends within a TTL (a frozen link neither answers nor fails):
    // what was not accepted by then is what a killed node leaves — the next owner recovers from
    // the last accepted checkpoint once the heartbeat expires.
    const deadline = performance.now() + this.o.heartbeatTtlMs;
    // Seeds sent while running reach their inboxes first (the connection closes below).
    this.leaving = true;
    await settleBefore(Promise.all(this.sending), deadline);
    // Leaving with every slot: the same bounded drain as a hand-off.
    const leaving = [...this.slots.values()];
    for (const s of leaving) s.moving = true;
    await this.drain(leaving, this.now() + this.o.handoffDrainMs);
    await settleBefore(Promise.all(this.committing.values()), deadline);
    const written = new Set<number>();
    for (const s of leaving) {
      if (this.slots.get(s.slot) !== s) continue;
      const done = await settleBefore(
        this.commit(s, false).then(
          () => true,
          (err: unknown) => {
            // Fenced or Redis gone: the next owner recovers from the last accepted checkpoint. The
            // store full (fatal): the same, and `run()` says why the final checkpoint is missing.
            if (isFatal(err)) this.fatal ??= { err };
            return false;
          },
        ),
        deadline,
      );
      if (done === true) written.add(s.slot);
    }
    await settleBefore(this.leaveTable(written), deadline);
    for (const slot of [...this.slots.keys()]) this.drop(slot);
    this.left = true;
    this.gate?.close();
    this.sends.close();
    this.blocker?.disconnect();
    if (this.ownsRedis) this.redis.disconnect();
  }

  /** Shutdown's last words to Redis: idle marks, relink counts, budgets given back, the heartbeat left. */
  private async leaveTable(written: ReadonlySet<number>): Promise<void> {
    try {
      // Before a slot that parked a URL past the depth cap is marked idle (see crawlDone).
      if (!this.depthBinds && (await this.announceDepthBinds())) this.depthBinds = true;
      const p = this.redis.pipeline();
      this.publishRelinkCounts(p);
      // Leaving: unowned slots go to the remaining nodes at once, from the checkpoints just written.
      // A slot is marked idle only if its idle state is the accepted one: an older checkpoint
      // may hold work the next owner must do before the crawl can be called drained.
      for (const s of this.slots.values()) p.hset(this.keys.slot(s.slot), 'idle', s.idle() && written.has(s.slot) ? `${s.epoch}` : '');
      await p.exec();
      // The budgets' free tokens go back, and the spends not told yet are told (a fetch cut at
      // the drain bound keeps its token until the coordinator finds this node gone).
      for (const b of this.budgets) await b.release();
      await this.hb.leave();
    } catch {
      // Redis unreachable: the heartbeat expires instead
    }
  }

  /** The node's counters. */
  stats(): ClusterNodeStats {
    const now = this.now();
    const clock = this.hb?.clockOffset();
    if (now - this.rate.at >= 1_000) {
      this.rate = { at: now, pages: this.pages, perSec: this.rate.at === 0 ? 0 : ((this.pages - this.rate.pages) * 1000) / (now - this.rate.at) };
    }
    return {
      nodeId: this.nodeId,
      slots: [...this.slots.keys()].sort((a, b) => a - b),
      moving: [...this.slots.values()].filter((s) => s.moving).map((s) => s.slot),
      pages: this.pages,
      pagesPerSec: this.rate.perSec,
      inFlight: this.inFlight,
      linksRouted: this.outbox?.links ?? 0,
      entriesApplied: this.applied,
      checkpoints: this.checkpoints,
      checkpointsSkipped: this.checkpointsSkipped,
      handoffs: this.handoffs,
      handoffRefetches: this.handoffRefetches,
      slotsHeld: this.slotsHeld,
      canDispatch: this.hb?.canDispatch() ?? false,
      ipGateBlocked: this.gate?.blocked ?? false,
      sharedIps: this.gate?.sharedIps().length ?? 0,
      ipGateCalls: this.gate?.gateCalls ?? 0,
      redisErrors: this.redisErrors,
      storeErrors: this.storeErrors,
      checkpointFallbacks: this.checkpointFallbacks,
      slotsRestored: this.slotsRestored,
      clockOffsetMs: clock?.offsetMs,
      clockOffsetErrorMs: clock?.errorMs,
      clockShifts: this.clockShifts,
    };
  }
}

