/**
 * A deterministic simulated web for freshness policies.
 *
 * N pages, each changing as a Poisson process with a rate drawn log-uniform over
 * [0.01, 10] changes/day, an importance weight drawn log-normal (μ = 0, σ = 1), and a host
 * drawn Zipf(1) over N/20 hosts. Some hosts (30% by default) carry a politeness cap of half
 * their uniform share of the budget (so the cap binds). Hosts differ in what they tell a
 * crawler: some answer conditional requests with 304, some send a Last-Modified that tracks
 * real changes, some stamp Last-Modified with the response time (a liar the estimator must
 * catch); some pages carry cosmetic churn (a ticking clock: new bytes, simhash one bit away).
 * A page's Last-Modified at the start is its last change before the run as a Poisson page would
 * have it (`lastChangeAtStart`: the start less an exponential wait at its rate, or its creation),
 * so the first fetch's date carries what it carries on the real web. (Until issue 21's
 * first-fetch age it was the creation time, 1–1,000 days back whatever the rate; no policy read
 * it then, and every figure measured before is unchanged by the correction.)
 *
 * Two scenario options reshape the rates, drawn from a second PRNG stream so the base world is
 * the same with or without them: `staticFraction` makes that share of pages never change
 * (λ = 0: one fetch is all they ever need), and `driftFraction` redraws that share of pages'
 * rates (log-uniform over the same band) at `driftDay`, so a learner has to notice a page that
 * woke up or went quiet; the change process is Poisson at the old rate before the drift and at
 * the new rate after it (memorylessness makes the switch exact).
 *
 * Every random choice comes from a seeded PRNG, and each page's change times come from its own
 * PRNG stream, advanced lazily as time is observed, so every policy sees the identical change
 * history however often it looks. Times are absolute epoch-hours starting at `t0`.
 */

import { fmix32, mulberry32, mulberry32Step } from '../../src/core/mix.js';

/** Options of `makeWorld`. */
export interface WorldOptions {
  readonly n: number;
  readonly seed?: number;
  readonly days?: number;
  readonly warmupDays?: number;
  /** Crawl budget, crawls per page per day. */
  readonly budgetPerPageDay?: number;
  readonly minChangesPerDay?: number;
  readonly maxChangesPerDay?: number;
  readonly weightSigma?: number;
  readonly pagesPerHost?: number;
  readonly zipfExponent?: number;
  readonly cappedHostFraction?: number;
  /** A capped host's cap as a fraction of its uniform share of the budget. */
  readonly capShare?: number;
  readonly reliableLastModifiedHosts?: number;
  readonly stampedLastModifiedHosts?: number;
  readonly conditionalHosts?: number;
  readonly cosmeticPages?: number;
  /** Share of pages that never change (λ = 0). Default 0. */
  readonly staticFraction?: number;
  /** Share of pages whose rate is redrawn at `driftDay`. Default 0. */
  readonly driftFraction?: number;
  /** Day of the run (from t0) at which drifting pages switch rate. Default: half-way. */
  readonly driftDay?: number;
}

/** The simulated population. Rates are per hour. */
export interface World {
  readonly n: number;
  readonly seed: number;
  readonly t0: number;
  readonly hours: number;
  readonly warmupHours: number;
  /** Crawls per hour for the whole population. */
  readonly budgetPerHour: number;
  readonly lambda: Float64Array;
  /** Rates from `driftAt` on (the same array as `lambda` without a drift). */
  readonly lambdaAfter: Float64Array;
  /** Absolute epoch-hour of the rate drift (+Infinity: none). */
  readonly driftAt: number;
  readonly weight: Float64Array;
  readonly host: Int32Array;
  readonly spreadKey: Uint32Array;
  /** Cosmetic tick period in hours (0 = none) and its phase. */
  readonly cosmeticPeriod: Float64Array;
  readonly cosmeticPhase: Float64Array;
  /** Page creation time. */
  readonly created: Float64Array;
  /**
   * The page's last change before `t0` (its Last-Modified when the run starts): as a Poisson
   * process at the page's rate that began at creation would have left it — `t0` less an
   * exponential wait at rate λ, or the creation time if that wait reaches past it (and always
   * for a static page). Drawn from a stream of its own, so the rest of the world is unchanged.
   */
  readonly lastChangeAtStart: Float64Array;
  readonly hostCount: number;
  readonly hostName: readonly string[];
  /** Crawls/hour allowed, Infinity when uncapped. */
  readonly hostCap: Float64Array;
  readonly hostSize: Int32Array;
  /** 0 = no Last-Modified, 1 = reliable, 2 = stamped with the response time. */
  readonly hostLastModified: Uint8Array;
  readonly hostConditional: Uint8Array;
}

/** A small seeded PRNG (mulberry32): uniform in [0, 1). */
export const rng = mulberry32;

/** One step of the same generator on an external state word: returns [0, 1), updates state[i]. */
export const stepStream = mulberry32Step;

/** A 32-bit integer mix (for fingerprints and per-page seeds): three words folded, then fmix32. */
export function mix32(a: number, b: number, c: number): number {
  return fmix32(Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35) ^ Math.imul(c + 0x165667b1, 0x27d4eb2f));
}

