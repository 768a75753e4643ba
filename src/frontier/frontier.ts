/**
 * The frontier: a single partition's resident Mercator scheduler.
 *
 * ```
 *  seed / discover ─► URL table row ─► host queue (priority desc, key asc)
 *                                        │
 *        host has no back queue ─────────┤──► FRONT BANK   hosts by best URL (aged first, with threads)
 *                                        │        │ refill while active < target
 *        host holds a back queue ────────┘        ▼
 *                                  HOST HEAP  parked hosts by max(host, IP) next-eligible ms, key
 *                                        │ eligible at now
 *                                        ▼
 *                                  READY BANK  (per shard) hosts by best URL ─► dispatch ─► in flight
 *                                                                   report ◄────────────────┘
 * ```
 *
 * Every structure is ordered by a strict total order whose last tie-break is a key (URLKey
 * for rows, HostKey for hosts), and every decision depends only on state that the partition
 * file carries (the URL table, host records with their politeness windows and back-queue
 * membership, the prioritizer's state, the wheel hour). So a recovered frontier makes the
 * same decisions as the one that was checkpointed (DESIGN §9.5).
 *
 * Time: `nowMs` arguments are the dispatch clock in epoch-milliseconds (any monotonic
 * logical clock in tests); schedule fields are epoch-hours = ⌊nowMs / 3 600 000⌋. A
 * Retry-After HTTP-date is measured against `nowMs` too, so pass wall-clock time when that
 * form matters.
 *
 * Freshness: a freshness hook with a background pass (`withFreshness`) is offered the pass at
 * the first dispatch of every new clock hour and keeps its own cadence; the pass may re-time
 * URLs waiting for their recrawl, which then move in the schedule index. An engine that stays
 * idle for hours should dispatch (or call `tickFreshness`) at least once per cadence, or a
 * re-timed URL waits for the next wake-up.
 */
import { CorruptPartitionError, InvalidArgumentError } from '../errors/index.js';
import { hostGroupKey } from '../url/host.js';
import { type KeyArray, keyFromHex, keyToHex } from '../core/keys.js';
import { lanesToU64, u64Lanes } from '../core/lanes.js';
import { NEAR_DUP_DISTANCE } from '../core/simhash.js';
import {
  type ColumnBlock,
  type PartitionImage,
  FORMAT_MINOR,
  decodePartition,
  encodePartition,
} from '../format/index.js';
import {
  type Discovery,
  type FetchRequest,
  HostFlags,
  type Outcome,
  URL_STATUS_NAMES,
  UrlStatus,
} from '../model/index.js';
import {
  type PolitenessConfig,
  IpTable,
  adapt,
  atCeiling,
  hostInterval,
  isThrottle,
  observeLatency,
  politenessConfig,
  signalOf,
} from '../politeness/index.js';
import { Prioritizer } from '../prioritize/index.js';
import {
  type DueWheel,
  type KeyIndex,
  admit,
  keyBatch,
  keyIndexFromSorted,
  keyOf,
  linkKey,
  newKeyIndex,
  newWheel,
} from './deps.js';
import { HostHeap } from './heap.js';
import { HostRecord, HostState, HostTimes, hostKeyBefore } from './hosts.js';
import {
  type CrawledRecord,
  type FreshnessRows,
  type FrontierOptions,
  type HostResolver,
  resolveFrontierOptions,
} from './options.js';
import { RowQueues } from './queues.js';
import { ColumnId, FpFlag, UrlTable } from './table.js';

const HOUR_MS = 3_600_000;
/** A crawled URL's next-due offset without a freshness policy (the seed's flat week). */
const FLAT_RECRAWL_HOURS = 168;
/** Reports pinned at the politeness ceiling in a row before a host is flagged Dead. */
const DEAD_AFTER = 3;
const MISSING = 0xffff_ffff;

/** One candidate for `seedBatch`: the arguments of `seed`. */
export interface SeedSpec {
  readonly url: string;
  readonly host: string;
  readonly priority: number;
  readonly firstSeen: number;
  readonly nextDue: number;
  /** The host's crawl-delay in ms (0 = none). */
  readonly crawlDelay: number;
}

/** One entry of a drain's dispatch log. */
export interface Dispatched {
  readonly row: number;
  readonly url: string;
  readonly host: string;
  /** Dispatch clock (ms) at which it went out. */
  readonly atMs: number;
  /** Resolved IP it was dispatched under ('' when none). */
  readonly ip: string;
}

/** One entry of `dueUrls`. */
export interface DueUrl {
  /** URLKey as 32 hex digits. */
  readonly key: string;
  readonly url: string;
  readonly host: string;
  /** Epoch-hour it is due. */
  readonly dueHours: number;
  readonly status: string;
}

/** A point-in-time snapshot of a frontier's counters. */
export interface FrontierStats {
  readonly urls: number;
  readonly hosts: number;
  /** Hosts holding a back queue. */
  readonly activeHosts: number;
  readonly inFlight: number;
  /** URLs queued for dispatch (front bank and back queues). */
  readonly pending: number;
  /** URLs waiting in the schedule index for their hour. */
  readonly deferred: number;
  /** URLs that want a fetch and whose next-due hour has come. */
  readonly due: number;
  readonly byStatus: Readonly<Record<string, number>>;
  /** Keys in the exact seen index. */
  readonly seenKeys: number;
  /** Bits per URL of the seen index (the exact index until a filter fronts it). */
  readonly seenBitsPerUrl: number;
  /** Earliest next-due hour among URLs that want a fetch, 0 when none. */
  readonly nextDueHours: number;
  /** Bytes of typed arrays, arena, index and wasm-side structures owned by the frontier. */
  readonly memoryBytes: number;
}

/** Where a host is in the scheduler, as `hostSnapshots` names it. */
export type HostSchedState = 'idle' | 'front' | 'parked' | 'ready' | 'in-flight';

const HOST_STATE_NAMES: readonly HostSchedState[] = ['idle', 'front', 'parked', 'ready', 'in-flight'];

/** A read-only copy of one host record with its queue and IP window (for `hosts --why`). */
export interface HostSnapshot {
  readonly name: string;
  /** Resolved IP ('' when unknown). */
  readonly ip: string;
  readonly state: HostSchedState;
  /** `HostFlags` bits. */
  readonly flags: number;
  /** Adaptive start-to-start interval (ms), clamped. */
  readonly intervalMs: number;
  /** Crawl-delay floor (ms, 0 = none). */
  readonly crawlDelayMs: number;
  /** When the host's own window opens (ms). */
  readonly nextEligibleMs: number;
  /** When its IP's window opens (ms, 0 when no IP or no spend). */
  readonly ipEligibleMs: number;
  /** Last fetch start (ms, −1 = none). */
  readonly lastDispatchMs: number;
  /** Smoothed latency (ms, 0 = none yet). */
  readonly latencyMs: number;
  /** URLs waiting for a fetch. */
  readonly queued: number;
  readonly urlBudget: number;
  readonly depthCap: number;
  readonly admitted: number;
  /** Reports in a row that left the interval at the politeness ceiling. */
  readonly ceilingStreak: number;
  /** The URL in flight, if any. */
  readonly inFlightUrl: string | undefined;
}

/** An imported host quality score (dense host half of a ranking import). */
export interface HostSignal {
  readonly host: string;
  readonly score: number;
}

/** An imported per-page PageRank (sparse URL half), by key or by (url, host). */
export interface UrlSignal {
  readonly key?: KeyArray | string | undefined;
  readonly url?: string | undefined;
  readonly host?: string | undefined;
  readonly rank: number;
}

/** Bounds of a `drain`: at most `limit` dispatches; follow deferred URLs up to `untilMs`. */
export interface DrainLimits {
  readonly limit?: number | undefined;
  readonly untilMs?: number | undefined;
}

/** A synchronous fetcher for `drain`: fetch (or simulate) one request at clock `nowMs`. */
export type DrainFetcher = (request: FetchRequest, nowMs: number) => Outcome;

/** Statuses whose row waits in a host queue. */
function isQueuedStatus(s: number): boolean {
  return s === UrlStatus.Scheduled || s === UrlStatus.DueRecrawl || s === UrlStatus.RetryWait;
}

/** Statuses that still want a fetch once their next-due hour comes. */
function wantsFetch(s: number): boolean {
  return isQueuedStatus(s) || s === UrlStatus.Crawled || s === UrlStatus.InFlight;
}

function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function checkHours(what: string, v: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff) {
    throw new InvalidArgumentError(`${what}: expected epoch-hours as an integer in [0, 2^32), received ${String(v)}`);
  }
}

function checkMs(what: string, v: number): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InvalidArgumentError(`${what}: expected a finite clock value in ms, received ${String(v)}`);
  }
}

/** Scheduler counters that live outside the URL and host records. */
interface SchedulerState {
  clockMs: number;
  wheelHour: number;
  dispatches: number;
  parkedScores: [string, number][];
}

