// DESIGN §9 invariants 1–4 and 6 as seeded property tests, checked by replaying dispatch logs.
// (Invariant 5, recovery, is in recovery.test.ts.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type LatencyState, type Outcome, adapt, hostInterval, observeLatency, politenessConfig } from '../../src/index.js';
import { drainRecorded, frontierFor, referenceIps, replayDrain, resolverOf, scenarioArb, scriptedFetcher, seedScenario, urlOf } from './scenario.js';

describe('invariants 1 and 2: politeness windows and priority order (drain replay)', () => {
  it('state machine off: every dispatch is the one the rules pick, at the earliest legal time', () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const f = frontierFor(s);
        const { log, outcomes } = drainRecorded(f, scriptedFetcher(s));
        expect(replayDrain(s, log, outcomes, { stateMachine: false })).toBeUndefined();
      }),
      { seed: 101, numRuns: 120 },
    );
  });

  it('state machine on: retries re-queue, the windows widen, the order still holds', () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const f = frontierFor(s, { stateMachine: true });
        const { log, outcomes } = drainRecorded(f, scriptedFetcher(s));
        expect(replayDrain(s, log, outcomes, { stateMachine: true })).toBeUndefined();
      }),
      { seed: 102, numRuns: 120 },
    );
  });

  it('state machine on, with application errors: a page fault holds the interval until the third in a row, retries go last', () => {
    fc.assert(
      fc.property(scenarioArb({ statuses: [200, 200, 500, 500, 501, 503, 0] }), (s) => {
        const f = frontierFor(s, { stateMachine: true });
        const { log, outcomes } = drainRecorded(f, scriptedFetcher(s));
        expect(replayDrain(s, log, outcomes, { stateMachine: true })).toBeUndefined();
      }),
      { seed: 103, numRuns: 150 },
    );
  });
});

describe('invariant 1 under concurrency: delayed reports, shards, a bounded active set', () => {
  it('never two in flight per host; host and IP windows hold; the active set stays within its bounds', () => {
    const cfg = politenessConfig();
    fc.assert(
      fc.property(
        scenarioArb({ maxHosts: 6, maxUrls: 5 }),
        fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 20, maxLength: 120 }),
        fc.constantFrom(0, 1, 2, 3),
        fc.constantFrom(0, 1, 2),
        fc.constantFrom(1, 2),
        (s, actions, target, threads, shards) => {
          const f = frontierFor(s, { stateMachine: true, target, dispatchThreads: threads, backQueuesPerThread: 1, dispatchShards: shards, promoteAgeMs: 5_000 });
          const effTarget = target === 0 ? Infinity : Math.max(target, threads);
          const fetch = scriptedFetcher(s);
          const ips = new Map(s.hosts.map((h) => [h.name, h.ip ?? '']));
          const delay = new Map(s.hosts.map((h) => [h.name, h.crawlDelay]));
          const interval = new Map<string, number>();
          const hostNext = new Map<string, number>();
          const latency = new Map<string, LatencyState>();
          const ipRef = referenceIps(cfg);
          const ipNext = ipRef.next;
          const out: { req: FetchRequest; outcome: Outcome }[] = [];
          let now = 0;
          const step = (a: number): void => {
            if (a < 55) {
              const req = f.dispatchShard(now, a % shards);
              const stats = f.stats(0);
              expect(stats.activeHosts).toBeLessThanOrEqual(effTarget);
              if (req === undefined) return;
              expect(out.some((o) => o.req.host === req.host), `second in flight for ${req.host}`).toBe(false);
              expect(now).toBeGreaterThanOrEqual(hostNext.get(req.host) ?? 0);
              const ip = ips.get(req.host)!;
              const iv = interval.get(req.host) ?? hostInterval(cfg, cfg.defaultIntervalMs, delay.get(req.host)!);
              if (ip !== '') {
                expect(now, `IP ${ip} window`).toBeGreaterThanOrEqual(ipNext.get(ip) ?? 0);
                ipRef.start(ip, now);
              }
              interval.set(req.host, iv);
              hostNext.set(req.host, Infinity);
              out.push({ req, outcome: fetch(req) });
            } else if (a < 85 && out.length > 0) {
              const [{ req, outcome }] = out.splice(a % out.length, 1) as [{ req: FetchRequest; outcome: Outcome }];
              expect(f.report(outcome, now)).toBe(true);
              const ra = outcome.retryAfter === undefined ? undefined : Number(outcome.retryAfter) * 1000;
              let est = latency.get(req.host);
              if (est === undefined) latency.set(req.host, (est = { latencyMs: 0, latencyVarMs: 0, latencyRiseScore: 0 }));
              const latencyRising = observeLatency(cfg, est, outcome.latencyMs!);
              const rip = ips.get(req.host)!;
              if (rip !== '') ipRef.outcome(rip, outcome, latencyRising);
              const iv = hostInterval(cfg, adapt(cfg, interval.get(req.host)!, { status: outcome.status, retryAfterMs: ra, latencyMs: outcome.latencyMs, latencyRising }), delay.get(req.host)!);
              interval.set(req.host, iv);
              hostNext.set(req.host, Math.max(req.dispatchedAtMs + iv, ra ? now + ra : 0));
            } else {
              now += (a % 7) * 137;
            }
          };
          for (const a of actions) step(a);
          // Finish: report everything, then drain; the windows still hold on the tail.
          for (const { outcome } of out.splice(0)) f.report(outcome, now);
          const tail = f.drain(now, fetch);
          const lastStart = new Map<string, number>();
          for (const d of tail) {
            const prev = lastStart.get(d.host);
            if (prev !== undefined) expect(d.atMs - prev).toBeGreaterThanOrEqual(Math.max(cfg.floorMs, delay.get(d.host)!));
            lastStart.set(d.host, d.atMs);
          }
          expect(f.pending()).toBe(0);
        },
      ),
      { seed: 103, numRuns: 150 },
    );
  });
});

