/**
 * Frontier options and the seams other modules fill (robots, DNS, freshness, link routing,
 * the seen-set filter). Every option is off or neutral by default, and an option that is
 * off leaves the dispatch sequence byte-for-byte what it was without it (DESIGN §9.6).
 */
import type { Discovery } from '../model/index.js';
import {
  booleanField,
  customField,
  defineOptions,
  enumField,
  numberField,
  stringField,
} from '../options/index.js';
import type { HostGrouping } from '../model/index.js';
import type { PolitenessConfig } from '../politeness/index.js';
import type { PrioritizerParams } from '../prioritize/index.js';
import { ROW_RUN_ROWS } from './rowruns.js';

/**
 * robots.txt, as the engine provides it. The frontier asks before a host's content URLs
 * dispatch; it never fetches robots.txt itself.
 */
export interface RobotsSeam {
  /** Whether robots.txt for `host` is known (fetched, cached, or known absent). */
  ready(host: string): boolean;
  /**
   * Asks the engine to fetch robots.txt for `host` (non-blocking; called when not ready, at
   * a moment the host and its IP may be fetched). Returning nothing parks the host for
   * `robotsRetryMs`; a `RobotsRequest` says more (see there).
   */
  request?(host: string, nowMs: number): RobotsRequest | undefined | void;
  /** Whether `url` may be fetched (only asked once `ready(host)` is true). */
  isAllowed(url: string): boolean;
  /**
   * Whether a crawl setting refuses `url` (out of scope, a refused address, a name that does
   * not exist): asked before `isAllowed`, once `ready(host)` is true; a refused URL becomes
   * `Refused` (no request, no window spent) until `Frontier#reconsider` queues it again.
   * `depth` is the row's link depth (0: a seed); `fetched` is true for a row that returned
   * content before (a recrawl, a relink, or the retry of one), false for a first fetch or its
   * retry.
   */
  refuses?(url: string, depth: number, fetched: boolean): boolean;
  /**
   * The host's Crawl-delay in ms, if robots.txt sets one (undefined: none). Asked at each of the
   * host's dispatches, and followed up and down: the value in force is the larger of this one
   * and the delay the host's seeds configured.
   */
  crawlDelayMs(host: string): number | undefined;
}

/**
 * What the engine did when asked for a host's robots.txt.
 *
 * `started: true` — a robots.txt request to the host starts now. It is a fetch start like
 * any other (the server sees a request), so the frontier spends the host's and its IP's
 * windows for it and parks the host until they reopen: the first content fetch then keeps
 * the interval from the robots.txt request. Otherwise the host waits until `retryAtMs`
 * (a robots.txt retry time, a DNS answer expected shortly), or `robotsRetryMs` without one;
 * `unreachable` marks the wait as a robots.txt outage (`HostFlags.RobotsUnreachable`, kept
 * in the host record so `hosts --why` can say so from a checkpoint).
 */
export interface RobotsRequest {
  readonly started: boolean;
  readonly retryAtMs?: number | undefined;
  readonly unreachable?: boolean | undefined;
}

/**
 * Trap pattern detection, as the engine provides it (e.g. over src/dedup's `TrapDetector`).
 * Asked once per genuinely new discovery, before admission; seeds are never asked.
 */
export interface TrapSeam {
  /** Folds a new URL of `host` into the detector; true when the host is (now) a trap suspect. */
  observe(url: string, host: string, key: Uint32Array, nowMs: number): boolean;
  /** Whether a new URL of a suspect host passes the pattern heuristics (else it is Trapped). */
  passes(url: string, host: string, nowMs: number): boolean;
}

/**
 * DNS, as the engine provides it: a synchronous cache look-up (never I/O on the dispatch
 * path) and an optional background prefetch, called when a host takes a back queue.
 * An unknown address (undefined) dispatches with no per-IP throttle for that fetch.
 */
export interface HostResolver {
  /** The address of host group `host` (where its hosts wait before their first dispatch). */
  lookup(host: string): string | undefined;
  prefetch?(host: string): void;
  /**
   * The address `url` (a URL of group `host`) is fetched from, when the resolver knows it per
   * URL: a group's hostnames may sit on different machines (`img.example.com` and
   * `www.example.com` under registrable grouping). With it, each dispatch is checked against,
   * spends and counts in flight on its own URL's address, and `FetchRequest.ip` is that
   * address; undefined there means the URL's address is unknown (no per-IP throttle for that
   * fetch). Without it, every URL of a group goes under `lookup`'s address.
   */
  lookupUrl?(url: string, host: string): string | undefined;
}

