// A row's depth is the fewest links from a seed seen so far, and the depth cap does not cut a
// site by crawl order: a URL parked as Trapped only for its depth is admitted again when a
// shorter path reaches it (src/frontier/intake.ts `rediscover`). Found in a 3-node cluster
// crawl of 10,000 pages (depth cap 32), where 6–16 pages first reached through long chains
// stayed Trapped although the seed page's neighbours linked them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type FrontierOptions, type Outcome, type TrapSeam } from '../../src/index.js';

const HOUR = 3_600_000;

function byStatus(f: Frontier): Record<string, number> {
  return Object.fromEntries(Object.entries(f.stats(0).byStatus).filter(([, n]) => n > 0));
}

/** Dispatches everything due now and returns the requests (no reports). */
function takeAll(f: Frontier, nowMs: number): FetchRequest[] {
  const out: FetchRequest[] = [];
  for (let r = f.dispatch(nowMs); r !== undefined; r = f.dispatch(nowMs)) out.push(r);
  return out;
}

const at = (url: string, depth: number, cash = 1) => ({ url, host: new URL(url).hostname, depth, cash });

describe('depth: the shortest path seen so far', () => {
  it('a URL Trapped past the cap is admitted when a path within the cap reaches it, at that depth', () => {
    const f = new Frontier(1, 0, { depthCap: 2 });
    expect(f.discover(at('https://a.example/x', 5), 0)).toBe(false);
    expect(byStatus(f)).toEqual({ Trapped: 1 });
    // Shorter, still past the cap: stays parked.
    expect(f.discover(at('https://a.example/x', 3), 0)).toBe(false);
    expect(byStatus(f)).toEqual({ Trapped: 1 });
    // Within the cap: admitted (and a deeper rediscovery after it changes nothing).
    expect(f.discover(at('https://a.example/x', 2), HOUR)).toBe(true);
    expect(f.discover(at('https://a.example/x', 7), HOUR)).toBe(false);
    expect(byStatus(f)).toEqual({ Scheduled: 1 });
    const [req] = takeAll(f, HOUR);
    expect(req).toMatchObject({ url: 'https://a.example/x', depth: 2 });
    expect(f.len()).toBe(1);
  });

  it('admission again spends the host budget and meets it: a spent budget keeps the URL parked', () => {
    const f = new Frontier(1, 0, { depthCap: 2, urlBudget: 2 });
    f.discover(at('https://a.example/deep', 4), 0);
    f.discover(at('https://a.example/1', 1), 0);
    expect(f.discover(at('https://a.example/deep', 1), 0)).toBe(true); // the second of two
    f.discover(at('https://a.example/deeper', 4), 0);
    expect(f.discover(at('https://a.example/deeper', 1), 0)).toBe(false); // budget spent
    expect(byStatus(f)).toEqual({ Scheduled: 2, Trapped: 1 });
    const log = f.drain(0, (r): Outcome => ({ row: r.row, url: r.url, status: 200 }));
    expect(log.map((d) => d.url).sort()).toEqual(['https://a.example/1', 'https://a.example/deep']);
  });

  it('a URL Trapped by the budget or the trap patterns is not released by a shorter path', () => {
    const traps: TrapSeam = { observe: (url) => url.includes('/cal/'), passes: (url) => !url.endsWith('odd') };
    const f = new Frontier(1, 0, { depthCap: 3, urlBudget: 1, traps });
    f.discover(at('https://a.example/1', 1), 0); // spends a.example's budget
    f.discover(at('https://a.example/2', 2), 0); // Trapped by the budget
    expect(f.discover(at('https://a.example/2', 1), 0)).toBe(false);
    f.discover(at('https://b.example/cal/odd', 9), 0); // flags b.example, Trapped by depth
    expect(f.discover(at('https://b.example/cal/odd', 1), 0)).toBe(false); // fails the patterns
    f.discover(at('https://b.example/cal/even', 9), 0);
    expect(f.discover(at('https://b.example/cal/even', 1), 0)).toBe(true); // passes them
    expect(byStatus(f)).toEqual({ Scheduled: 2, Trapped: 2 });
  });

  it("a queued URL's depth drops with a shorter path, and its links inherit the lower depth", () => {
    const links: Record<string, string[]> = { 'https://a.example/mid': ['https://a.example/leaf'] };
    const f = new Frontier(1, 0, { depthCap: 2 });
    f.discover(at('https://a.example/mid', 2), 0); // its links would be depth 3: Trapped
    f.discover(at('https://a.example/mid', 1), 0);
    const log = f.drain(0, (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, links: (links[r.url] ?? []).map((url) => ({ url })) }));
    expect(log.map((d) => d.url)).toEqual(['https://a.example/mid', 'https://a.example/leaf']);
  });

  it('through link intake (report with links, the batch path): a long chain found first does not cut the page', () => {
    // Seed s links a (depth 1) and, through a chain s → c1 → c2, the same target t at depth 3
    // (each on its own host, so the test can fetch them in any order).
    // With cap 2, t is Trapped at 3 when c2 is fetched before a, and admitted at 2 when a is.
    const graph: Record<string, string[]> = {
      'https://s.example/': ['https://c.example/c1', 'https://a.example/a'],
      'https://c.example/c1': ['https://c.example/c2'],
      'https://c.example/c2': ['https://t.example/t'],
      'https://a.example/a': ['https://t.example/t'],
    };
    const f = new Frontier(1, 0, { depthCap: 2 });
    f.seed('https://s.example/', 's.example', 1, 0, 0);
    const fetch = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, links: (graph[r.url] ?? []).map((url) => ({ url })) });
    // Fetch the seed, then c1 and c2 ahead of a (the order a cluster's slots can give).
    const seedReq = takeAll(f, 0)[0]!;
    f.report(fetch(seedReq), 1);
    const queued = takeAll(f, 10 * HOUR);
    const a = queued.find((r) => r.url.endsWith('/a'))!;
    const c1 = queued.find((r) => r.url.endsWith('/c1'))!;
    f.report(fetch(c1), 10 * HOUR);
    const c2 = takeAll(f, 20 * HOUR)[0]!;
    expect(c2).toMatchObject({ url: 'https://c.example/c2', depth: 2 });
    f.report(fetch(c2), 20 * HOUR);
    expect(byStatus(f).Trapped).toBe(1);
    f.report(fetch(a), 20 * HOUR);
    expect(byStatus(f).Trapped).toBeUndefined();
    expect(takeAll(f, 30 * HOUR)).toMatchObject([{ url: 'https://t.example/t', depth: 2 }]);
  });
});

