/**
 * Runs one freshness policy over a simulated world and measures it exactly.
 *
 * The engine owns the truth (each page's change times) and the clock; a policy owns its
 * schedule. Hour by hour the engine asks the policy to `advance` through [from, to); the policy
 * calls `crawl(page, at)` for each fetch it makes, in time order, and gets back what a fetcher
 * would report (an `Outcome`: 200 with fingerprint and simhash, or 304, and Last-Modified as
 * the host serves it). The policy never sees change times.
 *
 * Freshness is measured, not estimated: after a crawl at time t the copy is fresh until the
 * page's next change; the engine adds up fresh time within the measurement window
 * [t0 + warm-up, t0 + end] for every page, weighted by importance, and divides by
 * Σ w × window. Crawls and per-host crawl counts are counted in the same window, giving budget
 * use (crawls / (budget × window)) and cap violations (capped hosts crawled more than 2% above
 * their cap over the window, beyond one crawl per page of rounding at the window's edges).
 * The same fresh time is also added up over the whole run in slices of `LEARNING_SLICE_DAYS`
 * from t0, warm-up included (`sliceFreshness`): the learning curve, which shows how long a
 * learner takes to come within reach of the optimum, where the window gives one figure.
 */
import type { Outcome } from '../../src/model/index.js';
import { mix32, stepStream, type World } from './world.js';

/** What a policy is: a name and a way to spend the hours. */
export interface Policy {
  readonly name: string;
  /** Whether the policy reads outcomes (fixed-rate policies do not; the engine then skips building them). */
  readonly observes: boolean;
  /** Called once before the first hour. */
  start(world: World): void;
  /**
   * Makes every fetch due in [from, to) (absolute epoch-hours), in time order, through
   * `crawl`, which returns the fetch's outcome (or null when the policy does not observe).
   */
  advance(from: number, to: number, crawl: (page: number, at: number) => Outcome | null): void;
}

/** Length of the slices of the run `SimResult.sliceFreshness` measures (days). */
export const LEARNING_SLICE_DAYS = 30;

/** The measurements of one run. */
export interface SimResult {
  readonly policy: string;
  /** Importance-weighted time-averaged freshness over the window. */
  readonly freshness: number;
  /** Unweighted time-averaged freshness. */
  readonly plainFreshness: number;
  /** Crawls made within the window. */
  readonly crawls: number;
  /** crawls / (budget × window). */
  readonly budgetUse: number;
  /** Capped hosts crawled more than 2% (plus one crawl per page) above their cap over the window. */
  readonly capViolations: number;
  readonly cappedHosts: number;
  /** Largest crawl-rate / cap over capped hosts. */
  readonly worstCapRatio: number;
  /** Real changes over the whole run (identical for every policy: a check on the history). */
  readonly totalChanges: number;
  readonly runtimeMs: number;
  /** Per page: crawls within the window, and fresh hours within it (diagnostics). */
  readonly pageCrawls: Uint32Array;
  readonly pageFreshHours: Float64Array;
  /**
   * Importance-weighted freshness in each slice of LEARNING_SLICE_DAYS of the whole run from
   * t0, warm-up included (the last slice may be shorter; each is divided by its own length).
   */
  readonly sliceFreshness: Float64Array;
  /** Per capped host, its crawl times (hours) within the window, ascending (undefined for others). */
  readonly cappedStarts: readonly (number[] | undefined)[];
}