/** The single-partition resident scheduler (see the module comment). */
export class Frontier {
  readonly partitionId: number;
  readonly createdHours: number;
  private readonly opts: Readonly<FrontierOptions>;
  private readonly politeness: Readonly<PolitenessConfig>;
  private readonly table: UrlTable;
  private index: KeyIndex;
  private readonly hosts: HostRecord[] = [];
  /** The host records' clock fields, dense by host id (see `HostTimes`). */
  private readonly hostTimes = new HostTimes();
  private readonly hostByName = new Map<string, number>();
  /** Group name → registrable domain, for in-degree under host or origin grouping. */
  private readonly domainOfGroup = new Map<string, string>();
  private readonly queues: RowQueues;
  private readonly frontBank: HostHeap;
  private readonly aging: HostHeap;
  private readonly hostHeap: HostHeap;
  private readonly ready: HostHeap[];
  private readonly ips: IpTable;
  private readonly wheel: DueWheel | undefined;
  private readonly prio: Prioritizer | undefined;
  private readonly resolver: HostResolver | undefined;
  private readonly effectiveTarget: number;
  private active = 0;
  private inFlight = 0;
  private clockMs = 0;
  private wheelHour: number;
  private dispatches = 0;
  private readonly parkedScores = new Map<string, number>();
  private readonly oneKey = new Uint32Array(4);
  /** HostKey lanes [lo, hi] by host id (dense copy of the records' keys for the heaps). */
  private hostLanes: Uint32Array = new Uint32Array(128);
  /** Eligibility key (ms) each parked host sits under in the host heap, by host id. */
  private parkedAt: Float64Array = new Float64Array(64);
  /** Scratch of `dispatchShard`: the hosts surfacing from the host heap at one clock value. */
  private surfaced: Int32Array = new Int32Array(64);
  private readonly record: MutableRecord;
  /** Whether the freshness hook runs background passes (`FreshnessHook.tick`). */
  private readonly freshTicks: boolean;
  /** Clock hour of the last automatic freshness tick (transient: the hook keeps its cadence). */
  private freshHour = -1;
  /** Scratch of freshness passes: host capacities and moved rows (grown on demand). */
  private freshCaps: Float64Array = new Float64Array(0);
  private freshMoved: Uint32Array = new Uint32Array(0);

  /**
   * An empty frontier for partition `partitionId`, created at epoch-hour `createdHours`.
   * @throws InvalidArgumentError for a bad id, hour or option.
   */
  constructor(partitionId: number, createdHours: number, options?: Partial<FrontierOptions> | null) {
    if (!Number.isInteger(partitionId) || partitionId < 0 || partitionId > 0xffff_ffff) {
      throw new InvalidArgumentError(`Frontier: expected partitionId as an integer in [0, 2^32), received ${String(partitionId)}`);
    }
    checkHours('Frontier createdHours', createdHours);
    this.partitionId = partitionId;
    this.createdHours = createdHours;
    this.opts = resolveFrontierOptions(options);
    this.politeness = politenessConfig(this.opts.politeness ?? {});
    this.table = new UrlTable(1024, 1024 * 64, this.opts.freshness !== undefined);
    this.index = newKeyIndex();
    this.queues = new RowQueues(this.table);
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
    this.frontBank = new HostHeap(bestRow);
    this.aging = new HostHeap({ key: (id) => this.hosts[id]!.waitingSinceMs, lanes, tie });
    this.hostHeap = new HostHeap({ key: (id) => this.parkedAt[id]!, lanes, tie });
    this.ready = [];
    for (let s = 0; s < this.opts.dispatchShards; s++) this.ready.push(new HostHeap(bestRow));
    this.ips = new IpTable(this.politeness.ipFloorMs);
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
  }

  // ───────────────────────────── intake ─────────────────────────────

  /**
   * Inserts a first-crawl candidate: `url` canonical, `host` its host group, `priority` its
   * initial importance, `firstSeen`/`nextDue` epoch-hours, `crawlDelay` the host's
   * politeness interval floor in ms (0 = none). A URL already present is ignored (returns
   * false). With the schedule index on, a seed due after the current hour waits for it.
   */
  seed(url: string, host: string, priority: number, firstSeen: number, nextDue: number, crawlDelay = 0): boolean {
    this.checkSeed(url, host, priority, firstSeen, nextDue, crawlDelay);
    const k = this.oneKey;
    keyOf(url, host, k, 0);
    if (this.index.get(k, 0) !== undefined) return false;
    const row = this.addSeedRow(url, host, priority, firstSeen, nextDue, crawlDelay, k, 0);
    this.index.insertBatch(k, Uint32Array.of(row));
    this.opts.seenFilter?.add(k, 0);
    return true;
  }

