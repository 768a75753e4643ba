// Freshness: the simulated web of bench/freshness at N = 10,000 and 100,000 (override with
// FRESHNESS_N=a,b). Every policy sees the identical change history; the rows are importance-
// weighted freshness, budget use and cap violations, and the headline ratios are
// meguri / optimum and meguri / uniform, both for the estimator over bare columns and for the
// real Frontier with withFreshness (meguri-frontier). The simulator is TypeScript over src/, run through
// tsx's loader (a devDependency of the root package).
import { register } from 'tsx/esm/api';

export async function run() {
  const unregister = register();
  try {
    const { compare, report } = await import('../freshness/run.ts');
    const sizes = (process.env.FRESHNESS_N ?? '10000,100000').split(',').map(Number);
    // Scenarios (FRESHNESS_SCENARIOS=base,tight-caps,low-budget): the base world; 60 % of hosts
    // capped at half their uniform share; half the crawl budget.
    const SCENARIOS = { base: {}, 'tight-caps': { cappedHostFraction: 0.6 }, 'low-budget': { budgetPerPageDay: 0.1 } };
    const names = (process.env.FRESHNESS_SCENARIOS ?? 'base').split(',');
    const seeds = (process.env.FRESHNESS_SEEDS ?? '20260101').split(',').map(Number);
    const rows = [];
    for (const n of sizes) for (const name of names) for (const seed of seeds) {
      const c = compare({ n, seed, ...(SCENARIOS[name] ?? {}) });
      report(c, `${name}, seed ${seed}: N = ${n}, 150 days (30 warm-up), budget ${name === 'low-budget' ? '0.1' : '0.2'}·N crawls/day`);
      for (const r of c.rows) {
        rows.push({
          n,
          scenario: name,
          seed,
          policy: r.policy,
          freshness: r.freshness,
          budgetUse: r.budgetUse,
          capViolations: r.capViolations,
          cpuSeconds: r.cpuMs / 1000,
        });
      }
      rows.push({ n, scenario: name, seed, policy: 'meguri-estimator / optimum', freshness: c.meguriOverOptimum });
      rows.push({ n, scenario: name, seed, policy: 'meguri-estimator / uniform', freshness: c.meguriOverUniform });
      rows.push({ n, scenario: name, seed, policy: 'meguri-frontier / optimum', freshness: c.frontierOverOptimum });
      rows.push({ n, scenario: name, seed, policy: 'meguri-frontier / uniform', freshness: c.frontierOverUniform });
    }
    return rows;
  } finally {
    await unregister();
  }
}
