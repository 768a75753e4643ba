// DESIGN §9.5: checkpoint → recover → the continued dispatch sequence equals the uninterrupted
// one; URLs in flight at the checkpoint are dispatched again.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type FrontierOptions, type Outcome, UrlStatus, withFreshness } from '../../src/index.js';
import { type Scenario, resolverOf, scenarioArb, scriptedFetcher, seedScenario, urlOf } from './scenario.js';

/** Out-links: each page links to a page on the next host and one on its own host (bounded pool). */
function linksOf(hosts: number): (url: string) => string[] {
  return (url) => {
    const m = /host(\d+)\.example\/page\/(\d+)/.exec(url);
    if (!m) return [];
    const h = Number(m[1]);
    const p = Number(m[2]);
    if (p >= 14) return [];
    return [urlOf((h + 1) % hosts, p + 3), urlOf(h, p + 5)];
  };
}

function optionsFor(s: Scenario, variant: number): Partial<FrontierOptions> {
  const base: Partial<FrontierOptions> = { resolver: resolverOf(s), stateMachine: true };
  switch (variant) {
    case 0:
      return base;
    case 1:
      return { ...base, prioritizer: true };
    case 2:
      return { ...base, prioritizer: { damping: 0.3, budgetBase: 3, budgetPerDomain: 2 }, target: 2, dispatchThreads: 1, backQueuesPerThread: 1, promoteAgeMs: 3000, rotationQuantum: 2 };
    case 3:
      return { ...base, scheduleIndex: true, dispatchShards: 2, target: 3, freshness: (_r, now) => now + 1 };
    default:
      // The real rescheduler: a new (stateful) hook for every frontier, a pass every 2 hours.
      return { ...base, scheduleIndex: true, target: 3, freshness: withFreshness({ minReprobeGap: 1, reprobeRate: 1 / 30 }, 4, { cadenceHours: 2 }) };
  }
}

/** The scripted fetcher with bodies: a fingerprint that changes every few fetches, an honest Last-Modified. */
function withBodies(fetch: (r: FetchRequest) => Outcome): (r: FetchRequest, nowMs: number) => Outcome {
  let n = 0;
  return (r, nowMs) => {
    const o = fetch(r);
    const i = n++;
    if (o.status !== 200) return o;
    const version = Math.floor(i / 3);
    return { ...o, contentFp: BigInt(version + 1), simhash: BigInt(version) * 0x1111n, lastModified: Math.floor(nowMs / 1000) - 60 - (i % 7) * 600 };
  };
}

const line = (d: { url: string; atMs: number; ip: string }): string => `${d.atMs} ${d.url} ${d.ip}`;

describe('recovery', () => {
  it('checkpoint at random points of a drain, recover, continue: the same dispatch sequence', () => {
    fc.assert(
      fc.property(
        scenarioArb({ maxHosts: 5, maxUrls: 5 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        (s, variant, cuts, viaImage) => {
          const limits = { untilMs: (variant === 4 ? 30 : 3) * 3_600_000 };
          const links = linksOf(s.hosts.length);
          const a = new Frontier(9, 0, optionsFor(s, variant));
          seedScenario(a, s);
          const full = a.drain(0, withBodies(scriptedFetcher(s, links)), limits).map(line);

          const fetch = withBodies(scriptedFetcher(s, links));
          let f = new Frontier(9, 0, optionsFor(s, variant));
          seedScenario(f, s);
          const got: string[] = [];
          for (const cut of [...cuts].sort((x, y) => x - y)) {
            const want = cut - got.length;
            if (want > 0) got.push(...f.drain(0, fetch, { ...limits, limit: want }).map(line));
            const bytes = f.checkpointBytes();
            f = Frontier.recover(viaImage ? f.checkpoint() : bytes, optionsFor(s, variant));
            // The recovered frontier is the same frontier: it re-encodes to the same bytes.
            expect(f.checkpointBytes()).toEqual(bytes);
          }
          got.push(...f.drain(0, fetch, limits).map(line));
          expect(got).toEqual(full);
        },
      ),
      { seed: 201, numRuns: 60 },
    );
  });

  it('URLs in flight at the checkpoint are dispatched again after recovery', () => {
    fc.assert(
      fc.property(scenarioArb({ maxHosts: 5, maxUrls: 4 }), fc.integer({ min: 1, max: 6 }), (s, k) => {
        const opts = { resolver: resolverOf(s), stateMachine: true };
        const f = new Frontier(2, 0, opts);
        seedScenario(f, s);
        const outstanding: FetchRequest[] = [];
        let now = 0;
        while (outstanding.length < k) {
          const r = f.dispatch(now);
          if (r) outstanding.push(r);
          else {
            const next = f.nextEligible();
            if (next === undefined) break;
            now = next;
          }
        }
        const before = f.pending();
        const g = Frontier.recover(f.checkpointBytes(), opts);
        expect(g.pending()).toBe(before + outstanding.length);
        expect(g.stats(0).inFlight).toBe(0);
        expect(g.stats(0).byStatus['InFlight']).toBe(0);
        const again = new Set(g.drain(now, (r): Outcome => ({ row: r.row, url: r.url, status: 200 })).map((d) => d.url));
        for (const r of outstanding) expect(again.has(r.url)).toBe(true);
        // A stale report for a pre-crash row is refused, never misapplied.
        for (const r of outstanding) expect(g.report({ row: Math.min(r.row, g.len() - 1), url: r.url, status: 200 }, now)).toBe(false);
      }),
      { seed: 202, numRuns: 60 },
    );
  });

  it('recover gives its visitor every URL of the image once, whatever its status (the cluster node registers their origins)', () => {
    const f = new Frontier(3, 0, { stateMachine: true });
    const urls = ['http://www.a.test/', 'http://blog.a.test/x', 'https://www.a.test/y', 'http://b.test/'];
    for (const u of urls) f.seed(u, new URL(u).hostname.split('.').slice(-2).join('.'), 1, 0, 0);
    const sent = f.dispatch(0)!;
    f.report({ row: sent.row, url: sent.url, status: 200 }, 1);
    const seen: string[] = [];
    const g = Frontier.recover(f.checkpointBytes(), { stateMachine: true }, (u) => seen.push(u));
    expect(seen.sort()).toEqual([...urls].sort());
    expect(g.stats(0).byStatus['Crawled']).toBe(1);
  });

  it('keeps crawl history, validators and OPIC state across recovery', () => {
    const f = new Frontier(4, 0, { prioritizer: true, stateMachine: true });
    f.seed('https://a.example/x', 'a.example', 2, 0, 0, 0);
    f.seed('https://b.example/y', 'b.example', 1, 0, 0, 0);
    f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, etag: '"v1"', lastModified: 1_700_000_000, contentFp: 42n, links: [{ url: 'https://c.example/z' }] }));
    const g = Frontier.recover(f.checkpointBytes(), { prioritizer: true, stateMachine: true });
    expect(g.stats(0).byStatus['Crawled']).toBe(3);
    const p = g.prioritizer()!;
    // c.example is linked from two other registrable domains; host ids follow HostKey order.
    expect([0, 1, 2].map((id) => p.inDegree(id)).sort()).toEqual([0, 0, 2]);
    const due = g.dueUrls(10_000);
    expect(due.map((d) => d.url).sort()).toEqual(['https://a.example/x', 'https://b.example/y', 'https://c.example/z']);
    expect(due.every((d) => d.status === 'Crawled' && d.dueHours === 168)).toBe(true);
    void UrlStatus;
  });
});
