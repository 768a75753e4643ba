// Broken pages among working ones (src/politeness `isPageFault`, src/frontier queues' retry
// order): a 500 or a response cut off after its headers is one page's failure until three come
// in a row from URLs on their first attempt, and a URL waiting for a retry goes after every URL
// of its host not yet tried. Virtual time throughout (drain's clock), so the bounds are exact.
import { describe, expect, it } from 'vitest';
import { Frontier, HostFlags, type Outcome, PAGE_FAULT_RUN, isNeverSent, isPageFault } from '../../src/index.js';

const urls = (n: number): string[] => Array.from({ length: n }, (_, i) => `https://a.example/p/${i}`);

function site(n: number, options: ConstructorParameters<typeof Frontier>[2] = {}): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true, ...options });
  // Priorities fall with i, so the fresh order is p/0, p/1, … and a retry's place is visible.
  urls(n).forEach((u, i) => f.seed(u, 'a.example', n - i, 0, 0, 0));
  return f;
}

const index = (url: string): number => Number(url.slice(url.lastIndexOf('/') + 1));

describe('isPageFault', () => {
  it('application errors and cut-off responses are page faults; load, outages and silence are not', () => {
    for (const s of [500, 501, 505, 507, 519]) expect(isPageFault(s), String(s)).toBe(true);
    for (const s of [200, 304, 404, 429, 502, 503, 504, 520, 522, 524, 599]) expect(isPageFault(s), String(s)).toBe(false);
    expect(isPageFault(0, 'incomplete')).toBe(true);
    expect(isPageFault(0, 'protocol')).toBe(true);
    expect(isPageFault(0, 'timeout')).toBe(true);
    for (const k of [undefined, 'network', 'connect', 'dns']) expect(isPageFault(0, k), String(k)).toBe(false);
  });

  it('nothing sent is no signal: isNeverSent covers the crawler\'s own refusals only', () => {
    for (const k of ['url', 'refused', 'local', 'aborted']) expect(isNeverSent(0, k), k).toBe(true);
    for (const k of [undefined, 'network', 'connect', 'timeout', 'dns', 'tls', 'protocol', 'incomplete']) expect(isNeverSent(0, k), String(k)).toBe(false);
    expect(isNeverSent(503, 'url')).toBe(false);
  });
});

describe('failures that are not the server\'s load', () => {
  it('a page whose headers pass the size cap holds the interval, and is retried after the rest', () => {
    const f = site(20);
    // Every fourth page sends oversized headers (a protocol error), as fast as the rest.
    const log = f.drain(0, (r): Outcome =>
      index(r.url) % 4 === 3 ? { row: r.row, url: r.url, status: 0, errorKind: 'protocol', latencyMs: 20 } : { row: r.row, url: r.url, status: 200, latencyMs: 20 },
    );
    expect(log.length).toBe(15 + 5 * 4);
    expect(log.slice(0, 20).map((d) => index(d.url))).toEqual(urls(20).map((_, i) => i));
    // As a throttle each of the 20 failures doubled the interval (to the 5-min ceiling).
    expect(log[log.length - 1]!.atMs).toBeLessThan(35_000);
    expect(f.hostSnapshots('a.example')[0]!.intervalMs).toBeLessThan(1000);
  });

  it('a URL the fetcher refused before sending (too long, a refused address) changes neither interval nor latency', () => {
    const f = site(6, { retryLimit: 0 });
    const kinds = ['url', 'refused', 'local', 'aborted'] as const;
    const seen: number[] = [];
    let now = 0;
    for (const k of [undefined, ...kinds, undefined]) {
      now = Math.max(now, f.nextEligible() ?? 0);
      const r = f.dispatch(now)!;
      f.report(k === undefined ? { row: r.row, url: r.url, status: 200, latencyMs: 40 } : { row: r.row, url: r.url, status: 0, errorKind: k, latencyMs: 0 }, now);
      seen.push(f.hostSnapshots('a.example')[0]!.intervalMs);
    }
    // 1 s narrowed by 50 ms by the first healthy answer, held through the four refusals,
    // narrowed again by the last one (as a throttle each doubled it: 1.9 s, 3.8 s, …).
    expect(seen).toEqual([950, 950, 950, 950, 950, 900]);
    expect(f.hostSnapshots('a.example')[0]!.latencyMs).toBe(40);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, Gone: 4 });
  });
});

