/**
 * The latency-rise estimator (src/politeness/latency.ts) and the interval it drives: under
 * stationary jitter a healthy host stays at its floor; under a real overload it backs off
 * and, once the overload ends, comes back. Jitter is drawn from seeded distributions whose
 * parameters fast-check picks (a property over stationary distributions, not over arbitrary
 * sequences: a sequence may legitimately *be* a rise).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadCoreSync } from '../../src/core/node.js';
import { Frontier } from '../../src/frontier/index.js';
import { type LatencyState, RISE_RUN, RISE_SCORE_MAX, adapt, hostInterval, observeLatency, politenessConfig, signalOf } from '../../src/politeness/index.js';
import { Rng } from '../../src/sim/random.js';

loadCoreSync();

const SEED = 0x1a7e;
/** The setting: a 1 s floor and start (a host that may be fetched once a second). */
const CFG = politenessConfig({ floorMs: 1000, defaultIntervalMs: 1000 });

const fresh = (): LatencyState => ({ latencyMs: 0, latencyVarMs: 0, latencyRiseScore: 0 });

/** A stationary latency source on [20, 150] ms: uniform, or a fast mode with rare slow answers. */
type Jitter = { kind: 'uniform'; lo: number; hi: number; seed: number } | { kind: 'spiky'; base: number; spread: number; p: number; seed: number };

const jitterArb: fc.Arbitrary<Jitter> = fc.oneof(
  fc
    .record({ a: fc.integer({ min: 20, max: 150 }), b: fc.integer({ min: 20, max: 150 }), seed: fc.integer() })
    .map(({ a, b, seed }) => ({ kind: 'uniform' as const, lo: Math.min(a, b), hi: Math.max(a, b), seed })),
  fc.record({ kind: fc.constant('spiky' as const), base: fc.integer({ min: 20, max: 60 }), spread: fc.integer({ min: 0, max: 30 }), p: fc.double({ min: 0, max: 0.05, noNaN: true }), seed: fc.integer() }),
);

function source(j: Jitter): () => number {
  const rng = new Rng(j.seed, j.kind);
  if (j.kind === 'uniform') return () => j.lo + rng.float() * (j.hi - j.lo);
  return () => (rng.float() < j.p ? 150 : Math.min(150, j.base + rng.float() * j.spread));
}

/** Runs `n` healthy fetches through estimator + adapt + clamp; returns every interval. */
function run(latencies: () => number, n: number, interval = CFG.defaultIntervalMs, state = fresh()): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const rising = observeLatency(CFG, state, latencies());
    interval = hostInterval(CFG, adapt(CFG, interval, signalOf({ status: 200 }, rising, 0)));
    out.push(interval);
  }
  return out;
}