/** Runs `policy` over `world` and measures it. `clock` times the run (outermost layer only). */
export function simulate(world: World, policy: Policy, clock: () => number = () => performance.now()): SimResult {
  const n = world.n;
  const begin = clock();
  // Each page's change stream, reset for every policy: identical histories.
  const stream = new Uint32Array(n);
  const nextChange = new Float64Array(n);
  const lastChange = new Float64Array(n);
  const version = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    stream[i] = mix32(world.seed, i, 0x5eed);
    lastChange[i] = world.lastChangeAtStart[i]!;
    nextChange[i] = changeAfter(world, stream, i, world.t0);
  }
  const lastCrawl = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  const freshUntil = new Float64Array(n);
  const seenVersion = new Int32Array(n).fill(-1);
  const seenCosmetic = new Float64Array(n);
  const hostCrawls = new Float64Array(world.hostCount);
  const cappedStarts: (number[] | undefined)[] = [];
  for (let h = 0; h < world.hostCount; h++) cappedStarts.push(world.hostCap[h]! < Number.POSITIVE_INFINITY ? [] : undefined);
  const pageCrawls = new Uint32Array(n);
  const fresh = new Float64Array(n);
  const w0 = world.t0 + world.warmupHours;
  const w1 = world.t0 + world.hours;
  let crawls = 0;

  const advanceTo = (i: number, t: number): void => {
    while (nextChange[i]! <= t) {
      lastChange[i] = nextChange[i]!;
      version[i]!++;
      nextChange[i] = changeAfter(world, stream, i, nextChange[i]!);
    }
  };
  const sliceHours = LEARNING_SLICE_DAYS * 24;
  const sliceNum = new Float64Array(Math.ceil(world.hours / sliceHours));
  const account = (i: number, upTo: number): void => {
    const end = Math.min(freshUntil[i]!, upTo, w1);
    const from = Math.max(lastCrawl[i]!, w0);
    if (end > from) fresh[i]! += end - from;
    // The learning curve: the same fresh time over the whole run, split at slice boundaries.
    let t = Math.max(lastCrawl[i]!, world.t0);
    while (end > t) {
      const k = Math.floor((t - world.t0) / sliceHours);
      const next = Math.min(end, world.t0 + (k + 1) * sliceHours);
      sliceNum[k]! += world.weight[i]! * (next - t);
      t = next;
    }
  };

  let hourFrom = world.t0;
  let hourTo = world.t0;
  const crawl = (i: number, at: number): Outcome | null => {
    if (!(at >= hourFrom && at < hourTo) || at < lastCrawl[i]!) {
      throw new Error(`${policy.name}: crawl of page ${i} at ${at} outside [${hourFrom}, ${hourTo}) or before its last crawl ${lastCrawl[i]}`);
    }
    account(i, at);
    advanceTo(i, at);
    lastCrawl[i] = at;
    freshUntil[i] = nextChange[i]!;
    if (at >= w0 && at < w1) {
      crawls++;
      hostCrawls[world.host[i]!]!++;
      cappedStarts[world.host[i]!]?.push(at);
      pageCrawls[i]!++;
    }
    if (!policy.observes) return null;
    const h = world.host[i]!;
    const period = world.cosmeticPeriod[i]!;
    const cosmetic = period > 0 ? Math.floor((at + world.cosmeticPhase[i]!) / period) : 0;
    const unchanged = seenVersion[i] === version[i] && seenCosmetic[i] === cosmetic;
    seenVersion[i] = version[i]!;
    seenCosmetic[i] = cosmetic;
    if (unchanged && world.hostConditional[h] === 1) return { row: i, url: '', status: 304 };
    const v = version[i]!;
    const fpLo = mix32(i, v, cosmetic) || 1;
    const fpHi = mix32(v, i, cosmetic ^ 0x55);
    const shLo = mix32(i, v, 0x51);
    const shHi = mix32(i, v, 0x52);
    const flip = cosmetic & 63;
    const simhash = ((BigInt(shHi) << 32n) | BigInt(shLo)) ^ (1n << BigInt(flip));
    const lm = world.hostLastModified[h];
    const lastModified = lm === 1 ? Math.floor(lastChange[i]! * 3600) : lm === 2 ? Math.floor(at * 3600) : undefined;
    return {
      row: i,
      url: '',
      status: 200,
      contentFp: (BigInt(fpHi) << 32n) | BigInt(fpLo >>> 0),
      simhash: simhash & ((1n << 64n) - 1n),
      lastModified,
    };
  };

  policy.start(world);
  for (let h = 0; h < world.hours; h++) {
    hourFrom = world.t0 + h;
    hourTo = hourFrom + 1;
    policy.advance(hourFrom, hourTo, crawl);
  }
  let num = 0;
  let den = 0;
  let plain = 0;
  let totalChanges = 0;
  for (let i = 0; i < n; i++) {
    account(i, w1);
    advanceTo(i, w1);
    totalChanges += version[i]!;
    num += world.weight[i]! * fresh[i]!;
    den += world.weight[i]!;
    plain += fresh[i]!;
  }
  const window = w1 - w0;
  let capViolations = 0;
  let cappedHosts = 0;
  let worstCapRatio = 0;
  for (let h = 0; h < world.hostCount; h++) {
    const cap = world.hostCap[h]!;
    if (!(cap < Number.POSITIVE_INFINITY)) continue;
    cappedHosts++;
    const ratio = hostCrawls[h]! / window / cap;
    if (ratio > worstCapRatio) worstCapRatio = ratio;
    // Allowance: 2%, plus one crawl per page for where the window cuts each page's schedule.
    if (hostCrawls[h]! > 1.02 * cap * window + world.hostSize[h]!) capViolations++;
  }
  const sliceFreshness = new Float64Array(sliceNum.length);
  for (let k = 0; k < sliceNum.length; k++) sliceFreshness[k] = sliceNum[k]! / (den * (Math.min(world.hours, (k + 1) * sliceHours) - k * sliceHours));
  return {
    policy: policy.name,
    freshness: num / (den * window),
    plainFreshness: plain / (n * window),
    crawls,
    budgetUse: crawls / (world.budgetPerHour * window),
    capViolations,
    cappedHosts,
    worstCapRatio,
    totalChanges,
    runtimeMs: clock() - begin,
    pageCrawls,
    pageFreshHours: fresh,
    sliceFreshness,
    cappedStarts,
  };
}

/**
 * The next change of page i after time t: an exponential wait at the rate in force at t; a
 * wait that crosses the drift is redrawn from the drift at the new rate (exact, by
 * memorylessness). A page of rate 0 never changes (+Infinity).
 */
function changeAfter(world: World, stream: Uint32Array, i: number, t: number): number {
  const before = t < world.driftAt;
  const next = t + expo(stream, i, before ? world.lambda[i]! : world.lambdaAfter[i]!);
  if (!before || next < world.driftAt || world.lambdaAfter === world.lambda || world.lambdaAfter[i] === world.lambda[i]) return next;
  return world.driftAt + expo(stream, i, world.lambdaAfter[i]!);
}

function expo(stream: Uint32Array, i: number, rate: number): number {
  const u = stepStream(stream, i);
  return rate > 0 ? -Math.log(1 - u) / rate : Number.POSITIVE_INFINITY;
}
