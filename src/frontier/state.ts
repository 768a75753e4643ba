/**
 * The frontier's state, in one owner (the undici shape: a client's state in one object, its
 * protocol steps as sibling files of plain functions over it).
 *
 * `FrontierState` holds everything a partition is: the URL table and its key index, the host
 * records and their dense copies, the row queues, the four host banks, the per-IP windows, the
 * schedule index, the prioritizer, the seams and the scheduler counters. It has no behaviour
 * beyond building itself from validated options; the steps live beside it:
 *
 * ```
 *  state.ts       this file: the fields and their construction
 *  banks.ts       front bank, aging, host heap, ready banks — the only code that moves a host
 *                 between scheduler states (Idle/Front/Parked/Ready/InFlight)
 *  dispatch.ts    dispatch: surface eligible hosts, the robots question, launch a row
 *  intake.ts      seed, seedBatch, discover: new rows and new hosts
 *  outcome.ts     report: the outcome state machine, politeness adaptation, change recording,
 *                 link intake; replay
 *  recrawl.ts     the schedule index (timing wheel), freshness passes, the record view
 *  checkpoint.ts  checkpoint / restore
 *  queries.ts     stats, due URLs, host snapshots and intervals, imported signals, warm
 *  frontier.ts    the `Frontier` façade: argument checks and delegation, the drain driver
 * ```
 *
 * Nothing here is exported from the package: the façade is the public surface.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { type PolitenessConfig, IpTable, politenessConfig } from '../politeness/index.js';
import { Prioritizer } from '../prioritize/index.js';
import { type DueWheel, type KeyIndex, newKeyIndex, newWheel } from './deps.js';
import { HostHeap } from './heap.js';
import { HostDirectory } from './groups.js';
import { type HostRecord, HostTimes } from './hosts.js';
import { type FrontierOptions, type HostResolver, resolveFrontierOptions } from './options.js';
import { RowQueues } from './queues.js';
import { MutableRecord } from './record.js';
import { SpillTier } from './spill.js';
import { SPILLED } from './spillkeys.js';
import { UrlTable } from './table.js';

export const HOUR_MS = 3_600_000;
/** The key index's miss sentinel (`getBatch`). */
export const MISSING = 0xffff_ffff;

/** Throws unless `v` is an epoch-hour (integer in [0, 2^32)). */
export function checkHours(what: string, v: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff) {
    throw new InvalidArgumentError(`${what}: expected epoch-hours as an integer in [0, 2^32), received ${String(v)}`);
  }
}

/** Throws unless `v` is a finite clock value (ms). */
export function checkMs(what: string, v: number): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InvalidArgumentError(`${what}: expected a finite clock value in ms, received ${String(v)}`);
  }
}

/** URLs parked past their host's depth cap, and fetched pages waiting for a relink round. */
export interface RelinkCounts {
  /** Rows Trapped at a depth past their host's cap. */
  readonly parked: number;
  /** Crawled and Redirected rows marked for a relink round (`awaitsRelink`). */
  readonly marked: number;
}

/** What hosts' blocks did (src/frontier/blocks.ts), counted since the frontier was loaded. */
export interface BlockCounts {
  /** Runs of 403s whose canary answered 403 too: the host was blocking the crawler. */
  readonly confirmed: number;
  /** Runs of 403s whose canary served: the pages' own 403s, kept final. */
  readonly dismissed: number;
  /**
   * Answers of 403 taken as a block's (the canary's aside): each URL queued for a retry, or ended
   * gone when its retries were spent; a run's 403s count when the canary's 403 queues them again.
   */
  readonly retried: number;
}