describe('depth cap over any crawl order (fast-check)', () => {
  /** A random link graph over `n` pages on 3 hosts, page 0 the seed. */
  const GRAPH = fc
    .integer({ min: 4, max: 24 })
    .chain((n) => fc.tuple(fc.constant(n), fc.array(fc.array(fc.integer({ min: 0, max: n - 1 }), { maxLength: 5 }), { minLength: n, maxLength: n })));
  const url = (i: number): string => `https://h${i % 3}.example/p${i}`;

  for (const [name, opts] of [
    ['no prioritizer', {}],
    ['OPIC prioritizer', { prioritizer: true }],
  ] as [string, Partial<FrontierOptions>][]) {
    it(`${name}: a page is fetched iff some fetched page linked it within the cap, at the least such depth`, () => {
      fc.assert(
        fc.property(GRAPH, fc.integer({ min: 1, max: 4 }), ([n, links], cap) => {
          const f = new Frontier(1, 0, { ...opts, depthCap: cap });
          f.seed(url(0), 'h0.example', 1, 0, 0);
          // What the test saw: each fetched page's depth, each link's depth at its discovery.
          const fetchedAt = new Map<string, number>();
          const best = new Map<string, number>([[url(0), 0]]);
          const log = f.drain(0, (r) => {
            fetchedAt.set(r.url, r.depth);
            const i = Number(r.url.slice(r.url.lastIndexOf('p') + 1));
            for (const j of links[i]!) best.set(url(j), Math.min(best.get(url(j)) ?? Infinity, r.depth + 1));
            return { row: r.row, url: r.url, status: 200, links: links[i]!.map((j) => ({ url: url(j) })) };
          });
          expect(new Set(log.map((d) => d.url)).size).toBe(log.length); // each page once
          const want = [...best].filter(([, d]) => d <= cap).map(([u]) => u).sort();
          expect([...fetchedAt.keys()].sort()).toEqual(want);
          // A page fetched before a shorter path turned up keeps the depth it was fetched at;
          // it is never deeper than the shortest path known when it was dispatched, so never
          // past the cap.
          for (const [u, d] of fetchedAt) expect(d).toBeLessThanOrEqual(cap), expect(d).toBeGreaterThanOrEqual(best.get(u)!);
          expect(n).toBeGreaterThan(0);
        }),
        { seed: 20261204, numRuns: 300 },
      );
    });
  }
});

