/**
 * The freshness scenarios the issue asks the bench to cover, run over several seeds: the score
 * meguri / optimum (and / uniform) per scenario as mean ± standard deviation with the range,
 * and where the crawls go, as each policy's share of the window's crawls per band of true
 * change rate beside the optimum's share.
 *
 *   node --import tsx bench/freshness/scenarios.ts [--n 5000] [--seeds 20260101,7,42] [--scenarios base,static-third]
 *     [--window 120] [--slots 6] [--spacing 0.5] [--share 1] [--calendar 1] [--days 150] [--warmup 30] [--drift-day 75]
 *
 * (--window: a capped host's rate-cap window in hours, 0 = none (default); --slots: K > 0 gives
 * every capped host a window of K starts per K / C hours instead; --spacing: its crawl delay
 * as a fraction of the cap interval; --share: the hook's politenessShare; --calendar 1: the
 * hook's slotCalendar. frontier-policy.ts.)
 *
 * (`npm run bench freshness` runs it through bench/suites/freshness.bench.mjs.)
 */
import { LEARNING_SLICE_DAYS, type Policy } from './engine.js';
import { MeguriFrontierPolicy, PEAK_WINDOW_HOURS, capWindowOf } from './frontier-policy.js';
import { MeguriEstimatorPolicy, optimumPolicy, politeOptimumPolicy, uniformPolicy } from './policies.js';
import { compare, type Comparison, type Row } from './run.js';
import type { World, WorldOptions } from './world.js';

/** A named world shape (the seed and N come from the sweep). */
export interface Scenario {
  readonly name: string;
  readonly what: string;
  readonly options: Partial<WorldOptions>;
}

/** The scenarios: the base world, the budget ratio, the host-cap share, static pages, a drift in rates. */
export const SCENARIOS: readonly Scenario[] = [
  { name: 'base', what: 'budget 0.2 crawls/page/day, 30 % of hosts capped at ½ their uniform share', options: {} },
  { name: 'low-budget', what: 'budget 0.1 crawls/page/day', options: { budgetPerPageDay: 0.1 } },
  { name: 'high-budget', what: 'budget 0.5 crawls/page/day', options: { budgetPerPageDay: 0.5 } },
  { name: 'tight-caps', what: '60 % of hosts capped at ½ their uniform share', options: { cappedHostFraction: 0.6 } },
  { name: 'narrow-caps', what: '30 % of hosts capped at ¼ their uniform share', options: { capShare: 0.25 } },
  { name: 'static-third', what: 'a third of the pages never change', options: { staticFraction: 1 / 3 } },
  { name: 'drift', what: '30 % of the pages draw a new rate on day 75 (of 150)', options: { driftFraction: 0.3 } },
];

/** Bands of true change rate (changes/day) for the crawl-share table; λ = 0 is its own band. */
export const BANDS: readonly { readonly label: string; readonly lo: number; readonly hi: number }[] = [
  { label: 'static', lo: 0, hi: 0 },
  { label: '0.01-0.03', lo: 0, hi: 0.03 },
  { label: '0.03-0.1', lo: 0.03, hi: 0.1 },
  { label: '0.1-0.3', lo: 0.1, hi: 0.3 },
  { label: '0.3-1', lo: 0.3, hi: 1 },
  { label: '1-3', lo: 1, hi: 3 },
  { label: '3-10', lo: 3, hi: Number.POSITIVE_INFINITY },
];

/** The band of a rate in changes/day (index into BANDS). */
export function bandOf(perDay: number): number {
  if (!(perDay > 0)) return 0;
  for (let b = 1; b < BANDS.length; b++) if (perDay < BANDS[b]!.hi) return b;
  return BANDS.length - 1;
}