describe('observeLatency (RFC 6298 SRTT/RTTVAR)', () => {
  it('follows the RFC on normal samples: first R gives SRTT = R, RTTVAR = R/2; then β = 1/4 and α = 1/8', () => {
    const s = fresh();
    expect(observeLatency(CFG, s, 100)).toBe(false);
    expect(s).toEqual({ latencyMs: 100, latencyVarMs: 50, latencyRiseScore: 0 });
    observeLatency(CFG, s, 60);
    // RTTVAR = 3/4·50 + 1/4·|100 − 60| = 47.5, then SRTT = 7/8·100 + 1/8·60 = 95.
    expect(s).toEqual({ latencyMs: 95, latencyVarMs: 47.5, latencyRiseScore: 0 });
  });

  it(`calls a rise at a rise score of ${RISE_RUN}: high samples count up, normal ones down; high samples move SRTT at 1/16, never RTTVAR`, () => {
    const s: LatencyState = { latencyMs: 100, latencyVarMs: 10, latencyRiseScore: 0 };
    // Bound: max(100 + 4·10, 100 · 1.5) = 150.
    expect(observeLatency(CFG, s, 150)).toBe(false); // not over: a calm normal sample (SRTT → 106.25, RTTVAR → 20)
    expect(s).toEqual({ latencyMs: 106.25, latencyVarMs: 20, latencyRiseScore: 0 });
    expect([400, 400, 400, 400].map((r) => observeLatency(CFG, s, r))).toEqual([false, false, true, true]);
    expect(s.latencyMs).toBeCloseTo(400 - (400 - 106.25) * (15 / 16) ** 4, 9);
    expect(s.latencyVarMs).toBe(20);
    expect(s.latencyRiseScore).toBe(RISE_SCORE_MAX);
    // In-band samples count down (RTTVAR still frozen while a rise is suspected) …
    observeLatency(CFG, s, s.latencyMs);
    expect(s).toMatchObject({ latencyRiseScore: RISE_SCORE_MAX - 1, latencyVarMs: 20 });
    // … and one more high sample is a rise again: the trend, not a streak, decides.
    expect(observeLatency(CFG, s, 10 * s.latencyMs)).toBe(true);
    // Garbage changes nothing.
    const before = { ...s };
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) expect(observeLatency(CFG, s, bad)).toBe(false);
    expect(s).toEqual(before);
  });

  it('keeps a healthy host at its floor under stationary jitter in 20–150 ms (fast-check; 3,000 fetches each)', () => {
    fc.assert(
      fc.property(jitterArb, (j) => {
        const iv = run(source(j), 3000);
        // The band: at most three soft widenings above the floor (a run of rare slow answers
        // may look like a short rise), and at the floor for at least 98 % of the fetches.
        expect(Math.max(...iv), JSON.stringify(j)).toBeLessThanOrEqual(CFG.floorMs * CFG.softWiden ** 3);
        expect(iv.filter((x) => x === CFG.floorMs).length / iv.length, JSON.stringify(j)).toBeGreaterThanOrEqual(0.98);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('backs off under a real overload (latency ×4–×20 for 40 fetches) and recovers after it (fast-check)', () => {
    fc.assert(
      fc.property(jitterArb, fc.integer({ min: 4, max: 20 }), fc.boolean(), (j, factor, ramp) => {
        const base = source(j);
        const state = fresh();
        const warm = run(base, 200, CFG.defaultIntervalMs, state);
        let k = 0;
        // A step to `factor` × or a ramp reaching it over 10 fetches.
        const overload = (): number => base() * (ramp ? 1 + ((factor - 1) * Math.min(1, ++k / 10)) : factor);
        const loaded = run(overload, 40, warm.at(-1)!, state);
        expect(Math.max(...loaded), JSON.stringify({ j, factor, ramp })).toBeGreaterThanOrEqual(CFG.floorMs * CFG.softWiden ** 3);
        const after = run(base, 300, loaded.at(-1)!, state);
        expect(after.at(-1), JSON.stringify({ j, factor, ramp })).toBe(CFG.floorMs);
      }),
      { seed: SEED + 1, numRuns: 200 },
    );
  });
});

describe('a frontier host under 20–150 ms jitter', () => {
  it('keeps its 1 s interval over 600 fetches (the issue saw it climb to 4.9 s)', () => {
    const f = new Frontier(0, 0, { politeness: { floorMs: 1000, defaultIntervalMs: 1000 }, resolver: () => '192.0.2.1' });
    for (let i = 0; i < 600; i++) f.seed(`https://jitter.example/p${i}`, 'jitter.example', 1, 0, 0);
    const rng = new Rng(SEED, 'frontier');
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 + rng.float() * 130 }));
    expect(log).toHaveLength(600);
    let widest = 0;
    for (let i = 1; i < log.length; i++) widest = Math.max(widest, log[i]!.atMs - log[i - 1]!.atMs);
    expect(widest).toBeLessThanOrEqual(1000 * 1.25);
    expect(f.hostSnapshots('jitter.example')[0]!.intervalMs).toBe(1000);
  });
});
