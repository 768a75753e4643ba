// Small timing harness for the suites: medians of several runs, side-by-side tables, ratios.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const runsDefault = Number(process.env.BENCH_RUNS ?? 5);

/** Median of a numeric array. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Times `fn` (which performs `ops` operations per call) `runs` times after one warm-up call
 * and returns the median operations per second. `setup`, when given, runs before each timed
 * call and is not timed.
 */
export function opsPerSec(fn, { ops = 1, runs = runsDefault, setup } = {}) {
  if (setup) setup();
  fn();
  const rates = [];
  for (let r = 0; r < runs; r++) {
    if (setup) setup();
    const t0 = process.hrtime.bigint();
    fn();
    const ns = Number(process.hrtime.bigint() - t0);
    rates.push((ops * 1e9) / Math.max(ns, 1));
  }
  return median(rates);
}

/**
 * Like `opsPerSec`, but per second of this process's CPU time (user + system) instead of wall
 * time: on a shared machine whose other tenants take most of the cores, wall time measures
 * the queue for a core as much as the code. Returns `{ wall, cpu }` medians (ops/s). Threads
 * the call does not start (GC helpers, other work in this process) count against it.
 */
export function opsPerSecCpu(fn, { ops = 1, runs = runsDefault } = {}) {
  fn();
  const wall = [];
  const cpu = [];
  for (let r = 0; r < runs; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    fn();
    const ns = Number(process.hrtime.bigint() - t0);
    const c = process.cpuUsage(c0);
    wall.push((ops * 1e9) / Math.max(ns, 1));
    cpu.push((ops * 1e6) / Math.max(c.user + c.system, 1));
  }
  return { wall: median(wall), cpu: median(cpu) };
}

/** Async variant of opsPerSec. */
export async function opsPerSecAsync(fn, { ops = 1, runs = runsDefault, setup } = {}) {
  if (setup) await setup();
  await fn();
  const rates = [];
  for (let r = 0; r < runs; r++) {
    if (setup) await setup();
    const t0 = process.hrtime.bigint();
    await fn();
    const ns = Number(process.hrtime.bigint() - t0);
    rates.push((ops * 1e9) / Math.max(ns, 1));
  }
  return median(rates);
}

/** Heap + external + array buffers in use after a GC (run node with --expose-gc). */
export function memoryInUse() {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  // `external` already includes `arrayBuffers` (wasm memory and typed arrays live there).
  return m.heapUsed + m.external;
}

export function fmt(n, digits = 3) {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${(n / 1e9).toPrecision(digits)}G`;
  if (abs >= 1e6) return `${(n / 1e6).toPrecision(digits)}M`;
  if (abs >= 1e4) return `${(n / 1e3).toPrecision(digits)}k`;
  if (abs >= 100) return n.toFixed(0);
  return n.toPrecision(digits);
}

/** Prints rows (objects with the same keys) as an aligned text table. */
export function printTable(rows) {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const cells = rows.map((r) => cols.map((c) => (typeof r[c] === 'number' ? fmt(r[c]) : String(r[c] ?? ''))));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (vals) => vals.map((v, i) => v.padEnd(widths[i])).join('  ');
  console.log(line(cols));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of cells) console.log(line(row));
}

/** Writes every suite's rows to bench/results/latest.json for the README's table. */
export function writeResults(results) {
  const dir = join(here, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, platform: `${process.platform}-${process.arch}` };
  writeFileSync(join(dir, 'latest.json'), JSON.stringify({ meta, results }, null, 2));
  console.log(`\nbench: results written to bench/results/latest.json`);
}