/** Per band, the share of a run's window crawls spent on pages of that (initial) true rate. */
export function bandShares(world: World, pageCrawls: Uint32Array): number[] {
  const out = new Array<number>(BANDS.length).fill(0);
  let total = 0;
  for (let i = 0; i < world.n; i++) {
    const c = pageCrawls[i]!;
    out[bandOf(world.lambda[i]! * 24)]! += c;
    total += c;
  }
  return out.map((c) => (total > 0 ? c / total : 0));
}

/**
 * Where a policy's shortfall against the optimum lies: per band of (initial) true change rate,
 * the optimum's weighted fresh time on that band's pages minus the policy's, over the optimum's
 * total. The bands sum to 1 − policy / optimum exactly, so a row reads as "points of the
 * optimum lost here" (negative: the policy keeps that band fresher than the optimum does, by
 * spending on it what another band then lacks). Beside `bandShares` it tells an over-funded
 * band from a mistimed one.
 */
export function bandLosses(c: Comparison): Map<string, number[]> {
  return lossesBy(c, BANDS.length, (i) => bandOf(c.world.lambda[i]! * 24));
}

/** Groups of `ratioLosses`: a page's crawls in the window over the optimum's on the same page. */
export const RATIO_GROUPS = ['< 0.5', '0.5-0.8', '0.8-1.25', '1.25-2', '>= 2', 'optimum 0'] as const;

/** The `RATIO_GROUPS` index of a page crawled `mine` times where the optimum crawled it `best` times. */
export function ratioGroupOf(mine: number, best: number): number {
  if (!(best > 0)) return 5;
  const r = mine / best;
  return r < 0.5 ? 0 : r < 0.8 ? 1 : r < 1.25 ? 2 : r < 2 ? 3 : 4;
}

/**
 * The shortfall against the optimum (as `bandLosses`) grouped by how a policy's crawls of each
 * page compare with the optimum's (`RATIO_GROUPS`), with the pages in each group. It tells a
 * misjudged page from a mistimed one: points lost on pages crawled at less than half the
 * optimum's count are pages the policy judged not worth crawling (starved on too high an
 * estimate, or never re-estimated), points lost at 0.8–1.25 are timing (late fetches, uneven
 * intervals), and the optimum-0 group (pages the optimum never recrawls) is what re-probes cost
 * or buy.
 */
export function ratioLosses(c: Comparison): Map<string, { points: number[]; pages: number[] }> {
  const out = new Map<string, { points: number[]; pages: number[] }>();
  const opt = c.rows.find((x) => x.policy === 'optimum');
  if (opt === undefined) return out;
  const pages = new Map<string, number[]>();
  const points = lossesBy(c, RATIO_GROUPS.length, (i, r) => ratioGroupOf(r.pageCrawls[i]!, opt.pageCrawls[i]!), pages);
  for (const [policy, p] of points) if (policy !== 'uniform') out.set(policy, { points: p, pages: pages.get(policy)! });
  return out;
}

/** Groups of `driftLosses`: pages whose rate rose, fell, or stayed at the drift. */
export const DRIFT_GROUPS = ['rate rose', 'rate fell', 'unchanged'] as const;

/**
 * In a world with a rate drift, the shortfall against the optimum (as `bandLosses`) split by
 * what the drift did to each page: its rate rose, fell, or stayed. Empty without a drift.
 */
export function driftLosses(c: Comparison): Map<string, number[]> {
  const w = c.world;
  if (!(w.driftAt < Number.POSITIVE_INFINITY)) return new Map();
  return lossesBy(c, DRIFT_GROUPS.length, (i) => (w.lambdaAfter[i]! > w.lambda[i]! ? 0 : w.lambdaAfter[i]! < w.lambda[i]! ? 1 : 2));
}

/**
 * Per policy (all but the optimum), the points of the optimum's weighted fresh time lost on each
 * group of pages, `groupOf(page, row)` naming the group; with `pages`, the pages per group too.
 */
