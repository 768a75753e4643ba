/**
 * The policies the simulator compares.
 *
 * - `uniform`: every page at the same rate (the budget split evenly).
 * - `proportional`: rate ∝ λ (the intuitive, and wrong, policy: it over-spends on pages that go
 *   stale again at once).
 * - `optimum`: the exact offline allocation from the *true* λ, weights and caps
 *   (`optimalRates`), crawled with even spacing: the ceiling no learner can beat in expectation.
 * - `meguri-estimator`: learns λ from what it observes, through meguri's own functions —
 *   `observeChange`, `estimate`, `targetInterval`, `setNextDue`, `reviseNextDue`,
 *   `TauController`, `solveWaterLevel` — over typed-array columns and one reusable
 *   `FreshnessRecord` view, as a frontier does. (`oracleLambda` swaps the estimate for the
 *   true λ, to separate estimation error from scheduling error.)
 *
 * The fixed-rate policies respect host caps the way a polite crawler is forced to: a capped
 * host over its cap is scaled down to it, and the budget that frees goes to everyone else in
 * the same shape. The real Frontier with `withFreshness` runs through the same `Policy`
 * interface as `meguri-frontier` (frontier-policy.ts).
 */
import {
  TauController,
  awaitsTest,
  defaultParams,
  desiredRate,
  DEFAULT_LEAD_SLOTS,
  estimate,
  hostClampedRate,
  hostWaterLevel,
  newFreshnessRecord,
  observeChange,
  optimalRates,
  recrawlInterval,
  reviseNextDue,
  setNextDue,
  solveWaterLevel,
  targetInterval,
  type FreshnessParams,
  type FreshnessRecord,
  type PageRate,
  type TauControllerOptions,
} from '../../src/freshness/index.js';
import type { Outcome } from '../../src/model/index.js';
import type { Policy } from './engine.js';
import { DueHeap } from './heap.js';
import { type HazardEvidence, decayHazard, hazardInUse, newHazardEvidence, observeHazard } from '../../src/freshness/hazard.js';
import type { World } from './world.js';
import { LearnedPrior, estimateWithPrior, logLikelihood } from './eb-prior.js';

const TWO_POW_32 = 4294967296;

/**
 * Crawls each page at a fixed rate (per hour), evenly spaced from a per-page phase. A page of
 * rate 0 is fetched once, in a first pass over the first N / B hours (a copy is needed before
 * it can be fresh; a static page needs nothing more). With `ratesAfterFor` and a world with a
 * rate drift, the rates switch at the drift: each page's next crawl is re-placed one new
 * interval after its last (or spread over one new interval from the drift if that is past).
 *
 * `capSpacing` serves a capped host's fetches at least 1/C apart, as a crawl delay would (a
 * fetch due while the host's gap is still running waits for the gap, in due order): with
 * 'from-start' a page's next fetch is one interval after its (possibly late) start, as the
 * frontier times it; with 'from-due' it stays on the page's own periodic grid, so lateness is
 * made up by a shorter next interval. `leadSlots` lets a fetch start up to that many of the
 * host's slots (1/C each) before its time when the host is free; the next interval then runs
 * from that time, not from the early start. Without it the fixed rates are kept exactly and a capped
 * host is held to its cap only on average (the offline optimum's own assumption).
 */
export class FixedRatePolicy implements Policy {
  readonly observes = false;
  readonly name: string;
  readonly #ratesFor: (world: World) => Float64Array;
  readonly #ratesAfterFor: ((world: World) => Float64Array) | undefined;
  #rates: Float64Array = new Float64Array(0);
  #after: Float64Array | undefined;
  #switchAt = Number.POSITIVE_INFINITY;
  #last = new Float64Array(0);
  #heap = new DueHeap(1);
  #world: World | undefined;
  readonly #capSpacing: CapSpacing | undefined;
  /** Under `capSpacing`, how many of a capped host's slots (1/C) ahead of its time a fetch may start. */
  readonly #leadSlots: number;
  /** Per host, the earliest next start under `capSpacing` (−∞: free). */
  #hostFree = new Float64Array(0);
  /** Per page, the due time of its pending fetch under `capSpacing` ('from-due' keeps the grid). */
  #due = new Float64Array(0);

