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
 *                                  READY BANK  (per shard) hosts by best URL, then the least
 *                                        │     recently dispatched
 *                                        ▼
 *                                  dispatch ─► in flight
 *                                  report ◄────────┘
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
 * This file is the façade: the `Frontier` class checks arguments and delegates to the plain
 * functions over `FrontierState` in its sibling files (state.ts lists them), and runs `drain`.
 *
 * Freshness: a freshness hook with a background pass (`withFreshness`) is offered the pass at
 * the first dispatch of every new clock hour and keeps its own cadence; the pass may re-time
 * URLs waiting for their recrawl, which then move in the schedule index. An engine that stays
 * idle for hours should dispatch (or call `tickFreshness`) at least once per cadence, or a
 * re-timed URL waits for the next wake-up.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { type KeyArray, keyFromHex, keyToHex } from '../core/keys.js';
import type { PartitionImage } from '../format/index.js';
import { decodePartition, encodePartition } from '../format/index.js';
import type { Discovery, FetchRequest, Outcome, UrlStatus } from '../model/index.js';
import type { PolitenessConfig } from '../politeness/index.js';
import type { Prioritizer } from '../prioritize/index.js';
import * as banks from './banks.js';
import { checkpoint, checkpointIncremental, restore } from './checkpoint.js';
import { keyOf } from './deps.js';
import { dispatchShard } from './dispatch.js';
import { HostCap, checkCap } from './hostcap.js';
import { type AdmissionLimits, type CrawledUrl, type SeedSpec, discover, eachCrawled, fetchedSimhashOf, knownCount, liveDepthOf, relinkAtIdle, relinkCounts, reconsider, refuse, seed, seedBatch, setAdmission } from './intake.js';
import type { FrontierOptions } from './options.js';
import { replayRow, report } from './outcome.js';
import * as q from './queries.js';
import type { DueUrl, FrontierStats, HostSignal, HostSnapshot, UrlSignal } from './queries.js';
import { runFreshnessTick } from './recrawl.js';
import type { SpillStats } from './spill.js';
import { type BlockCounts, FrontierState, type RelinkCounts, checkHours, checkMs } from './state.js';

export type { SeedSpec } from './intake.js';
export type { SpillStats } from './spill.js';
export type { BlockCounts } from './state.js';
export type { DueUrl, FrontierStats, HostSchedState, HostSignal, HostSnapshot, TrappedBy, UrlSignal } from './queries.js';
export type { AdmissionLimits } from './intake.js';

/** Seeds a budgeted frontier takes between two sheds. */
const SHED_CHUNK = 8192;

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

/** Bounds of a `drain`: at most `limit` dispatches; follow deferred URLs up to `untilMs`. */
export interface DrainLimits {
  readonly limit?: number | undefined;
  readonly untilMs?: number | undefined;
}

/** A synchronous fetcher for `drain`: fetch (or simulate) one request at clock `nowMs`. */
export type DrainFetcher = (request: FetchRequest, nowMs: number) => Outcome;

/** The single-partition resident scheduler (see the module comment). */
export class Frontier {
  readonly partitionId: number;
  readonly createdHours: number;
  /** The one owner of the frontier's state; every step is a function over it. */
  readonly #s: FrontierState;

  /**
   * An empty frontier for partition `partitionId`, created at epoch-hour `createdHours`.
   * @throws InvalidArgumentError for a bad id, hour or option.
   */
  constructor(partitionId: number, createdHours: number, options?: Partial<FrontierOptions> | null) {
    this.#s = new FrontierState(partitionId, createdHours, options);
    this.partitionId = partitionId;
    this.createdHours = createdHours;
  }

  // ───────────────────────────── intake ─────────────────────────────

  /**
   * Inserts a first-crawl candidate: `url` canonical, `host` its host group, `priority` its
   * initial importance, `firstSeen`/`nextDue` epoch-hours, `crawlDelay` the host's
   * politeness interval floor in ms (0 = none; the largest a host's seeds give, which robots.txt
   * never lowers; a checkpoint keeps only the delay in force, taken as robots.txt's on load). A
   * URL already present is not added again (returns false), but its depth falls to 0 as a
   * seed's and its `crawlDelay` configures its host (unless it is spilled to disk); its status
   * stays (a Refused one is queued by `reconsider`, under the caller's rule). With the schedule
   * index on, a seed due after the current hour waits for it.
   */
  seed(url: string, host: string, priority: number, firstSeen: number, nextDue: number, crawlDelay = 0): boolean {
    return this.#shed(seed(this.#s, url, host, priority, firstSeen, nextDue, crawlDelay));
  }