function lossesBy(c: Comparison, groups: number, groupOf: (page: number, row: Row) => number, pages?: Map<string, number[]>): Map<string, number[]> {
  const w = c.world;
  const out = new Map<string, number[]>();
  const opt = c.rows.find((x) => x.policy === 'optimum');
  if (opt === undefined) return out;
  let total = 0;
  for (let i = 0; i < w.n; i++) total += w.weight[i]! * opt.pageFreshHours[i]!;
  for (const r of c.rows) {
    if (r === opt) continue;
    const loss = new Array<number>(groups).fill(0);
    const count = new Array<number>(groups).fill(0);
    for (let i = 0; i < w.n; i++) {
      const g = groupOf(i, r);
      loss[g]! += (w.weight[i]! * (opt.pageFreshHours[i]! - r.pageFreshHours[i]!)) / total;
      count[g]!++;
    }
    out.set(r.policy, loss);
    pages?.set(r.policy, count);
  }
  return out;
}

/**
 * Where a policy stands on capped hosts against the optimum: its crawls on capped hosts over
 * the optimum's there, and its weighted fresh time on the pages of capped and of uncapped
 * hosts over the optimum's on the same pages. The real frontier and the estimator over bare
 * columns schedule alike; only the frontier also spaces a capped host's fetches by its crawl
 * delay (politeness), so the difference between the two rows is what that spacing costs.
 */
export interface CapSplit {
  readonly cappedCrawls: number;
  readonly cappedFresh: number;
  readonly uncappedFresh: number;
}

/** The cap split of each non-optimum policy of one comparison (see `CapSplit`). */
export function capSplits(c: Comparison): Map<string, CapSplit> {
  const w = c.world;
  const opt = c.rows.find((x) => x.policy === 'optimum');
  const out = new Map<string, CapSplit>();
  if (opt === undefined) return out;
  const sums = (pageCrawls: Uint32Array, fresh: Float64Array): number[] => {
    const a = [0, 0, 0];
    for (let i = 0; i < w.n; i++) {
      const capped = w.hostCap[w.host[i]!]! < Number.POSITIVE_INFINITY;
      if (capped) {
        a[0]! += pageCrawls[i]!;
        a[1]! += w.weight[i]! * fresh[i]!;
      } else a[2]! += w.weight[i]! * fresh[i]!;
    }
    return a;
  };
  const o = sums(opt.pageCrawls, opt.pageFreshHours);
  for (const r of c.rows) {
    if (r === opt || r.policy === 'uniform') continue;
    const a = sums(r.pageCrawls, r.pageFreshHours);
    out.set(r.policy, { cappedCrawls: a[0]! / o[0]!, cappedFresh: a[1]! / o[1]!, uncappedFresh: a[2]! / o[2]! });
  }
  return out;
}

/**
 * How a policy delivers capped hosts' allowances. `delivered` / `leastDelivered`: crawls over
 * the allowed C × window, mean and least over the capped hosts the optimum keeps at their cap
 * (its crawls there ≥ 97 % of the allowance: the hosts with more demand than cap). `peak`:
 * the most starts any capped host made in one window of its rate cap (K starts per K / C
 * hours, `capWindowOf`), over K — above 1 is a window the cap did not hold.
 */
export interface CapDelivery {
  readonly saturated: number;
  readonly delivered: number;
  readonly leastDelivered: number;
  readonly peak: number;
}

/** The most of the ascending `times` in one half-open window of `width` (same unit). */
export function windowPeak(times: readonly number[], width: number): number {
  let most = 0;
  for (let a = 0, b = 0; a < times.length; a++) {
    // A few ms below the width: the frontier's epoch-ms clock rounds at ~2.4e-4 ms per start
    // (its ulp), so K crawl-delay gaps can sum to a hair under K/C (seen: 420 starts of a
    // 17-minute delay 51 µs short of 120 h), which is no start too many.
    while (b < times.length && times[b]! < times[a]! + width - 1e-6) b++;
    if (b - a > most) most = b - a;
  }
  return most;
}

