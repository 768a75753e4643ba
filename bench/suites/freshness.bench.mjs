// Freshness: the simulated web of bench/freshness over the issue-21 scenarios (the base world;
// half and 2.5× the crawl budget; 60 % of hosts capped; caps at ¼ of the uniform share; a third
// of the pages static; 30 % of the rates redrawn mid-run), several seeds each. Every policy
// sees the identical change history. Printed per scenario: meguri / optimum and meguri / uniform
// as mean ± sd (min–max) over the seeds, for the real Frontier with withFreshness
// (meguri-frontier, the headline) and the estimator over bare columns, and the crawl share per
// band of true change rate beside the optimum's, the points of the optimum lost per band (and,
// in the drift scenario, on the pages whose rate rose, fell or stayed), and on capped hosts the crawls and fresh time
// against the optimum's, and capped-host delivery: crawls / allowed on the hosts the optimum
// keeps at their cap, and the most starts in one window of a host's rate cap over the cap;
// beside them the optimum's rates served with each capped host's crawl delay (optimum-polite),
// and the points lost grouped by each page's crawls over the optimum's (DESIGN §20).
// Override with FRESHNESS_N (default 5000), FRESHNESS_SEEDS (default 20260101,7,42),
// FRESHNESS_SCENARIOS (default all), FRESHNESS_WINDOW (a capped host's rate-cap window in
// hours; default 0 = none, the crawl delay 1/C alone enforces the cap), FRESHNESS_SLOTS (K > 0:
// every capped host's window holds K starts, W = K / C instead), FRESHNESS_SPACING
// (its crawl delay as a fraction of the cap interval) and FRESHNESS_SHARE (the hook's
// politenessShare, default 1) and FRESHNESS_CALENDAR=1 (the hook's slotCalendar; see DESIGN §20 and bench/freshness/frontier-policy.ts);
// FRESHNESS_DAYS, FRESHNESS_WARMUP and FRESHNESS_DRIFT_DAY set the run's length, its warm-up
// and the drift's day (defaults 150, 30, half the run; 300, 150, 225 measures after 150 days
// of learning, the README's second freshness table). The simulator
// is TypeScript over src/, run through tsx's loader (a devDependency of the root package).
import { register } from 'tsx/esm/api';

export async function run() {
  const unregister = register();
  try {
    const { scenariosFor, horizonOf, runScenario, printScenario, printSummary, BANDS, DRIFT_GROUPS, RATIO_GROUPS, sweepPolicies, sweepOptionsOf, peakWindowOf } = await import('../freshness/scenarios.ts');
    const o = sweepOptionsOf(process.env.FRESHNESS_SHARE, process.env.FRESHNESS_WINDOW, process.env.FRESHNESS_SPACING, process.env.FRESHNESS_SLOTS, process.env.FRESHNESS_CALENDAR);
    const sizes = (process.env.FRESHNESS_N ?? '5000').split(',').map(Number);
    const names = process.env.FRESHNESS_SCENARIOS?.split(',');
    const seeds = (process.env.FRESHNESS_SEEDS ?? '20260101,7,42').split(',').map(Number);
    const chosen = scenariosFor(names, horizonOf(process.env.FRESHNESS_DAYS, process.env.FRESHNESS_WARMUP, process.env.FRESHNESS_DRIFT_DAY));
    const rows = [];
    for (const n of sizes) {
      const results = [];
      for (const s of chosen) {
        const w = peakWindowOf(o);
        const r = runScenario(s, n, seeds, () => sweepPolicies(o), w.hours, w.slots);
        printScenario(r);
        results.push(r);
        for (const [label, sp] of [
          ['meguri-frontier / optimum', r.frontierOverOptimum],
          ['meguri-frontier / uniform', r.frontierOverUniform],
          ['meguri-estimator / optimum', r.estimatorOverOptimum],
          ['optimum-polite / optimum', r.politeOptimumOverOptimum],
        ]) {
          rows.push({ n, scenario: s.name, seeds: seeds.join(' '), policy: label, mean: sp.mean, sd: sp.sd, min: sp.min, max: sp.max });
        }
        for (const [policy, x] of r.caps) {
          rows.push({ n, scenario: s.name, policy: `capped hosts: ${policy}`, crawlsVsOptimum: x.cappedCrawls, cappedFresh: x.cappedFresh, uncappedFresh: x.uncappedFresh });
        }
        for (const [policy, x] of r.delivery) {
          rows.push({ n, scenario: s.name, policy: `cap delivery: ${policy}`, saturatedHosts: x.saturated, crawlsOverAllowed: x.delivered, least: x.leastDelivered, peakWindowOverCap: x.peak });
        }
        for (const [policy, share] of r.shares) {
          rows.push({ n, scenario: s.name, policy: `crawl share: ${policy}`, ...Object.fromEntries(BANDS.map((b, i) => [b.label, share[i]])) });
        }
        for (const [policy, loss] of r.losses) {
          rows.push({ n, scenario: s.name, policy: `points lost: ${policy}`, ...Object.fromEntries(BANDS.map((b, i) => [b.label, 100 * loss[i]])) });
        }
        for (const [policy, x] of r.ratioLosses) {
          rows.push({ n, scenario: s.name, policy: `points lost by crawls vs optimum: ${policy}`, ...Object.fromEntries(RATIO_GROUPS.map((g, i) => [g, 100 * x.points[i]])) });
        }
        for (const [policy, loss] of r.driftLosses) {
          rows.push({ n, scenario: s.name, policy: `points lost by drift: ${policy}`, ...Object.fromEntries(DRIFT_GROUPS.map((g, i) => [g, 100 * loss[i]])) });
        }
      }
      printSummary(results);
    }
    return rows;
  } finally {
    await unregister();
  }
}