describe('invariant 3: bounded back queues, a floor with threads, no starvation', () => {
  it('the active set never exceeds the target and never drops below min(k·threads, hosts with work)', () => {
    fc.assert(
      fc.property(scenarioArb({ maxHosts: 6 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 2 }), (s, target, threads) => {
        const k = 2;
        const f = frontierFor(s, { target, dispatchThreads: threads, backQueuesPerThread: k });
        const eff = Math.max(target, threads * k);
        const left = new Map(s.hosts.map((h) => [h.name, h.priorities.length]));
        let now = 0;
        for (let guard = 0; guard < 500; guard++) {
          const req = f.dispatch(now);
          const withWork = [...left.values()].filter((n) => n > 0).length;
          const active = f.stats(0).activeHosts;
          expect(active).toBeLessThanOrEqual(eff);
          expect(active).toBeGreaterThanOrEqual(Math.min(eff, withWork));
          if (req) {
            left.set(req.host, left.get(req.host)! - 1);
            f.report({ row: req.row, url: req.url, status: 200 }, now);
            continue;
          }
          const next = f.nextEligible();
          if (next === undefined) break;
          now = Math.max(now, next);
        }
        expect(f.pending()).toBe(0);
      }),
      { seed: 104, numRuns: 100 },
    );
  });

  // A high-priority host that keeps discovering new pages never drains, so with one back
  // queue it holds the only slot forever; a low-priority host waits behind it.
  const starvationRun = (threads: number): { lowServedAt: number | undefined; dispatches: number } => {
    const f = new Frontier(1, 0, { target: 1, dispatchThreads: threads, backQueuesPerThread: 1, promoteAgeMs: 20_000, rotationQuantum: 4 });
    f.seed('https://big.example/0', 'big.example', 10, 0, 0, 0);
    f.seed('https://small.example/only', 'small.example', 0.001, 0, 0, 0);
    let n = 0;
    let lowServedAt: number | undefined;
    const log = f.drain(0, (r) => {
      if (r.host === 'small.example' && lowServedAt === undefined) lowServedAt = n;
      n++;
      return { row: r.row, url: r.url, status: 200, links: r.host === 'big.example' ? [{ url: `https://big.example/${n}` }] : undefined };
    }, 300);
    return { lowServedAt, dispatches: log.length };
  };

  it('without dispatch threads a low-priority host starves behind an endless one (the documented hazard)', () => {
    const { lowServedAt, dispatches } = starvationRun(0);
    expect(dispatches).toBe(300);
    expect(lowServedAt).toBeUndefined();
  });

  it('with dispatch threads the aged host is promoted and served', () => {
    const { lowServedAt } = starvationRun(1);
    expect(lowServedAt).toBeDefined();
    // Promotion age 20 s at ~250-1000 ms per fetch: served within a bounded number of fetches.
    expect(lowServedAt!).toBeLessThan(120);
  });
});