  /**
   * The batch form of `seed`: one index pass for the whole batch. The resulting frontier is
   * byte-for-byte the one the equivalent `seed` loop builds (in-batch repeats keep the
   * first occurrence). Returns the number of new URLs.
   */
  seedBatch(specs: readonly SeedSpec[]): number {
    if (!Array.isArray(specs)) throw new InvalidArgumentError(`seedBatch: expected an array of seed specs, received ${typeof specs}`);
    const n = specs.length;
    const keys = new Uint32Array(n * 4);
    const urls: string[] = new Array<string>(n);
    const hosts: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const s = specs[i]!;
      this.checkSeed(s.url, s.host, s.priority, s.firstSeen, s.nextDue, s.crawlDelay ?? 0);
      urls[i] = s.url;
      hosts[i] = s.host;
    }
    keyBatch(urls, hosts, keys);
    const found = this.index.getBatch(keys, new Uint32Array(n), MISSING);
    // In-batch repeats: sort the missing indices by key (index as tie-break) and keep firsts.
    const miss: number[] = [];
    for (let i = 0; i < n; i++) if (found[i] === MISSING) miss.push(i);
    miss.sort((a, b) => {
      const x = a * 4;
      const y = b * 4;
      return keys[x + 1]! - keys[y + 1]! || keys[x]! - keys[y]! || keys[x + 3]! - keys[y + 3]! || keys[x + 2]! - keys[y + 2]! || a - b;
    });
    const isNew = new Uint8Array(n);
    for (let j = 0; j < miss.length; j++) {
      const i = miss[j]!;
      const prev = miss[j - 1];
      if (prev === undefined || !sameKey(keys, i, prev)) isNew[i] = 1;
    }
    const fresh = miss.length === 0 ? 0 : isNew.reduce((a, b) => a + b, 0);
    this.table.reserve(fresh);
    const newKeys = new Uint32Array(fresh * 4);
    const rows = new Uint32Array(fresh);
    let m = 0;
    for (let i = 0; i < n; i++) {
      if (isNew[i] === 0) continue;
      const s = specs[i]!;
      rows[m] = this.addSeedRow(s.url, s.host, s.priority, s.firstSeen, s.nextDue, s.crawlDelay ?? 0, keys, i);
      newKeys.set(keys.subarray(i * 4, i * 4 + 4), m * 4);
      this.opts.seenFilter?.add(keys, i);
      m++;
    }
    if (fresh > 0) this.index.insertBatch(newKeys, rows);
    return fresh;
  }

  private checkSeed(url: string, host: string, priority: number, firstSeen: number, nextDue: number, crawlDelay: number): void {
    if (typeof url !== 'string' || url === '') throw new InvalidArgumentError(`seed: expected a canonical URL string, received ${String(url)}`);
    if (typeof host !== 'string' || host === '') throw new InvalidArgumentError(`seed: expected a host group name, received ${String(host)}`);
    if (typeof priority !== 'number' || !Number.isFinite(priority)) {
      throw new InvalidArgumentError(`seed: expected a finite priority, received ${String(priority)}`);
    }
    checkHours('seed firstSeen', firstSeen);
    checkHours('seed nextDue', nextDue);
    if (typeof crawlDelay !== 'number' || !(crawlDelay >= 0) || !Number.isFinite(crawlDelay)) {
      throw new InvalidArgumentError(`seed: expected crawlDelay as ms >= 0, received ${String(crawlDelay)}`);
    }
  }

  private addSeedRow(
    url: string,
    host: string,
    priority: number,
    firstSeen: number,
    nextDue: number,
    crawlDelay: number,
    keys: KeyArray,
    i: number,
  ): number {
    const h = this.hostFor(host, keys, i);
    if (crawlDelay > h.crawlDelayMs) {
      h.crawlDelayMs = crawlDelay;
      h.intervalMs = hostInterval(this.politeness, h.intervalMs, crawlDelay);
    }
    const row = this.newRow(keys, i, url, h, 0, firstSeen, UrlStatus.Scheduled);
    const t = this.table;
    t.nextDue[row] = nextDue;
    h.admitted++;
    if (this.prio) {
      this.prio.endow(row, priority);
      t.priority[row] = this.prio.priority(row, h.id, h.hostScore);
    } else {
      t.priority[row] = priority;
    }
    if (this.wheel && nextDue > this.wheelHour) this.wheel.schedule(row, nextDue);
    else this.enqueue(row);
    return row;
  }

  /**
   * Idempotent intake of a routed out-link at clock `nowMs`. A genuinely new URL is admitted
   * (per-host budget and depth cap) and queued, or parked as Trapped; a known URL only
   * receives the link's cash. Returns true when a new schedulable URL entered.
   */
  discover(discovery: Discovery, nowMs: number): boolean {
    const d = discovery;
    if (d === null || typeof d !== 'object') throw new InvalidArgumentError(`discover: expected a Discovery, received ${String(d)}`);
    if (typeof d.url !== 'string' || d.url === '') throw new InvalidArgumentError(`discover: expected a canonical URL, received ${String(d.url)}`);
    if (typeof d.host !== 'string' || d.host === '') throw new InvalidArgumentError(`discover: expected a host group name, received ${String(d.host)}`);
    if (!Number.isInteger(d.depth) || d.depth < 0) throw new InvalidArgumentError(`discover: expected depth as an integer >= 0, received ${String(d.depth)}`);
    if (typeof d.cash !== 'number' || !Number.isFinite(d.cash) || d.cash < 0) {
      throw new InvalidArgumentError(`discover: expected cash as a finite number >= 0, received ${String(d.cash)}`);
    }
    checkMs('discover nowMs', nowMs);
    const k = this.oneKey;
    if (d.key !== undefined) {
      if (!(d.key instanceof Uint32Array) || d.key.length !== 4) {
        throw new InvalidArgumentError(`discover: expected key as a 4-lane Uint32Array, received ${String(d.key)}`);
      }
      k.set(d.key);
    } else {
      keyOf(d.url, d.host, k, 0);
    }
    const h = this.hostFor(d.host, k, 0);
    const linking = this.prio && d.fromHost !== undefined && d.fromHost !== d.host ? this.linkDomain(d.fromHost) : undefined;
    if (this.prio && linking !== undefined && linking !== this.linkDomain(d.host) && this.prio.linkFrom(h.id, linking)) {
      const budget = this.prio.hostBudget(h.id);
      if (budget > h.urlBudget) h.urlBudget = budget;
    }
    const filter = this.opts.seenFilter;
    const existing = filter === undefined || filter.maybeContains(k, 0) ? this.index.get(k, 0) : undefined;
    if (existing !== undefined) {
      if (this.prio && d.cash > 0) {
        this.prio.credit(existing, d.cash);
        this.reprioritize(existing);
      }
      return false;
    }
    const hours = Math.floor(nowMs / HOUR_MS);
    let passes = true;
    const traps = this.opts.traps;
    if (traps) {
      if (traps.observe(d.url, d.host, k, nowMs)) h.flags |= HostFlags.TrapSuspect;
      if ((h.flags & HostFlags.TrapSuspect) !== 0) passes = traps.passes(d.url, d.host, nowMs);
    }
    const status = admit(Math.min(d.depth, 0xffff), h, passes);
    const row = this.newRow(k, 0, d.url, h, Math.min(d.depth, 0xffff), hours, status);
    this.table.nextDue[row] = hours;
    this.index.insertBatch(k, Uint32Array.of(row));
    filter?.add(k, 0);
    if (this.prio) {
      this.prio.credit(row, d.cash);
      this.table.priority[row] = this.prio.priority(row, h.id, h.hostScore);
    } else {
      this.table.priority[row] = d.cash;
    }
    if (status !== UrlStatus.Scheduled) return false;
    this.enqueue(row);
    return true;
  }

  private newRow(keys: KeyArray, i: number, url: string, h: HostRecord, depth: number, firstSeen: number, status: number): number {
    const t = this.table;
    const row = t.addRow();
    t.key.set(keys.subarray(i * 4, i * 4 + 4), row * 4);
    t.url[row] = t.arena.add(url);
    t.status[row] = status;
    t.depth[row] = depth;
    t.firstSeen[row] = firstSeen;
    t.host[row] = h.id;
    this.queues.ensureRows(t.rows);
    this.prio?.ensureRows(t.rows);
    return row;
  }

  private hostFor(name: string, keys: KeyArray, i: number): HostRecord {
    const id = this.hostByName.get(name);
    if (id !== undefined) return this.hosts[id]!;
    const h = new HostRecord(this.hosts.length, keys[i * 4]!, keys[i * 4 + 1]!, name, this.politeness.defaultIntervalMs, this.hostTimes);
    h.intervalMs = hostInterval(this.politeness, h.intervalMs, 0);
    h.urlBudget = this.opts.urlBudget;
    h.depthCap = this.opts.depthCap;
    const parked = this.parkedScores.get(name);
    if (parked !== undefined) {
      h.hostScore = parked;
      this.parkedScores.delete(name);
    }
    this.hosts.push(h);
    this.hostByName.set(name, h.id);
    this.registerHost(h);
    this.prio?.ensureHost(h.id);
    if (this.prio) {
      const budget = this.prio.hostBudget(h.id);
      if (budget > h.urlBudget) h.urlBudget = budget;
    }
    return h;
  }

  private registerHost(h: HostRecord): void {
    const id = h.id;
    if (id >= this.parkedAt.length) {
      const cap = this.parkedAt.length * 2;
      const lanes = new Uint32Array(cap * 2);
      lanes.set(this.hostLanes);
      this.hostLanes = lanes;
      const parked = new Float64Array(cap);
      parked.set(this.parkedAt);
      this.parkedAt = parked;
    }
    this.hostLanes[id * 2] = h.hostKeyLo;
    this.hostLanes[id * 2 + 1] = h.hostKeyHi;
    this.queues.ensureHost(id);
  }

  // ─────────────────────────── scheduling ───────────────────────────

  /** Queues `row` on its host and re-positions the host. */
  private enqueue(row: number): void {
    const host = this.table.host[row]!;
    const best = this.queues.peek(host);
    this.queues.push(row);
    // The banks order hosts by their best row: only a new best (or a first row) moves the host.
    if (best < 0 || this.queues.peek(host) !== best) this.hostGainedWork(this.hosts[host]!);
  }

  /** The host's queue changed (push or priority change): fix its position in the banks. */
  private hostGainedWork(h: HostRecord): void {
    switch (h.state) {
      case HostState.Idle:
        h.state = HostState.Front;
        h.waitingSinceMs = this.clockMs;
        this.frontBank.push(h.id);
        if (this.opts.dispatchThreads > 0) this.aging.push(h.id);
        break;
      case HostState.Front:
        this.frontBank.update(h.id);
        break;
      case HostState.Ready:
        this.ready[this.shardOf(h.id)]!.update(h.id);
        break;
      default:
        break;
    }
  }

  private reprioritize(row: number): void {
    if (!this.prio) return;
    const t = this.table;
    const h = this.hosts[t.host[row]!]!;
    const p = this.prio.priority(row, h.id, h.hostScore);
    if (Math.fround(p) === t.priority[row]) return;
    t.priority[row] = p;
    if (this.queues.queued(row)) {
      this.queues.update(row);
      this.hostGainedWork(h);
    }
  }

  /** The ready-bank shard of host `id`: its HostKey low lane modulo the shard count. */
  private shardOf(id: number): number {
    // The dense lane copy, not the record's `hostKeyLo`: a u32 above 2^31 is a boxed double
    // there, and the transfer in `dispatchShard` does not touch the record at all.
    return this.hostLanes[id * 2]! % this.ready.length;
  }

  private ipOf(h: HostRecord): string {
    if (this.resolver && h.ip === '') h.ip = this.resolver.lookup(h.name) ?? '';
    return h.ip;
  }

  private park(h: HostRecord): void {
    const ip = this.ipOf(h);
    h.state = HostState.Parked;
    this.parkedAt[h.id] = Math.max(h.nextEligibleMs, this.ips.eligibleAt(ip));
    this.hostHeap.push(h.id);
  }

  private activate(h: HostRecord, nowMs: number): void {
    this.frontBank.remove(h.id);
    this.aging.remove(h.id);
    this.active++;
    h.activatedAtMs = nowMs;
    h.servedSinceActivation = 0;
    this.resolver?.prefetch?.(h.name);
    this.park(h);
  }

  private deactivate(h: HostRecord, nowMs: number): void {
    this.hostHeap.remove(h.id);
    this.ready[this.shardOf(h.id)]!.remove(h.id);
    this.active--;
    if (this.queues.size(h.id) > 0) {
      h.state = HostState.Front;
      h.waitingSinceMs = nowMs;
      this.frontBank.push(h.id);
      if (this.opts.dispatchThreads > 0) this.aging.push(h.id);
    } else {
      h.state = HostState.Idle;
    }
  }

  /** Whether some front-bank host has waited past the promotion age at `nowMs`. */
  private agedWaiting(nowMs: number): boolean {
    const top = this.aging.peek();
    return top >= 0 && this.hosts[top]!.waitingSinceMs + this.opts.promoteAgeMs <= nowMs;
  }

  private refill(nowMs: number): void {
    const target = this.effectiveTarget;
    while (this.frontBank.size > 0 && (target === 0 || this.active < target)) {
      const id = this.agedWaiting(nowMs) ? this.aging.peek() : this.frontBank.peek();
      this.activate(this.hosts[id]!, nowMs);
    }
  }

  private advanceWheel(nowMs: number): void {
    const wheel = this.wheel;
    if (!wheel) return;
    const hour = Math.floor(nowMs / HOUR_MS);
    if (hour <= this.wheelHour) return;
    this.wheelHour = hour;
    const due = wheel.advance(hour);
    const status = this.table.status;
    for (let i = 0; i < due.length; i++) {
      const row = due[i]!;
      const s = status[row]!;
      if (s === UrlStatus.Crawled) status[row] = UrlStatus.DueRecrawl;
      else if (s !== UrlStatus.Scheduled) continue;
      this.enqueue(row);
    }
  }

  /** At the first dispatch of each new clock hour, offers the freshness hook its pass. */
  private autoTickFreshness(): void {
    const hour = Math.floor(this.clockMs / HOUR_MS);
    if (hour <= this.freshHour) return;
    this.freshHour = hour;
    this.runFreshnessTick(hour, false);
  }

  /**
   * Runs the freshness hook's background pass now, at epoch-hour `nowHours` (it also runs by
   * itself at the hook's cadence as the dispatch clock moves). The hook re-times waiting URLs
   * and adjusts its water level; re-timed URLs move in the schedule index. Returns how many
   * URLs' next-due hours moved (0 when the hook has no background pass).
   */
  tickFreshness(nowHours: number): number {
    checkHours('tickFreshness nowHours', nowHours);
    return Math.max(0, this.runFreshnessTick(nowHours, true));
  }

  private runFreshnessTick(hour: number, force: boolean): number {
    const fresh = this.opts.freshness;
    if (fresh === undefined || typeof fresh !== 'object' || typeof fresh.tick !== 'function') return -1;
    const t = this.table;
    const hostCount = this.hosts.length;
    if (this.freshCaps.length < hostCount) this.freshCaps = new Float64Array(Math.max(64, hostCount * 2));
    if (this.freshMoved.length < t.rows) this.freshMoved = new Uint32Array(t.capacity);
    const caps = this.freshCaps;
    for (let i = 0; i < hostCount; i++) {
      const ms = this.hosts[i]!.intervalMs;
      caps[i] = ms > 0 ? HOUR_MS / ms : Number.POSITIVE_INFINITY;
    }
    const view: FreshnessRows = {
      rows: t.rows,
      status: t.status,
      priority: t.priority,
      lambda: t.lambda,
      host: t.host,
      key: t.key,
      crawlCount: t.crawlCount,
      firstCrawled: t.firstCrawled,
      lastCrawled: t.lastCrawled,
      nextDue: t.nextDue,
      hosts: hostCount,
      hostCapacity: caps.subarray(0, hostCount),
      moved: this.freshMoved.subarray(0, t.rows),
    };
    const moved = fresh.tick(view, hour, force);
    if (!(moved > 0)) return moved;
    const n = Math.min(moved, t.rows);
    const ids = this.freshMoved.subarray(0, n);
    const due = t.nextDue;
    let m = 0;
    const ticks = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const row = ids[i]!;
      if (row >= t.rows) continue;
      let d = due[row]!;
      if (d <= hour) d = due[row] = hour + 1;
      if (t.status[row] !== UrlStatus.Crawled) continue;
      ids[m] = row;
      ticks[m++] = d;
    }
    if (this.wheel && m > 0) this.wheel.scheduleBatch(ids.subarray(0, m), ticks.subarray(0, m));
    return n;
  }

  /**
   * The next URL to fetch at clock `nowMs`, or undefined when no host may be fetched now
   * (then `nextEligible()` says when to try again). The caller fetches it and reports the
   * outcome with `report`.
   */
  dispatch(nowMs: number): FetchRequest | undefined {
    return this.dispatchShard(nowMs, 0);
  }

  /**
   * `dispatch` for dispatch thread `shard`: draws from that shard of the ready bank and,
   * when it is empty, steals from the sibling shard whose best host has the best URL.
   */
  dispatchShard(nowMs: number, shard: number): FetchRequest | undefined {
    checkMs('dispatch nowMs', nowMs);
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.ready.length) {
      throw new InvalidArgumentError(`dispatchShard: expected a shard in [0, ${this.ready.length}), received ${String(shard)}`);
    }
    if (nowMs > this.clockMs) this.clockMs = nowMs;
    if (this.freshTicks) this.autoTickFreshness();
    this.advanceWheel(nowMs);
    this.refill(nowMs);
    const heap = this.hostHeap;
    if (this.surfaced.length < heap.size) this.surfaced = new Int32Array(Math.max(heap.size, this.surfaced.length * 2));
    const surfaced = this.surfaced;
    const n = heap.popUpTo(nowMs, surfaced);
    // Two passes: the first touches only the host records (a likely cache miss each, which a
    // short loop body lets overlap), the second only the ready banks.
    let ready = 0;
    for (let i = 0; i < n; i++) {
      const id = surfaced[i]!;
      const h = this.hosts[id]!;
      const trueAt = Math.max(h.nextEligibleMs, this.ips.eligibleAt(h.ip));
      if (trueAt > nowMs) {
        this.parkedAt[id] = trueAt;
        heap.push(id);
        continue;
      }
      h.state = HostState.Ready;
      surfaced[ready++] = id;
    }
    for (let i = 0; i < ready; i++) {
      const id = surfaced[i]!;
      this.ready[this.shardOf(id)]!.push(id);
    }
    for (;;) {
      const bank = this.pickBank(shard);
      if (bank === undefined) return undefined;
      const id = bank.pop();
      const h = this.hosts[id]!;
      const ip = this.ipOf(h);
      const ipAt = this.ips.eligibleAt(ip);
      if (ipAt > nowMs) {
        h.state = HostState.Parked;
        this.parkedAt[h.id] = ipAt;
        heap.push(h.id);
        continue;
      }
      const robots = this.opts.robots;
      if (robots) {
        if (!robots.ready(h.name)) {
          const asked = robots.request?.(h.name, nowMs);
          h.state = HostState.Parked;
          if (asked && asked.started) {
            // The robots.txt request is a fetch start: it spends the host's and the IP's windows.
            this.spendWindows(h, nowMs);
            h.flags &= ~HostFlags.RobotsUnreachable;
            this.parkedAt[h.id] = Math.max(h.nextEligibleMs, this.ips.eligibleAt(h.ip));
          } else {
            const at = asked ? asked.retryAtMs : undefined;
            if (asked && asked.unreachable) h.flags |= HostFlags.RobotsUnreachable;
            this.parkedAt[h.id] = at !== undefined && Number.isFinite(at) && at > nowMs ? at : nowMs + this.opts.robotsRetryMs;
          }
          heap.push(h.id);
          continue;
        }
        h.flags &= ~HostFlags.RobotsUnreachable;
        // A robots Crawl-delay raises the host's floor (never lowers a configured one).
        const delay = robots.crawlDelayMs(h.name) ?? 0;
        if (delay > h.crawlDelayMs && Number.isFinite(delay)) {
          h.crawlDelayMs = delay;
          h.intervalMs = hostInterval(this.politeness, h.intervalMs, delay);
          if (h.lastDispatchMs >= 0) h.nextEligibleMs = h.lastDispatchMs + h.intervalMs;
          if (h.nextEligibleMs > nowMs) {
            this.park(h);
            continue;
          }
        }
      }
      const row = this.queues.pop(id);
      if (robots && !robots.isAllowed(this.table.urlOf(row))) {
        this.table.status[row] = UrlStatus.Disallowed;
        if (this.queues.size(h.id) > 0) {
          h.state = HostState.Ready;
          this.ready[this.shardOf(h.id)]!.push(h.id);
        } else {
          this.deactivate(h, nowMs);
        }
        continue;
      }
      return this.launch(h, row, nowMs);
    }
  }

  /** The ready bank to draw from: the shard's own, else the sibling with the best head. */
  private pickBank(shard: number): HostHeap | undefined {
    const own = this.ready[shard]!;
    if (own.size > 0) return own;
    let best: HostHeap | undefined;
    for (const b of this.ready) {
      if (b.size === 0) continue;
      if (best === undefined || this.queues.better(this.queues.peek(b.peek()), this.queues.peek(best.peek()))) best = b;
    }
    return best;
  }

  private launch(h: HostRecord, row: number, nowMs: number): FetchRequest {
    const t = this.table;
    // Every column of the row is read first, back to back. Consecutive dispatches go to
    // different hosts, so their rows are scattered and each read is likely a cache miss
    // (profiled on the frontier bench: these reads are most of launch's time); reads issued
    // together can overlap, where reads behind the allocations and calls below could not.
    const urlAt = t.url[row]!;
    const k = t.key;
    const at = row * 4;
    const k0 = k[at]!;
    const k1 = k[at + 1]!;
    const k2 = k[at + 2]!;
    const k3 = k[at + 3]!;
    const etagAt = t.etag[row]!;
    const lm = t.lastModified[row]!;
    const fp = t.fpFlags[row]!;
    const depth = t.depth[row]!;
    // The URL's bytes wait on its offset, the one miss that cannot overlap the others: next.
    const url = t.arena.get(urlAt);
    t.status[row] = UrlStatus.InFlight;
    h.state = HostState.InFlight;
    h.inFlightRow = row;
    this.inFlight++;
    this.dispatches++;
    this.spendWindows(h, nowMs);
    h.servedSinceActivation++;
    const key = new Uint32Array(4);
    key[0] = k0;
    key[1] = k1;
    key[2] = k2;
    key[3] = k3;
    return {
      prevContentFp: (fp & FpFlag.ContentFp) !== 0 ? lanesToU64(t.contentFp[row * 2]!, t.contentFp[row * 2 + 1]!) : undefined,
      prevSimhash: (fp & FpFlag.Simhash) !== 0 ? lanesToU64(t.simhash[row * 2]!, t.simhash[row * 2 + 1]!) : undefined,
      row,
      key,
      url,
      host: h.name,
      ip: h.ip === '' ? undefined : h.ip,
      etag: etagAt === 0 ? undefined : t.arena.get(etagAt - 1),
      lastModified: lm === 0 ? undefined : lm,
      depth,
      dispatchedAtMs: nowMs,
    };
  }

  /** A fetch start to `h` at `nowMs`: the host's window and its IP's window are spent. */
  private spendWindows(h: HostRecord, nowMs: number): void {
    h.lastDispatchMs = nowMs;
    h.nextEligibleMs = nowMs + h.intervalMs;
    if (h.ip !== '') {
      this.ips.spend(h.ip, nowMs, h.intervalMs);
      h.ipSpendMs = nowMs;
      h.ipSpendIntervalMs = h.intervalMs;
    }
  }

  /**
   * The earliest clock (ms) at which a dispatch can succeed, or undefined when nothing
   * waits (everything is crawled, in flight or parked in a state no clock opens).
   */
  nextEligible(): number | undefined {
    let at: number | undefined;
    for (const b of this.ready) if (b.size > 0) at = this.clockMs;
    if (this.frontBank.size > 0 && (this.effectiveTarget === 0 || this.active < this.effectiveTarget)) at = this.clockMs;
    const heap = this.hostHeap;
    while (heap.size > 0) {
      const h = this.hosts[heap.peek()]!;
      const trueAt = Math.max(h.nextEligibleMs, this.ips.eligibleAt(h.ip));
      if (trueAt > this.parkedAt[h.id]!) {
        this.parkedAt[h.id] = trueAt;
        heap.update(h.id);
        continue;
      }
      if (at === undefined || this.parkedAt[h.id]! < at) at = this.parkedAt[h.id]!;
      break;
    }
    if (this.wheel && this.wheel.len > 0) {
      const tick = this.wheel.nextTick();
      if (tick !== undefined) {
        const t = Math.max(tick, this.wheelHour + 1) * HOUR_MS;
        if (at === undefined || t < at) at = t;
      }
    }
    return at;
  }

  // ───────────────────────────── report ─────────────────────────────

  /**
   * Records the outcome of a dispatched URL at clock `nowMs`: politeness adapts, the URL's
   * status and schedule update, links enter the intake, and the host is re-placed. Returns
   * false (and changes nothing) when `outcome.row` is not in flight for that URL — a
   * duplicate or stale report.
   */
  report(outcome: Outcome, nowMs: number): boolean {
    if (outcome === null || typeof outcome !== 'object') throw new InvalidArgumentError(`report: expected an Outcome, received ${String(outcome)}`);
    checkMs('report nowMs', nowMs);
    const row = outcome.row;
    const t = this.table;
    if (!Number.isInteger(row) || row < 0 || row >= t.rows) {
      throw new InvalidArgumentError(`report: outcome.row ${String(row)} is not a row of this frontier (0..${t.rows - 1})`);
    }
    if (typeof outcome.status !== 'number') throw new InvalidArgumentError(`report: expected a numeric status, received ${String(outcome.status)}`);
    if (t.status[row] !== UrlStatus.InFlight) return false;
    if (outcome.url !== undefined && !t.arena.equals(t.url[row]!, outcome.url)) return false;
    if (nowMs > this.clockMs) this.clockMs = nowMs;
    const h = this.hosts[t.host[row]!]!;
    h.inFlightRow = -1;
    this.inFlight--;
    this.adaptPoliteness(h, outcome, nowMs);
    const status = outcome.status;
    if (!this.opts.stateMachine) {
      this.markCrawled(row, outcome, nowMs, h);
    } else if (outcome.robotsDisallowed) {
      t.status[row] = UrlStatus.Disallowed;
    } else if ((status >= 200 && status < 300) || status === 304) {
      this.markCrawled(row, outcome, nowMs, h);
    } else if (status >= 300 && status < 400) {
      this.markRedirected(row, outcome, nowMs, h);
    } else if (status === 429 || status === 0 || (status >= 500 && status < 600)) {
      const tries = t.retries[row]! + 1;
      t.retries[row] = Math.min(tries, 255);
      if (tries > this.opts.retryLimit) {
        t.status[row] = UrlStatus.Gone;
      } else {
        t.status[row] = UrlStatus.RetryWait;
        this.queues.push(row);
      }
    } else if (status >= 400 && status < 500) {
      t.status[row] = UrlStatus.Gone;
    } else {
      this.markCrawled(row, outcome, nowMs, h);
    }
    // Re-place the host: yield to an aged front-bank host, park, or give up the slot.
    if (this.opts.dispatchThreads > 0 && h.servedSinceActivation >= this.opts.rotationQuantum && this.agedWaiting(nowMs)) {
      this.deactivate(h, nowMs);
    } else if (this.queues.size(h.id) > 0) {
      this.park(h);
    } else {
      this.deactivate(h, nowMs);
    }
    return true;
  }

  private adaptPoliteness(h: HostRecord, o: Outcome, nowMs: number): void {
    const cfg = this.politeness;
    const signal = signalOf(o, o.latencyMs !== undefined && observeLatency(cfg, h, o.latencyMs), nowMs);
    h.intervalMs = hostInterval(cfg, adapt(cfg, h.intervalMs, signal), h.crawlDelayMs);
    let next = h.lastDispatchMs + h.intervalMs;
    const ra = signal.retryAfterMs;
    if (ra !== undefined && ra > 0 && nowMs + ra > next) next = nowMs + ra;
    h.nextEligibleMs = next;
    // Dead means pinned at the ceiling by the server's own failures; a robots crawl-delay at or
    // above the ceiling pins the interval there too, and must not make a healthy host dead.
    if (atCeiling(cfg, h.intervalMs) && isThrottle(signal.status)) {
      h.ceilingStreak++;
      if (h.ceilingStreak >= DEAD_AFTER) h.flags |= HostFlags.Dead;
    } else {
      h.ceilingStreak = 0;
      h.flags &= ~HostFlags.Dead;
    }
  }

  /**
   * The registrable domain a host group belongs to. In-degree counts distinct linking
   * *domains* whatever the grouping, so `a.example.com` linking `b.example.com` under host
   * grouping is not a cross-site vote.
   */
  private linkDomain(group: string): string {
    if (this.opts.grouping === 'registrable') return group;
    let d = this.domainOfGroup.get(group);
    if (d === undefined) {
      try {
        d = hostGroupKey(group, 'registrable');
      } catch {
        d = group; // not a host or origin name: its own domain
      }
      this.domainOfGroup.set(group, d);
    }
    return d;
  }

  private markCrawled(row: number, o: Outcome, nowMs: number, h: HostRecord): void {
    const t = this.table;
    const hours = Math.floor(nowMs / HOUR_MS);
    const previousCrawled = t.lastCrawled[row]!;
    const previousLastModified = t.lastModified[row]!;
    const first = t.crawlCount[row] === 0 && (t.fpFlags[row]! & FpFlag.ContentFp) === 0;
    let change: CrawledRecord['change'] = first ? 'first' : 'none';
    if (o.status !== 304 && o.contentFp !== undefined) {
      const [lo, hi] = u64Lanes(o.contentFp, 'outcome.contentFp');
      const had = (t.fpFlags[row]! & FpFlag.ContentFp) !== 0;
      if (had && (t.contentFp[row * 2] !== lo || t.contentFp[row * 2 + 1] !== hi)) {
        change = 'real';
        if (o.simhash !== undefined && (t.fpFlags[row]! & FpFlag.Simhash) !== 0) {
          const [slo, shi] = u64Lanes(o.simhash, 'outcome.simhash');
          const olo = t.simhash[row * 2]!;
          const ohi = t.simhash[row * 2 + 1]!;
          // classifyChange's rule on the stored lanes (no BigInt or wasm call per report): a
          // zero simhash (no text) is no signal, so the change is real.
          const d = popcount32(slo ^ olo) + popcount32(shi ^ ohi);
          if ((slo | shi) !== 0 && (olo | ohi) !== 0 && d <= NEAR_DUP_DISTANCE) change = 'cosmetic';
        }
      }
      t.contentFp[row * 2] = lo;
      t.contentFp[row * 2 + 1] = hi;
      t.fpFlags[row] = t.fpFlags[row]! | FpFlag.ContentFp;
    }
    if (o.status !== 304 && o.simhash !== undefined) {
      const [slo, shi] = u64Lanes(o.simhash, 'outcome.simhash');
      t.simhash[row * 2] = slo;
      t.simhash[row * 2 + 1] = shi;
      t.fpFlags[row] = t.fpFlags[row]! | FpFlag.Simhash;
    }
    if (o.etag !== undefined && o.etag !== t.etagOf(row)) t.etag[row] = t.arena.add(o.etag) + 1;
    if (o.lastModified !== undefined && Number.isInteger(o.lastModified) && o.lastModified >= 0) {
      t.lastModified[row] = Math.min(o.lastModified, 0xffff_ffff);
    }
    t.status[row] = UrlStatus.Crawled;
    t.retries[row] = 0;
    t.lastCrawled[row] = hours;
    t.crawlCount[row] = Math.min(t.crawlCount[row]! + 1, 0xffff);
    if (change === 'real') {
      t.changeCount[row] = Math.min(t.changeCount[row]! + 1, 0xffff);
      t.noChangeStreak[row] = 0;
      t.lastChanged[row] = hours;
    } else if (change !== 'first') {
      t.noChangeStreak[row] = Math.min(t.noChangeStreak[row]! + 1, 0xffff);
    }
    let due = hours + FLAT_RECRAWL_HOURS;
    const fresh = this.opts.freshness;
    if (fresh !== undefined) {
      if (t.crawlCount[row] === 1) t.firstCrawled[row] = hours;
      const sent = o.lastModified !== undefined && Number.isInteger(o.lastModified) && o.lastModified > 0 ? Math.min(o.lastModified, 0xffff_ffff) : 0;
      const rec = this.record.bind(row, change, h.intervalMs, o.status, nowMs / HOUR_MS, previousCrawled, previousLastModified, sent);
      const v = typeof fresh === 'function' ? fresh(rec, hours) : fresh.nextDue(rec, hours);
      if (typeof v === 'number' && Number.isFinite(v)) due = Math.floor(v);
    }
    due = Math.min(Math.max(due, hours + 1), 0xffff_ffff);
    t.nextDue[row] = due;
    this.wheel?.schedule(row, due);
    const links = o.links;
    const cashEach = this.prio ? this.prio.crawl(row, links?.length ?? 0) : 0;
    if (links !== undefined && links.length > 0 && o.status !== 304) this.intakeLinks(row, links, cashEach, h);
  }

  private intakeLinks(row: number, links: NonNullable<Outcome['links']>, cashEach: number, h: HostRecord): void {
    const t = this.table;
    const depth = Math.min(t.depth[row]! + 1, 0xffff);
    const weight = this.prio ? cashEach : 1 / (depth + 1);
    const batch: Discovery[] = [];
    const k = this.oneKey;
    for (const link of links) {
      if (link.nofollow) continue;
      const c = linkKey(link.url, undefined, this.opts.grouping, k);
      if (c === undefined) continue;
      batch.push({ url: c.url, key: k.slice(), host: c.host, depth, cash: weight, fromHost: h.name });
    }
    const local = this.opts.linkRouter ? this.opts.linkRouter(batch) : batch;
    for (const d of local) this.discover(d, this.clockMs);
  }

  private markRedirected(row: number, o: Outcome, nowMs: number, h: HostRecord): void {
    const t = this.table;
    t.status[row] = UrlStatus.Redirected;
    t.retries[row] = 0;
    const cash = this.prio ? this.prio.crawl(row, 1) : t.priority[row]!;
    if (o.location === undefined) return;
    const k = this.oneKey;
    const c = linkKey(o.location, t.urlOf(row), this.opts.grouping, k);
    if (c === undefined) return;
    const key = k.slice();
    const d: Discovery = { url: c.url, key, host: c.host, depth: t.depth[row]!, cash, fromHost: h.name };
    const local = this.opts.linkRouter ? this.opts.linkRouter([d]) : [d];
    for (const x of local) {
      this.discover(x, nowMs);
      if (x.url !== c.url) continue;
      const to = this.index.get(key, 0);
      if (to !== undefined && to !== row) t.redirectTo[row] = to + 1;
    }
  }

  /**
   * Re-checks a host parked while the robots seam was not ready (a robots.txt load or a DNS
   * answer it waited for has arrived): it surfaces as soon as its own and its IP's windows
   * allow, instead of at the retry time it was parked with. Never earlier than politeness
   * allows; a no-op for a host that is not parked or unknown. Returns whether it moved.
   */
  wake(host: string): boolean {
    const id = this.hostByName.get(host);
    if (id === undefined) return false;
    const h = this.hosts[id]!;
    if (h.state !== HostState.Parked) return false;
    const at = Math.max(h.nextEligibleMs, this.ips.eligibleAt(h.ip));
    if (at >= this.parkedAt[id]!) return false;
    this.parkedAt[id] = at;
    this.hostHeap.update(id);
    return true;
  }

  // ───────────────────────────── crash recovery ─────────────────────────────

  /**
   * Crash recovery: applies the outcome of a fetch dispatched at `dispatchedAtMs` and answered
   * before a crash that the last checkpoint did not see (the engine journals every outcome it
   * reports). The URL leaves its host queue as if dispatched then — the host's and its IP's
   * windows are spent at that time — and the outcome is reported at `nowMs` exactly as `report`
   * would (politeness, state machine, links). Returns false, changing nothing, when the key is
   * unknown, the URL is not waiting for a fetch (the outcome is already in the checkpoint), or
   * its host has a fetch in flight (replay before dispatching anything).
   */
  replay(key: KeyArray | string, outcome: Outcome, dispatchedAtMs: number, nowMs: number): boolean {
    if (outcome === null || typeof outcome !== 'object') throw new InvalidArgumentError(`replay: expected an Outcome, received ${String(outcome)}`);
    checkMs('replay dispatchedAtMs', dispatchedAtMs);
    checkMs('replay nowMs', nowMs);
    const row = this.rowOfKey(key);
    if (row === undefined || !this.queues.queued(row)) return false;
    const h = this.hosts[this.table.host[row]!]!;
    switch (h.state) {
      case HostState.Front:
        this.frontBank.remove(h.id);
        this.aging.remove(h.id);
        this.active++;
        h.activatedAtMs = dispatchedAtMs;
        h.servedSinceActivation = 0;
        break;
      case HostState.Parked:
        this.hostHeap.remove(h.id);
        break;
      case HostState.Ready:
        this.ready[this.shardOf(h.id)]!.remove(h.id);
        break;
      default:
        return false; // Idle holds no queued row; InFlight has a fetch out
    }
    if (dispatchedAtMs > this.clockMs) this.clockMs = dispatchedAtMs;
    this.queues.remove(row);
    this.ipOf(h);
    this.launch(h, row, dispatchedAtMs);
    return this.report({ ...outcome, row, url: this.table.urlOf(row) }, nowMs);
  }

  /**
   * Records a fetch start to `host` at `atMs` (on `ip`, when known) that the frontier did not
   * time itself, spending the host's and the IP's windows from then: a request that left
   * later than its dispatch (the engine sees the bytes go out), or one made before a crash
   * whose outcome was lost (so a restarted crawler keeps the intervals across the crash; the
   * URL itself is fetched again, since a checkpoint writes in-flight URLs back as
   * schedulable). Windows only ever move later. Returns false for an unknown host.
   */
  recordStart(host: string, ip: string | undefined, atMs: number): boolean {
    checkMs('recordStart atMs', atMs);
    const id = this.hostByName.get(host);
    if (id === undefined) return false;
    const h = this.hosts[id]!;
    if (h.ip === '' && typeof ip === 'string') h.ip = ip;
    if (atMs > h.lastDispatchMs) h.lastDispatchMs = atMs;
    const next = atMs + h.intervalMs;
    if (next > h.nextEligibleMs) h.nextEligibleMs = next;
    if (h.ip !== '') {
      this.ips.spend(h.ip, atMs, h.intervalMs);
      if (atMs > h.ipSpendMs) {
        h.ipSpendMs = atMs;
        h.ipSpendIntervalMs = h.intervalMs;
      }
    }
    // A parked host re-checks its windows when it surfaces; a ready one must go back to wait.
    if (h.state === HostState.Ready) {
      this.ready[this.shardOf(h.id)]!.remove(h.id);
      this.park(h);
    }
    return true;
  }

  // ───────────────────────────── drivers and queries ─────────────────────────────

  /**
   * The synchronous driver over a logical clock: dispatch every schedulable URL from
   * `startMs`, fetching each through `fetcher` and reporting its outcome at once, advancing
   * the clock to `nextEligible()` whenever nothing may go. Returns the dispatch log.
   *
   * `limit` (a count, or `{ limit, untilMs }`) stops after that many dispatches; the frontier
   * stays consistent, so another drain resumes from the last clock. URLs deferred by the
   * schedule index are followed only up to `untilMs`; without it the drain stops once only
   * deferred URLs remain (a recrawling partition would otherwise never drain).
   */
  drain(startMs: number, fetcher: DrainFetcher, limit: number | DrainLimits = Infinity): Dispatched[] {
    checkMs('drain startMs', startMs);
    if (typeof fetcher !== 'function') throw new InvalidArgumentError(`drain: expected a fetcher function, received ${typeof fetcher}`);
    const max = typeof limit === 'number' ? limit : (limit.limit ?? Infinity);
    const until = typeof limit === 'number' ? undefined : limit.untilMs;
    const log: Dispatched[] = [];
    let now = Math.max(startMs, this.clockMs);
    let stalls = 0;
    while (log.length < max) {
      const req = this.dispatch(now);
      if (req !== undefined) {
        stalls = 0;
        log.push({ row: req.row, url: req.url, host: req.host, atMs: now, ip: req.ip ?? '' });
        this.report(fetcher(req, now), now);
        continue;
      }
      const next = this.nextEligible();
      if (next === undefined) break;
      const onlyDeferred = this.queues.total === 0 && this.inFlight === 0;
      if (until === undefined ? onlyDeferred : next > until) break;
      if (next <= now) {
        // Activation or a lazily parked host: the next dispatch makes progress; guard anyway.
        if (++stalls > 4) throw new Error(`frontier drain stalled at ${now} ms (internal error)`);
      } else {
        stalls = 0;
        now = next;
      }
    }
    return log;
  }

  /** URLs queued for dispatch (front bank and back queues). */
  pending(): number {
    return this.queues.total;
  }

  /** URLs the frontier holds (every status). */
  len(): number {
    return this.table.rows;
  }

  /** The politeness policy in force (frozen). */
  get politenessPolicy(): Readonly<PolitenessConfig> {
    return this.politeness;
  }

  /** Hosts known to the frontier. */
  hostCount(): number {
    return this.hosts.length;
  }

  /**
   * A copy of every host record with its queue length and IP window, in host-id order
   * (O(hosts)); `name` picks one host (an empty array when unknown).
   */
  hostSnapshots(name?: string): HostSnapshot[] {
    const ids = name === undefined ? this.hosts.map((h) => h.id) : [this.hostByName.get(name)].filter((x): x is number => x !== undefined);
    return ids.map((id) => {
      const h = this.hosts[id]!;
      return {
        name: h.name,
        ip: h.ip,
        state: HOST_STATE_NAMES[h.state]!,
        flags: h.flags,
        intervalMs: h.intervalMs,
        crawlDelayMs: h.crawlDelayMs,
        nextEligibleMs: h.nextEligibleMs,
        ipEligibleMs: this.ips.eligibleAt(h.ip),
        lastDispatchMs: h.lastDispatchMs,
        latencyMs: h.latencyMs,
        queued: this.queues.size(id),
        urlBudget: h.urlBudget,
        depthCap: h.depthCap,
        admitted: h.admitted,
        ceilingStreak: h.ceilingStreak,
        inFlightUrl: h.inFlightRow >= 0 ? this.table.urlOf(h.inFlightRow) : undefined,
      };
    });
  }

  /** The prioritizer when prioritization is on (read-only inspection), else undefined. */
  prioritizer(): Prioritizer | undefined {
    return this.prio;
  }

  /** Counters at epoch-hour `nowHours` (one O(urls) walk). */
  stats(nowHours: number): FrontierStats {
    checkHours('stats nowHours', nowHours);
    const t = this.table;
    const counts = new Array<number>(URL_STATUS_NAMES.length).fill(0);
    let due = 0;
    let nextDue = 0;
    for (let r = 0; r < t.rows; r++) {
      const s = t.status[r]!;
      counts[s]!++;
      if (!wantsFetch(s)) continue;
      const d = t.nextDue[r]!;
      if (d <= nowHours) due++;
      if (nextDue === 0 || d < nextDue) nextDue = d;
    }
    const byStatus: Record<string, number> = {};
    URL_STATUS_NAMES.forEach((name, i) => {
      byStatus[name] = counts[i]!;
    });
    const seenKeys = this.index.len;
    return {
      urls: t.rows,
      hosts: this.hosts.length,
      activeHosts: this.active,
      inFlight: this.inFlight,
      pending: this.queues.total,
      deferred: this.wheel?.len ?? 0,
      due,
      byStatus,
      seenKeys,
      seenBitsPerUrl: seenKeys === 0 ? 0 : (this.index.memoryBytes * 8) / seenKeys,
      nextDueHours: nextDue,
      memoryBytes: this.memoryBytes(),
    };
  }

  /** Bytes of the frontier's typed arrays, arena, index and queues. */
  memoryBytes(): number {
    let b = this.table.memoryBytes + this.queues.memoryBytes + this.index.memoryBytes;
    if (this.prio) b += this.table.capacity * 12;
    return b;
  }

  /**
   * URLs whose next-due hour is at or before `beforeHours` and that still want a fetch,
   * sorted by due hour then key. `host` filters to one host group (by name, or by HostKey as
   * a bigint); `limit` caps the result (0 = all).
   */
  dueUrls(beforeHours: number, host?: string | bigint, limit = 0): DueUrl[] {
    checkHours('dueUrls beforeHours', beforeHours);
    const t = this.table;
    let hostId = -1;
    if (typeof host === 'string') {
      hostId = this.hostByName.get(host) ?? -2;
    } else if (typeof host === 'bigint') {
      const [lo, hi] = u64Lanes(host, 'dueUrls host');
      hostId = this.hosts.find((x) => x.hostKeyLo === lo && x.hostKeyHi === hi)?.id ?? -2;
    }
    if (hostId === -2) return [];
    const rows: number[] = [];
    for (let r = 0; r < t.rows; r++) {
      if (hostId >= 0 && t.host[r] !== hostId) continue;
      if (wantsFetch(t.status[r]!) && t.nextDue[r]! <= beforeHours) rows.push(r);
    }
    const k = t.key;
    rows.sort((a, b) => t.nextDue[a]! - t.nextDue[b]! || k[a * 4 + 1]! - k[b * 4 + 1]! || k[a * 4]! - k[b * 4]! || k[a * 4 + 3]! - k[b * 4 + 3]! || k[a * 4 + 2]! - k[b * 4 + 2]!);
    const n = limit > 0 ? Math.min(limit, rows.length) : rows.length;
    const out: DueUrl[] = [];
    for (let i = 0; i < n; i++) {
      const r = rows[i]!;
      out.push({
        key: keyToHex(k, r),
        url: t.urlOf(r),
        host: this.hosts[t.host[r]!]!.name,
        dueHours: t.nextDue[r]!,
        status: URL_STATUS_NAMES[t.status[r]!]!,
      });
    }
    return out;
  }

  private rowOfKey(key: KeyArray | string): number | undefined {
    const k = typeof key === 'string' ? keyFromHex(key, this.oneKey) : key;
    if (!(k instanceof Uint32Array) || k.length < 4) throw new InvalidArgumentError(`expected a URLKey (4 lanes or 32 hex digits), received ${String(key)}`);
    return this.index.get(k, 0);
  }

  /**
   * Pre-populates a never-crawled URL with validators from a prior crawl (ETag,
   * Last-Modified in epoch-seconds, prior content fingerprint), so its first fetch is
   * conditional and its first refetch is classified as change or no change. A no-op
   * (returns false) for an unknown key or a URL already crawled.
   */
  warm(key: KeyArray | string, etag: string | undefined, lastModified: number | undefined, prevFp: bigint | undefined): boolean {
    const row = this.rowOfKey(key);
    if (row === undefined) return false;
    const t = this.table;
    if (t.crawlCount[row] !== 0) return false;
    if (etag !== undefined && etag !== '') t.etag[row] = t.arena.add(etag) + 1;
    if (lastModified !== undefined) {
      if (!Number.isInteger(lastModified) || lastModified < 0 || lastModified > 0xffff_ffff) {
        throw new InvalidArgumentError(`warm: expected lastModified as epoch-seconds, received ${String(lastModified)}`);
      }
      t.lastModified[row] = lastModified;
    }
    if (prevFp !== undefined) {
      const [lo, hi] = u64Lanes(prevFp, 'warm prevFp');
      t.contentFp[row * 2] = lo;
      t.contentFp[row * 2 + 1] = hi;
      t.fpFlags[row] = t.fpFlags[row]! | FpFlag.ContentFp;
    }
    return true;
  }

  /**
   * Applies an imported host score. A known host takes it at once (its queued URLs are
   * re-prioritized when the prioritizer is on); an unknown host has it parked until it
   * first appears.
   */
  importHostSignal(signal: HostSignal): void {
    if (signal === null || typeof signal !== 'object' || typeof signal.host !== 'string' || !Number.isFinite(signal.score)) {
      throw new InvalidArgumentError(`importHostSignal: expected { host: string, score: finite number }, received ${String(signal)}`);
    }
    const id = this.hostByName.get(signal.host);
    if (id === undefined) {
      this.parkedScores.set(signal.host, signal.score);
      return;
    }
    const h = this.hosts[id]!;
    h.hostScore = signal.score;
    if (!this.prio) return;
    const rows = this.queues.rowsOf(id);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      this.table.priority[r] = this.prio.priority(r, id, h.hostScore);
    }
    this.queues.reheap(id);
    this.hostGainedWork(h);
  }

  /**
   * Applies an imported PageRank to one URL (superseding an earlier import). A no-op when
   * prioritization is off or the URL is unknown; returns whether it applied.
   */
  importUrlSignal(signal: UrlSignal): boolean {
    if (signal === null || typeof signal !== 'object' || !Number.isFinite(signal.rank)) {
      throw new InvalidArgumentError(`importUrlSignal: expected { key | url+host, rank: finite number }, received ${String(signal)}`);
    }
    if (!this.prio) return false;
    let row: number | undefined;
    if (signal.key !== undefined) row = this.rowOfKey(signal.key);
    else if (typeof signal.url === 'string' && typeof signal.host === 'string') {
      keyOf(signal.url, signal.host, this.oneKey, 0);
      row = this.index.get(this.oneKey, 0);
    } else {
      throw new InvalidArgumentError('importUrlSignal: expected a key, or a url with its host');
    }
    if (row === undefined) return false;
    this.prio.setRank(row, signal.rank);
    this.reprioritize(row);
    return true;
  }

  // ───────────────────────────── checkpoint and recovery ─────────────────────────────

  /**
   * The frontier's durable state as a partition image: URL rows sorted by key (an in-flight
   * URL written back as schedulable), hosts sorted by HostKey with their live politeness
   * windows, the compacted arena, and the prioritizer, freshness and scheduler state.
   */
  checkpoint(): PartitionImage {
    const order = this.index.exportSorted().payloads;
    const { columns, arena } = this.table.exportRows(order);
    const status = columns.find((c) => c.id === ColumnId.Status)!.data;
    const crawls = columns.find((c) => c.id === ColumnId.CrawlCount)!.data;
    for (let i = 0; i < status.length; i++) {
      if (status[i] === UrlStatus.InFlight) status[i] = crawls[i] === 0 ? UrlStatus.Scheduled : UrlStatus.DueRecrawl;
    }
    const blocks: ColumnBlock[] = [...columns];
    const hostOrder = this.hosts.map((h) => h.id).sort((a, b) => (hostKeyBefore(this.hosts[a]!, this.hosts[b]!) ? -1 : 1));
    let prioritizer: Uint8Array = new Uint8Array(0);
    if (this.prio) {
      const { cash, history, rank } = this.prio.rowColumns();
      const permute = (src: Float32Array): Float32Array => {
        const out = new Float32Array(order.length);
        for (let i = 0; i < order.length; i++) out[i] = src[order[i]!]!;
        return out;
      };
      blocks.push({ id: ColumnId.Cash, type: 'f32', lanes: 1, data: permute(cash) });
      blocks.push({ id: ColumnId.History, type: 'f32', lanes: 1, data: permute(history) });
      blocks.push({ id: ColumnId.Rank, type: 'f32', lanes: 1, data: permute(rank) });
      prioritizer = this.prio.encodeHosts(hostOrder);
    }
    // Host ids in the file are positions in HostKey order; remap the host column.
    const hostRemap = new Uint32Array(this.hosts.length);
    hostOrder.forEach((id, pos) => {
      hostRemap[id] = pos;
    });
    const hostCol = blocks.find((c) => c.id === ColumnId.Host)!.data;
    for (let i = 0; i < hostCol.length; i++) hostCol[i] = hostRemap[hostCol[i]!]!;
    const fresh = this.opts.freshness;
    const freshness =
      fresh !== undefined && typeof fresh === 'object' && fresh.exportState ? fresh.exportState(Uint32Array.from(hostOrder)) : new Uint8Array(0);
    const sched: SchedulerState = {
      clockMs: this.clockMs,
      wheelHour: this.wheelHour,
      dispatches: this.dispatches,
      parkedScores: [...this.parkedScores.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
    };
    return {
      meta: {
        partitionId: this.partitionId,
        createdHours: this.createdHours,
        canonPolicyVersion: this.opts.canonPolicyVersion,
        settings: { grouping: this.opts.grouping, scheduleIndex: this.opts.scheduleIndex, prioritizer: this.prio !== undefined },
      },
      formatMinor: FORMAT_MINOR,
      rows: order.length,
      columns: blocks,
      hosts: hostOrder.map((id) => this.hosts[id]!.toImage()),
      arena,
      seenFilter: this.opts.seenFilter?.serialize() ?? new Uint8Array(0),
      prioritizer,
      freshness,
      scheduler: new TextEncoder().encode(JSON.stringify(sched)),
    };
  }

  /** `checkpoint()` encoded as `.meguri` bytes. */
  checkpointBytes(): Uint8Array {
    return encodePartition(this.checkpoint());
  }

  /**
   * Rebuilds a frontier from a checkpoint (bytes or a decoded image) with `options` (pass
   * the options the original ran with for an identical continuation). Every uncrawled URL
   * re-enters its host queue, hosts come back with their politeness windows and back-queue
   * membership, the per-IP windows are replayed, the schedule index is rebuilt from
   * next-due hours, and URLs that were in flight are schedulable again.
   * @throws CorruptPartitionError when the file or its contents are inconsistent.
   */
  static recover(source: Uint8Array | PartitionImage, options?: Partial<FrontierOptions> | null): Frontier {
    const image = source instanceof Uint8Array ? decodePartition(source) : source;
    const f = new Frontier(image.meta.partitionId, image.meta.createdHours, options);
    f.restore(image);
    return f;
  }

  private restore(image: PartitionImage): void {
    const sched = parseScheduler(image.scheduler);
    this.clockMs = sched.clockMs;
    this.wheelHour = Math.max(sched.wheelHour, this.createdHours);
    this.dispatches = sched.dispatches;
    for (const [name, score] of sched.parkedScores) this.parkedScores.set(name, score);
    const rows = image.rows;
    const t = UrlTable.fromColumns(rows, image.columns, image.arena, this.opts.freshness !== undefined);
    if (this.opts.freshness !== undefined) fillFreshnessColumns(t, image.columns);
    // Swap the validated table's columns into this frontier's table object.
    Object.assign(this.table, t);
    const hostCount = image.hosts.length;
    const wasActive: boolean[] = [];
    image.hosts.forEach((img, id) => {
      if (this.hostByName.has(img.name)) throw new CorruptPartitionError('hosts', `host ${JSON.stringify(img.name)} appears twice`);
      const { host, wasActive: act } = HostRecord.fromImage(id, img, this.hostTimes);
      this.hosts.push(host);
      this.hostByName.set(host.name, id);
      this.registerHost(host);
      wasActive.push(act);
    });
    const tk = this.table.key;
    for (let r = 0; r < rows; r++) {
      const hid = this.table.host[r]!;
      const h = this.hosts[hid];
      if (h === undefined) throw new CorruptPartitionError('urls', `row ${r} names host ${hid}, only ${hostCount} hosts`);
      if (tk[r * 4] !== h.hostKeyLo || tk[r * 4 + 1] !== h.hostKeyHi) {
        throw new CorruptPartitionError('urls', `row ${r} key's HostKey does not match host ${JSON.stringify(h.name)}`);
      }
      if (this.table.status[r] === UrlStatus.InFlight) {
        this.table.status[r] = this.table.crawlCount[r] === 0 ? UrlStatus.Scheduled : UrlStatus.DueRecrawl;
      }
    }
    this.index.free();
    const payloads = new Uint32Array(rows);
    for (let r = 0; r < rows; r++) payloads[r] = r;
    this.index = keyIndexFromSorted(tk.slice(0, rows * 4), payloads);
    this.queues.ensureRows(rows);
    if (this.prio) {
      const col = (id: number): Float32Array => {
        const c = image.columns.find((x) => x.id === id);
        if (c === undefined) return new Float32Array(rows);
        if (c.type !== 'f32' || c.lanes !== 1) throw new CorruptPartitionError('urls', `prioritizer column ${id} is ${c.type}×${c.lanes}, expected f32×1`);
        return c.data as Float32Array;
      };
      this.prio.restoreRows(rows, col(ColumnId.Cash), col(ColumnId.History), col(ColumnId.Rank));
      this.prio.restoreHosts(image.prioritizer, hostCount);
    }
    const fresh = this.opts.freshness;
    if (fresh !== undefined && typeof fresh === 'object' && fresh.importState && image.freshness.length > 0) {
      fresh.importState(image.freshness);
    }
    // Schedule index and queues.
    const status = this.table.status;
    const nextDue = this.table.nextDue;
    const deferIds: number[] = [];
    const deferTicks: number[] = [];
    // Rows are in key order, so each host's rows are contiguous: gather a host's queued rows
    // and load its heap in one pass.
    const batch = new Uint32Array(rows);
    let batchHost = -1;
    let batchLen = 0;
    const hostOf = this.table.host;
    for (let r = 0; r < rows; r++) {
      const s = status[r]!;
      let queue = false;
      if (this.wheel && (s === UrlStatus.Crawled || s === UrlStatus.Scheduled) && nextDue[r]! > this.wheelHour) {
        deferIds.push(r);
        deferTicks.push(nextDue[r]!);
      } else if (this.wheel && s === UrlStatus.Crawled) {
        status[r] = UrlStatus.DueRecrawl;
        queue = true;
      } else if (isQueuedStatus(s)) {
        queue = true;
      }
      if (!queue) continue;
      const h = hostOf[r]!;
      if (h !== batchHost) {
        if (batchLen > 0) this.queues.pushAll(batchHost, batch, batchLen);
        batchHost = h;
        batchLen = 0;
      }
      batch[batchLen++] = r;
    }
    if (batchLen > 0) this.queues.pushAll(batchHost, batch, batchLen);
    if (this.wheel && deferIds.length > 0) {
      this.wheel.advance(this.wheelHour);
      this.wheel.scheduleBatch(Uint32Array.from(deferIds), Uint32Array.from(deferTicks));
    }
    // Per-IP windows: replay each host's last spend in time order.
    const spenders = this.hosts.filter((h) => h.ip !== '' && h.ipSpendMs >= 0);
    spenders.sort((a, b) => a.ipSpendMs - b.ipSpendMs || (hostKeyBefore(a, b) ? -1 : 1));
    for (const h of spenders) this.ips.spend(h.ip, h.ipSpendMs, h.ipSpendIntervalMs);
    // Hosts back into the banks.
    for (const h of this.hosts) {
      const work = this.queues.size(h.id) > 0;
      if (wasActive[h.id] && work) {
        this.active++;
        this.park(h);
      } else if (work) {
        h.state = HostState.Front;
        this.frontBank.push(h.id);
        if (this.opts.dispatchThreads > 0) this.aging.push(h.id);
      }
    }
  }

  /** Releases the wasm-resident index. The frontier must not be used afterwards. */
  free(): void {
    this.index.free();
    this.wheel?.free();
  }

  /** Same as `free()`. */
  [Symbol.dispose](): void {
    this.free();
  }
}

