/**
 * Host records: one object per host group (hosts ≪ URLs, DESIGN §4), holding the host's
 * live politeness state, admission budget and scheduler state.
 *
 * Durable fields round-trip through the `.meguri` hosts section (`toImage`/`fromImage`);
 * `state` and `inFlightRow` are derived on recovery (an in-flight URL is re-queued).
 */
import type { HostImage } from '../format/index.js';
import { BLOCK_RUN } from '../politeness/index.js';
import { HostCap } from './hostcap.js';

/** Where a host is in the scheduler. */
export const HostState = {
  /** No pending URL and no back queue. */
  Idle: 0,
  /** Pending URLs, no back queue: waits in the front bank. */
  Front: 1,
  /** Holds a back queue; parked in the host heap until its host and IP windows open. */
  Parked: 2,
  /** Holds a back queue and may dispatch now: in the ready bank. */
  Ready: 3,
  /** Holds a back queue and has one URL in flight. */
  InFlight: 4,
} as const;
export type HostState = (typeof HostState)[keyof typeof HostState];

/** Scheduler bits persisted in `HostImage.sched`. */
const SCHED_ACTIVE = 1;

/** Slots of a host's row in `HostTimes`. */
const NEXT_ELIGIBLE = 0;
const LAST_DISPATCH = 1;
const INTERVAL = 2;
const LATENCY = 3;
const LATENCY_VAR = 4;
const TIME_SLOTS = 5;

/**
 * The dispatch path's per-host clock values, dense by host id: five f64 (40 bytes) per
 * host, read and written through accessors of `HostRecord`.
 *
 * As plain fields these hold fractional or epoch-ms values, which V8 keeps as a pointer to
 * a separately allocated number (the field is "boxed"): one more dependent cache miss per
 * read, on every dispatch and report, wherever the collector happened to put the box.
 * Measured on bench/suites/frontier.bench.mjs (100k URLs, 10k hosts): dispatch+report
 * 3–4 % faster; the dense rows of all 10k hosts took 320 KB at four slots (400 KB at five).
 */
export class HostTimes {
  /** Rows of TIME_SLOTS values by host id; replaced (not resized) on growth. */
  f64: Float64Array = new Float64Array(64 * TIME_SLOTS);

  /** Makes room for host `id`. */
  ensure(id: number): void {
    if ((id + 1) * TIME_SLOTS <= this.f64.length) return;
    let cap = this.f64.length * 2;
    while (cap < (id + 1) * TIME_SLOTS) cap *= 2;
    const next = new Float64Array(cap);
    next.set(this.f64);
    this.f64 = next;
  }
}

