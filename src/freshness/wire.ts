/**
 * The rescheduler wired into a frontier: `withFreshness(params, budgetPerHour)` is what the
 * frontier's `freshness` option takes, so that
 *
 *     new Frontier(id, hour, { freshness: withFreshness(params, B), scheduleIndex: true, stateMachine: true })
 *
 * recrawls each URL about as often as it is worth (DESIGN §8), spending about B crawls/hour.
 *
 * ## Per outcome (`nextDue`)
 * The frontier has already classified the fetch (`rec.change`) and folded it into the row's
 * counters and fingerprints, so this adapter does not call `observeChange` again. It updates
 * the Last-Modified exposure from the verdict and the validators the crawl overwrote
 * (`lastModifiedExposure`, the rules of `observeChange`), folds the interval into the
 * estimator's statistics or, when it contradicts the stored λ, restarts the URL's history
 * (`foldOrRestart`, the step observeChange takes too; a restart rewrites the row's
 * firstCrawled and counts), re-estimates λ (`estimate`), asks
 * for the interval at the current water level under the host's politeness capacity
 * (`targetInterval`: capacity = one crawl per host interval, or the host's rate cap over a
 * window if lower, demand = the host's Σ desired
 * rate from the last pass) and places the next due hour (`setNextDue`).
 *
 * ## Background pass (`tick`, every `cadenceHours`, 6 by default)
 * One pass over the frontier's columns: each schedulable row's desired rate at the current τ
 * is summed into its host's demand D_h; the controller steps τ toward the budget from the
 * capped total Σ_h min(D_h, C_h); then every URL waiting for its recrawl is re-timed with
 * `reviseNextDue` — without that a URL parked at the two-week re-probe interval would ignore a
 * lower τ until it next comes round, and the budget would go under-spent (about 0.96 of it in
 * the simulator). On a fresh crawl the first pass seeds τ with `solveWaterLevel` over the same
 * capped demand, and seeds it again whenever the number of schedulable URLs has doubled since
 * (a crawl that starts from a handful of seeds would otherwise climb from a τ that funds
 * everything, one bounded controller step per pass).
 *
 * ## State
 * τ (as ln τ, exactly), the hour of the last pass, the row count at the last seeding, the
 * per-host demand and URL counts and the learned rate-change hazard with its evidence (change
 * points and watched hours, counted per outcome, decayed per pass: hazard.ts) go into the
 * partition's freshness section (`exportState`),
 * in the host order the recovered frontier will use, so a recovered partition continues with
 * the identical schedule. Per-URL state lives in the frontier's columns (lambda, firstCrawled,
 * lmHours, lmAgeHours), never here. One instance serves one frontier: pass a new one to `Frontier.recover`.
 *
 * Costs: per outcome a few hundred ns (one estimate, one Newton solve); per pass two loops over
 * the rows with one Newton solve each, no allocation beyond scratch arrays that grow with the
 * partition.
 *
 * Why one file of ~650 lines: the per-outcome path, the background pass and the durable state
 * (`exportState` / `importState`, ~100 lines of the MGFS layout) all read the scheduler's private
 * per-host arrays and calendars; moving the encoding to a sibling file would need a snapshot copy
 * of them, or exposing them. The split to make first if it grows: the host-level pass
 * (`#hostLevels`, `#cappedDemand`, `#booked`) into functions over the arrays.
 */
import { CorruptPartitionError, InvalidArgumentError } from '../errors/index.js';
import type { CrawledRecord, FreshnessRows } from '../frontier/options.js';
import { UrlStatus } from '../model/index.js';
import { booleanField, customField, defineOptions, numberField } from '../options/index.js';
import { CALENDAR_BYTES, SlotCalendar } from './calendar.js';
import { estimate } from './estimate.js';
import { type HazardEvidence, decayHazard, hazardInUse, learnsHazard, newHazardEvidence, observeHazard } from './hazard.js';
import { type FreshnessParams, freshnessParams } from './params.js';
import { type FreshnessRecord, firstFetchAge, foldOrRestart, lastModifiedExposure, newFreshnessRecord } from './record.js';
import { awaitsTest, desiredRate, hostClampedRate, hostWaterLevel, leadHours, recrawlInterval, reviseNextDue, setNextDue, targetInterval } from './schedule.js';
import { TauController, type TauControllerOptions, solveWaterLevel } from './tau.js';