/** The cap delivery of each non-optimum policy of one comparison, over the windows `capWindowOf(C, windowHours, slots)` (see `CapDelivery`). */
export function capDelivery(c: Comparison, windowHours: number, slots = 0): Map<string, CapDelivery> {
  const w = c.world;
  const out = new Map<string, CapDelivery>();
  const opt = c.rows.find((x) => x.policy === 'optimum');
  if (opt === undefined) return out;
  const span = w.hours - w.warmupHours;
  for (const r of c.rows) {
    if (r === opt || r.policy === 'uniform') continue;
    let saturated = 0;
    let sum = 0;
    let least = Number.POSITIVE_INFINITY;
    let peak = 0;
    for (let h = 0; h < w.hostCount; h++) {
      const cap = w.hostCap[h]!;
      const starts = r.cappedStarts[h];
      if (!(cap < Number.POSITIVE_INFINITY) || starts === undefined || w.hostSize[h] === 0) continue;
      const win = capWindowOf(cap, windowHours, slots);
      peak = Math.max(peak, windowPeak(starts, win.windowHours) / win.crawls);
      const allowed = cap * span;
      if (opt.cappedStarts[h]!.length < 0.97 * allowed) continue;
      saturated++;
      const d = starts.length / allowed;
      sum += d;
      if (d < least) least = d;
    }
    out.set(r.policy, { saturated, delivered: saturated > 0 ? sum / saturated : Number.NaN, leastDelivered: saturated > 0 ? least : Number.NaN, peak });
  }
  return out;
}

/** Mean, sample standard deviation, min and max. */
export interface Spread {
  readonly mean: number;
  readonly sd: number;
  readonly min: number;
  readonly max: number;
}

export function spread(xs: readonly number[]): Spread {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd, min: Math.min(...xs), max: Math.max(...xs) };
}

/** One scenario over all seeds. */
export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly n: number;
  readonly seeds: readonly number[];
  readonly runs: readonly Comparison[];
  readonly frontierOverOptimum: Spread;
  readonly frontierOverUniform: Spread;
  readonly estimatorOverOptimum: Spread;
  /** The optimum's rates served with each capped host's crawl delay (`politeOptimumPolicy`) over the optimum (NaN when not run). */
  readonly politeOptimumOverOptimum: Spread;
  /** Per policy name, its `ratioLosses` over the seeds (points averaged, pages averaged). */
  readonly ratioLosses: ReadonlyMap<string, { points: number[]; pages: number[] }>;
  /** Per policy name, the crawl share per band averaged over seeds. */
  readonly shares: ReadonlyMap<string, number[]>;
  /** Per policy name, its `CapSplit` averaged over seeds. */
  readonly caps: ReadonlyMap<string, CapSplit>;
  /** Per policy name, its `CapDelivery` over the seeds (means averaged; least and peak the extremes). */
  readonly delivery: ReadonlyMap<string, CapDelivery>;
  /** The window the delivery's peak is measured over: hours (about), or K starts per K / C hours when `slots` > 0. */
  readonly windowHours: number;
  readonly slots: number;
  /** Per policy name, its `bandLosses` averaged over seeds. */
  readonly losses: ReadonlyMap<string, number[]>;
  /** Per policy name, its `driftLosses` averaged over seeds (empty without a drift). */
  readonly driftLosses: ReadonlyMap<string, number[]>;
  /** Per policy name, its `learningCurve` averaged over seeds. */
  readonly learning: ReadonlyMap<string, number[]>;
}

/** How the real Frontier treats the world's capped hosts in a sweep (frontier-policy.ts). */
export interface SweepOptions {
  /** The hook's `politenessShare` (1 by default). */
  readonly politenessShare?: number;
  /** Rate-cap window, hours (about); 0 = no window cap, the crawl delay alone. */
  readonly capWindowHours?: number;
  /** Crawl delay as a fraction of the cap interval. */
  readonly spacing?: number;
  /** When > 0, every capped host's window holds this many starts: W = K / C (`capWindowOf`). */
  readonly capWindowSlots?: number;
  /** The hook's `slotCalendar` (saturated hosts' dues on free slots of their cap). */
  readonly slotCalendar?: boolean;
}