  constructor(
    name: string,
    ratesFor: (world: World) => Float64Array,
    ratesAfterFor?: (world: World) => Float64Array,
    capSpacing?: CapSpacing,
    leadSlots = 0,
  ) {
    this.name = name;
    this.#ratesFor = ratesFor;
    this.#ratesAfterFor = ratesAfterFor;
    this.#capSpacing = capSpacing;
    this.#leadSlots = leadSlots;
  }

  /** The rates chosen at start (per hour). */
  get rates(): Float64Array {
    return this.#rates;
  }

  start(world: World): void {
    this.#world = world;
    this.#rates = this.#ratesFor(world);
    const drift = this.#ratesAfterFor !== undefined && world.driftAt < Number.POSITIVE_INFINITY;
    this.#after = drift ? this.#ratesAfterFor!(world) : undefined;
    this.#switchAt = drift ? world.driftAt : Number.POSITIVE_INFINITY;
    this.#last = new Float64Array(world.n).fill(Number.NEGATIVE_INFINITY);
    this.#heap = new DueHeap(world.n);
    this.#hostFree = new Float64Array(world.hostCount).fill(Number.NEGATIVE_INFINITY);
    this.#due = new Float64Array(world.n).fill(Number.NaN);
    const firstPass = world.n / world.budgetPerHour;
    for (let i = 0; i < world.n; i++) {
      const r = this.#rates[i]!;
      const u = world.spreadKey[i]! / TWO_POW_32;
      this.#heap.push(world.t0 + (r > 0 ? u / r : u * firstPass), i);
    }
  }