/**
 * The record view the freshness hook reads (one reused object; valid during the call only).
 * Counters and fingerprints already include this crawl; `change` is the frontier's verdict
 * (`changeKindLanes`: fingerprint equality, then churn fingerprints, else simhash Hamming ≤ 3),
 * so a hook need not classify again. The `previous…` fields keep what this crawl overwrote, for
 * hooks that judge the server's Last-Modified against the content (src/freshness's
 * `withFreshness`).
 */
export interface CrawledRecord {
  readonly row: number;
  readonly url: string;
  /**
   * The URL's host id in this frontier (dense from 0; ids are renumbered in HostKey order by
   * a checkpoint, so per-host hook state is exported through `exportState(hostOrder)`).
   */
  readonly host: number;
  /** HTTP status of this fetch (2xx or 304 with the state machine on; anything without it). */
  readonly status: number;
  /** The report's clock in epoch-hours, fractional (`nowMs / 3 600 000`). */
  readonly fetchedAtHours: number;
  /**
   * Epoch-hour of the URL's first fetch (this one on a first fetch) — or of the start of its
   * history since its last change point: a hook may restart the history it estimates from
   * (src/freshness `restartOnSurprise`) by storing new values here and in `crawlCount`,
   * `changeCount` and `noChangeStreak` (integers; firstCrawled ≤ lastCrawled, counts within
   * u16, crawlCount ≥ 1; other values are ignored).
   */
  firstCrawled: number;
  /** lastCrawled before this fetch (0 = never fetched). */
  readonly previousCrawled: number;
  /** The stored Last-Modified before this fetch, epoch-seconds (0 = none). */
  readonly previousLastModified: number;
  /** The Last-Modified this response carried, epoch-seconds (0 = none). */
  readonly sentLastModified: number;
  /** The Date this response carried, epoch-seconds: the server's clock (0 = none; `Outcome.serverDate`). */
  readonly sentDate: number;
  /** Last-Modified exposure in hours (−1 = not trusted); the hook may store a new value. */
  lmHours: number;
  /**
   * Hours from the first fetch's Last-Modified to that fetch (0 = none; src/freshness
   * `firstFetchAge`); the hook stores it on a first fetch and clears it when it restarts the
   * history. Finite values ≥ 0 are kept, others ignored.
   */
  lmAgeHours: number;
  /**
   * The change-rate estimator's interval statistics (src/freshness `FreshnessRecord`): hours of
   * the intervals that ended without a change, and Σ ln hours of those that ended in one (NaN
   * = not kept). The hook folds this fetch's interval in and stores the new values.
   */
  unchangedHours: number;
  changedLogHours: number;
  readonly firstSeen: number;
  readonly lastCrawled: number;
  readonly lastChanged: number;
  /** Fetches with a verdict (200/304) since the first fetch or the last change point (see `firstCrawled`). */
  crawlCount: number;
  /** Of those, fetches that saw a real change. */
  changeCount: number;
  /** Consecutive fetches without a real change, up to this one. */
  noChangeStreak: number;
  /** What this fetch saw: 'first' fetch, 'none' (304 or same content), 'cosmetic', 'real'. */
  readonly change: 'first' | 'none' | 'cosmetic' | 'real';
  /** Host's current politeness interval (ms), a lower bound on useful recrawl spacing. */
  readonly hostIntervalMs: number;
  /**
   * Crawls per hour the host's rate cap allows on average (crawls / window,
   * `Frontier.setHostCap`), Infinity without one. The host's capacity is the lower of this and
   * one crawl per `hostIntervalMs`.
   */
  readonly hostCapPerHour: number;
  /** Front-bank priority (the value weight of the page). */
  readonly priority: number;
  /** Next-due epoch-hour before this crawl. */
  readonly nextDue: number;
  /** The URL's stored Last-Modified after this crawl, epoch-seconds (0 = none). */
  readonly lastModified: number;
  /** Content fingerprint and simhash after this crawl, as [lo, hi] u32 lanes. */
  readonly contentFpLo: number;
  readonly contentFpHi: number;
  readonly simhashLo: number;
  readonly simhashHi: number;
  /** A stable per-URL number for deterministic spreading (PathKey low lane). */
  readonly spreadKey: number;
  /** Estimated changes per hour; the hook may store a new estimate. */
  lambda: number;
}