/** Options of `withFreshness` beyond the params and the budget. */
export interface WithFreshnessOptions {
  /** Hours between background passes (τ step and re-timing), aligned to multiples of it. */
  readonly cadenceHours: number;
  /** `reviseNextDue` tolerance: a waiting URL moves only when its due time is off by more than this fraction of its interval. */
  readonly reviseTolerance: number;
  /** Tuning of the water-level controller (its `initialTau` is replaced by the seeded level). */
  readonly tau: Readonly<Partial<TauControllerOptions>> | undefined;
  /**
   * Share of a host's politeness capacity (one fetch per host interval) the schedule books, in
   * (0, 1]; 1 by default. A host booked at its full capacity queues: due URLs that collide wait
   * for the host's next slot, and a slot that finds the queue empty is lost, so a saturated
   * host delivers 95–97 % of its capacity and its fetches run hours late. Below 1 the schedule
   * asks less of the host than its spacing allows, so a backlog drains. The frontier enforces
   * only the spacing: with a crawl delay of share/C to book a rate C, the host keeps C on
   * average but can run above it over days (DESIGN §20 has the measurements). A host with a
   * rate cap over a window (`Frontier.setHostCap`) has the lower of its spacing and the cap's
   * crawls / window as its capacity, and the frontier holds it to the cap in every window:
   * give it a crawl delay below the cap interval and keep the share at 1.
   */
  readonly politenessShare: number;
  /**
   * Place the due hours of a host whose demand at the last pass reached `calendarLoad` of its
   * capacity on a per-host slot calendar (`SlotCalendar`: at most one due per 1/C of the
   * host's capacity C, each URL on the free slot nearest its ideal hour within
   * `reviseTolerance` of its interval), so a saturated host's arrivals do not bunch and queue.
   * Off by default (DESIGN §20, "Slot calendar", has the measurements).
   */
  readonly slotCalendar: boolean;
  /** Demand / capacity at the last pass from which a host's dues go on its calendar. */
  readonly calendarLoad: number;
  /**
   * How far from its ideal hour a URL may be placed on its host's calendar, as a fraction of
   * its interval (at least an hour); the background pass then re-times such a URL only when
   * its ideal moved by more than `reviseTolerance` + this.
   */
  readonly calendarReach: number;
  /**
   * How many of a host's crawl intervals (1/C for its capacity C) ahead of its time a URL is
   * made due, so a host served at its capacity does not idle while its next URL is almost due:
   * a slot the queue left empty is lost for good, and every later URL then waits behind the
   * backlog. The next interval is timed from the URL's own time when it started early, so its
   * rate is unchanged. 0 turns it off.
   */
  readonly leadSlots: number;
}

/** `WithFreshnessOptions.leadSlots` by default (DESIGN §20, "A lead on saturated hosts"). */
export const DEFAULT_LEAD_SLOTS = 8;

const resolveOptions = defineOptions<WithFreshnessOptions>('WithFreshnessOptions', {
  cadenceHours: numberField({ min: 1, max: 24 * 365, integer: true, default: 6 }),
  reviseTolerance: numberField({ min: 0, max: 10, default: 0.1 }),
  tau: customField('a TauControllerOptions object', (v): v is Partial<TauControllerOptions> => typeof v === 'object' && v !== null && !Array.isArray(v)),
  politenessShare: numberField({ above: 0, max: 1, default: 1 }),
  slotCalendar: booleanField(false),
  calendarLoad: numberField({ above: 0, max: 10, default: 0.9 }),
  calendarReach: numberField({ min: 0, max: 1, default: 0.25 }),
  leadSlots: numberField({ min: 0, max: 64, default: DEFAULT_LEAD_SLOTS }),
});

const HOUR_MS = 3_600_000;
/**
 * Rates are summed in fixed point (units of 2⁻²⁰ crawls/hour, integers in a double, exact up
 * to 2⁵³): a recovered frontier numbers its rows and hosts in key order, not in the order the
 * original met them, and a floating-point sum in another order could move τ by an ulp — and a
 * recovered partition must continue with the identical τ.
 */
const FIXED = 2 ** 20;
const MAGIC = 0x5346474d; // "MGFS" little-endian
const STATE_VERSION = 2;
/** The version written when some host has a slot calendar (2 otherwise, byte for byte as before). */
const CALENDAR_VERSION = 3;
/** The version written when the hazard is learned (`learnHazard`): version 3's layout, its calendar count always present, then the hazard. */
const HAZARD_VERSION = 4;
const HAZARD_BYTES = 24;
const HEADER_BYTES = 40;

/** Statuses that still want fetches: the rows whose desired rates make up the demand. */
function schedulable(s: number): boolean {
  return s <= UrlStatus.RetryWait; // Scheduled, InFlight, Crawled, DueRecrawl, RetryWait
}