/**
 * The policies a sweep runs: uniform, optimum, the optimum with crawl delays
 * (`politeOptimumPolicy`), the estimator over columns and the real Frontier, whose capped hosts get a rate cap over a window and a crawl delay (see
 * frontier-policy.ts and `SweepOptions`).
 */
export function sweepPolicies(o: SweepOptions = {}): Policy[] {
  const frontier = new MeguriFrontierPolicy({
    freshness: { politenessShare: o.politenessShare ?? 1, slotCalendar: o.slotCalendar ?? false },
    capWindowHours: o.capWindowHours,
    spacing: o.spacing,
    capWindowSlots: o.capWindowSlots,
  });
  const eb = process.env.MEGURI_EB;
  if (eb !== undefined && eb !== '') {
    // Experiment (eb-prior.ts): MEGURI_EB=mix[,decay per tick][,frozen | batch:every ticks:EM steps[:1 = re-estimate every URL]]; the frontier column is left out.
    const [mix, decay, mode] = eb.split(',');
    const batch = mode?.startsWith('batch:') === true ? mode.split(':').map(Number) : undefined;
    const learnedPrior = { mix: Number(mix), decayPerTick: decay ? Number(decay) : 1, frozen: mode === 'frozen', batchEveryTicks: batch?.[1], batchIterations: batch?.[2], reestimate: batch?.[3] === 1 };
    return [uniformPolicy(), optimumPolicy(), politeOptimumPolicy(), new MeguriEstimatorPolicy({ learnedPrior })];
  }
  return [uniformPolicy(), optimumPolicy(), politeOptimumPolicy(), new MeguriEstimatorPolicy(), frontier];
}