/** One host group's record. */
export class HostRecord {
  state: HostState = HostState.Idle;
  /** Row in flight, or −1. */
  inFlightRow = -1;
  /**
   * The URL string handed out for `inFlightRow` (transient): `report` checks an outcome's URL
   * against it by identity first, instead of comparing the arena bytes character by character.
   */
  inFlightUrl: string | undefined = undefined;
  #ip = '';
  /**
   * The address's slot in the frontier's `IpTable` (−1 = the unknown address), −2 until
   * looked up: transient, re-derived after every change of `ip` (banks.ts `ipSlotOf`).
   */
  ipSlot = -2;
  /**
   * The `IpTable` slot the fetch in flight counts against (−1 = none): `landed` ends that one,
   * whatever `ip` says by then (transient).
   */
  flightSlot = -1;
  flags = 0;
  /**
   * The crawl delay in force (ms): the larger of `seedDelayMs` and `robotsDelayMs`, the floor of
   * the host's interval (`hostInterval`). Checkpointed; a load takes it as the robots part.
   */
  crawlDelayMs = 0;
  /** The crawl delay its seeds configured (`Frontier.seed`'s `crawlDelay`): the largest given, never lowered. Not checkpointed apart from `crawlDelayMs`. */
  seedDelayMs = 0;
  /**
   * robots.txt's Crawl-delay as the robots seam gives it now (capped there, by the engine's
   * `maxCrawlDelayMs`), replaced at each dispatch (dispatch.ts `robotsCleared`): a robots.txt
   * read again that lowers or drops it, or a resume with a lower cap, lowers it.
   */
  robotsDelayMs = 0;
  /** Admission: max URLs admitted (0 = unlimited). */
  urlBudget = 0;
  /** Admission: max depth (0 = unlimited). */
  depthCap = 0;
  /** URLs admitted as Scheduled so far. */
  admitted = 0;
  /** Imported host quality score. */
  hostScore = 0;
  activatedAtMs = 0;
  /** When the host last entered the front bank (ms), for age promotion. */
  waitingSinceMs = 0;
  /** Time and host interval of the host's last per-IP spend (replayed on recovery). */
  ipSpendMs = -1;
  ipSpendIntervalMs = 0;
  /** Dispatches since the host last took a back queue. */
  servedSinceActivation = 0;
  /** Consecutive reports that left the interval pinned at the ceiling. */
  ceilingStreak = 0;
  /**
   * Page faults in a row from URLs on their first attempt (src/politeness `isPageFault`); at
   * `PAGE_FAULT_RUN` they count as load. Not checkpointed: after a restart a run starts over,
   * which costs at most two more answers at the held interval.
   */
  faultRun = 0;
  /**
   * The interval the host had when its current outage began (src/politeness `isUnreachable`),
   * 0 when none: its first healthy answer after it gets that back, one back-off step up
   * (`afterOutage`). Not checkpointed: a restart mid-outage recovers by the AIMD creep.
   */
  outageFromMs = 0;
  /** When the current outage began (ms; meaningful while `outageFromMs` > 0). Not checkpointed. */
  outageSinceMs = 0;
  /**
   * Whether the host has served this crawler (any answer but 403, 429 and 5xx): a run of 403s
   * is looked into only after one (blocks.ts). On load, read from the rows (a page crawled, due
   * again or redirected) unless the checkpoint's `blocks` section says the host refuses the
   * crawler; the block fields below come back from that section.
   */
  served = false;
  /** 403 answers in a row since the host last served this crawler. */
  forbidRun = 0;
  /** Length of run at which the host is asked whether it blocks; doubles each time it proves not to. */
  forbidThreshold = BLOCK_RUN;
  /** Rows of the current run, recorded gone by their 403 until the run is judged (at most `MAX_RUN_ROWS`); undefined when none. */
  forbidRows: number[] | undefined = undefined;
  /** The row of the host's last 2xx or 304 answer, the page a canary asks again; −1 when none. */
  canaryRow = -1;
  /** The row asked again to judge the current run, until it answers; −1 when none. */
  canaryPending = -1;
  /** The canary's due hour, kept aside while it waits due at hour 0 (put back when it answers). */
  canaryDue = 0;
  /** The host's 403s are its block of this crawler (a canary confirmed it), until it serves again or `BLOCK_MAX_MS` pass. */
  blocked = false;
  /**
   * How long the current block has gone on (ms; meaningful while `blocked`): the gaps between
   * its answers, each counted up to twice the longer of `BLOCK_CEILING_MS` and the interval, so
   * the time a crawl was stopped is not counted (blocks.ts `blockGoesOn`).
   */
  blockElapsedMs = 0;
  /** When the block's last answer came (ms), −1 after a load: its first answer adds no time. */
  blockLastMs = -1;
  /** A block outlasted `BLOCK_MAX_MS`: the host refuses this crawler until it serves again (`served` false meanwhile). */
  refusing = false;
  /** The interval the host had when its current block began, 0 when none (restored one back-off step up, as after an outage). */
  blockFromMs = 0;
  /**
   * The shortest interval the host narrows to after its blocks: the interval restored after the
   * last one, which each block doubles at least, so a crawl settles under the firewall's rate
   * instead of narrowing back into it (0: no block yet).
   */
  blockFloorMs = 0;
  /**
   * The host is rate-limiting this crawler: it answered a 429 (or a 503 with a Retry-After) and
   * has not served it since (blocks.ts `heardLimit`).
   */
  limited = false;
  /** How long the crawler has waited on the current rate limit (ms; meaningful while `limited`): the sum of the waits its answers imposed. */
  limitWaitedMs = 0;
  /** Latency rise score (src/politeness `observeLatency`). */
  latencyRiseScore = 0;
  /**
   * The host's rate cap over a window (hostcap.ts), apart from the crawl delay and interval,
   * which stay a hard minimum spacing; undefined = none (`Frontier.setHostCap`).
   */
  cap: HostCap | undefined = undefined;

  constructor(
    /** Dense id within the frontier. */
    readonly id: number,
    readonly hostKeyLo: number,
    readonly hostKeyHi: number,
    readonly name: string,
    intervalMs: number,
    /** Where the clock fields below live (shared by the frontier's records). */
    private readonly times: HostTimes,
  ) {
    times.ensure(id);
    const t = times.f64;
    const at = id * TIME_SLOTS;
    t[at + NEXT_ELIGIBLE] = 0;
    t[at + LAST_DISPATCH] = -1;
    t[at + INTERVAL] = intervalMs;
    t[at + LATENCY] = 0;
    t[at + LATENCY_VAR] = 0;
  }

  /**
   * Resolved IP ('' = none / unknown): the group's address until its first dispatch, then the
   * address of its latest dispatched URL (`HostResolver.lookupUrl`, when the resolver has it).
   */
  get ip(): string {
    return this.#ip;
  }
  set ip(v: string) {
    this.#ip = v;
    this.ipSlot = -2;
  }

  /** Adaptive start-to-start interval (ms), already clamped. */
  get intervalMs(): number {
    return this.times.f64[this.id * TIME_SLOTS + INTERVAL]!;
  }
  set intervalMs(v: number) {
    this.times.f64[this.id * TIME_SLOTS + INTERVAL] = v;
  }