/**
 * The frontier's columns as a freshness pass sees them (`FreshnessHook.tick`): typed arrays
 * indexed by row (valid for rows < `rows`) and by host id (< `hosts`), never an object per
 * URL. Fetch state — `lambda`, `crawlCount`, `firstCrawled`, `lastCrawled` — is indexed by the
 * row's slot, `slot[r]`: slot 0 stands for every URL never fetched and reads as zeros (so
 * `lastCrawled[slot[r]]` is 0 for such a URL, with no branch). A pass may write `nextDue[r]`,
 * and `lambda[slot[r]]` where `slot[r]` ≠ 0 (a write through slot 0 is undone after the pass);
 * it lists every row whose `nextDue` it changed in `moved` and returns their count, and the
 * frontier re-times them in its schedule index.
 */
export interface FreshnessRows {
  readonly rows: number;
  /** `UrlStatus` per row; a URL waiting for its recrawl is `Crawled`. */
  readonly status: Uint8Array;
  /** Importance weight per row. */
  readonly priority: Float32Array;
  /** Fetch-state slot per row (0 = never fetched): the index into the four arrays below. */
  readonly slot: Uint32Array;
  /** Estimated changes per hour, by slot (0 = not estimated). */
  readonly lambda: Float32Array;
  /** Host id per row. */
  readonly host: Uint32Array;
  /** URLKey lanes, four per row; lane 2 (PathKey low) is the per-URL spread key. */
  readonly key: Uint32Array;
  /** Fetches, by slot. */
  readonly crawlCount: Uint16Array;
  /** Epoch-hours, by slot. */
  readonly firstCrawled: Uint32Array;
  readonly lastCrawled: Uint32Array;
  /** Epoch-hours, by row. */
  readonly nextDue: Uint32Array;
  readonly hosts: number;
  /**
   * Crawls per hour each host can take: the lower of one per politeness interval and its rate
   * cap's crawls / window (Infinity for a zero interval and no cap).
   */
  readonly hostCapacity: Float64Array;
  /** Out: rows whose `nextDue` the pass moved (room for `rows` entries). */
  readonly moved: Uint32Array;
}

/**
 * The freshness seam: called when a URL is (re)crawled, returns its next-due epoch-hour
 * (clamped to at least `nowHours + 1`). An object may also carry its state in the partition
 * and run a background pass over the rows.
 */
export type FreshnessHook =
  | ((record: CrawledRecord, nowHours: number) => number)
  | {
      nextDue(record: CrawledRecord, nowHours: number): number;
      /**
       * The hook's state for the partition's freshness section. `hostOrder[i]` is the host id
       * the checkpoint writes as host i (recovery numbers hosts that way), so per-host state
       * can be written in the order the recovered frontier will use.
       */
      exportState?(hostOrder: Uint32Array): Uint8Array;
      importState?(state: Uint8Array): void;
      /**
       * A background pass (re-timing waiting URLs, adjusting a water level): the frontier calls
       * it with `force` false at the first dispatch of every new clock hour, so the hook
       * decides its own cadence, and with `force` true from `Frontier.tickFreshness`. Returns
       * the number of rows listed in `rows.moved`, or −1 when it made no pass.
       */
      tick?(rows: FreshnessRows, nowHours: number, force: boolean): number;
      /**
       * The order of a host's waiting URLs. 'priority' (the default): higher priority first.
       * 'due': the URL due earliest first, ties by priority — for a hook that makes URLs due
       * ahead of their time (`WithFreshnessOptions.leadSlots`), whose early URLs must not
       * overtake ones already due. Read once, when the frontier is made.
       */
      readonly queueOrder?: 'priority' | 'due';
    };

/** Routes out-links to their owning partitions; returns the ones this partition owns. */
export type LinkRouter = (discoveries: Discovery[]) => readonly Discovery[];

/**
 * The seen-set filter seam (DESIGN §6): an approximate filter in front of the exact
 * key → row index. A miss skips the exact look-up; a hit is confirmed, so a false positive
 * costs a look-up and never a dropped URL. Its blob is stored in the partition's seen-filter
 * section; on recovery, rebuild the filter from `decodePartition(bytes).seenFilter` and pass
 * it in the options (the frontier never interprets the blob).
 */
export interface SeenFilterSeam {
  maybeContains(keys: Uint32Array, i: number): boolean;
  add(keys: Uint32Array, i: number): void;
  serialize(): Uint8Array;
}