/**
 * A partition written without the freshness columns (freshness was off, or an older writer)
 * gets defaults: the first fetch is dated at the first-seen hour (or the only fetch), and a
 * URL already fetched has no trusted Last-Modified history (its exposure was never measured).
 */
function fillFreshnessColumns(t: UrlTable, columns: readonly ColumnBlock[]): void {
  const has = (id: number): boolean => columns.some((c) => c.id === id);
  if (!has(ColumnId.FirstCrawled)) {
    for (let r = 0; r < t.rows; r++) {
      const n = t.crawlCount[r]!;
      t.firstCrawled[r] = n === 0 ? 0 : n === 1 ? t.lastCrawled[r]! : Math.min(t.firstSeen[r]!, t.lastCrawled[r]!);
    }
  }
  if (!has(ColumnId.LmHours)) {
    for (let r = 0; r < t.rows; r++) t.lmHours[r] = t.crawlCount[r] === 0 ? 0 : -1;
  }
}

function sameKey(keys: Uint32Array, a: number, b: number): boolean {
  const x = a * 4;
  const y = b * 4;
  return keys[x] === keys[y] && keys[x + 1] === keys[y + 1] && keys[x + 2] === keys[y + 2] && keys[x + 3] === keys[y + 3];
}

function parseScheduler(blob: Uint8Array): SchedulerState {
  if (blob.length === 0) return { clockMs: 0, wheelHour: 0, dispatches: 0, parkedScores: [] };
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(blob));
  } catch {
    throw new CorruptPartitionError('scheduler', 'state is not valid UTF-8 JSON');
  }
  const o = v as Partial<SchedulerState> | null;
  const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  if (
    o === null ||
    typeof o !== 'object' ||
    !num(o.clockMs) ||
    !num(o.wheelHour) ||
    !num(o.dispatches) ||
    !Array.isArray(o.parkedScores) ||
    !o.parkedScores.every((p) => Array.isArray(p) && typeof p[0] === 'string' && num(p[1]))
  ) {
    throw new CorruptPartitionError('scheduler', 'state lacks clockMs, wheelHour, dispatches or parkedScores');
  }
  return o as SchedulerState;
}