describe('setAdmission: limits changed on a resume', () => {
  it('a wider depth cap queues the URLs the old one parked, after a checkpoint round trip', () => {
    const f = new Frontier(1, 0, { depthCap: 2 });
    for (let d = 0; d <= 5; d++) f.discover(at(`https://a.example/d${d}`, d), 0);
    expect(f.stats(0).trappedBy).toEqual({ depth: 3, budget: 0, pattern: 0 });
    // The checkpoint's hosts keep cap 2 whatever the options of the restoring frontier say.
    const g = Frontier.recover(f.checkpoint(), { depthCap: 4 });
    expect(g.stats(0).byStatus.Trapped).toBe(3);
    expect(g.setAdmission({ depthCap: 4 }, HOUR)).toBe(2);
    expect(g.stats(0).trappedBy).toEqual({ depth: 1, budget: 0, pattern: 0 });
    // A new host meets the options; the same call again changes nothing.
    expect(g.setAdmission({ depthCap: 4 }, HOUR)).toBe(0);
    expect(g.setAdmission({ depthCap: 0 }, HOUR)).toBe(1); // 0 = unlimited
    expect(g.drain(HOUR, (r): Outcome => ({ row: r.row, url: r.url, status: 200 })).length).toBe(6);
  });

  it('a narrower cap parks the queued first fetches past it at their turn, and a wider one releases them', () => {
    const f = new Frontier(1, 0, { depthCap: 5, urlBudget: 3 });
    for (const d of [1, 4, 5]) f.discover(at(`https://a.example/${d}`, d), 0);
    expect(f.setAdmission({ depthCap: 2 }, 0)).toBe(0);
    f.discover(at('https://a.example/3', 3), 0); // a new URL meets the new cap at once
    expect(byStatus(f)).toEqual({ Scheduled: 3, Trapped: 1 });
    const log = f.drain(0, (r): Outcome => ({ row: r.row, url: r.url, status: 200 }));
    expect(log.map((d) => d.url)).toEqual(['https://a.example/1']);
    expect(f.stats(0).trappedBy).toEqual({ depth: 3, budget: 0, pattern: 0 });
    // Parking refunded the two admissions: the budget of 3 admits them again.
    expect(f.setAdmission({ depthCap: 5 }, HOUR)).toBe(2);
    expect(f.drain(HOUR, (r): Outcome => ({ row: r.row, url: r.url, status: 200 })).map((d) => d.url).sort()).toEqual(['https://a.example/4', 'https://a.example/5']);
    expect(f.stats(0).trappedBy).toEqual({ depth: 0, budget: 1, pattern: 0 }); // /3: the budget is spent
  });

  it('a wider URL budget queues URLs up to it, in the order of their rows; patterns still hold', () => {
    const traps: TrapSeam = { observe: (url) => url.includes('/cal/'), passes: (url) => !url.endsWith('odd') };
    const f = new Frontier(1, 0, { urlBudget: 2, traps });
    for (let i = 0; i < 6; i++) f.discover(at(`https://a.example/${i}`, 1), 0);
    f.discover(at('https://b.example/cal/odd', 1), 0); // flags b.example; fails the patterns
    f.discover(at('https://b.example/cal/even', 1), 0);
    expect(f.stats(0).trappedBy).toEqual({ depth: 0, budget: 4, pattern: 1 });
    expect(f.setAdmission({ urlBudget: 4 }, 0)).toBe(2);
    expect(f.stats(0).trappedBy).toEqual({ depth: 0, budget: 2, pattern: 1 });
    expect(f.setAdmission({ urlBudget: 0 }, 0)).toBe(2);
    expect(f.stats(0).trappedBy).toEqual({ depth: 0, budget: 0, pattern: 1 });
  });

  it('refuses a limit that is not an integer >= 0, naming it', () => {
    const f = new Frontier(1, 0, {});
    expect(() => f.setAdmission({ depthCap: -1 }, 0)).toThrow(/depthCap/);
    expect(() => f.setAdmission({ urlBudget: 1.5 }, 0)).toThrow(/urlBudget/);
    expect(() => f.setAdmission({ depthCap: Number.NaN }, 0)).toThrow(/depthCap/);
  });
});

describe('a narrowed depth cap with the disk tier', () => {
  it('parks spilled first fetches past the cap as they come back, fetching none of them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-depth-spill-'));
    try {
      const f = new Frontier(0, 0, { depthCap: 9, memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 });
      // 40 hosts: 30 URLs each at depth 6, and one at depth 1.
      const batch = [];
      for (let h = 0; h < 40; h++) {
        batch.push(at(`https://h${h}.example/shallow`, 1));
        for (let i = 0; i < 30; i++) batch.push(at(`https://h${h}.example/deep/${i}-${'x'.repeat(200)}`, 6));
      }
      for (const d of batch) f.discover(d, 0);
      expect(f.diskTier()!.spilledUrls).toBeGreaterThan(500);
      expect(f.setAdmission({ depthCap: 3 }, 0)).toBe(0);
      const log = f.drain(0, (r): Outcome => ({ row: r.row, url: r.url, status: 200 }));
      expect(log.map((d) => d.url).every((u) => u.endsWith('/shallow'))).toBe(true);
      expect(log).toHaveLength(40);
      expect(f.diskTier()!.spilledUrls).toBe(0);
      expect(f.stats(0).trappedBy.depth).toBe(1200);
      f.free();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