describe('invariant 4: discovery is idempotent', () => {
  it('any delivery order with repeats creates one row per distinct URL', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ host: fc.integer({ min: 0, max: 3 }), page: fc.integer({ min: 0, max: 9 }), cash: fc.constantFrom(0, 0.5, 2) }), { maxLength: 60 }),
        fc.boolean(),
        (ds, prio) => {
          const f = new Frontier(1, 0, { prioritizer: prio });
          const seen = new Set<string>();
          for (const d of ds) {
            const url = urlOf(d.host, d.page);
            const fresh = f.discover({ url, host: `host${d.host}.example`, depth: 1, cash: d.cash }, 0);
            expect(fresh).toBe(!seen.has(url));
            seen.add(url);
            // Redelivery of the same discovery: never a second row.
            expect(f.discover({ url, host: `host${d.host}.example`, depth: 1, cash: d.cash }, 0)).toBe(false);
          }
          expect(f.len()).toBe(seen.size);
          expect(f.pending()).toBe(seen.size);
        },
      ),
      { seed: 105, numRuns: 200 },
    );
  });

  it('seedBatch builds byte-for-byte the frontier the equivalent seed loop builds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ host: fc.integer({ min: 0, max: 4 }), page: fc.integer({ min: 0, max: 12 }), priority: fc.constantFrom(0, 1, 2.5), delay: fc.constantFrom(0, 500) }), { maxLength: 50 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (specs, chunks, prio) => {
          const seeds = specs.map((s) => ({ url: urlOf(s.host, s.page), host: `host${s.host}.example`, priority: s.priority, firstSeen: 5, nextDue: 5, crawlDelay: s.delay }));
          const a = new Frontier(3, 5, { prioritizer: prio });
          for (const s of seeds) a.seed(s.url, s.host, s.priority, s.firstSeen, s.nextDue, s.crawlDelay);
          const b = new Frontier(3, 5, { prioritizer: prio });
          const size = Math.ceil(seeds.length / chunks) || 1;
          let added = 0;
          for (let i = 0; i < seeds.length; i += size) added += b.seedBatch(seeds.slice(i, i + size));
          expect(added).toBe(a.len());
          expect(b.checkpointBytes()).toEqual(a.checkpointBytes());
          const fetch = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200 });
          expect(b.drain(0, fetch).map((d) => d.url)).toEqual(a.drain(0, fetch).map((d) => d.url));
        },
      ),
      { seed: 106, numRuns: 100 },
    );
  });
});

describe('invariant 6: options that are off (or inert) leave the dispatch sequence unchanged', () => {
  it('inert schedule index, state machine, robots, DNS, freshness and one shard change nothing', () => {
    fc.assert(
      fc.property(scenarioArb({ statuses: [200, 304] }), (s) => {
        const plain = new Frontier(1, 0, {});
        seedScenario(plain, s);
        const base = plain.drain(0, scriptedFetcher(s)).map((d) => `${d.atMs} ${d.url}`);
        const inert = new Frontier(1, 0, {
          scheduleIndex: true,
          stateMachine: true,
          dispatchShards: 1,
          robots: { ready: () => true, isAllowed: () => true, crawlDelayMs: () => undefined },
          resolver: () => undefined,
          freshness: (_r, now) => now + 168,
          linkRouter: (d) => d,
        });
        seedScenario(inert, s);
        expect(inert.drain(0, scriptedFetcher(s)).map((d) => `${d.atMs} ${d.url}`)).toEqual(base);
      }),
      { seed: 107, numRuns: 100 },
    );
  });
});

void resolverOf;