  advance(_from: number, to: number, crawl: (page: number, at: number) => Outcome | null): void {
    if (this.#after !== undefined && to > this.#switchAt) this.#switch();
    const heap = this.#heap;
    const last = this.#last;
    const world = this.#world!;
    const spacing = this.#capSpacing;
    while (heap.peekTime() < to) {
      const t = heap.peekTime();
      const i = heap.pop();
      const r = this.#rates[i]!;
      const h = world.host[i]!;
      const cap = world.hostCap[h]!;
      if (spacing === undefined || !(cap < Number.POSITIVE_INFINITY)) {
        crawl(i, t);
        last[i] = t;
        if (r > 0) heap.push(t + 1 / r, i);
        continue;
      }
      const due = Number.isNaN(this.#due[i]!) ? t + this.#leadSlots / cap : this.#due[i]!;
      this.#due[i] = due;
      if (t < this.#hostFree[h]!) {
        heap.push(this.#hostFree[h]!, i); // the host's gap is running: wait for it
        continue;
      }
      this.#hostFree[h] = t + 1 / cap;
      crawl(i, t);
      last[i] = t;
      if (!(r > 0)) {
        this.#due[i] = Number.NaN; // fetched once, never again
        continue;
      }
      const next = (spacing === 'from-due' ? due : Math.max(t, due)) + 1 / r;
      this.#due[i] = next;
      const pop = next - this.#leadSlots / cap;
      heap.push(pop > t ? pop : t, i);
    }
  }

  /** Moves to the after-drift rates (once). */
  #switch(): void {
    const world = this.#world!;
    const after = this.#after!;
    this.#after = undefined;
    this.#rates = after;
    const at = this.#switchAt;
    const heap = new DueHeap(world.n);
    for (let i = 0; i < world.n; i++) {
      const r = after[i]!;
      const last = this.#last[i]!;
      if (!(r > 0)) {
        if (last === Number.NEGATIVE_INFINITY) heap.push(at, i); // never fetched yet: once
        continue;
      }
      const next = last + 1 / r;
      heap.push(next >= at ? next : at + (world.spreadKey[i]! / TWO_POW_32) / r, i);
    }
    this.#heap = heap;
    this.#due.fill(Number.NaN);
  }
}

/** How a fixed-rate policy spaces a capped host's fetches (see `FixedRatePolicy`). */
export type CapSpacing = 'from-start' | 'from-due';

/**
 * Rates ∝ `shape`, scaled to spend the budget, with capped hosts scaled down to their caps and
 * the freed budget spread over the rest (bisection on the common scale).
 */
export function shapedRates(world: World, shape: Float64Array): Float64Array {
  const hostShape = new Float64Array(world.hostCount);
  for (let i = 0; i < world.n; i++) hostShape[world.host[i]!]! += shape[i]!;
  const spend = (c: number): number => {
    let s = 0;
    for (let h = 0; h < world.hostCount; h++) s += Math.min(c * hostShape[h]!, world.hostCap[h]!);
    return s;
  };
  let lo = 0;
  let hi = 1;
  while (spend(hi) < world.budgetPerHour && hi < 1e300) hi *= 2;
  for (let k = 0; k < 200; k++) {
    const m = 0.5 * (lo + hi);
    if (spend(m) < world.budgetPerHour) lo = m;
    else hi = m;
  }
  const out = new Float64Array(world.n);
  for (let i = 0; i < world.n; i++) {
    const h = world.host[i]!;
    const want = hi * hostShape[h]!;
    const scale = want > world.hostCap[h]! ? world.hostCap[h]! / want : 1;
    out[i] = hi * shape[i]! * scale;
  }
  return out;
}

/** The budget split evenly, caps respected. */
export function uniformPolicy(): FixedRatePolicy {
  return new FixedRatePolicy('uniform', (w) => shapedRates(w, new Float64Array(w.n).fill(1)));
}

/** Rates proportional to the true λ (the rates after a drift from the drift on), caps respected. */
export function proportionalPolicy(): FixedRatePolicy {
  return new FixedRatePolicy(
    'proportional',
    (w) => shapedRates(w, w.lambda),
    (w) => shapedRates(w, w.lambdaAfter),
  );
}

/** The pages of a world as `optimalRates` input (at the rates before a drift, or after it), with its host caps. */
export function worldPages(world: World, afterDrift = false): { pages: PageRate[]; caps: Map<string, number> } {
  const pages: PageRate[] = [];
  const lambda = afterDrift ? world.lambdaAfter : world.lambda;
  for (let i = 0; i < world.n; i++) pages.push({ lambda: lambda[i]!, weight: world.weight[i]!, host: world.hostName[world.host[i]!]! });
  const caps = new Map<string, number>();
  for (let h = 0; h < world.hostCount; h++) if (world.hostCap[h]! < Number.POSITIVE_INFINITY) caps.set(world.hostName[h]!, world.hostCap[h]!);
  return { pages, caps };
}

/**
 * The exact offline optimum from the true λ, weights and caps; in a world with a rate drift,
 * the optimum for each phase (it knows when and how the rates change).
 */
export function optimumPolicy(): FixedRatePolicy {
  return new FixedRatePolicy('optimum', optimumPhase(false), optimumPhase(true));
}

/**
 * The optimum's rates served as a polite crawler must: a capped host's fetches at least 1/C
 * apart (its crawl delay), each page's next fetch one interval after its start (`capSpacing`
 * 'from-start', as the frontier times a late fetch) or on its own grid ('from-due'), and —
 * as `withFreshness` makes a URL due — up to `leadSlots` of the host's slots ahead of its time
 * when the host is free, the next interval then timed from that time. It is the
 * offline optimum's allocation with what a crawl delay costs it; the scenarios print it beside
 * the optimum so the real frontier's capped-host shortfall can be read against it.
 */
export function politeOptimumPolicy(spacing: CapSpacing = 'from-start', leadSlots = DEFAULT_LEAD_SLOTS): FixedRatePolicy {
  return new FixedRatePolicy(spacing === 'from-start' ? 'optimum-polite' : 'optimum-polite-grid', optimumPhase(false), optimumPhase(true), spacing, leadSlots);
}

function optimumPhase(afterDrift: boolean): (w: World) => Float64Array {
  return (w) => {
    const { pages, caps } = worldPages(w, afterDrift);
    return optimalRates(pages, w.budgetPerHour, caps);
  };
}

/** Options of the learning policy. */
export interface MeguriPolicyOptions {
  readonly params?: FreshnessParams;
  /** Hours between water-level updates. */
  readonly tickHours?: number;
  readonly tau?: Partial<TauControllerOptions>;
  /** Diagnostic: schedule with the true λ instead of the estimate (isolates estimation error). */
  readonly oracleLambda?: boolean;
  readonly name?: string;
  /** Experiment: the posterior under a prior learned from the crawl (eb-prior.ts); off by default. */
  readonly learnedPrior?: { readonly mix?: number; readonly decayPerTick?: number; readonly frozen?: boolean; readonly batchEveryTicks?: number; readonly batchIterations?: number; readonly reestimate?: boolean };
}

/** A mutable host view for `targetInterval`. */
interface HostView {
  capacityPerHour: number;
  urlCount: number;
  demandPerHour: number | undefined;
  tau: number | undefined;
}

/**
 * meguri's rescheduler over columns: learns λ from outcomes and schedules with the real
 * freshness functions. The water level is retuned every `tickHours` from the demand at the
 * current τ over all pages' current estimates (one pass), which also yields each capped
 * host's demand for the proportional host clamp.
 */
export class MeguriEstimatorPolicy implements Policy {
  readonly name: string;
  readonly #oracle: boolean;
  readonly observes = true;
  readonly #params: FreshnessParams;
  readonly #tickHours: number;
  readonly #tauOptions: Partial<TauControllerOptions>;
  #world: World | undefined;
  #tau = new TauController(1);
  #heap = new DueHeap(1);
  readonly #view: FreshnessRecord = newFreshnessRecord();
  /** The learned rate-change hazard's evidence and the hazard in use (src/freshness/hazard.ts). */
  #evidence: HazardEvidence = newHazardEvidence();
  #hazard = 0;
  #hosts: HostView[] = [];
  #demand = new Float64Array(0);
  #want = new Float64Array(0);
  // Columns, typed as a frontier would keep them.
  #status = new Uint8Array(0);
  #priority = new Float32Array(0);
  #firstCrawled = new Uint32Array(0);
  #lastCrawled = new Uint32Array(0);
  #nextDue = new Uint32Array(0);
  #crawlCount = new Uint32Array(0);
  #changeCount = new Uint32Array(0);
  #streak = new Uint16Array(0);
  #lambda = new Float32Array(0);
  #lastModified = new Uint32Array(0);
  #lmHours = new Float32Array(0);
  #lmAge = new Float32Array(0);
  #lastChanged = new Uint32Array(0);
  #unchanged = new Float32Array(0);
  #changedLog = new Float32Array(0);
  #fp = new Uint32Array(0);
  #sh = new Uint32Array(0);
  #spread = new Uint32Array(0);
  /** Water level over time (sampled at each tick), for diagnostics. */
  readonly tauTrace: number[] = [];
  readonly #ebOptions: MeguriPolicyOptions['learnedPrior'];
  #eb: LearnedPrior | undefined;

  constructor(options: MeguriPolicyOptions = {}) {
    this.#params = options.params ?? defaultParams();
    this.#tickHours = options.tickHours ?? 6;
    this.#tauOptions = options.tau ?? {};
    this.#oracle = options.oracleLambda ?? false;
    this.name = options.name ?? (this.#oracle ? 'meguri-true-lambda' : 'meguri-estimator');
    this.#ebOptions = options.learnedPrior;
  }

  start(world: World): void {
    const n = world.n;
    this.#world = world;
    this.#evidence = newHazardEvidence();
    this.#hazard = this.#params.rateChangeHazard;
    this.#eb = this.#ebOptions === undefined ? undefined : new LearnedPrior(this.#ebOptions.mix, this.#ebOptions.decayPerTick);
    this.#tau = new TauController(world.budgetPerHour, { initialTau: this.#initialTau(world), ...this.#tauOptions });
    this.#status = new Uint8Array(n);
    this.#priority = Float32Array.from(world.weight);
    this.#firstCrawled = new Uint32Array(n);
    this.#lastCrawled = new Uint32Array(n);
    this.#nextDue = new Uint32Array(n);
    this.#crawlCount = new Uint32Array(n);
    this.#changeCount = new Uint32Array(n);
    this.#streak = new Uint16Array(n);
    this.#lambda = new Float32Array(n);
    this.#lastModified = new Uint32Array(n);
    this.#lmHours = new Float32Array(n);
    this.#lmAge = new Float32Array(n);
    this.#lastChanged = new Uint32Array(n);
    this.#unchanged = new Float32Array(n);
    this.#changedLog = new Float32Array(n);
    this.#fp = new Uint32Array(2 * n);
    this.#sh = new Uint32Array(2 * n);
    this.#spread = Uint32Array.from(world.spreadKey);
    this.#hosts = [];
    this.#demand = new Float64Array(world.hostCount);
    this.#want = new Float64Array(n);
    for (let h = 0; h < world.hostCount; h++) {
      this.#hosts.push({ capacityPerHour: world.hostCap[h]!, urlCount: world.hostSize[h]!, demandPerHour: undefined, tau: undefined });
    }
    // First fetches spread over the time one pass of the budget takes (N / B hours).
    this.#heap = new DueHeap(n);
    const firstPass = n / world.budgetPerHour;
    for (let i = 0; i < n; i++) {
      const due = world.t0 + Math.floor((world.spreadKey[i]! / TWO_POW_32) * firstPass);
      this.#nextDue[i] = due;
      this.#heap.push(due, i);
    }
  }

  advance(from: number, to: number, crawl: (page: number, at: number) => Outcome | null): void {
    const world = this.#world!;
    if ((from - world.t0) % this.#tickHours === 0) this.#retune(world, from);
    const heap = this.#heap;
    const view = this.#view;
    const p = this.#params;
    while (heap.peekTime() < to) {
      const t = heap.peekTime();
      const i = heap.pop();
      if (t !== this.#nextDue[i]) continue; // superseded by reviseNextDue
      const outcome = crawl(i, t)!;
      this.#load(i);
      const before = view.crawlCount > 0 ? view.lastCrawled : t;
      const previousLambda = view.lambda;
      const counted = view.crawlCount;
      const first = view.firstCrawled;
      observeChange(view, outcome, t, p);
      // As withFreshness (keep in sync): every fetch closing an interval is watched time, and a
      // change point is a restart that moved the history's start or count (a fold moves neither
      // the start nor the count beyond this fetch).
      if (counted >= 1) observeHazard(this.#evidence, t - before, view.firstCrawled !== first || view.crawlCount !== counted + 1);
      const eb = this.#eb;
      if (eb !== undefined && !this.#oracle) {
        const e = estimateWithPrior(view, p, eb);
        view.lambda = e.lambda;
        if (e.posterior) eb.observe(t - before);
      } else view.lambda = this.#oracle ? world.lambda[i]! : estimate(view, p);
      const interval = targetInterval(view, this.#hosts[world.host[i]!], this.#tau.tau(), p, previousLambda, this.#hazard);
      setNextDue(view, interval, t, p);
      this.#store(i);
      if (view.nextDue < 0xffffffff) heap.push(view.nextDue, i);
    }
  }

  /**
   * The level at which every page, at the prior λ (refRate), would spend the budget: a
   * one-off bisection so the first days do not run at a wildly wrong τ.
   */
  #initialTau(world: World): number {
    const p = this.#params;
    const view = newFreshnessRecord();
    return solveWaterLevel((tau) => {
      let s = 0;
      for (let i = 0; i < world.n; i++) {
        view.priority = world.weight[i]!;
        s += desiredRate(view, tau, p);
      }
      return s;
    }, world.budgetPerHour);
  }

  /** The water level now. */
  tau(): number {
    return this.#tau.tau();
  }

  /**
   * One pass over the columns, as a frontier's background cadence would make: each page's
   * desired rate at the current τ and each host's demand; the capped total goes to the τ
   * controller; then every waiting page whose interval shrank is brought forward
   * (`reviseNextDue`), so a page parked at the re-probe interval answers a lower τ at once.
   */
  #retune(world: World, now: number): void {
    if (this.#eb !== undefined && this.#ebOptions?.frozen !== true) {
      const every = this.#ebOptions?.batchEveryTicks ?? 0;
      if (every === 0) this.#eb.refresh();
      else if (Math.round((now - world.t0) / this.#tickHours) % every === 0) this.#fitPrior(world);
    }
    const p = this.#params;
    if (now > world.t0) decayHazard(this.#evidence, this.#tickHours);
    this.#hazard = this.#oracle ? p.rateChangeHazard : hazardInUse(this.#evidence, p);
    const tau = this.#tau.tau();
    const view = this.#view;
    const demand = this.#demand;
    const want = this.#want;
    demand.fill(0);
    for (let i = 0; i < world.n; i++) {
      view.lambda = this.#lambda[i]!;
      view.priority = this.#priority[i]!;
      const r = desiredRate(view, tau, p, tau, this.#hazard);
      want[i] = r;
      demand[world.host[i]!]! += r;
    }
    let total = 0;
    for (let h = 0; h < world.hostCount; h++) {
      const host = this.#hosts[h]!;
      const d = demand[h]!;
      host.demandPerHour = d;
      total += d < host.capacityPerHour ? d : host.capacityPerHour;
    }
    this.tauTrace.push(this.#tau.tick(total));
    this.#hostLevels(world, tau);
    for (let i = 0; i < world.n; i++) {
      if (this.#crawlCount[i] === 0) continue; // first fetch not yet made: not the rescheduler's
      const hv = this.#hosts[world.host[i]!]!;
      const rate = hostClampedRate(want[i]!, hv);
      if (!(rate > 0)) continue;
      view.lambda = this.#lambda[i]!;
      view.priority = this.#priority[i]!;
      view.crawlCount = this.#crawlCount[i]!;
      view.lastCrawled = this.#lastCrawled[i]!;
      view.nextDue = this.#nextDue[i]!;
      view.spreadKey = this.#spread[i]!;
      const level = hv.tau !== undefined && hv.tau > tau ? hv.tau : tau;
      if (awaitsTest(view, level, p)) continue; // a test interval in progress (wire.ts does the same)
      if (reviseNextDue(view, recrawlInterval(view, rate, level, p), now, p)) {
        this.#nextDue[i] = view.nextDue;
        this.#heap.push(view.nextDue, i); // the old entry goes stale and is skipped
      }
    }
  }

  #lik = new Float64Array(0);
  #likPage = new Int32Array(0);
  /** Experiment: the learned prior refitted over every URL's current likelihood (batch EM). */
  #fitPrior(world: World): void {
    if (this.#lik.length !== world.n * 48) {
      this.#lik = new Float64Array(world.n * 48);
      this.#likPage = new Int32Array(world.n);
    }
    const row = new Float64Array(48);
    const view = this.#view;
    let count = 0;
    for (let i = 0; i < world.n; i++) {
      if (this.#crawlCount[i]! < 2) continue;
      this.#load(i);
      if (!logLikelihood(view, this.#params, row)) continue;
      let best = Number.NEGATIVE_INFINITY;
      for (let k = 0; k < 48; k++) if (row[k]! > best) best = row[k]!;
      const o = count * 48;
      for (let k = 0; k < 48; k++) this.#lik[o + k] = Math.exp(row[k]! - best);
      this.#likPage[count] = i;
      count++;
    }
    const eb = this.#eb!;
    eb.fitBatch(this.#lik, count, this.#ebOptions?.batchIterations ?? 5);
    if (this.#ebOptions?.reestimate !== true) return;
    // Every URL's estimate under the new prior, not only those fetched from now on (a starved
    // page is not fetched for weeks).
    const p = this.#params;
    const lo = Math.log(p.minRate);
    const step = (Math.log(p.maxRate) - lo) / 47;
    for (let j = 0; j < count; j++) {
      const o = j * 48;
      let mass = 0;
      let inverse = 0;
      for (let k = 0; k < 48; k++) {
        const w = this.#lik[o + k]! * Math.exp(eb.logPrior[k]!);
        mass += w;
        inverse += w * Math.exp(-(lo + k * step));
      }
      const r = mass / inverse;
      this.#lambda[this.#likPage[j]!] = r >= p.minRate ? (r > p.maxRate ? p.maxRate : r) : p.minRate;
    }
  }

  #byHost: Int32Array[] | undefined;
  /** Per saturated host, its own water level (see `hostWaterLevel`). */
  #hostLevels(world: World, tau: number): void {
    if (this.#byHost === undefined) {
      const lists: number[][] = Array.from({ length: world.hostCount }, () => []);
      for (let i = 0; i < world.n; i++) lists[world.host[i]!]!.push(i);
      this.#byHost = lists.map((l) => Int32Array.from(l));
    }
    const p = this.#params;
    const view = this.#view;
    for (let h = 0; h < world.hostCount; h++) {
      const host = this.#hosts[h]!;
      host.tau = undefined;
      if (!(this.#demand[h]! > host.capacityPerHour)) continue;
      const pages = this.#byHost[h]!;
      host.tau = hostWaterLevel((t) => {
        let s = 0;
        for (const i of pages) {
          view.lambda = this.#lambda[i]!;
          view.priority = this.#priority[i]!;
          s += desiredRate(view, t, p, tau, this.#hazard);
        }
        return s;
      }, host.capacityPerHour, tau);
      let demand = 0;
      for (const i of pages) {
        view.lambda = this.#lambda[i]!;
        view.priority = this.#priority[i]!;
        const r = desiredRate(view, host.tau, p, tau, this.#hazard);
        this.#want[i] = r;
        demand += r;
      }
      host.demandPerHour = demand;
    }
  }

  #load(i: number): void {
    const v = this.#view;
    v.status = this.#status[i]! as FreshnessRecord['status'];
    v.priority = this.#priority[i]!;
    v.firstCrawled = this.#firstCrawled[i]!;
    v.lastCrawled = this.#lastCrawled[i]!;
    v.nextDue = this.#nextDue[i]!;
    v.crawlCount = this.#crawlCount[i]!;
    v.changeCount = this.#changeCount[i]!;
    v.noChangeStreak = this.#streak[i]!;
    v.lambda = this.#lambda[i]!;
    v.lastModified = this.#lastModified[i]!;
    v.lmHours = this.#lmHours[i]!;
    v.lmAgeHours = this.#lmAge[i]!;
    v.lastChanged = this.#lastChanged[i]!;
    v.unchangedHours = this.#unchanged[i]!;
    v.changedLogHours = this.#changedLog[i]!;
    v.contentFpLo = this.#fp[2 * i]!;
    v.contentFpHi = this.#fp[2 * i + 1]!;
    v.simhashLo = this.#sh[2 * i]!;
    v.simhashHi = this.#sh[2 * i + 1]!;
    v.spreadKey = this.#spread[i]!;
  }

  #store(i: number): void {
    const v = this.#view;
    this.#status[i] = v.status;
    this.#firstCrawled[i] = v.firstCrawled;
    this.#lastCrawled[i] = v.lastCrawled;
    this.#nextDue[i] = v.nextDue;
    this.#crawlCount[i] = v.crawlCount;
    this.#changeCount[i] = v.changeCount;
    this.#streak[i] = v.noChangeStreak;
    this.#lambda[i] = v.lambda;
    this.#lastModified[i] = v.lastModified;
    this.#lmHours[i] = v.lmHours;
    this.#lmAge[i] = v.lmAgeHours;
    this.#lastChanged[i] = v.lastChanged;
    this.#unchanged[i] = v.unchangedHours;
    this.#changedLog[i] = v.changedLogHours;
    this.#fp[2 * i] = v.contentFpLo;
    this.#fp[2 * i + 1] = v.contentFpHi;
    this.#sh[2 * i] = v.simhashLo;
    this.#sh[2 * i + 1] = v.simhashHi;
  }

  /** Last-Modified exposure per page (−1: not trusted), for diagnostics. */
  get lmHours(): Float32Array {
    return this.#lmHours;
  }

  /** The first response's Last-Modified age per page (0: none, or taken for a stamp), for diagnostics. */
  get lmAgeHours(): Float32Array {
    return this.#lmAge;
  }

  /** The learned prior (experiment; undefined when off), for diagnostics. */
  get learnedPrior(): LearnedPrior | undefined {
    return this.#eb;
  }

  /** Estimated λ per page (per hour), for diagnostics. */
  get lambdas(): Float32Array {
    return this.#lambda;
  }
}