describe('a site with broken pages', () => {
  it('every fifth page a 500: all pages fetched at the opening interval, each broken one retried after the rest', () => {
    const f = site(50);
    const log = f.drain(0, (r): Outcome => ({ row: r.row, url: r.url, status: index(r.url) % 5 === 4 ? 500 : 200, latencyMs: 20 }));
    // 40 good pages once, 10 broken ones 1 + retryLimit (3) times.
    expect(log.length).toBe(40 + 10 * 4);
    // No retry before the last fresh URL: the first 50 dispatches are the 50 URLs in priority order.
    expect(log.slice(0, 50).map((d) => index(d.url))).toEqual(urls(50).map((_, i) => i));
    // The host was never backed off: the interval only narrowed (from 1 s towards the 250 ms
    // floor), so 90 dispatches took under 90 s of the crawl's clock. With every 500 a throttle
    // (the rule before) the interval doubled per broken page and the same crawl took hours.
    expect(log[log.length - 1]!.atMs).toBeLessThan(90_000);
    expect(f.hostSnapshots('a.example')[0]!.intervalMs).toBeLessThan(1000);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 40, Gone: 10 });
  });

  it('a response cut off after its headers is a page fault too', () => {
    const f = site(20);
    const log = f.drain(0, (r): Outcome =>
      index(r.url) % 4 === 3 ? { row: r.row, url: r.url, status: 0, errorKind: 'incomplete', latencyMs: 20 } : { row: r.row, url: r.url, status: 200, latencyMs: 20 },
    );
    expect(log.length).toBe(15 + 5 * 4);
    expect(log[log.length - 1]!.atMs).toBeLessThan(35_000);
  });

  it('a server failing every page: held for two, backed off from the third in a row', () => {
    const f = site(10, { retryLimit: 0 });
    const intervals: number[] = [];
    for (let i = 0; i < 5; i++) {
      const now = Math.max(0, f.nextEligible() ?? 0);
      const r = f.dispatch(now)!;
      f.report({ row: r.row, url: r.url, status: 500, latencyMs: 20 }, now);
      intervals.push(f.hostSnapshots('a.example')[0]!.intervalMs);
    }
    expect(PAGE_FAULT_RUN).toBe(3);
    expect(intervals).toEqual([1000, 1000, 2000, 4000, 8000]);
  });

  it('a server failing every page: its retries back off too, and it ends Dead instead of being asked for hours', () => {
    const f = site(6, { politeness: { ceilingMs: 20_000 } });
    const log = f.drain(0, (r): Outcome => ({ row: r.row, url: r.url, status: 500, latencyMs: 20 }));
    // Held for two, then doubling: the retries after the run keep doubling up to the ceiling.
    const gaps = log.slice(1).map((d, i) => d.atMs - log[i]!.atMs);
    expect(gaps.slice(0, 4)).toEqual([1000, 1000, 2000, 4000]);
    expect(gaps.slice(6)).toContain(20_000);
    expect(f.hostSnapshots('a.example')[0]!.flags & HostFlags.Dead).toBe(HostFlags.Dead);
  });

  it('a healthy answer ends the run; retries of a failing URL never start one', () => {
    const f = site(12);
    // p/0 fails at every attempt, the others alternate 500 and 200 on their first attempt.
    const answer = (url: string): number => (index(url) === 0 || index(url) % 2 === 1 ? 500 : 200);
    f.drain(0, (r): Outcome => ({ row: r.row, url: r.url, status: answer(r.url), latencyMs: 20 }));
    expect(f.hostSnapshots('a.example')[0]!.intervalMs).toBeLessThanOrEqual(1000);
  });

  it('503, 429, 502, 504 and a connection failure still back off at once', () => {
    for (const o of [{ status: 503 }, { status: 429 }, { status: 502 }, { status: 504 }, { status: 0, errorKind: 'connect' as const }]) {
      const f = site(3, { retryLimit: 0 });
      const r = f.dispatch(0)!;
      f.report({ row: r.row, url: r.url, latencyMs: 20, ...o }, 0);
      expect(f.hostSnapshots('a.example')[0]!.intervalMs, JSON.stringify(o)).toBe(2000);
    }
  });

  it('a retried URL keeps the priority order among the retried ones', () => {
    const f = site(6);
    const seen = new Map<string, number>();
    const log = f.drain(0, (r): Outcome => {
      const n = (seen.get(r.url) ?? 0) + 1;
      seen.set(r.url, n);
      // p/1, p/3 and p/5 fail once, then answer.
      return { row: r.row, url: r.url, status: index(r.url) % 2 === 1 && n === 1 ? 503 : 200 };
    });
    expect(log.map((d) => index(d.url))).toEqual([0, 1, 2, 3, 4, 5, 1, 3, 5]);
  });
});