/** Orders rows a and b by their URL keys (four u32 words each). */
function compareKeys(key: Uint32Array, a: number, b: number): number {
  for (let i = 0; i < 4; i++) {
    const d = key[a * 4 + i]! - key[b * 4 + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** A mutable `HostCapacity` reused across calls. */
interface HostView {
  capacityPerHour: number;
  urlCount: number;
  demandPerHour: number | undefined;
  tau: number | undefined;
}

/**
 * The freshness policy as a frontier hook (see the module comment). Built by `withFreshness`;
 * implements the object form of the frontier's `FreshnessHook`.
 */
export class FreshnessScheduler {
  /** The validated parameters in use. */
  readonly params: FreshnessParams;
  readonly #options: WithFreshnessOptions;
  readonly #tau: TauController;
  /** Schedulable rows at the last seeding of τ; 0 = τ never seeded. */
  #seededRows = 0;
  /** Hour of the last pass; −1 = none yet. */
  #lastTick = -1;
  /** Hosts the per-host arrays describe (ids below this). */
  #hostCount = 0;
  /** Per host id: Σ desired rate at the last pass (−1 = unknown), schedulable URLs. */
  #demand = new Float64Array(0);
  #urls = new Uint32Array(0);
  /** Per host id: its own water level τ_h when saturated at the last pass (0 = none). */
  #hostTau = new Float64Array(0);
  /** Scratch: rows grouped by host (CSR) for the per-host levels. */
  #byHost = new Uint32Array(0);
  #hostStart = new Uint32Array(0);
  /** Scratch: host capacities booked at `politenessShare`. */
  #cap = new Float64Array(0);
  /** Scratch: desired rate per row in a pass. */
  #want = new Float64Array(0);
  /** Per host id: its slot calendar while saturated (`slotCalendar`), else undefined. */
  #calendars: (SlotCalendar | undefined)[] = [];
  /** Change points and watched hours behind the learned hazard (hazard.ts). */
  #evidence: HazardEvidence = newHazardEvidence();
  /** The rate-change hazard in use, set at each pass (the prior until then, or when not learned). */
  #hazard: number;
  readonly #view: FreshnessRecord = newFreshnessRecord();
  readonly #host: HostView = { capacityPerHour: Number.POSITIVE_INFINITY, urlCount: 1, demandPerHour: undefined, tau: undefined };

  constructor(params: Partial<FreshnessParams> | FreshnessParams | null | undefined, budgetPerHour: number, options?: Partial<WithFreshnessOptions> | null) {
    if (typeof budgetPerHour !== 'number' || !Number.isFinite(budgetPerHour) || budgetPerHour < 0) {
      throw new InvalidArgumentError(`withFreshness: expected budgetPerHour as a finite number of crawls per hour >= 0, received ${String(budgetPerHour)}`);
    }
    this.params = freshnessParams(params);
    this.#hazard = this.params.rateChangeHazard;
    this.#options = resolveOptions(options);
    this.#tau = new TauController(budgetPerHour, this.#options.tau);
  }

  /**
   * How the frontier orders a host's waiting URLs (`FreshnessHook.queueOrder`): by due hour
   * when URLs are made due ahead of their time (`leadSlots` > 0), so an early URL never
   * overtakes one already due; by priority otherwise.
   */
  get queueOrder(): 'priority' | 'due' {
    return this.#options.leadSlots > 0 ? 'due' : 'priority';
  }

  /** The current water level τ (a URL is funded while its w/λ exceeds it). */
  tau(): number {
    return this.#tau.tau();
  }

  /** The refresh budget, crawls per hour. */
  budget(): number {
    return this.#tau.budget();
  }

  /** Retargets the budget (τ is kept, so the schedule moves smoothly). */
  setBudget(budgetPerHour: number): void {
    this.#tau.setBudget(budgetPerHour);
  }

  /**
   * The rate-change hazard in use, per page per hour: learned from the change points the
   * crawl has detected (`learnHazard`, hazard.ts), updated at each pass; `rateChangeHazard` when
   * not learned.
   */
  hazard(): number {
    return this.#hazard;
  }

  /** Epoch-hour of the last background pass, or −1 before the first. */
  lastTickHours(): number {
    return this.#lastTick;
  }

  /** The frontier's per-outcome call: the URL's next due epoch-hour (see the module comment). */
  nextDue(rec: CrawledRecord, nowHours: number): number {
    const p = this.params;
    const v = this.#view;
    v.priority = rec.priority;
    v.firstCrawled = rec.firstCrawled;
    v.lastCrawled = rec.lastCrawled;
    v.nextDue = rec.nextDue;
    v.crawlCount = rec.crawlCount;
    v.changeCount = rec.changeCount;
    v.noChangeStreak = rec.noChangeStreak;
    v.lastModified = rec.lastModified;
    v.spreadKey = rec.spreadKey;
    v.lastChanged = rec.lastChanged;
    const oldExposure = rec.lmHours;
    v.lmHours = lastModifiedExposure(
      rec.lmHours,
      rec.change,
      rec.previousLastModified,
      rec.sentLastModified,
      rec.previousCrawled,
      rec.fetchedAtHours,
      rec.status === 304,
      rec.sentDate,
    );
    // A first fetch's date waits in lmAgeHours until later fetches prove the server's dates.
    v.lmAgeHours = rec.change === 'first' ? firstFetchAge(rec.sentLastModified, rec.fetchedAtHours, rec.sentDate) : rec.lmAgeHours;
    // The interval statistics: this fetch's interval folded in (after rebuilding them from the
    // counts if an older build left none), in the whole hours the span is measured in, so the
    // intervals add up to it exactly — or the history restarted at a change point on the URL's
    // stored λ (`foldOrRestart`, the rule observeChange follows). A restart rewrites the
    // history's start and counts, which the frontier keeps (no column of its own). The
    // exposure is rounded to its f32 column only after (see foldOrRestart for why).
    v.unchangedHours = rec.unchangedHours;
    v.changedLogHours = rec.changedLogHours;
    const now = Math.floor(rec.fetchedAtHours);
    const previousLambda = rec.lambda;
    const closesInterval = v.crawlCount >= 2;
    const restarted = foldOrRestart(v, previousLambda, oldExposure, now, rec.previousCrawled, rec.change === 'real', p.changePointP);
    // A change point for the hazard: a restart that moved the history's start or count (one
    // that restarts a never-changed page to its whole quiet history drops nothing). The
    // simulator's estimator counts the same (bench/freshness/policies.ts, keep in sync).
    const changePoint = restarted && (v.firstCrawled !== rec.firstCrawled || v.crawlCount !== rec.crawlCount);
    if (restarted) {
      rec.firstCrawled = v.firstCrawled;
      rec.crawlCount = v.crawlCount;
      rec.changeCount = v.changeCount;
      rec.noChangeStreak = v.noChangeStreak;
    }
    // Every fetch that closes an interval could have found a change point: its interval is watched time.
    if (closesInterval) observeHazard(this.#evidence, now - rec.previousCrawled, changePoint);
    v.lmHours = Math.fround(v.lmHours);
    v.lmAgeHours = Math.fround(v.lmAgeHours);
    v.unchangedHours = Math.fround(v.unchangedHours);
    v.changedLogHours = Math.fround(v.changedLogHours);
    rec.lmHours = v.lmHours;
    rec.lmAgeHours = v.lmAgeHours;
    rec.unchangedHours = v.unchangedHours;
    rec.changedLogHours = v.changedLogHours;
    // Stored as f32: schedule with the value the next pass will read.
    const lambda = Math.fround(estimate(v, p));
    rec.lambda = lambda;
    v.lambda = lambda;
    const host = this.#host;
    const h = rec.host;
    // The host's capacity: one crawl per interval, or its rate cap's crawls / window if lower
    // (a record from a frontier without caps has no hostCapPerHour: no cap).
    const spacing = rec.hostIntervalMs > 0 ? HOUR_MS / rec.hostIntervalMs : Number.POSITIVE_INFINITY;
    const capped = rec.hostCapPerHour !== undefined && rec.hostCapPerHour < spacing ? rec.hostCapPerHour : spacing;
    host.capacityPerHour = this.#options.politenessShare * capped;
    const d = h < this.#hostCount ? this.#demand[h]! : -1;
    host.urlCount = d >= 0 ? this.#urls[h]! : 1;
    host.demandPerHour = d >= 0 ? d : undefined;
    const level = d >= 0 ? this.#hostTau[h]! : 0;
    host.tau = level > 0 ? level : undefined;
    // With the estimate before this fetch: a URL it took over the line gets a test first.
    const interval = targetInterval(v, host, this.#tau.tau(), p, previousLambda, this.#hazard);
    const due = setNextDue(v, interval, nowHours, p, leadHours(host.capacityPerHour, this.#options.leadSlots));
    const cal = this.#calendarOf(h, d, host.capacityPerHour, nowHours);
    return cal === undefined ? due : this.#place(cal, due, interval, nowHours);
  }

  /**
   * Host h's calendar when `slotCalendar` is on and its demand at the last pass reached
   * `calendarLoad` of its capacity (made, or remade when the capacity moved, and advanced to
   * the clock); otherwise undefined, and a calendar it had is dropped.
   */
  #calendarOf(h: number, demand: number, capacity: number, nowHours: number): SlotCalendar | undefined {
    const o = this.#options;
    if (!o.slotCalendar) return undefined;
    if (!(demand >= 0) || !(capacity > 0) || !Number.isFinite(capacity) || demand < o.calendarLoad * capacity) {
      if (this.#calendars[h] !== undefined) this.#calendars[h] = undefined;
      return undefined;
    }
    let c = this.#calendars[h];
    // The per-outcome capacity and the pass's are computed apart: an ulp is not a new rate.
    if (c === undefined || Math.abs(c.perHour - capacity) > 1e-9 * capacity) this.#calendars[h] = c = new SlotCalendar(capacity, nowHours);
    c.advance(nowHours);
    return c;
  }

  /**
   * The hour of the free slot nearest `due` within 0.9 × `reviseTolerance` of the interval (at
   * least an hour, never before now + minReprobeGap), so the background pass does not take it
   * back; `due` itself when none is free.
   */
  #place(cal: SlotCalendar, due: number, interval: number, nowHours: number): number {
    const reach = Math.max(1, this.#options.calendarReach * interval);
    const lo = Math.max(Math.ceil(nowHours + this.params.minReprobeGap), Math.ceil(due - reach));
    const placed = cal.place(due, lo, Math.floor(due + reach));
    if (placed === undefined) return due;
    this.#view.nextDue = placed;
    return placed;
  }

  /**
   * The frontier's background pass (see the module comment). Runs when `force` is set or the
   * clock has entered a new `cadenceHours` block since the last pass; returns the number of
   * rows re-timed (listed in `rows.moved`), or −1 when it made no pass.
   */
  tick(frontierRows: FreshnessRows, nowHours: number, force: boolean): number {
    const c = this.#options.cadenceHours;
    if (!force && this.#lastTick >= 0 && Math.floor(nowHours / c) === Math.floor(this.#lastTick / c)) return -1;
    if (this.#lastTick >= 0) decayHazard(this.#evidence, nowHours - this.#lastTick);
    this.#lastTick = nowHours;
    this.#hazard = hazardInUse(this.#evidence, this.params);
    const rows = this.#booked(frontierRows);
    const n = rows.rows;
    const hostCount = rows.hosts;
    const p = this.params;
    const v = this.#view;
    const { status, priority, slot, lambda, host, hostCapacity: cap } = rows;
    if (this.#demand.length < hostCount) {
      const size = Math.max(64, hostCount * 2);
      const demand = new Float64Array(size).fill(-1);
      demand.set(this.#demand.subarray(0, this.#hostCount));
      const urls = new Uint32Array(size);
      urls.set(this.#urls.subarray(0, this.#hostCount));
      const hostTau = new Float64Array(size);
      hostTau.set(this.#hostTau.subarray(0, this.#hostCount));
      this.#demand = demand;
      this.#urls = urls;
      this.#hostTau = hostTau;
    }
    if (this.#want.length < n) this.#want = new Float64Array(Math.max(1024, Math.ceil(n * 1.5)));
    const demand = this.#demand;
    const urls = this.#urls;
    const want = this.#want;
    this.#hostCount = hostCount;

    let counted = 0;
    for (let r = 0; r < n; r++) if (schedulable(status[r]!)) counted++;
    if (counted === 0) {
      demand.fill(-1, 0, hostCount);
      urls.fill(0, 0, hostCount);
      return 0;
    }
    if (this.#seededRows === 0 || counted >= 2 * this.#seededRows) {
      this.#seededRows = counted;
      if (this.#tau.budget() > 0) {
        const level = solveWaterLevel((tau) => this.#cappedDemand(rows, tau), this.#tau.budget());
        this.#tau.setLogTau(Math.log(level));
      }
    }

    // Pass 1: desired rates at the current τ, per-host demand, one controller step.
    const tau = this.#tau.tau();
    demand.fill(0, 0, hostCount);
    urls.fill(0, 0, hostCount);
    for (let r = 0; r < n; r++) {
      if (!schedulable(status[r]!)) continue;
      v.priority = priority[r]!;
      v.lambda = lambda[slot[r]!]!;
      const w = desiredRate(v, tau, p, tau, this.#hazard);
      want[r] = w;
      const h = host[r]!;
      demand[h]! += Math.round(w * FIXED);
      urls[h]!++;
    }
    let total = 0;
    for (let h = 0; h < hostCount; h++) {
      const d = (demand[h]! /= FIXED);
      const k = cap[h]!;
      total += Math.round((d < k ? d : k) * FIXED);
    }
    this.#tau.tick(total / FIXED);
    this.#hostLevels(rows, tau);
    // Calendars of hosts no longer saturated go (the state stays that of the saturated ones).
    const calendars = this.#calendars;
    for (let h = 0; h < calendars.length; h++) if (calendars[h] !== undefined) this.#calendarOf(h, h < hostCount ? demand[h]! : -1, h < hostCount ? cap[h]! : 0, nowHours);

    // Pass 2: re-time URLs waiting for their recrawl whose interval has moved.
    const { crawlCount, lastCrawled, nextDue, key, moved } = rows;
    const hv = this.#host;
    const tolerance = this.#options.reviseTolerance;
    let m = 0;
    const pending: { r: number; ideal: number; interval: number }[] = [];
    for (let r = 0; r < n; r++) {
      const sl = slot[r]!;
      if (status[r] !== UrlStatus.Crawled || crawlCount[sl] === 0) continue;
      const h = host[r]!;
      hv.capacityPerHour = cap[h]!;
      hv.urlCount = urls[h]!;
      hv.demandPerHour = demand[h]!;
      hv.tau = this.#hostTau[h]! > 0 ? this.#hostTau[h]! : undefined;
      const rate = hostClampedRate(want[r]!, hv);
      if (!(rate > 0)) continue;
      v.priority = priority[r]!;
      v.lambda = lambda[slot[r]!]!;
      v.lastCrawled = lastCrawled[sl]!;
      v.nextDue = nextDue[r]!;
      v.crawlCount = crawlCount[sl]!;
      v.spreadKey = key[r * 4 + 2]!;
      const level = hv.tau !== undefined && hv.tau > tau ? hv.tau : tau;
      if (awaitsTest(v, level, p)) continue; // a test interval in progress: its answer decides
      const interval = recrawlInterval(v, rate, level, p);
      const cal = this.#calendarOf(h, hv.demandPerHour, hv.capacityPerHour, nowHours);
      if (reviseNextDue(v, interval, nowHours, p, cal === undefined ? tolerance : tolerance + this.#options.calendarReach, leadHours(hv.capacityPerHour, this.#options.leadSlots))) {
        if (cal !== undefined) {
          pending.push({ r, ideal: v.nextDue, interval });
          continue;
        }
        nextDue[r] = v.nextDue;
        moved[m++] = r;
      }
    }
    if (pending.length === 0) return m;
    // Calendar hosts' re-timed URLs are placed in an order that does not depend on row numbers
    // (a recovered frontier numbers rows in key order): by ideal hour, then URL key. Their old
    // slots are freed first (a set operation, the same in any order).
    pending.sort((a, b) => a.ideal - b.ideal || compareKeys(key, a.r, b.r));
    for (const q of pending) this.#calendars[host[q.r]!]!.free(nextDue[q.r]!);
    for (const q of pending) {
      const placed = this.#place(this.#calendars[host[q.r]!]!, q.ideal, q.interval, nowHours);
      if (placed === nextDue[q.r]) continue;
      nextDue[q.r] = placed;
      moved[m++] = q.r;
    }
    return m;
  }

  /** The rows with each host's capacity scaled by `politenessShare` (the rows themselves at 1). */
  #booked(rows: FreshnessRows): FreshnessRows {
    const share = this.#options.politenessShare;
    if (share === 1) return rows;
    const n = rows.hosts;
    if (this.#cap.length < n) this.#cap = new Float64Array(Math.max(64, n * 2));
    const cap = this.#cap.subarray(0, n);
    for (let h = 0; h < n; h++) cap[h] = rows.hostCapacity[h]! * share;
    return { ...rows, hostCapacity: cap };
  }

  /**
   * Gives every host whose demand at τ exceeds its capacity its own water level τ_h
   * (`hostWaterLevel`, Kolobov et al. 2019's per-host multiplier) and re-prices its rows at it:
   * `want` and the host's demand become those at τ_h, so the re-timing pass and the
   * per-outcome path drop the host's least valuable URLs instead of slowing all of them.
   * Sums are fixed point in row order (see FIXED), so a recovered partition gets the same τ_h.
   */
  #hostLevels(rows: FreshnessRows, tau: number): void {
    const { status, priority, slot, lambda, host, hostCapacity: cap } = rows;
    const n = rows.rows;
    const hostCount = rows.hosts;
    const demand = this.#demand;
    const hostTau = this.#hostTau;
    hostTau.fill(0, 0, hostCount);
    let saturated = 0;
    for (let h = 0; h < hostCount; h++) if (demand[h]! > cap[h]!) saturated++;
    if (saturated === 0) return;
    // Rows of each host, in row order (counting sort).
    if (this.#hostStart.length < hostCount + 1) this.#hostStart = new Uint32Array(Math.max(64, hostCount * 2) + 1);
    if (this.#byHost.length < n) this.#byHost = new Uint32Array(Math.max(1024, Math.ceil(n * 1.5)));
    const start = this.#hostStart;
    const byHost = this.#byHost;
    start.fill(0, 0, hostCount + 1);
    for (let r = 0; r < n; r++) if (schedulable(status[r]!)) start[host[r]! + 1]!++;
    for (let h = 0; h < hostCount; h++) start[h + 1]! += start[h]!;
    const fill = start.slice(0, hostCount);
    for (let r = 0; r < n; r++) if (schedulable(status[r]!)) byHost[fill[host[r]!]!++] = r;
    const p = this.params;
    const v = this.#view;
    const want = this.#want;
    const demandAt = (h: number, level: number): number => {
      let sum = 0;
      for (let i = start[h]!; i < start[h + 1]!; i++) {
        const r = byHost[i]!;
        v.priority = priority[r]!;
        v.lambda = lambda[slot[r]!]!;
        sum += Math.round(desiredRate(v, level, p, tau, this.#hazard) * FIXED);
      }
      return sum / FIXED;
    };
    for (let h = 0; h < hostCount; h++) {
      if (!(demand[h]! > cap[h]!)) continue;
      const level = hostWaterLevel((t) => demandAt(h, t), cap[h]!, tau);
      hostTau[h] = level;
      let sum = 0;
      for (let i = start[h]!; i < start[h + 1]!; i++) {
        const r = byHost[i]!;
        v.priority = priority[r]!;
        v.lambda = lambda[slot[r]!]!;
        const w = desiredRate(v, level, p, tau, this.#hazard);
        want[r] = w;
        sum += Math.round(w * FIXED);
      }
      demand[h] = sum / FIXED;
    }
  }

  /** Σ_h min(D_h(τ), C_h) over the schedulable rows: the spend a level τ would schedule. */
  #cappedDemand(rows: FreshnessRows, tau: number): number {
    const { status, priority, slot, lambda, host, hostCapacity: cap } = rows;
    const demand = this.#demand;
    const hostCount = rows.hosts;
    const p = this.params;
    const v = this.#view;
    demand.fill(0, 0, hostCount);
    for (let r = 0; r < rows.rows; r++) {
      if (!schedulable(status[r]!)) continue;
      v.priority = priority[r]!;
      v.lambda = lambda[slot[r]!]!;
      demand[host[r]!]! += Math.round(desiredRate(v, tau, p, tau, this.#hazard) * FIXED);
    }
    let total = 0;
    for (let h = 0; h < hostCount; h++) total += Math.round(Math.min(demand[h]! / FIXED, cap[h]!) * FIXED);
    return total / FIXED;
  }

  /**
   * The state for the partition's freshness section, per-host entries in the order
   * `hostOrder` gives (host i of the file is id `hostOrder[i]` here).
   *
   * ```
   *  0   u32  magic "MGFS"        4  u16  version (2; 1 is read)     6  u16  reserved
   *  8   f64  ln τ               16  f64  hour of the last pass (−1 = none)
   *  24  f64  rows at the last seeding of τ (0 = never)
   *  32  u32  host count H       36  u32  reserved
   *  40  H × f64 host demand (crawls/hour, −1 = unknown), then H × u32 schedulable URLs,
   *      then (version 2) H × f64 the host's own water level τ_h (0 = none)
   *      then (version 3, written only when some host has a slot calendar; version 4, always)
   *      u32 count M and M × (u32 host position, `CALENDAR_BYTES` of `SlotCalendar.write`),
   *      positions ascending
   *      then (version 4, written when `learnHazard` is on) f64 the hazard in use, f64 change
   *      points and f64 watched hours behind it (hazard.ts)
   * ```
   * With `learnHazard` off the state is version 2 or 3, byte for byte as before it existed.
   */
  exportState(hostOrder: Uint32Array): Uint8Array {
    const hosts = hostOrder.length;
    const withCalendar: number[] = [];
    for (let i = 0; i < hosts; i++) if (this.#calendars[hostOrder[i]!] !== undefined) withCalendar.push(i);
    const learned = this.params.learnHazard;
    const calendarBytes = withCalendar.length > 0 || learned ? 4 + withCalendar.length * (4 + CALENDAR_BYTES) : 0;
    const out = new Uint8Array(HEADER_BYTES + hosts * 20 + calendarBytes + (learned ? HAZARD_BYTES : 0));
    const dv = new DataView(out.buffer);
    dv.setUint32(0, MAGIC, true);
    dv.setUint16(4, learned ? HAZARD_VERSION : calendarBytes > 0 ? CALENDAR_VERSION : STATE_VERSION, true);
    dv.setFloat64(8, this.#tau.logTau(), true);
    dv.setFloat64(16, this.#lastTick, true);
    dv.setFloat64(24, this.#seededRows, true);
    dv.setUint32(32, hosts, true);
    const urlsAt = HEADER_BYTES + hosts * 8;
    for (let i = 0; i < hosts; i++) {
      const id = hostOrder[i]!;
      const known = id < this.#hostCount;
      dv.setFloat64(HEADER_BYTES + i * 8, known ? this.#demand[id]! : -1, true);
      dv.setUint32(urlsAt + i * 4, known ? this.#urls[id]! : 0, true);
      dv.setFloat64(HEADER_BYTES + hosts * 12 + i * 8, known ? this.#hostTau[id]! : 0, true);
    }
    if (calendarBytes > 0) {
      let at = HEADER_BYTES + hosts * 20;
      dv.setUint32(at, withCalendar.length, true);
      at += 4;
      for (const i of withCalendar) {
        dv.setUint32(at, i, true);
        this.#calendars[hostOrder[i]!]!.write(dv, at + 4);
        at += 4 + CALENDAR_BYTES;
      }
      if (learned) {
        dv.setFloat64(at, this.#hazard, true);
        dv.setFloat64(at + 8, this.#evidence.changePoints, true);
        dv.setFloat64(at + 16, this.#evidence.watchedHours, true);
      }
    }
    return out;
  }

  /**
   * Restores state written by `exportState` (host ids are then the file's host positions, as
   * the recovered frontier numbers them). Throws `CorruptPartitionError` ('freshness') for a
   * blob that is not this format or whose lengths disagree.
   */
  importState(state: Uint8Array): void {
    const fail = (why: string): never => {
      throw new CorruptPartitionError('freshness', why);
    };
    if (!(state instanceof Uint8Array) || state.length < HEADER_BYTES) fail(`state is ${state?.length ?? 0} bytes, expected at least ${HEADER_BYTES}`);
    const dv = new DataView(state.buffer, state.byteOffset, state.byteLength);
    if (dv.getUint32(0, true) !== MAGIC) fail('state does not start with the MGFS tag');
    const version = dv.getUint16(4, true);
    if (version < 1 || version > HAZARD_VERSION) fail(`state version ${version}, this build reads 1 to ${HAZARD_VERSION}`);
    // Version 1 had no per-host levels (12 bytes per host); they come back at the next pass.
    const perHost = version === 1 ? 12 : 20;
    const logTau = dv.getFloat64(8, true);
    const lastTick = dv.getFloat64(16, true);
    const seeded = dv.getFloat64(24, true);
    const hosts = dv.getUint32(32, true);
    const hostBytes = HEADER_BYTES + hosts * perHost;
    const withCount = version >= CALENDAR_VERSION;
    const count = withCount && state.length >= hostBytes + 4 ? dv.getUint32(hostBytes, true) : 0;
    const hazardAt = hostBytes + (withCount ? 4 + count * (4 + CALENDAR_BYTES) : 0);
    const expected = hazardAt + (version === HAZARD_VERSION ? HAZARD_BYTES : 0);
    if (state.length !== expected) fail(`state is ${state.length} bytes, ${hosts} hosts${count > 0 ? ` and ${count} calendars` : ''} need ${expected}`);
    if (Number.isNaN(logTau) || !Number.isFinite(lastTick) || lastTick < -1 || !(seeded >= 0) || !Number.isInteger(seeded)) {
      fail(`state holds ln τ ${logTau}, last pass ${lastTick}, seeded rows ${seeded}`);
    }
    const demand = new Float64Array(Math.max(64, hosts * 2)).fill(-1);
    const urls = new Uint32Array(demand.length);
    const hostTau = new Float64Array(demand.length);
    const urlsAt = HEADER_BYTES + hosts * 8;
    for (let i = 0; i < hosts; i++) {
      const d = dv.getFloat64(HEADER_BYTES + i * 8, true);
      if (Number.isNaN(d) || d < -1) fail(`host ${i} demand ${d}`);
      demand[i] = d;
      urls[i] = dv.getUint32(urlsAt + i * 4, true);
      if (perHost === 20) {
        const level = dv.getFloat64(HEADER_BYTES + hosts * 12 + i * 8, true);
        if (!(level >= 0) || !Number.isFinite(level)) fail(`host ${i} water level ${level}`);
        hostTau[i] = level;
      }
    }
    const calendars: (SlotCalendar | undefined)[] = [];
    let last = -1;
    for (let j = 0, at = hostBytes + 4; j < count; j++, at += 4 + CALENDAR_BYTES) {
      const i = dv.getUint32(at, true);
      if (i >= hosts || i <= last) fail(`calendar ${j} of host ${i} (${hosts} hosts, positions ascending)`);
      last = i;
      calendars[i] = SlotCalendar.read(dv, at + 4) ?? fail(`calendar of host ${i} has a bad rate or base`);
    }
    // A state from before the learned hazard (or written with it off) starts from the prior.
    let hazard = this.params.rateChangeHazard;
    const evidence = newHazardEvidence();
    if (version === HAZARD_VERSION) {
      hazard = dv.getFloat64(hazardAt, true);
      evidence.changePoints = dv.getFloat64(hazardAt + 8, true);
      evidence.watchedHours = dv.getFloat64(hazardAt + 16, true);
      if (!(hazard >= 0 && hazard <= 1) || !(evidence.changePoints >= 0) || !Number.isFinite(evidence.changePoints) || !(evidence.watchedHours >= 0) || !Number.isFinite(evidence.watchedHours)) {
        fail(`hazard ${hazard} from ${evidence.changePoints} change points over ${evidence.watchedHours} watched hours`);
      }
    }
    // A hook that does not learn (or insures nothing) uses its own setting, whatever the state says.
    if (!learnsHazard(this.params)) hazard = this.params.rateChangeHazard;
    this.#hazard = hazard;
    this.#evidence = evidence;
    this.#calendars = calendars;
    this.#tau.setLogTau(logTau);
    this.#lastTick = lastTick;
    this.#seededRows = seeded;
    this.#hostCount = hosts;
    this.#demand = demand;
    this.#urls = urls;
    this.#hostTau = hostTau;
  }
}

/**
 * The freshness policy for a frontier's `freshness` option: learns each URL's change rate
 * from its fetches and recrawls it about as often as it is worth, spending about
 * `budgetPerHour` recrawls per hour within every host's politeness (see the module comment).
 * Use it with the schedule index on (`scheduleIndex: true`), which brings crawled URLs back
 * when due; one instance per frontier.
 *
 * @param params freshness parameters (any subset; `defaultParams()` when omitted)
 * @param budgetPerHour crawls per hour the partition may spend on fetches, ≥ 0
 * @param options cadence of the background pass, re-timing tolerance, controller tuning
 * @throws InvalidArgumentError for a bad parameter, budget or option
 */
export function withFreshness(
  params: Partial<FreshnessParams> | FreshnessParams | null | undefined,
  budgetPerHour: number,
  options?: Partial<WithFreshnessOptions> | null,
): FreshnessScheduler {
  return new FreshnessScheduler(params, budgetPerHour, options);
}