/** The single-partition scheduler's state (see the module comment). */
export class FrontierState {
  readonly partitionId: number;
  readonly createdHours: number;
  readonly opts: Readonly<FrontierOptions>;
  /** The admission limits a new host record starts with: the options', until `setAdmission` moves them. */
  readonly admission: { depthCap: number; urlBudget: number };
  /**
   * The relink bookkeeping (intake.ts `relink`, `relinkAtIdle`): whether a URL was ever parked
   * past a host's depth cap here (a restore reads it from the Trapped rows), whether rows are
   * marked and wait for the idle point, a version bumped by each mark and park (the idle point
   * counts again only when it moved) and the one last counted, and what a cluster node said of
   * the cap in the other slots (`Frontier.bindDepthCap`): undefined until it said it binds
   * there, then the crawl-wide counts it passed, or 'unbounded' (every round runs).
   */
  depthParked = false;
  relinkPending = false;
  /** What the hosts' blocks did in this frontier since it was loaded (blocks.ts; not checkpointed). */
  readonly blocks = { confirmed: 0, dismissed: 0, retried: 0 };
  depthVersion = 0;
  idleScannedVersion = 0;
  bindsElsewhere: RelinkCounts | 'unbounded' | undefined = undefined;
  readonly politeness: Readonly<PolitenessConfig>;
  readonly table: UrlTable;
  /** The exact key → row index (replaced wholesale by a restore). */
  index: KeyIndex;
  /** Host records, their names and groups (the one owner of host identity). */
  readonly dir: HostDirectory;
  /** The host records' clock fields, dense by host id (see `HostTimes`). */
  readonly hostTimes = new HostTimes();
  readonly queues: RowQueues;
  readonly frontBank: HostHeap;
  readonly aging: HostHeap;
  readonly hostHeap: HostHeap;
  readonly ready: HostHeap[];
  /** Each address's own interval and window (DESIGN §7). */
  readonly ips: IpTable;
  /** Hosts held because their address is at `ipMaxInFlight`, by the address's `ips` slot (woken by `landed`). */
  readonly ipWaiters = new Map<number, number[]>();
  readonly wheel: DueWheel | undefined;
  readonly prio: Prioritizer | undefined;
  readonly resolver: HostResolver | undefined;
  readonly effectiveTarget: number;
  /** Hosts holding a back queue. */
  active = 0;
  inFlight = 0;
  /** The latest clock value seen by dispatch or report (ms). */
  clockMs = 0;
  /**
   * `Frontier.holdEveryHost`'s moment (ms; -1: none): a host first seen later waits until it
   * plus its interval too (an inbox replayed after a slot's open brings hosts the killed owner
   * may have fetched from).
   */
  holdFromMs = -1;
  /** The schedule index's current epoch-hour. */
  wheelHour: number;
  dispatches = 0;
  /** Scratch for one URLKey. */
  readonly oneKey = new Uint32Array(4);
  /** HostKey lanes [lo, hi] by host id (dense copy of the records' keys for the heaps). */
  hostLanes: Uint32Array = new Uint32Array(128);
  /** Eligibility key (ms) each parked host sits under in the host heap, by host id. */
  parkedAt: Float64Array = new Float64Array(64);
  /** Scratch of `dispatchShard`: the hosts surfacing from the host heap at one clock value. */
  surfaced: Int32Array = new Int32Array(64);
  /** Whether the freshness hook runs background passes (`FreshnessHook.tick`). */
  readonly freshTicks: boolean;
  /** Clock hour of the last automatic freshness tick (transient: the hook keeps its cadence). */
  freshHour = -1;
  /** Scratch of freshness passes: host capacities and moved rows (grown on demand). */
  freshCaps: Float64Array = new Float64Array(0);
  freshMoved: Uint32Array = new Uint32Array(0);
  /** The reusable record view handed to the freshness hook. */
  readonly record: MutableRecord;
  /** The disk tier (spill.ts) when a memory budget and a store directory are set, else undefined. */
  readonly spill: SpillTier | undefined;