/** The reusable record view handed to the freshness hook. */
class MutableRecord implements CrawledRecord {
  row = 0;
  change: CrawledRecord['change'] = 'first';
  hostIntervalMs = 0;
  status = 0;
  fetchedAtHours = 0;
  previousCrawled = 0;
  previousLastModified = 0;
  sentLastModified = 0;
  constructor(private readonly t: UrlTable) {}
  bind(
    row: number,
    change: CrawledRecord['change'],
    hostIntervalMs: number,
    status: number,
    fetchedAtHours: number,
    previousCrawled: number,
    previousLastModified: number,
    sentLastModified: number,
  ): this {
    this.row = row;
    this.change = change;
    this.hostIntervalMs = hostIntervalMs;
    this.status = status;
    this.fetchedAtHours = fetchedAtHours;
    this.previousCrawled = previousCrawled;
    this.previousLastModified = previousLastModified;
    this.sentLastModified = sentLastModified;
    return this;
  }
  get host(): number {
    return this.t.host[this.row]!;
  }
  get firstCrawled(): number {
    return this.t.firstCrawled[this.row]!;
  }
  get lmHours(): number {
    return this.t.lmHours[this.row]!;
  }
  set lmHours(v: number) {
    if (Number.isFinite(v) && v >= -1) this.t.lmHours[this.row] = v;
  }
  get url(): string {
    return this.t.urlOf(this.row);
  }
  get firstSeen(): number {
    return this.t.firstSeen[this.row]!;
  }
  get lastCrawled(): number {
    return this.t.lastCrawled[this.row]!;
  }
  get lastChanged(): number {
    return this.t.lastChanged[this.row]!;
  }
  get crawlCount(): number {
    return this.t.crawlCount[this.row]!;
  }
  get changeCount(): number {
    return this.t.changeCount[this.row]!;
  }
  get noChangeStreak(): number {
    return this.t.noChangeStreak[this.row]!;
  }
  get priority(): number {
    return this.t.priority[this.row]!;
  }
  get nextDue(): number {
    return this.t.nextDue[this.row]!;
  }
  get lastModified(): number {
    return this.t.lastModified[this.row]!;
  }
  get contentFpLo(): number {
    return this.t.contentFp[this.row * 2]!;
  }
  get contentFpHi(): number {
    return this.t.contentFp[this.row * 2 + 1]!;
  }
  get simhashLo(): number {
    return this.t.simhash[this.row * 2]!;
  }
  get simhashHi(): number {
    return this.t.simhash[this.row * 2 + 1]!;
  }
  get spreadKey(): number {
    return this.t.key[this.row * 4 + 2]!;
  }
  get lambda(): number {
    return this.t.lambda[this.row]!;
  }
  set lambda(v: number) {
    if (Number.isFinite(v) && v >= 0) this.t.lambda[this.row] = v;
  }
}

/** @internal For tests: the URLKey of (url, host) as 32 hex digits. */
export function urlKeyHex(url: string, host: string): string {
  const k = new Uint32Array(4);
  keyOf(url, host, k, 0);
  return keyToHex(k, 0);
}