/** Runs one scenario over `seeds` at size `n`; cap delivery is measured over windows of about `windowHours`. */
export function runScenario(
  scenario: Scenario,
  n: number,
  seeds: readonly number[],
  policies: () => Policy[] = sweepPolicies,
  windowHours: number = PEAK_WINDOW_HOURS,
  slots = 0,
): ScenarioResult {
  const runs: Comparison[] = [];
  const shares = new Map<string, number[]>();
  const caps = new Map<string, CapSplit>();
  const delivery = new Map<string, CapDelivery>();
  const losses = new Map<string, number[]>();
  const drift = new Map<string, number[]>();
  const learning = new Map<string, number[]>();
  const ratios = new Map<string, { points: number[]; pages: number[] }>();
  const average = (into: Map<string, number[]>, from: Map<string, number[]>): void => {
    for (const [policy, x] of from) {
      const acc = into.get(policy) ?? new Array<number>(x.length).fill(0);
      for (let b = 0; b < x.length; b++) acc[b]! += x[b]! / seeds.length;
      into.set(policy, acc);
    }
  };
  for (const seed of seeds) {
    const c = compare({ n, seed, ...scenario.options }, policies());
    runs.push(c);
    average(losses, bandLosses(c));
    average(drift, driftLosses(c));
    average(learning, learningCurve(c));
    for (const [policy, x] of ratioLosses(c)) {
      const acc = ratios.get(policy) ?? { points: new Array<number>(RATIO_GROUPS.length).fill(0), pages: new Array<number>(RATIO_GROUPS.length).fill(0) };
      for (let g = 0; g < RATIO_GROUPS.length; g++) {
        acc.points[g]! += x.points[g]! / seeds.length;
        acc.pages[g]! += x.pages[g]! / seeds.length;
      }
      ratios.set(policy, acc);
    }
    for (const [policy, x] of capDelivery(c, windowHours, slots)) {
      const acc = delivery.get(policy);
      const k = seeds.length;
      delivery.set(policy, {
        saturated: (acc?.saturated ?? 0) + x.saturated / k,
        delivered: (acc?.delivered ?? 0) + x.delivered / k,
        leastDelivered: Math.min(acc?.leastDelivered ?? Number.POSITIVE_INFINITY, x.leastDelivered),
        peak: Math.max(acc?.peak ?? 0, x.peak),
      });
    }
    for (const [policy, x] of capSplits(c)) {
      const acc = caps.get(policy) ?? { cappedCrawls: 0, cappedFresh: 0, uncappedFresh: 0 };
      const k = seeds.length;
      caps.set(policy, {
        cappedCrawls: acc.cappedCrawls + x.cappedCrawls / k,
        cappedFresh: acc.cappedFresh + x.cappedFresh / k,
        uncappedFresh: acc.uncappedFresh + x.uncappedFresh / k,
      });
    }
    for (const r of c.rows) {
      const s = bandShares(c.world, r.pageCrawls);
      const acc = shares.get(r.policy) ?? new Array<number>(BANDS.length).fill(0);
      for (let b = 0; b < BANDS.length; b++) acc[b]! += s[b]! / seeds.length;
      shares.set(r.policy, acc);
    }
  }
  const pick = (f: (c: Comparison) => number): Spread => spread(runs.map(f));
  return {
    scenario,
    n,
    seeds,
    runs,
    frontierOverOptimum: pick((c) => c.frontierOverOptimum),
    frontierOverUniform: pick((c) => c.frontierOverUniform),
    estimatorOverOptimum: pick((c) => c.meguriOverOptimum),
    politeOptimumOverOptimum: pick((c) => freshnessOf(c, 'optimum-polite') / freshnessOf(c, 'optimum')),
    ratioLosses: ratios,
    shares,
    caps,
    delivery,
    windowHours,
    slots,
    losses,
    driftLosses: drift,
    learning,
  };
}

/**
 * The learning curve: each policy's weighted freshness over the optimum's in every
 * LEARNING_SLICE_DAYS slice of the run from its start, warm-up included (`SimResult.sliceFreshness`);
 * the optimum itself is left out.
 */
export function learningCurve(c: Comparison): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const opt = c.rows.find((x) => x.policy === 'optimum');
  if (opt === undefined) return out;
  for (const r of c.rows) {
    if (r === opt) continue;
    out.set(r.policy, Array.from(r.sliceFreshness, (v, k) => v / opt.sliceFreshness[k]!));
  }
  return out;
}

function freshnessOf(c: Comparison, policy: string): number {
  return c.rows.find((x) => x.policy === policy)?.freshness ?? Number.NaN;
}

const fmt = (s: Spread): string => (Number.isNaN(s.mean) ? '-' : `${s.mean.toFixed(4)} ± ${s.sd.toFixed(4)} (${s.min.toFixed(3)}–${s.max.toFixed(3)})`);

