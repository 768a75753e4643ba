/**
 * The `Refused` status: a URL a crawl setting refuses is kept (so rediscovery is a no-op and a
 * later `reconsider` can queue it), never dispatched, and not counted against the host budget;
 * `reconsider` queues exactly the Refused and Disallowed URLs its predicate takes; a robots
 * seam's `refuses` turns a queued URL into Refused at dispatch without a fetch.
 */
import { describe, expect, it } from 'vitest';
import { Frontier, type RobotsSeam, UrlStatus } from '../../src/index.js';

const H = 0;
const url = (p: string): string => `http://a.test${p}`;

describe('Refused URLs', () => {
  it('are kept unqueued, rediscovery is a no-op, reconsider queues those the predicate takes', () => {
    const f = new Frontier(0, H, { stateMachine: true });
    f.seed(url('/'), 'a.test', 1, H, H);
    expect(f.refuse({ url: url('/x'), host: 'a.test', depth: 1, cash: 0 }, 0)).toBe(true);
    expect(f.refuse({ url: url('/x'), host: 'a.test', depth: 1, cash: 0 }, 0)).toBe(false);
    expect(f.refuse({ url: url('/'), host: 'a.test', depth: 1, cash: 0 }, 0)).toBe(false); // known: left alone
    expect(f.discover({ url: url('/x'), host: 'a.test', depth: 1, cash: 1 }, 0)).toBe(false);
    expect(f.stats(H).byStatus).toMatchObject({ Scheduled: 1, Refused: 1 });
    expect(f.hostSnapshots('a.test')[0]!.admitted).toBe(1);
    const drained = f.drain(0, (req) => ({ row: req.row, url: req.url, status: 200 }));
    expect(drained.map((d) => d.url)).toEqual([url('/')]);
    expect(f.reconsider((u) => u.endsWith('/nope'))).toBe(0);
    expect(f.reconsider((u, s) => s === UrlStatus.Refused && u === url('/x'))).toBe(1);
    expect(f.drain(10_000, (req) => ({ row: req.row, url: req.url, status: 200 })).map((d) => d.url)).toEqual([url('/x')]);
    expect(f.stats(H).byStatus).toMatchObject({ Crawled: 2, Refused: 0 });
  });

  it('a robots seam that refuses a URL at dispatch makes it Refused, with no fetch; isAllowed false stays Disallowed', () => {
    const refused = new Set([url('/r')]);
    const robots: RobotsSeam = { ready: () => true, isAllowed: (u) => u !== url('/d'), crawlDelayMs: () => undefined, refuses: (u) => refused.has(u) };
    const f = new Frontier(0, H, { stateMachine: true, robots });
    for (const p of ['/', '/r', '/d']) f.seed(url(p), 'a.test', 1, H, H);
    const fetched = f.drain(0, (req) => ({ row: req.row, url: req.url, status: 200 })).map((d) => d.url);
    expect(fetched).toEqual([url('/')]);
    expect(f.stats(H).byStatus).toMatchObject({ Crawled: 1, Refused: 1, Disallowed: 1 });
    refused.clear();
    expect(f.reconsider(() => true)).toBe(2);
    expect(f.drain(10_000, (req) => ({ row: req.row, url: req.url, status: 200 })).map((d) => d.url)).toEqual([url('/r')]);
    expect(f.stats(H).byStatus).toMatchObject({ Crawled: 2, Refused: 0, Disallowed: 1 });
  });

  it('tells the seam whether the row was fetched before: a first fetch no, its recrawl yes', () => {
    const HOUR = 3_600_000;
    const asked: [string, number, boolean][] = [];
    const robots: RobotsSeam = { ready: () => true, isAllowed: () => true, crawlDelayMs: () => undefined, refuses: (u, depth, fetched) => (asked.push([u, depth, fetched]), false) };
    const f = new Frontier(1, 100, { scheduleIndex: true, freshness: (_r, now) => now + 2, robots });
    f.seed(url('/'), 'a.test', 1, 100, 100, 0);
    const ok = (req: { row: number; url: string }) => ({ row: req.row, url: req.url, status: 200 });
    expect(f.drain(100 * HOUR, ok).length).toBe(1);
    expect(f.drain(100 * HOUR, ok, { untilMs: 102 * HOUR }).length).toBe(1);
    expect(asked).toEqual([
      [url('/'), 0, false],
      [url('/'), 0, true],
    ]);
  });

  it('tells the seam the retry of a recrawl is one (its page was fetched before)', () => {
    const HOUR = 3_600_000;
    const asked: boolean[] = [];
    const robots: RobotsSeam = { ready: () => true, isAllowed: () => true, crawlDelayMs: () => undefined, refuses: (_u, _d, fetched) => (asked.push(fetched), false) };
    const f = new Frontier(1, 100, { stateMachine: true, scheduleIndex: true, freshness: (_r, now) => now + 2, robots });
    f.seed(url('/'), 'a.test', 1, 100, 100, 0);
    let calls = 0;
    // The first fetch returns the page, its recrawl a 503, and the recrawl's retry the page.
    const answer = (req: { row: number; url: string }) => ({ row: req.row, url: req.url, status: ++calls === 2 ? 503 : 200 });
    expect(f.drain(100 * HOUR, answer).length).toBe(1);
    expect(f.drain(100 * HOUR, answer, { untilMs: 110 * HOUR }).length).toBeGreaterThanOrEqual(3);
    expect(asked.slice(0, 3)).toEqual([false, true, true]);
  });

  it('tells the seam a retry of a URL never fetched is no recrawl', () => {
    const asked: boolean[] = [];
    const robots: RobotsSeam = { ready: () => true, isAllowed: () => true, crawlDelayMs: () => undefined, refuses: (_u, _d, fetched) => (asked.push(fetched), false) };
    const f = new Frontier(0, H, { stateMachine: true, robots });
    f.seed(url('/x'), 'a.test', 1, H, H);
    let calls = 0;
    const answer = (req: { row: number; url: string }) => ({ row: req.row, url: req.url, status: ++calls === 1 ? 503 : 200 });
    expect(f.drain(0, answer).length).toBe(2);
    expect(f.stats(H).byStatus).toMatchObject({ Crawled: 1 });
    expect(asked).toEqual([false, false]);
  });
});
