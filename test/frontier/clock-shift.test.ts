/**
 * A partition moved onto another machine's clock (`shiftPartitionClock`, for a cluster slot
 * whose last owner's clock differs from the next owner's): recovered and driven on a clock Δ
 * ahead, it is the same crawl Δ later — every dispatch, host window and Retry-After hold moves
 * by exactly Δ (the oracle is the unshifted partition driven on the original clock). Also the
 * robots.txt snapshot's shift and the rule that decides Δ from two heartbeats' readings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clockShiftMs } from '../../src/cluster/index.js';
import { shiftRobotsSnapshot } from '../../src/fetch/index.js';
import { Frontier, shiftPartitionClock } from '../../src/frontier/index.js';
import type { Outcome } from '../../src/model/index.js';
import { resolverOf, scenarioArb, scriptedFetcher, seedScenario, urlOf } from './scenario.js';

const T0 = 10 * 60_000; // ten minutes into the first hour: every reading > 0, none past the hour

describe('shiftPartitionClock', () => {
  it('a recovered partition driven Δ later dispatches the same URLs exactly Δ later (fast-check)', () => {
    fc.assert(
      fc.property(
        scenarioArb({ maxHosts: 5, maxUrls: 5, statuses: [200, 200, 304, 404, 429] }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: -5_000, max: 5_000 }).filter((d) => d !== 0),
        (s, cut, delta) => {
          const opts = { resolver: resolverOf(s), stateMachine: true };
          const links = (url: string): string[] => {
            const m = /host(\d+)\.example\/page\/(\d+)/.exec(url);
            return m && Number(m[2]) < 6 ? [urlOf((Number(m[1]) + 1) % s.hosts.length, Number(m[2]) + 2)] : [];
          };
          const f = new Frontier(7, 0, opts);
          seedScenario(f, s);
          f.drain(T0, scriptedFetcher(s, links), cut);
          const image = f.checkpoint();
          const a = Frontier.recover(image, opts);
          const b = Frontier.recover(shiftPartitionClock(image, delta), opts);
          // A reading of 0 is "none yet" (nothing dispatched): it says "now" on any clock.
          const na = a.nextEligible();
          expect(b.nextEligible()).toBe(na === undefined || na <= 0 ? na : na + delta);
          const la = a.drain(T0, scriptedFetcher(s, links));
          const lb = b.drain(T0 + delta, scriptedFetcher(s, links));
          expect(lb).toEqual(la.map((d) => ({ ...d, atMs: d.atMs + delta })));
        },
      ),
      { seed: 2112, numRuns: 80 },
    );
  });

  it('moves clock readings only: durations, counts and readings of "none" stay', () => {
    const f = new Frontier(3, 0, { stateMachine: true, resolver: () => '10.0.0.1' });
    f.seed('http://a.test/1', 'a.test', 1, 0, 0, 2_000);
    f.seed('http://a.test/2', 'a.test', 1, 0, 0, 2_000);
    f.seed('http://b.test/1', 'b.test', 1, 0, 0, 0);
    f.drain(T0, (r): Outcome => ({ row: r.row, url: r.url, status: 200, latencyMs: 40 }), 2);
    const image = f.checkpoint();
    const moved = shiftPartitionClock(image, 1_234);
    expect(moved).not.toBe(image);
    image.hosts.forEach((h, i) => {
      const m = moved.hosts[i]!;
      for (const k of ['nextEligibleMs', 'lastDispatchMs', 'activatedAtMs', 'waitingSinceMs', 'ipSpendMs'] as const) {
        expect(m[k], k).toBe(h[k] > 0 ? h[k] + 1_234 : h[k]);
      }
      for (const k of ['crawlDelayMs', 'intervalMs', 'latencyMs', 'ipSpendIntervalMs', 'admitted', 'urlBudget', 'flags'] as const) expect(m[k], k).toBe(h[k]);
    });
    expect(image.hosts.some((h) => h.lastDispatchMs > 0)).toBe(true);
    for (const [i, ip] of (image.ips ?? []).entries()) {
      expect(moved.ips![i]!.nextEligibleMs).toBe(ip.nextEligibleMs > 0 ? ip.nextEligibleMs + 1_234 : ip.nextEligibleMs);
      expect(moved.ips![i]!.intervalMs).toBe(ip.intervalMs);
    }
    const sched = (img: typeof image) => JSON.parse(new TextDecoder().decode(img.scheduler)) as { clockMs: number; dispatches: number };
    expect(sched(moved).clockMs).toBe(sched(image).clockMs + 1_234);
    expect(sched(moved).dispatches).toBe(sched(image).dispatches);
    expect(moved.columns).toBe(image.columns); // the URL rows (whole hours) are not touched
    expect(shiftPartitionClock(image, 0)).toBe(image);
  });
});

describe('shiftRobotsSnapshot', () => {
  it('moves fetch, refresh, outage start and hold; keeps what is absent', () => {
    const parsed = { origin: 'http://a.test', state: 'parsed' as const, text: 'User-agent: *\n', fetchedAtMs: 1_000, refreshAtMs: 90_000, lastStatus: 200, redirects: 0 };
    expect(shiftRobotsSnapshot(parsed, 500)).toEqual({ ...parsed, fetchedAtMs: 1_500, refreshAtMs: 90_500 });
    const held = { ...parsed, state: 'unreachable' as const, failures: 2, outageSinceMs: 700, heldUntilMs: 20_000 };
    expect(shiftRobotsSnapshot(held, -300)).toEqual({ ...held, fetchedAtMs: 700, refreshAtMs: 89_700, outageSinceMs: 400, heldUntilMs: 19_700 });
    expect(shiftRobotsSnapshot(parsed, 0)).toBe(parsed);
  });
});

describe('clockShiftMs', () => {
  it('is the writer’s offset less the reader’s, rounded; 0 within both bounds or when either is unknown', () => {
    expect(clockShiftMs({ clockOffsetMs: 5_000.4, clockOffsetErrorMs: 2 }, { offsetMs: 0.2, errorMs: 1 })).toBe(5_000);
    expect(clockShiftMs({ clockOffsetMs: -40, clockOffsetErrorMs: 2 }, { offsetMs: 10, errorMs: 3 })).toBe(-50);
    expect(clockShiftMs({ clockOffsetMs: 3, clockOffsetErrorMs: 2 }, { offsetMs: 0, errorMs: 1.5 })).toBe(0);
    expect(clockShiftMs({}, { offsetMs: 0, errorMs: 1 })).toBe(0);
    expect(clockShiftMs(undefined, { offsetMs: 0, errorMs: 1 })).toBe(0);
    expect(clockShiftMs({ clockOffsetMs: 900, clockOffsetErrorMs: 1 }, undefined)).toBe(0);
    expect(clockShiftMs({ clockOffsetMs: Number.NaN }, { offsetMs: 0, errorMs: 1 })).toBe(0);
  });
});