/** Prints one scenario: its score line and its per-band crawl-share table. */
export function printScenario(r: ScenarioResult): void {
  console.log(`\n${r.scenario.name}: ${r.scenario.what}; N = ${r.n}, seeds ${r.seeds.join(', ')}`);
  console.log(`  meguri-frontier  / optimum  ${fmt(r.frontierOverOptimum)}`);
  console.log(`  meguri-frontier  / uniform  ${fmt(r.frontierOverUniform)}`);
  console.log(`  meguri-estimator / optimum  ${fmt(r.estimatorOverOptimum)}`);
  console.log(`  optimum-polite   / optimum  ${fmt(r.politeOptimumOverOptimum)}`);
  for (const [policy, x] of r.learning) {
    if (policy === 'uniform') continue;
    console.log(`  ${policy.padEnd(16)} / optimum per ${LEARNING_SLICE_DAYS}-day slice of the run (warm-up included): ${x.map((v) => v.toFixed(4)).join(' ')}`);
  }
  for (const policy of ['meguri-estimator', 'meguri-frontier']) {
    const rows = r.runs.map((c) => c.rows.find((x) => x.policy === policy)).filter((x) => x !== undefined);
    if (rows.length === 0) continue;
    const use = rows.map((x) => x.budgetUse);
    const violations = rows.reduce((a, x) => a + x.capViolations, 0);
    const worst = Math.max(...rows.map((x) => x.worstCapRatio));
    console.log(
      `  ${policy.padEnd(16)} budget use ${Math.min(...use).toFixed(3)}–${Math.max(...use).toFixed(3)}, host-cap violations ${violations} over ${rows.length} runs, busiest capped host at ${worst.toFixed(3)}× its cap over the window`,
    );
  }
  for (const [policy, x] of r.caps) {
    console.log(
      `  ${policy.padEnd(16)} / optimum on capped hosts: crawls ${x.cappedCrawls.toFixed(3)}, fresh ${x.cappedFresh.toFixed(4)}; uncapped hosts: fresh ${x.uncappedFresh.toFixed(4)}`,
    );
  }
  for (const [policy, x] of r.delivery) {
    console.log(
      `  ${policy.padEnd(16)} capped-host delivery (${x.saturated.toFixed(1)} hosts at their cap): crawls / allowed ${x.delivered.toFixed(3)} (least ${x.leastDelivered.toFixed(3)}); most in one ${r.slots > 0 ? `${r.slots}-slot` : `~${r.windowHours} h`} cap window ${x.peak.toFixed(3)}× the cap`,
    );
  }
  const cell = (x: string, i: number): string => (i === 0 ? x.padEnd(18) : x.padStart(10));
  console.log(`  ${['crawl share', ...BANDS.map((b) => b.label)].map(cell).join('')}`);
  for (const [policy, s] of r.shares) {
    console.log(`  ${[policy, ...s.map((x) => `${(100 * x).toFixed(1)}%`)].map(cell).join('')}`);
  }
  // Points of the optimum's weighted fresh time lost per band (they sum to 100 × (1 − ratio)).
  console.log(`  ${['points lost', ...BANDS.map((b) => b.label)].map(cell).join('')}`);
  for (const [policy, s] of r.losses) {
    if (policy === 'uniform') continue;
    console.log(`  ${[policy, ...s.map((x) => (100 * x).toFixed(2))].map(cell).join('')}`);
  }
  // Points lost grouped by the policy's crawls of a page over the optimum's (pages in brackets).
  console.log(`  ${['points lost', ...RATIO_GROUPS.map((g) => `crawls ${g}`)].map((x, i) => (i === 0 ? x.padEnd(18) : x.padStart(17))).join('')}`);
  for (const [policy, x] of r.ratioLosses) {
    const cells = x.points.map((p, g) => `${(100 * p).toFixed(2)} (${Math.round(x.pages[g]!)})`);
    console.log(`  ${[policy, ...cells].map((c, i) => (i === 0 ? c.padEnd(18) : c.padStart(17))).join('')}`);
  }
  if (r.driftLosses.size > 0) {
    console.log(`  ${['points lost', ...DRIFT_GROUPS].map(cell).join('')}`);
    for (const [policy, s] of r.driftLosses) {
      if (policy === 'uniform') continue;
      console.log(`  ${[policy, ...s.map((x) => (100 * x).toFixed(2))].map(cell).join('')}`);
    }
  }
}

/** Prints the summary table over scenarios (the README's freshness table is drawn from it). */
export function printSummary(results: readonly ScenarioResult[]): void {
  console.log('\nscenario        meguri-frontier / optimum          / uniform     meguri-estimator / optimum        optimum-polite / optimum');
  for (const r of results) {
    console.log(
      `${r.scenario.name.padEnd(15)} ${fmt(r.frontierOverOptimum).padEnd(34)} ${r.frontierOverUniform.mean.toFixed(3).padStart(8)}     ${fmt(r.estimatorOverOptimum).padEnd(34)} ${fmt(r.politeOptimumOverOptimum)}`,
    );
  }
}

