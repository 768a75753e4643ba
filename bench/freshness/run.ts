/**
 * The freshness simulator's entry: builds a world, runs every policy over the identical change
 * history, and prints freshness, budget use and cap violations side by side, with the ratios
 * meguri / optimum and meguri / uniform.
 *
 *   node --import tsx bench/freshness/run.ts [--n 10000] [--seed 20260101] [--days 150] [--warmup 30] [--frontier-only]
 *
 * (`--frontier-only` runs uniform, optimum and meguri-frontier: the real Frontier with
 * withFreshness, bench/freshness/frontier-policy.ts.)
 *
 * (`npm run bench freshness` runs it at N = 10,000 and N = 100,000 through
 * bench/suites/freshness.bench.mjs.)
 */
import { expectedFreshness } from '../../src/freshness/index.js';
import { simulate, type Policy, type SimResult } from './engine.js';
import { MeguriFrontierPolicy } from './frontier-policy.js';
import { FixedRatePolicy, MeguriEstimatorPolicy, optimumPolicy, proportionalPolicy, uniformPolicy, worldPages } from './policies.js';
import { makeWorld, type World, type WorldOptions } from './world.js';

/** One row of the comparison. */
export interface Row extends SimResult {
  /** Expected freshness of a fixed-rate policy from the formula (NaN for learners). */
  readonly expected: number;
  /** CPU time of the run (user + system), ms: steadier than wall time on a shared machine. */
  readonly cpuMs: number;
  /** For the frontier-driven policy: the frontier's resident bytes per URL at the end (else NaN). */
  readonly bytesPerUrl: number;
}

/** The comparison of all policies over one world. */
export interface Comparison {
  /** The world the policies ran over (for per-page diagnostics such as the λ-band table). */
  readonly world: World;
  readonly rows: Row[];
  readonly meguriOverOptimum: number;
  readonly meguriOverUniform: number;
  /** The same ratios for the real Frontier + withFreshness (NaN when that policy did not run). */
  readonly frontierOverOptimum: number;
  readonly frontierOverUniform: number;
}

/** The default policy line-up: fixed-rate baselines, the estimator over columns, the real Frontier. */
export function defaultPolicies(): Policy[] {
  return [uniformPolicy(), proportionalPolicy(), optimumPolicy(), new MeguriEstimatorPolicy(), new MeguriFrontierPolicy()];
}

/** Runs `policies` over one world built from `opts`. */
export function compare(opts: WorldOptions, policies: Policy[] = defaultPolicies(), clock?: () => number): Comparison {
  const world = makeWorld(opts);
  const { pages } = worldPages(world);
  // The formula's figure for a fixed-rate policy: a static page fetched once counts as fresh
  // (F(0, f) = 1 needs f > 0); with a drift the rates change mid-run and the formula does not apply.
  const drift = world.driftAt < Number.POSITIVE_INFINITY;
  const formulaRates = (rates: Float64Array): Float64Array => rates.map((r, i) => (world.lambda[i] === 0 ? 1 : r));
  const rows: Row[] = [];
  for (const policy of policies) {
    const cpu0 = process.cpuUsage();
    const r = simulate(world, policy, clock);
    const cpu = process.cpuUsage(cpu0);
    const expected = policy instanceof FixedRatePolicy && !drift ? expectedFreshness(pages, formulaRates(policy.rates)) : Number.NaN;
    const bytesPerUrl = policy instanceof MeguriFrontierPolicy ? policy.frontier.memoryBytes() / world.n : Number.NaN;
    rows.push({ ...r, expected, cpuMs: (cpu.user + cpu.system) / 1000, bytesPerUrl });
  }
  const get = (name: string): number => rows.find((r) => r.policy === name)?.freshness ?? Number.NaN;
  return {
    world,
    rows,
    meguriOverOptimum: get('meguri-estimator') / get('optimum'),
    meguriOverUniform: get('meguri-estimator') / get('uniform'),
    frontierOverOptimum: get('meguri-frontier') / get('optimum'),
    frontierOverUniform: get('meguri-frontier') / get('uniform'),
  };
}

/** Prints a comparison as a table plus the two headline ratios. */
export function report(c: Comparison, label: string): void {
  console.log(`\n${label}`);
  const line = (cells: string[]): string => cells.map((x, i) => (i === 0 ? x.padEnd(18) : x.padStart(11))).join(' ');
  console.log(line(['policy', 'freshness', 'expected', 'unweighted', 'crawls', 'budget use', 'cap viol.', 'worst cap', 'wall s', 'cpu s']));
  for (const r of c.rows) {
    console.log(
      line([
        r.policy,
        r.freshness.toFixed(4),
        Number.isNaN(r.expected) ? '-' : r.expected.toFixed(4),
        r.plainFreshness.toFixed(4),
        String(r.crawls),
        r.budgetUse.toFixed(3),
        `${r.capViolations}/${r.cappedHosts}`,
        r.worstCapRatio.toFixed(3),
        (r.runtimeMs / 1000).toFixed(2),
        (r.cpuMs / 1000).toFixed(2),
      ]),
    );
  }
  if (!Number.isNaN(c.meguriOverOptimum)) {
    console.log(`meguri-estimator / optimum = ${c.meguriOverOptimum.toFixed(4)}   meguri-estimator / uniform = ${c.meguriOverUniform.toFixed(4)}`);
  }
  if (!Number.isNaN(c.frontierOverOptimum)) {
    const bytes = c.rows.find((r) => r.policy === 'meguri-frontier')?.bytesPerUrl ?? Number.NaN;
    console.log(
      `meguri-frontier  / optimum = ${c.frontierOverOptimum.toFixed(4)}   meguri-frontier  / uniform = ${c.frontierOverUniform.toFixed(4)}   frontier ${bytes.toFixed(0)} B/URL`,
    );
  }
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = arg('n', 10_000);
  const opts: WorldOptions = { n, seed: arg('seed', 20260101), days: arg('days', 150), warmupDays: arg('warmup', 30) };
  const t0 = performance.now();
  const only = process.argv.includes('--frontier-only');
  const c = compare(opts, only ? [uniformPolicy(), optimumPolicy(), new MeguriFrontierPolicy()] : defaultPolicies());
  report(c, `freshness simulator: N = ${n}, ${opts.days} days (${opts.warmupDays} warm-up), budget 0.2·N crawls/day`);
  console.log(`total wall time ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