function gaussian(rand: () => number): number {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Builds the population deterministically from `opts.seed`. */
export function makeWorld(opts: WorldOptions): World {
  const n = opts.n;
  if (!(Number.isInteger(n) && n > 0)) throw new RangeError(`makeWorld: n must be a positive integer, received ${n}`);
  const seed = opts.seed ?? 20260101;
  const days = opts.days ?? 150;
  const warmupDays = opts.warmupDays ?? 30;
  const budgetPerPageDay = opts.budgetPerPageDay ?? 0.2;
  const lo = Math.log(opts.minChangesPerDay ?? 0.01);
  const hi = Math.log(opts.maxChangesPerDay ?? 10);
  const sigma = opts.weightSigma ?? 1;
  const hostCount = Math.max(1, Math.round(n / (opts.pagesPerHost ?? 20)));
  const s = opts.zipfExponent ?? 1;
  const rand = rng(seed);

  const lambda = new Float64Array(n);
  const weight = new Float64Array(n);
  const host = new Int32Array(n);
  const spreadKey = new Uint32Array(n);
  const cosmeticPeriod = new Float64Array(n);
  const cosmeticPhase = new Float64Array(n);
  const created = new Float64Array(n);
  const t0 = 480_000; // epoch-hours, late 2024: Last-Modified dates look like real ones

  // Zipf host sizes by inverse-CDF sampling over host ranks.
  const cdf = new Float64Array(hostCount);
  let acc = 0;
  for (let k = 0; k < hostCount; k++) {
    acc += 1 / Math.pow(k + 1, s);
    cdf[k] = acc;
  }
  for (let i = 0; i < n; i++) {
    lambda[i] = Math.exp(lo + (hi - lo) * rand()) / 24;
    weight[i] = Math.exp(sigma * gaussian(rand));
    const u = rand() * acc;
    let a = 0;
    let b = hostCount - 1;
    while (a < b) {
      const m = (a + b) >> 1;
      if (cdf[m]! < u) a = m + 1;
      else b = m;
    }
    host[i] = a;
    spreadKey[i] = (rand() * 4294967296) >>> 0;
    if (rand() < (opts.cosmeticPages ?? 0.2)) {
      cosmeticPeriod[i] = 1 + Math.floor(rand() * 24);
      cosmeticPhase[i] = rand() * cosmeticPeriod[i]!;
    }
    created[i] = t0 - 24 * (1 + 1000 * rand());
  }

  // Scenario reshaping from its own stream: the base draws above are the same with or without it.
  const staticFraction = opts.staticFraction ?? 0;
  const driftFraction = opts.driftFraction ?? 0;
  const reshape = rng(mix32(seed, 0x57a71c, 0xd21f7));
  if (staticFraction > 0) for (let i = 0; i < n; i++) if (reshape() < staticFraction) lambda[i] = 0;
  let lambdaAfter = lambda;
  let driftAt = Number.POSITIVE_INFINITY;
  if (driftFraction > 0) {
    lambdaAfter = Float64Array.from(lambda);
    driftAt = t0 + 24 * (opts.driftDay ?? days / 2);
    for (let i = 0; i < n; i++) {
      const u = reshape();
      const v = reshape();
      if (u < driftFraction && lambda[i]! > 0) lambdaAfter[i] = Math.exp(lo + (hi - lo) * v) / 24;
    }
  }

  // The history before t0, from its own stream: memorylessness makes the changes after t0
  // independent of it, so adding it moved no other draw.
  const before = rng(mix32(seed, 0x1a57c, 0x9e3d));
  const lastChangeAtStart = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const wait = lambda[i]! > 0 ? -Math.log(1 - before()) / lambda[i]! : Number.POSITIVE_INFINITY;
    lastChangeAtStart[i] = Math.max(created[i]!, t0 - wait);
  }

  const hostSize = new Int32Array(hostCount);
  for (let i = 0; i < n; i++) hostSize[host[i]!]!++;
  const budgetPerHour = (budgetPerPageDay * n) / 24;
  const hostCap = new Float64Array(hostCount).fill(Number.POSITIVE_INFINITY);
  const hostLastModified = new Uint8Array(hostCount);
  const hostConditional = new Uint8Array(hostCount);
  const hostName: string[] = [];
  const capped = opts.cappedHostFraction ?? 0.3;
  const capShare = opts.capShare ?? 0.5;
  const reliable = opts.reliableLastModifiedHosts ?? 0.4;
  const stamped = opts.stampedLastModifiedHosts ?? 0.1;
  const conditional = opts.conditionalHosts ?? 0.5;
  for (let h = 0; h < hostCount; h++) {
    hostName.push(`h${h}.sim.example`);
    if (rand() < capped && hostSize[h]! > 0) hostCap[h] = (capShare * hostSize[h]! * budgetPerHour) / n;
    const r = rand();
    hostLastModified[h] = r < reliable ? 1 : r < reliable + stamped ? 2 : 0;
    hostConditional[h] = rand() < conditional ? 1 : 0;
  }
  return {
    n,
    seed,
    t0,
    hours: days * 24,
    warmupHours: warmupDays * 24,
    budgetPerHour,
    lambda,
    lambdaAfter,
    driftAt,
    weight,
    host,
    spreadKey,
    cosmeticPeriod,
    cosmeticPhase,
    created,
    lastChangeAtStart,
    hostCount,
    hostName,
    hostCap,
    hostSize,
    hostLastModified,
    hostConditional,
  };
}