/** Sweep options from their command-line or environment strings (undefined = default). */
export function sweepOptionsOf(share: string | undefined, window: string | undefined, spacing: string | undefined, slots?: string, calendar?: string): SweepOptions {
  return {
    slotCalendar: calendar === undefined ? undefined : calendar === '1' || calendar === 'true',
    politenessShare: share === undefined ? undefined : Number(share),
    capWindowHours: window === undefined ? undefined : Number(window),
    spacing: spacing === undefined ? undefined : Number(spacing),
    capWindowSlots: slots === undefined ? undefined : Number(slots),
  };
}

/** The window `capDelivery` measures the peak over for a sweep: the policy's own, else ~PEAK_WINDOW_HOURS. */
export function peakWindowOf(o: SweepOptions): { hours: number; slots: number } {
  const hours = o.capWindowHours ?? 0;
  return { hours: hours > 0 ? hours : PEAK_WINDOW_HOURS, slots: o.capWindowSlots ?? 0 };
}

/**
 * World-length options from their command-line strings (undefined = the world's defaults: 150
 * days, 30 of them warm-up, a drift at half the run): `--days 300 --warmup 150 --drift-day 225`
 * measures the second half of a run twice as long, after 150 days of learning.
 */
export function horizonOf(days: string | undefined, warmup: string | undefined, driftDay: string | undefined): Partial<WorldOptions> {
  const out: { days?: number; warmupDays?: number; driftDay?: number } = {};
  if (days !== undefined) out.days = Number(days);
  if (warmup !== undefined) out.warmupDays = Number(warmup);
  if (driftDay !== undefined) out.driftDay = Number(driftDay);
  const d = out.days ?? 150;
  const w = out.warmupDays ?? 30;
  if (!(Number.isInteger(d) && d > 0)) throw new RangeError(`--days must be a whole number of days > 0, received ${String(days)}`);
  if (!(Number.isInteger(w) && w >= 0 && w < d)) throw new RangeError(`--warmup must be a whole number of days in [0, ${d}), received ${String(warmup ?? w)}`);
  if (out.driftDay !== undefined && !(out.driftDay > 0 && out.driftDay < d)) throw new RangeError(`--drift-day must lie within (0, ${d}), received ${String(driftDay)}`);
  return out;
}

/** The scenarios named (all when `names` is undefined), each run over `horizon`'s length. */
export function scenariosFor(names: readonly string[] | undefined, horizon: Partial<WorldOptions> = {}): Scenario[] {
  const chosen = names === undefined ? SCENARIOS : SCENARIOS.filter((s) => names.includes(s.name));
  const days = horizon.days ?? 150;
  const driftDay = horizon.driftDay ?? days / 2;
  // The drift's description names the day it happens in this run, not the default one.
  return chosen.map((s) => ({
    ...s,
    what: s.name === 'drift' ? `30 % of the pages draw a new rate on day ${driftDay} (of ${days})` : s.what,
    options: { ...horizon, ...s.options },
  }));
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(arg('n') ?? 5000);
  const seeds = (arg('seeds') ?? '20260101,7,42').split(',').map(Number);
  const names = arg('scenarios')?.split(',');
  const o = sweepOptionsOf(arg('share'), arg('window'), arg('spacing'), arg('slots'), arg('calendar'));
  const chosen = scenariosFor(names, horizonOf(arg('days'), arg('warmup'), arg('drift-day')));
  const results: ScenarioResult[] = [];
  for (const s of chosen) {
    const w = peakWindowOf(o);
    const r = runScenario(s, n, seeds, () => sweepPolicies(o), w.hours, w.slots);
    printScenario(r);
    results.push(r);
  }
  printSummary(results);
}