/** Options of `new Frontier(...)` / `Frontier.recover(...)`. */
export interface FrontierOptions {
  /** Max hosts holding a back queue at once; 0 = unbounded (default). */
  readonly target: number;
  /** Dispatch threads of the engine: floors the active set at k·threads and turns on age promotion. 0 = off. */
  readonly dispatchThreads: number;
  /** k, back queues per dispatch thread (default 3). */
  readonly backQueuesPerThread: number;
  /** Front-bank wait after which a host is promoted ahead of priority (ms, default 1 h). */
  readonly promoteAgeMs: number;
  /** Dispatches an active host may make before yielding its slot to an aged host (default 8). */
  readonly rotationQuantum: number;
  /** Shards of the ready bank, one per dispatch thread (default 1). */
  readonly dispatchShards: number;
  /** Politeness config (partial; defaults from the politeness module). */
  readonly politeness: Readonly<Partial<PolitenessConfig>> | undefined;
  /** OPIC prioritization: true for default params, or params. Off by default. */
  readonly prioritizer: boolean | Readonly<Partial<PrioritizerParams>>;
  /**
   * Freshness seam (off by default: a crawled URL is due again a flat week later). Pass
   * `withFreshness(params, budgetPerHour)` from src/freshness, with `scheduleIndex` on, to
   * recrawl each URL about as often as it is worth; any `FreshnessHook` fits. When set, the
   * URL table also keeps the firstCrawled and lmHours columns.
   */
  readonly freshness: FreshnessHook | undefined;
  /** Defer not-yet-due URLs in a timing wheel and recrawl when due (default false). */
  readonly scheduleIndex: boolean;
  /** Full outcome state machine (default false: every outcome marks Crawled). */
  readonly stateMachine: boolean;
  /** Transient failures before a URL is Gone (state machine; default 3). */
  readonly retryLimit: number;
  /** robots.txt seam (off by default). */
  readonly robots: RobotsSeam | undefined;
  /** How long a host whose robots.txt is not ready waits before it is asked again (ms, default 1000). */
  readonly robotsRetryMs: number;
  /** DNS seam: a function host → IP, or a `HostResolver`. Off by default (no per-IP throttle). */
  readonly resolver: HostResolver | ((host: string) => string | undefined) | undefined;
  /** Routes out-links to partitions (off: every link is local). */
  readonly linkRouter: LinkRouter | undefined;
  /** Seen-set filter in front of the exact index (off by default). */
  readonly seenFilter: SeenFilterSeam | undefined;
  /** Trap pattern detection feeding admission (off by default: budget and depth cap only). */
  readonly traps: TrapSeam | undefined;
  /** Host grouping used to key out-links and redirect targets (default 'registrable'). */
  readonly grouping: HostGrouping;
  /** Version of the canonicalization policy, recorded in the partition (default 1). */
  readonly canonPolicyVersion: number;
  /** URL budget of a new host (0 = unlimited; the prioritizer may raise it). */
  readonly urlBudget: number;
  /** Depth cap of a new host (0 = unlimited). */
  readonly depthCap: number;
  /**
   * Resident memory budget in bytes (0 = none, the default: everything stays resident). Once
   * the resident estimate exceeds it, hosts' queued URLs beyond a window of their best are
   * spilled to files in `storeDir` and read back ahead of need (DESIGN §14). A budget needs
   * `storeDir`, and `storeDir` needs a budget: either one alone throws `InvalidArgumentError`.
   * Under `MIN_MEMORY_BUDGET` (1 MiB) the estimate may run past the budget by up to 1 MiB (a
   * shed pass that cannot reach its target waits for that much growth before the next): the
   * Engine and the CLI refuse such budgets; the frontier takes them (tests spill small
   * frontiers with them).
   */
  readonly memoryBudget: number;
  /**
   * Directory of the disk tier (Node only). Given with a `memoryBudget` > 0 and only then: the
   * budget is what makes the frontier spill, so a `storeDir` without one would never be
   * written, and is refused rather than left silently unused.
   */
  readonly storeDir: string | undefined;
  /** Queued URLs each host keeps resident once spilling (default 64; halves while the budget cannot hold the windows). */
  readonly spillWindow: number;
  /** The disk tier's file seam, a `DiskIo` from src/disk (tests inject ENOSPC through it); default the real file system. */
  readonly diskIo: object | undefined;
  /** Open a recovered disk tier without deleting files its manifest does not name (a reader beside a live crawl). */
  readonly diskReadOnly: boolean;
  /**
   * Rows one row run of the disk tier's checkpoint holds at most (default 2²¹, ~250 MB of image;
   * a run is also cut at ~384 MiB of estimated image for long URLs): a checkpoint that writes
   * more writes several runs, so no run needs a Buffer near the 4 GiB limit (DESIGN §14, *Row
   * runs*). There for tests, which set it small to make checkpoints of many runs; a crawl has no
   * reason to change it.
   */
  readonly rowRunRows: number;
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);
const isFunctionOr = <T>(v: unknown, methods: readonly string[]): v is T =>
  typeof v === 'function' ||
  (isObject(v) && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'));

/**
 * The disk tier takes both options or neither (see `memoryBudget`): the one place that pairing
 * is checked, for `new Frontier` and `Frontier.recover` alike. Returns the problem, if any.
 */
function diskTierPairing(o: FrontierOptions): string | undefined {
  if (o.memoryBudget > 0 && o.storeDir === undefined) {
    return `memoryBudget ${String(o.memoryBudget)} needs storeDir, the directory of the disk tier the queued URLs past the budget spill to`;
  }
  if (o.memoryBudget === 0 && o.storeDir !== undefined) {
    return `storeDir ${JSON.stringify(o.storeDir)} is given without a memoryBudget (0, the default: nothing ever spills, so the directory would never be used); give memoryBudget in bytes for the frontier to spill there past it, or leave storeDir out`;
  }
  return undefined;
}

/** Validates frontier options and fills defaults. */
export const resolveFrontierOptions = defineOptions<FrontierOptions>('FrontierOptions', {
  target: numberField({ default: 0, min: 0, integer: true }),
  dispatchThreads: numberField({ default: 0, min: 0, max: 1024, integer: true }),
  backQueuesPerThread: numberField({ default: 3, min: 1, max: 1024, integer: true }),
  promoteAgeMs: numberField({ default: 3_600_000, min: 0 }),
  rotationQuantum: numberField({ default: 8, min: 1, integer: true }),
  dispatchShards: numberField({ default: 1, min: 1, max: 1024, integer: true }),
  politeness: customField('a politeness config object', (v): v is Partial<PolitenessConfig> => isObject(v)),
  prioritizer: customField(
    'a boolean or prioritizer params',
    (v): v is boolean | Partial<PrioritizerParams> => typeof v === 'boolean' || isObject(v),
    () => false,
  ),
  freshness: customField('a function or an object with nextDue()', (v): v is FreshnessHook => isFunctionOr(v, ['nextDue'])),
  scheduleIndex: booleanField(false),
  stateMachine: booleanField(false),
  retryLimit: numberField({ default: 3, min: 0, max: 255, integer: true }),
  robots: customField('an object with ready(), isAllowed() and crawlDelayMs()', (v): v is RobotsSeam =>
    isObject(v) && ['ready', 'isAllowed', 'crawlDelayMs'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  ),
  robotsRetryMs: numberField({ default: 1000, above: 0 }),
  resolver: customField('a function or an object with lookup()', (v): v is HostResolver => isFunctionOr(v, ['lookup'])),
  linkRouter: customField('a function', (v): v is LinkRouter => typeof v === 'function'),
  seenFilter: customField('an object with maybeContains(), add() and serialize()', (v): v is SeenFilterSeam =>
    isObject(v) && ['maybeContains', 'add', 'serialize'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  ),
  traps: customField('an object with observe() and passes()', (v): v is TrapSeam =>
    isObject(v) && ['observe', 'passes'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  ),
  grouping: enumField<HostGrouping>(['registrable', 'host', 'origin'], 'registrable'),
  canonPolicyVersion: numberField({ default: 1, min: 0, max: 0xffff_ffff, integer: true }),
  urlBudget: numberField({ default: 0, min: 0, integer: true }),
  depthCap: numberField({ default: 0, min: 0, max: 0xffff, integer: true }),
  memoryBudget: numberField({ default: 0, min: 0, integer: true }),
  storeDir: stringField({ nonEmpty: true }),
  spillWindow: numberField({ default: 64, min: 4, max: 1 << 20, integer: true }),
  diskIo: customField('a DiskIo object', (v): v is object => isObject(v)),
  diskReadOnly: booleanField(false),
  rowRunRows: numberField({ default: ROW_RUN_ROWS, min: 8, max: 1 << 24, integer: true }),
}, diskTierPairing);