  /**
   * The batch form of `seed`: one index pass for the whole batch. The resulting frontier is
   * byte-for-byte the one the equivalent `seed` loop builds (in-batch repeats keep the
   * first occurrence). Returns the number of new URLs.
   */
  seedBatch(specs: readonly SeedSpec[]): number {
    if (this.#s.spill === undefined || !Array.isArray(specs) || specs.length <= SHED_CHUNK) return this.#shed(seedBatch(this.#s, specs));
    // Under a budget a large batch enters in chunks with a shed between them, so the batch
    // never sits resident whole (equivalent: a seed loop gives the same frontier either way).
    let n = 0;
    for (let i = 0; i < specs.length; i += SHED_CHUNK) n += this.#shed(seedBatch(this.#s, specs.slice(i, i + SHED_CHUNK)));
    return n;
  }

  /**
   * Idempotent intake of a routed out-link at clock `nowMs`. A genuinely new URL is admitted
   * (per-host budget and depth cap) and queued, or parked as Trapped; a known URL only
   * receives the link's cash. Returns true when a new schedulable URL entered.
   */
  discover(discovery: Discovery, nowMs: number): boolean {
    return this.#shed(discover(this.#s, discovery, nowMs));
  }

  /**
   * Records a URL that a crawl setting refuses (out of scope) without queueing it: a new row
   * with status `Refused`, not counted against the host's budget, so that `reconsider` under
   * other settings can queue it. Returns false, changing nothing, for a known URL.
   */
  refuse(discovery: Discovery, nowMs: number): boolean {
    return this.#shed(refuse(this.#s, discovery, nowMs));
  }

  /**
   * Re-evaluates URLs a setting refused (`Refused`) or robots.txt disallowed (`Disallowed`),
   * after the crawl's settings changed: each one `accept` takes is queued again for a first
   * fetch (the settings and robots.txt are asked again when it is dispatched). O(rows).
   * `accept` also gets the row's link depth (0: a seed). Returns how many were queued.
   */
  reconsider(accept: (url: string, status: UrlStatus, depth: number) => boolean): number {
    return reconsider(this.#s, accept);
  }

  /**
   * Visits up to `limit` rows fetched OK (`Crawled`, `DueRecrawl`), the latest added first, with
   * their stored fingerprints: what a learner that remembers pages served (not checkpointed)
   * reads back on a resume. O(rows) over the status column, a URL string built per row visited
   * (spilled rows are not visited). Returns how many were.
   */
  eachCrawled(limit: number, visit: (row: CrawledUrl) => void): number {
    return eachCrawled(this.#s, limit, visit);
  }

  /**
   * Sets the admission limits of every host — the depth cap and the URL budget the frontier
   * was built with apply only to hosts it meets after that, and a restored host keeps the ones
   * it was admitted under — for a resume whose settings changed, or a cluster crawl's limit
   * changed while it runs; hosts met afterwards start with them too. A limit widened releases the
   * URLs it parked: each Trapped row of such a host goes through admission again (depth cap,
   * budget, trap patterns, in that order) and is queued when admitted. A depth cap narrowed
   * holds for every URL not yet fetched: one queued past it is parked as Trapped when its turn
   * comes (spilled URLs too); a budget narrowed applies to URLs found from now on. O(hosts),
   * plus O(rows) when a limit widened. Returns how many URLs were queued.
   */
  setAdmission(limits: AdmissionLimits, nowMs: number): number {
    return this.#shed(setAdmission(this.#s, limits, nowMs));
  }

  /**
   * The admission limits hosts met from now on start with: the options' `depthCap` and
   * `urlBudget` until `setAdmission` moves them (a restored host keeps those it was admitted
   * under, which `setAdmission` also moves).
   */
  get admission(): Required<AdmissionLimits> {
    return { ...this.#s.admission };
  }

  /**
   * Whether a URL was parked past the depth cap here (restored from the Trapped rows). Pages
   * whose depth fell after their fetch are fetched again, unconditionally, at an idle point
   * when at least as many URLs are parked past the cap as that round would fetch (`relink` on
   * their `FetchRequest`; docs/DESIGN.md "Depth is the shortest path seen so far"); a cluster
   * node shares this crawl-wide and passes the crawl's counts (`bindDepthCap`).
   */
  get depthCapBinds(): boolean {
    return this.#s.depthParked;
  }

  /**
   * Tells the frontier the crawl's depth cap binds elsewhere (a cluster slot whose links lead
   * into one where it parked a URL): from its next idle point its marked pages are fetched
   * again when a round is worth it on `crawl` — the parked and marked rows summed over every
   * slot (each slot's `relinkCounts()`), the rule one frontier applies to its own counts — or,
   * without `crawl`, whenever some are marked. Returns whether it changed anything.
   */
  bindDepthCap(nowMs: number, crawl?: RelinkCounts): boolean {
    checkMs('bindDepthCap nowMs', nowMs);
    if (crawl !== undefined) {
      for (const k of ['parked', 'marked'] as const) {
        const v = crawl[k];
        if (!Number.isSafeInteger(v) || v < 0) throw new InvalidArgumentError(`bindDepthCap crawl.${k} must be a non-negative integer, got ${String(v)}`);
      }
    }
    const was = this.#s.bindsElsewhere;
    const same = crawl === undefined ? was === 'unbounded' : typeof was === 'object' && was.parked === crawl.parked && was.marked === crawl.marked;
    if (same) return false;
    this.#s.bindsElsewhere = crawl === undefined ? 'unbounded' : { parked: crawl.parked, marked: crawl.marked };
    this.#s.depthVersion++;
    return true;
  }

  /** What the hosts' blocks did here since the frontier was loaded (src/frontier/blocks.ts): a copy. */
  blockCounts(): BlockCounts {
    return { ...this.#s.blocks };
  }

  /**
   * The URLs parked past the depth cap here and the fetched pages marked for a relink round
   * (O(rows): a cluster node sums them over its slots for `bindDepthCap`).
   */
  relinkCounts(): RelinkCounts {
    return relinkCounts(this.#s);
  }

  /**
   * At an idle point (nothing queued or in flight) with pages marked for a fetch again, queues
   * them when the depth cap binds (see `depthCapBinds`); every dispatch does this first, and a
   * caller that stops dispatching while idle (a cluster node's slot) calls it. Returns how many.
   */
  relinkWhenIdle(nowMs: number): number {
    checkMs('relinkWhenIdle nowMs', nowMs);
    return this.#shed(relinkAtIdle(this.#s, nowMs));
  }

  // ─────────────────────────── scheduling ───────────────────────────

  /**
   * Runs the freshness hook's background pass now, at epoch-hour `nowHours` (it also runs by
   * itself at the hook's cadence as the dispatch clock moves). The hook re-times waiting URLs
   * and adjusts its water level; re-timed URLs move in the schedule index. Returns how many
   * URLs' next-due hours moved (0 when the hook has no background pass).
   */
  tickFreshness(nowHours: number): number {
    checkHours('tickFreshness nowHours', nowHours);
    return Math.max(0, runFreshnessTick(this.#s, nowHours, true));
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
    const s = this.#s;
    if (!Number.isInteger(shard) || shard < 0 || shard >= s.ready.length) {
      throw new InvalidArgumentError(`dispatchShard: expected a shard in [0, ${s.ready.length}), received ${String(shard)}`);
    }
    return dispatchShard(s, nowMs, shard);
  }

  /**
   * The earliest clock (ms) at which a dispatch can succeed, or undefined when nothing
   * waits (everything is crawled, in flight or parked in a state no clock opens).
   */
  nextEligible(): number | undefined {
    return banks.nextEligible(this.#s);
  }

  // ───────────────────────────── report ─────────────────────────────

  /**
   * Records the outcome of a dispatched URL at clock `nowMs`: politeness adapts (the address
   * `outcome.ip` names hears what it says of the machine; without one, the address the URL was
   * dispatched under), the URL's status and schedule update, links enter the intake, and the
   * host is re-placed. Returns
   * false (and changes nothing) when `outcome.row` is not in flight for that URL — a
   * duplicate or stale report.
   */
  report(outcome: Outcome, nowMs: number): boolean {
    return this.#shed(report(this.#s, outcome, nowMs));
  }

  /**
   * Passes `result` through after letting the disk tier shed rows when the resident estimate
   * is over the memory budget (spill.ts): every call that adds rows ends here. A full disk
   * throws `DiskFullError` from here with the frontier unchanged by the failed spill.
   */
  #shed<T>(result: T): T {
    this.#s.spill?.maybeShed();
    return result;
  }

  /**
   * Re-checks a host parked while the robots seam was not ready (a robots.txt load or a DNS
   * answer it waited for has arrived): it surfaces as soon as its own and its IP's windows
   * allow, instead of at the retry time it was parked with. Never earlier than politeness
   * allows; a no-op for a host that is not parked or unknown. Returns whether it moved.
   */
  wake(host: string): boolean {
    const id = this.#s.dir.id(host);
    return id !== undefined && banks.wake(this.#s, this.#s.hosts[id]!);
  }

  // ───────────────────────────── crash recovery ─────────────────────────────

  /**
   * Crash recovery: applies the outcome of a fetch dispatched at `dispatchedAtMs` and answered
   * before a crash that the last checkpoint did not see (the engine journals every outcome it
   * reports). The URL leaves its host queue as if dispatched then — the host's and its IP's
   * windows are spent at that time, the IP `outcome.ip` names when it names one — and the
   * outcome is reported at `nowMs` exactly as `report`
   * would (politeness, state machine, links). Returns false, changing nothing, when the key is
   * unknown, the URL is not waiting for a fetch (the outcome is already in the checkpoint), or
   * its host has a fetch in flight (replay before dispatching anything).
   */
  replay(key: KeyArray | string, outcome: Outcome, dispatchedAtMs: number, nowMs: number): boolean {
    if (outcome === null || typeof outcome !== 'object') throw new InvalidArgumentError(`replay: expected an Outcome, received ${String(outcome)}`);
    checkMs('replay dispatchedAtMs', dispatchedAtMs);
    checkMs('replay nowMs', nowMs);
    let row = q.rowOfKey(this.#s, key);
    const spill = this.#s.spill;
    const k = row === undefined && spill !== undefined ? (typeof key === 'string' ? keyFromHex(key, new Uint32Array(4)) : key) : undefined;
    if (k !== undefined && spill!.keys.hasKey(k, 0)) {
      // Spilled to disk: bring its host's rows back, best first, until the URL is among them (a
      // URL not on disk — one added after the checkpoint — reads none).
      const h = this.#s.hosts.find((x) => x.hostKeyLo === k[0] && x.hostKeyHi === k[1]);
      if (h !== undefined) spill!.loadUntil(h.id, () => q.rowOfKey(this.#s, key) !== undefined);
      row = q.rowOfKey(this.#s, key);
    }
    if (row === undefined || !this.#s.queues.queued(row)) return false;
    return replayRow(this.#s, row, outcome, dispatchedAtMs, nowMs);
  }

  /**
   * How many of `urls` (links as a page gives them) the frontier knows: each has a row, in memory
   * or spilled to disk with its host. The engine asks it, before a page's outcome is reported,
   * whether the page brought links the crawl had not met (`ViewKeys`). One batched lookup.
   */
  knownCount(urls: readonly string[]): number {
    return knownCount(this.#s, urls);
  }

  /**
   * How many of `urls` the frontier holds live: with a row whose page was fetched or will be
   * (scheduled, in flight, crawled, due again, waiting to retry, redirected; a spilled row is a
   * scheduled one), not gone, parked by the trap defence, disallowed or refused. The engine asks
   * whether the page a page names as itself is one the crawl has (`KnownCopies`).
   */
  liveCount(urls: readonly string[]): number {
    return knownCount(this.#s, urls, 'live');
  }

  /**
   * How many of `urls` the frontier holds fetched with a page (`Crawled`, `DueRecrawl`: a 2xx
   * answer, in memory). The engine asks whether a URL's parent page was fetched, whose links
   * reach what the URL would redirect into (`ParentRedirects`).
   */
  fetchedCount(urls: readonly string[]): number {
    return knownCount(this.#s, urls, 'fetched');
  }

  /**
   * The link depth of `url`'s row (a link as a page gives it) when the frontier holds it live
   * (`liveCount`'s rule) in memory, else undefined (no row, not live, or spilled to disk). The
   * engine asks whether a page named earlier was reached by another path since (`KnownCopies`).
   */
  liveDepthOf(url: string): number | undefined {
    return liveDepthOf(this.#s, url);
  }

  /**
   * The 64-bit simhash of `url`'s page when the frontier holds it fetched with a page (`Crawled`,
   * `DueRecrawl`, in memory) and its text gave one; else undefined. The engine asks whether a
   * page naming its parent page as canonical has the parent's text (`ParentRedirects`).
   */
  fetchedSimhashOf(url: string): bigint | undefined {
    return fetchedSimhashOf(this.#s, url);
  }

  /**
   * The link depth of the URL with `key` (a `URLKey` or its 32 hex digits), or undefined when
   * it has no row in memory (unknown, or spilled to disk with its host).
   */
  depthOf(key: KeyArray | string): number | undefined {
    const row = q.rowOfKey(this.#s, key);
    return row === undefined ? undefined : this.#s.table.depth[row];
  }

  /**
   * Records a fetch start to `host` at `atMs` (on `ip`, when known: the address the request
   * went to, whichever the host's next URL goes to) that the frontier did not time itself,
   * spending the host's and that IP's windows from then: a request that left
   * later than its dispatch (the engine sees the bytes go out), or one made before a crash
   * whose outcome was lost (so a restarted crawler keeps the intervals across the crash; the
   * URL itself is fetched again, since a checkpoint writes in-flight URLs back as
   * schedulable). Windows only ever move later. `dispatched` says the start is of the request
   * this frontier last dispatched for the host (or the robots.txt request it last started for
   * it), seen leaving: its rate-cap record moves to `atMs` instead of a second being added
   * (`setHostCap` counts each start once); without it the start is one of its own (a journal's,
   * a request the frontier never dispatched). Returns false for an unknown host.
   * @throws InvalidArgumentError when `atMs` is not a finite clock value or `dispatched` is not a boolean.
   */
  recordStart(host: string, ip: string | undefined, atMs: number, dispatched = false): boolean {
    checkMs('recordStart atMs', atMs);
    if (typeof dispatched !== 'boolean') throw new InvalidArgumentError(`recordStart: expected dispatched as a boolean, received ${String(dispatched)}`);
    const id = this.#s.dir.id(host);
    if (id === undefined) return false;
    banks.recordStart(this.#s, this.#s.hosts[id]!, ip, atMs, dispatched);
    return true;
  }

  /**
   * Holds every host and address as if a fetch had started at `atMs`: each next start waits
   * until `atMs` plus its interval, unless it waits longer already. For a frontier loaded from a
   * checkpoint whose writer may have fetched after writing it (a killed cluster node's slot):
   * those starts are unknown, and a host's interval since the last of them must still hold — a
   * host with a crawl delay longer than the takeover took was fetched again at once. Hosts first
   * seen later (an inbox replayed after the open) wait until `atMs` plus their interval too. No
   * start is recorded (a rate cap's window and the dispatch time are untouched). Returns the
   * hosts that now wait longer.
   */
  holdEveryHost(atMs: number): number {
    checkMs('holdEveryHost atMs', atMs);
    return banks.holdEveryHost(this.#s, atMs);
  }

  /**
   * Sets the rate cap of a known host group: at most `crawls` fetch starts in any window of
   * `windowMs` (`null` removes it). The cap is kept apart from the host's crawl delay and
   * politeness interval, which stay a hard minimum spacing: a host whose queue was empty for
   * a while may make up the slots it missed, as fast as its spacing allows, until the window
   * holds `crawls` starts again, and never exceeds them (src/frontier/hostcap.ts). Every start
   * counts once — dispatches, robots.txt requests, `recordStart` (of a dispatched request: in
   * its dispatch's place), replays — and the most recent
   * `crawls` of them are kept (8 bytes each) and checkpointed. A freshness hook sees the host's
   * capacity as the lower of its spacing and crawls / window. Changing the cap keeps the most
   * recent starts that fit. Returns false for an unknown host.
   * @throws InvalidArgumentError unless `crawls` is an integer in [1, 2²⁰] and `windowMs` > 0
   */
  setHostCap(host: string, cap: { readonly crawls: number; readonly windowMs: number } | null): boolean {
    if (cap !== null && typeof cap !== 'object') {
      throw new InvalidArgumentError(`setHostCap: expected { crawls, windowMs } or null, received ${String(cap)}`);
    }
    if (cap !== null) checkCap(cap.crawls, cap.windowMs);
    const id = this.#s.dir.id(host);
    if (id === undefined) return false;
    const h = this.#s.hosts[id]!;
    if (cap === null) h.cap = undefined;
    else if (h.cap === undefined) h.cap = new HostCap(cap.crawls, cap.windowMs);
    else if (h.cap.crawls !== cap.crawls || h.cap.windowMs !== cap.windowMs) h.cap = h.cap.resized(cap.crawls, cap.windowMs);
    banks.capChanged(this.#s, h);
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
    const s = this.#s;
    const max = typeof limit === 'number' ? limit : (limit.limit ?? Infinity);
    const until = typeof limit === 'number' ? undefined : limit.untilMs;
    const log: Dispatched[] = [];
    let now = Math.max(startMs, s.clockMs);
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
      const onlyDeferred = s.queues.total === 0 && s.inFlight === 0;
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
    return this.#s.queues.total + (this.#s.spill?.spilled ?? 0);
  }

  /** URLs the frontier holds (every status, resident or spilled to disk). */
  len(): number {
    return this.#s.spill === undefined ? this.#s.table.rows : this.#s.index.len;
  }

  /**
   * The disk tier's figures (URLs spilled, segment files and bytes, rows written and read
   * back, the resident window and estimate), or undefined without a memory budget.
   */
  diskTier(): SpillStats | undefined {
    return this.#s.spill?.stats();
  }

  /** The politeness policy in force (frozen). */
  get politenessPolicy(): Readonly<PolitenessConfig> {
    return this.#s.politeness;
  }

  /** Hosts known to the frontier. */
  hostCount(): number {
    return this.#s.hosts.length;
  }

  /**
   * A copy of every host record with its queue length and IP window, in host-id order
   * (O(hosts)); `name` picks one host (an empty array when unknown). For inspection
   * (`hosts --why`); a scheduler asking one host's interval should use `hostIntervalMs`.
   */
  hostSnapshots(name?: string): HostSnapshot[] {
    return q.hostSnapshots(this.#s, name);
  }

  /**
   * The current start-to-start politeness interval (ms) of host group `group` — the adaptive
   * interval clamped to the policy's floor and ceiling and to the host's crawl-delay — or
   * undefined for a group the frontier does not know. O(1), allocation-free: the query a send
   * gate pacing requests per host should use instead of `hostSnapshots`.
   */
  hostIntervalMs(group: string): number | undefined {
    return q.hostIntervalMs(this.#s, group);
  }

  /**
   * The current start-to-start interval (ms) of address `ip` — its own adaptive interval,
   * the policy's `ipFloorMs` when it has none (or for an unknown address). O(1): what a send
   * gate spacing requests per IP uses.
   */
  ipIntervalMs(ip: string | undefined): number {
    return q.ipIntervalMs(this.#s, ip);
  }

  /** The prioritizer when prioritization is on (read-only inspection), else undefined. */
  prioritizer(): Prioritizer | undefined {
    return this.#s.prio;
  }

  /** Counters at epoch-hour `nowHours` (one O(urls) walk). */
  stats(nowHours: number): FrontierStats {
    return q.stats(this.#s, nowHours);
  }

  /** Bytes of the frontier's typed arrays, arena, index and queues. */
  memoryBytes(): number {
    return q.memoryBytes(this.#s);
  }

  /**
   * URLs whose next-due hour is at or before `beforeHours` and that still want a fetch,
   * sorted by due hour then key. `host` filters to one host group (by name, or by HostKey as
   * a bigint); `limit` caps the result (0 = all).
   */
  dueUrls(beforeHours: number, host?: string | bigint, limit = 0): DueUrl[] {
    return q.dueUrls(this.#s, beforeHours, host, limit);
  }

  /**
   * Pre-populates a never-crawled URL with validators from a prior crawl (ETag,
   * Last-Modified in epoch-seconds, prior content fingerprint), so its first fetch is
   * conditional and its first refetch is classified as change or no change. A no-op
   * (returns false) for an unknown key or a URL already crawled.
   */
  warm(key: KeyArray | string, etag: string | undefined, lastModified: number | undefined, prevFp: bigint | undefined): boolean {
    return q.warm(this.#s, key, etag, lastModified, prevFp);
  }

  /**
   * Applies an imported host score. A known host takes it at once (its queued URLs are
   * re-prioritized when the prioritizer is on); an unknown host has it parked until it
   * first appears.
   */
  importHostSignal(signal: HostSignal): void {
    q.importHostSignal(this.#s, signal);
  }

  /**
   * Applies an imported PageRank to one URL (superseding an earlier import). A no-op when
   * prioritization is off or the URL is unknown; returns whether it applied.
   */
  importUrlSignal(signal: UrlSignal): boolean {
    return q.importUrlSignal(this.#s, signal);
  }

  // ───────────────────────────── checkpoint and recovery ─────────────────────────────

  /**
   * The frontier's durable state as a partition image: URL rows sorted by key (an in-flight
   * URL written back as schedulable), hosts sorted by HostKey with their live politeness
   * windows, the compacted arena, and the prioritizer, freshness and scheduler state.
   */
  checkpoint(): PartitionImage {
    return checkpoint(this.#s);
  }

  /**
   * The durable checkpoint of a frontier with a disk tier: the tier's files fsynced and its
   * manifest committed (temporary file, fsync, rename), then the image of the *resident* rows
   * only, naming the manifest in its settings (`spill`) — not the whole partition. Recovery
   * (`Frontier.recover` with `storeDir`) reads the manifest and the spilled URLs' keys, never
   * their rows. The files it names are the tier's until the next incremental checkpoint commits
   * (so keep the image; `free()` then leaves them). Without a disk tier: `checkpoint()`.
   */
  checkpointIncremental(): PartitionImage {
    return checkpointIncremental(this.#s);
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
   * @param visit called with the URL of every row the image holds, whatever its status, before
   *   any is shed to a disk tier (the Engine's cluster mode registers each URL's origin when a
   *   slot opens); O(rows), one URL decode each.
   * @throws CorruptPartitionError when the file or its contents are inconsistent;
   *   `CorruptBucketError` naming the file when a disk-tier file it names is. Either way the
   *   frontier begun is freed (no descriptor or wasm memory held), so a caller can try another
   *   checkpoint (the Engine falls back to its previous one).
   */
  static recover(source: Uint8Array | PartitionImage, options?: Partial<FrontierOptions> | null, visit?: (url: string) => void): Frontier {
    const image = source instanceof Uint8Array ? decodePartition(source) : source;
    const f = new Frontier(image.meta.partitionId, image.meta.createdHours, options);
    try {
      restore(f.#s, image);
      if (visit !== undefined) q.eachUrl(f.#s, visit);
      f.#s.spill?.maybeShed();
    } catch (err) {
      f.free();
      throw err;
    }
    return f;
  }

  /**
   * @internal For complexity tests: counts of the work the scheduler did since construction
   * (heap moves, queue moves, address look-ups), so a test can bound the work per dispatch.
   */
  static workCounters(f: Frontier): WorkCounters {
    const s = f.#s;
    let hostHeapMoves = s.frontBank.moves + s.aging.moves + s.hostHeap.moves;
    for (const b of s.ready) hostHeapMoves += b.moves;
    return { dispatches: s.dispatches, hostHeapMoves, queueMoves: s.queues.moves, ipLookups: s.ips.lookups, urlDecodes: s.table.arena.decodes };
  }

  /** Releases the wasm-resident structures (the schedule index). The frontier must not be used afterwards. */
  free(): void {
    this.#s.index.free();
    this.#s.wheel?.free();
    this.#s.spill?.close();
  }

  /** Same as `free()`. */
  [Symbol.dispose](): void {
    this.free();
  }
}

/** Work counters of a frontier since construction (`Frontier.workCounters`), for complexity tests. */
export interface WorkCounters {
  /** Dispatches made. */
  readonly dispatches: number;
  /** Slot writes in the host-level heaps (front bank, aging, host heap, ready banks). */
  readonly hostHeapMoves: number;
  /** Entry moves inside the per-host row queues. */
  readonly queueMoves: number;
  /** Address look-ups by string in the per-IP table. */
  readonly ipLookups: number;
  /** Strings decoded from the URL table's arena (URLs and ETags; restarts when recovery re-packs the arena). */
  readonly urlDecodes: number;
}

/** @internal For tests: the URLKey of (url, host) as 32 hex digits. */
export function urlKeyHex(url: string, host: string): string {
  const k = new Uint32Array(4);
  keyOf(url, host, k, 0);
  return keyToHex(k, 0);
}