  /** When the host's own window opens (ms). */
  get nextEligibleMs(): number {
    return this.times.f64[this.id * TIME_SLOTS + NEXT_ELIGIBLE]!;
  }
  set nextEligibleMs(v: number) {
    this.times.f64[this.id * TIME_SLOTS + NEXT_ELIGIBLE] = v;
  }

  /** Last fetch start (ms), −1 = none. */
  get lastDispatchMs(): number {
    return this.times.f64[this.id * TIME_SLOTS + LAST_DISPATCH]!;
  }
  set lastDispatchMs(v: number) {
    this.times.f64[this.id * TIME_SLOTS + LAST_DISPATCH] = v;
  }

  /** Smoothed latency (ms; RFC 6298's SRTT), 0 = none yet. */
  get latencyMs(): number {
    return this.times.f64[this.id * TIME_SLOTS + LATENCY]!;
  }
  set latencyMs(v: number) {
    this.times.f64[this.id * TIME_SLOTS + LATENCY] = v;
  }

  /** Latency deviation (ms; RFC 6298's RTTVAR). */
  get latencyVarMs(): number {
    return this.times.f64[this.id * TIME_SLOTS + LATENCY_VAR]!;
  }
  set latencyVarMs(v: number) {
    this.times.f64[this.id * TIME_SLOTS + LATENCY_VAR] = v;
  }

  /** Whether the host holds a back queue. */
  get active(): boolean {
    return this.state >= HostState.Parked;
  }

  /** The durable form. */
  toImage(): HostImage {
    return {
      hostKeyLo: this.hostKeyLo,
      hostKeyHi: this.hostKeyHi,
      name: this.name,
      ip: this.ip,
      flags: this.flags,
      sched: this.active ? SCHED_ACTIVE : 0,
      crawlDelayMs: this.crawlDelayMs,
      intervalMs: this.intervalMs,
      nextEligibleMs: this.nextEligibleMs,
      lastDispatchMs: this.lastDispatchMs,
      latencyMs: this.latencyMs,
      urlBudget: this.urlBudget,
      depthCap: this.depthCap,
      admitted: this.admitted,
      hostScore: this.hostScore,
      activatedAtMs: this.activatedAtMs,
      waitingSinceMs: this.waitingSinceMs,
      ipSpendMs: this.ipSpendMs,
      ipSpendIntervalMs: this.ipSpendIntervalMs,
      servedSinceActivation: this.servedSinceActivation,
      ceilingStreak: this.ceilingStreak,
      latencyVarMs: this.latencyVarMs,
      latencyRiseScore: this.latencyRiseScore,
      // No key at all without a cap: such a host's image (and file) is what it was before caps.
      ...(this.cap === undefined ? {} : { cap: this.cap.toImage() }),
    };
  }

  /** Rebuilds a record from its durable form; returns it with `wasActive` for the scheduler. */
  static fromImage(id: number, h: HostImage, times: HostTimes): { host: HostRecord; wasActive: boolean } {
    const r = new HostRecord(id, h.hostKeyLo, h.hostKeyHi, h.name, h.intervalMs, times);
    r.ip = h.ip;
    r.flags = h.flags;
    r.crawlDelayMs = h.crawlDelayMs;
    // The file keeps the delay in force only: taken as robots.txt's, it is replaced by what
    // robots.txt says (under today's cap) at the host's next dispatch.
    r.robotsDelayMs = h.crawlDelayMs;
    r.nextEligibleMs = h.nextEligibleMs;
    r.lastDispatchMs = h.lastDispatchMs;
    r.latencyMs = h.latencyMs;
    r.latencyVarMs = h.latencyVarMs;
    r.latencyRiseScore = h.latencyRiseScore;
    r.urlBudget = h.urlBudget;
    r.depthCap = h.depthCap;
    r.admitted = h.admitted;
    r.hostScore = h.hostScore;
    r.activatedAtMs = h.activatedAtMs;
    r.waitingSinceMs = h.waitingSinceMs;
    r.ipSpendMs = h.ipSpendMs;
    r.ipSpendIntervalMs = h.ipSpendIntervalMs;
    r.servedSinceActivation = h.servedSinceActivation;
    r.ceilingStreak = h.ceilingStreak;
    if (h.cap !== undefined) r.cap = HostCap.fromImage(h.cap);
    return { host: r, wasActive: (h.sched & SCHED_ACTIVE) !== 0 };
  }
}

/** Whether host `a` sorts before host `b` by HostKey (unsigned, high lane first). */
export function hostKeyBefore(a: HostRecord, b: HostRecord): boolean {
  return a.hostKeyHi !== b.hostKeyHi ? a.hostKeyHi < b.hostKeyHi : a.hostKeyLo < b.hostKeyLo;
}