  constructor(partitionId: number, createdHours: number, options?: Partial<FrontierOptions> | null) {
    if (!Number.isInteger(partitionId) || partitionId < 0 || partitionId > 0xffff_ffff) {
      throw new InvalidArgumentError(`Frontier: expected partitionId as an integer in [0, 2^32), received ${String(partitionId)}`);
    }
    checkHours('Frontier createdHours', createdHours);
    this.partitionId = partitionId;
    this.createdHours = createdHours;
    this.opts = resolveFrontierOptions(options);
    this.admission = { depthCap: this.opts.depthCap, urlBudget: this.opts.urlBudget };
    this.politeness = politenessConfig(this.opts.politeness ?? {});
    this.table = new UrlTable(1024, 1024 * 64, this.opts.freshness !== undefined);
    this.dir = new HostDirectory(this.opts.grouping);
    const hook = this.opts.freshness;
    this.queues = new RowQueues(this.table, hook !== undefined && typeof hook === 'object' && hook.queueOrder === 'due');
    // Host-level orders read dense per-host keys (measured: comparing through the URL
    // columns cost a cache miss per look-up and dominated dispatch at 10k hosts). Rows of
    // different hosts differ in HostKey, so (best priority, HostKey) orders hosts exactly as
    // their best rows order; the row comparison only breaks a 64-bit HostKey collision.
    // Each heap copies an id's key when it enters or is updated (see heap.ts), so every
    // change to a key below is followed by an `update` of the heaps holding that host.
    const lanes = (): Uint32Array => this.hostLanes;
    const tie = (a: number, b: number): boolean => this.queues.better(this.queues.peek(a), this.queues.peek(b));
    // Best priority first: the key is its negation (exact, and NaN still compares unequal).
    const bestRow = { key: (id: number): number => -this.queues.topPriority[id]!, lanes, tie };
    const hosts = this.dir.hosts;
    this.frontBank = new HostHeap(bestRow);
    this.aging = new HostHeap({ key: (id) => hosts[id]!.waitingSinceMs, lanes, tie });
    this.hostHeap = new HostHeap({ key: (id) => this.parkedAt[id]!, lanes, tie });
    // Ready hosts of equal best priority go least recently dispatched first (then by HostKey):
    // by HostKey alone the first of a shared address's hosts won each of its slots until its
    // queue was empty (heap.ts). Read at push only: a host's last dispatch moves only while it
    // is out of the ready banks (launched, or parked by `recordStart` first).
    const leastRecent = { ...bestRow, second: (id: number): number => hosts[id]!.lastDispatchMs };
    this.ready = [];
    for (let s = 0; s < this.opts.dispatchShards; s++) this.ready.push(new HostHeap(leastRecent));
    this.ips = new IpTable(this.politeness.ipFloorMs, this.politeness);
    this.wheelHour = createdHours;
    this.wheel = this.opts.scheduleIndex ? newWheel(createdHours) : undefined;
    const p = this.opts.prioritizer;
    this.prio = p === false ? undefined : new Prioritizer(p === true ? {} : p);
    const r = this.opts.resolver;
    this.resolver = r === undefined ? undefined : typeof r === 'function' ? { lookup: r } : r;
    const floor = this.opts.dispatchThreads > 0 ? this.opts.dispatchThreads * this.opts.backQueuesPerThread : 0;
    this.effectiveTarget = this.opts.target === 0 ? 0 : Math.max(this.opts.target, floor);
    this.record = new MutableRecord(this.table);
    const fresh = this.opts.freshness;
    this.freshTicks = fresh !== undefined && typeof fresh === 'object' && typeof fresh.tick === 'function';
    // Both or neither (resolveFrontierOptions refuses one alone).
    const { memoryBudget, storeDir } = this.opts;
    this.spill = memoryBudget > 0 ? new SpillTier(this, memoryBudget, `${storeDir}/spill-p${partitionId}`, this.opts.spillWindow, this.opts.diskIo) : undefined;
    this.index = newKeyIndex(this.table, this.spill?.keys);
  }

  /** The key index's payload for `row` (the row itself). */
  payloadOf(row: number): number {
    return row;
  }

  /** The row of key-index payload `p`, or −1 while its URL is spilled to disk. */
  rowOf(p: number): number {
    return p === SPILLED ? -1 : p;
  }

  /** The host records by id (the directory's array). */
  get hosts(): readonly HostRecord[] {
    return this.dir.hosts;
  }
}
