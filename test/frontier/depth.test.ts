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
import { type Discovery, type FetchRequest, Frontier, type FrontierOptions, type Outcome, type TrapSeam } from '../../src/index.js';

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
    it(`${name}: exactly the pages within the cap of the seed are fetched, each last at its fewest links, unless a relink round was not worth its fetches`, () => {
      fc.assert(
        fc.property(GRAPH, fc.integer({ min: 1, max: 4 }), ([n, links], cap) => {
          const f = new Frontier(1, 0, { ...opts, depthCap: cap });
          f.seed(url(0), 'h0.example', 1, 0, 0);
          // Breadth-first distances over the whole graph: what the cap promises.
          const dist = new Map<number, number>([[0, 0]]);
          for (const q = [0]; q.length > 0; ) {
            const i = q.shift()!;
            for (const j of links[i]!) if (!dist.has(j)) dist.set(j, dist.get(i)! + 1), q.push(j);
          }
          const lastDepth = new Map<string, number>();
          let again = 0;
          f.drain(0, (r) => {
            if (lastDepth.has(r.url)) {
              again++;
              // A page fetched again is fetched for its links, at a shorter depth, with no validators.
              expect(r.relink).toBe(true);
              expect(r.etag).toBeUndefined();
              expect(r.depth).toBeLessThan(lastDepth.get(r.url)!);
            } else expect(r.relink).toBeUndefined();
            lastDepth.set(r.url, r.depth);
            const i = Number(r.url.slice(r.url.lastIndexOf('p') + 1));
            return { row: r.row, url: r.url, status: 200, etag: `"e${i}"`, links: links[i]!.map((j) => ({ url: url(j) })) };
          });
          const want = [...dist].filter(([, d]) => d <= cap).map(([i, d]) => [url(i), d] as const).sort();
          const wantUrls = want.map(([u]) => u);
          // Never past the cap, never shorter than the fewest links.
          for (const [u, got] of lastDepth) expect(wantUrls).toContain(u), expect(got).toBeGreaterThanOrEqual(dist.get(Number(u.slice(u.lastIndexOf('p') + 1)))!), expect(got).toBeLessThanOrEqual(cap);
          const st = f.stats(0);
          if (st.relinkMarked === 0 || st.trappedBy.depth === 0) {
            // Every page within the cap fetched; with URLs still parked, each last at its fewest links.
            expect([...lastDepth.keys()].sort()).toEqual(wantUrls);
            if (st.trappedBy.depth > 0) expect([...lastDepth].sort()).toEqual(want);
          } else {
            // The only way to end otherwise: a relink round skipped as not worth its fetches.
            expect(st.relinkMarked).toBeGreaterThan(st.trappedBy.depth);
          }
          // Only a page whose depth fell to below the cap is fetched again (its links can matter).
          expect(again).toBeLessThanOrEqual(want.filter(([, d]) => d < cap).length * cap);
          expect(n).toBeGreaterThan(0);
        }),
        { seed: 20261204, numRuns: 300 },
      );
    });
  }
});

describe('depth cap over any crawl order, with redirects (fast-check)', () => {
  // Page i either links pages or redirects to one (a redirect's target takes its depth: a
  // 0-weight edge). Under the state machine a 301 is a redirect, never a crawl.
  const WEB = fc
    .integer({ min: 4, max: 20 })
    .chain((n) =>
      fc.tuple(
        fc.constant(n),
        fc.array(fc.oneof(fc.record({ links: fc.array(fc.integer({ min: 0, max: n - 1 }), { maxLength: 4 }) }), fc.record({ to: fc.integer({ min: 0, max: n - 1 }) })), { minLength: n, maxLength: n }),
      ),
    );
  const url = (i: number): string => `https://h${i % 3}.example/p${i}`;

  it('exactly the pages within the cap (redirect hops free) are fetched, unless a relink round was not worth its fetches', () => {
    fc.assert(
      fc.property(WEB, fc.integer({ min: 1, max: 4 }), fc.boolean(), ([n, pages], cap, prioritizer) => {
        const f = new Frontier(1, 0, { depthCap: cap, stateMachine: true, prioritizer });
        f.seed(url(0), 'h0.example', 1, 0, 0);
        // 0-1 breadth-first distances: a link costs 1, a redirect 0.
        const dist = new Map<number, number>([[0, 0]]);
        for (const dq = [0]; dq.length > 0; ) {
          const i = dq.shift()!;
          const d = dist.get(i)!;
          const p = pages[i]!;
          const next: [number, number][] = 'to' in p ? [[p.to, d]] : p.links.map((j) => [j, d + 1]);
          for (const [j, dj] of next) {
            if (dist.has(j) && dist.get(j)! <= dj) continue;
            dist.set(j, dj);
            if (dj === d) dq.unshift(j);
            else dq.push(j);
          }
        }
        const fetched = new Set<number>();
        f.drain(0, (r): Outcome => {
          const i = Number(r.url.slice(r.url.lastIndexOf('p') + 1));
          fetched.add(i);
          const p = pages[i]!;
          return 'to' in p ? { row: r.row, url: r.url, status: 301, location: url(p.to) } : { row: r.row, url: r.url, status: 200, links: p.links.map((j) => ({ url: url(j) })) };
        });
        const want = [...dist].filter(([, d]) => d <= cap).map(([i]) => i).sort((a, b) => a - b);
        const got = [...fetched].sort((a, b) => a - b);
        const st = f.stats(0);
        if (st.relinkMarked === 0 || st.trappedBy.depth === 0) expect(got).toEqual(want);
        else expect([st.relinkMarked > st.trappedBy.depth, got.every((i) => want.includes(i))]).toEqual([true, true]);
        expect(n).toBeGreaterThan(0);
      }),
      { seed: 20261205, numRuns: 5000 },
    );
  });
});

describe('requisites take their page\'s depth', () => {
  it('a page at the cap is fetched with its images and stylesheet; its links stay parked', () => {
    const f = new Frontier(1, 0, { depthCap: 1 });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    const log: [string, number][] = [];
    const page = (r: FetchRequest): Outcome => (log.push([r.url, r.depth]), {
      row: r.row,
      url: r.url,
      status: 200,
      links: r.url === 'https://a.example/'
        ? [{ url: 'https://a.example/p' }]
        : r.url === 'https://a.example/p'
          ? [{ url: 'https://cdn.example/p.png', requisite: true }, { url: 'https://a.example/p.css', requisite: true }, { url: 'https://a.example/q' }]
          : [],
    });
    f.drain(0, page);
    expect(log.sort()).toEqual([
      ['https://a.example/', 0],
      ['https://a.example/p', 1],
      ['https://a.example/p.css', 1],
      ['https://cdn.example/p.png', 1],
    ]);
    expect(f.stats(0).trappedBy.depth).toBe(1); // /q, a link at 2
  });
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

describe('relink: a fetched page whose depth falls is fetched again for its links', () => {
  // s → a → b → leaf is the long way to leaf's parent b; s → b the short one, found after b was
  // fetched at depth 2 (its link to leaf parked at 3 under cap 2). Each page on its own host,
  // so the test takes them in any order.
  const graph: Record<string, string[]> = {
    'https://s.example/': ['https://a.example/a'],
    'https://a.example/a': ['https://b.example/b'],
    'https://b.example/b': ['https://l.example/leaf'],
    'https://s.example/late': ['https://b.example/b'],
  };
  const answer = (r: FetchRequest, status = 200): Outcome => ({ row: r.row, url: r.url, status, etag: '"v1"', links: status === 304 ? undefined : (graph[r.url] ?? []).map((url) => ({ url })) });

  /** s, a and b fetched in the long order; returns the frontier with b Crawled at depth 2. */
  function fetchedLongWay(opts: Partial<FrontierOptions> = {}): Frontier {
    const f = new Frontier(1, 0, { depthCap: 2, ...opts });
    f.seed('https://s.example/', 's.example', 1, 0, 0);
    for (let t = 0; t < 3; t++) for (const r of takeAll(f, t * HOUR)) f.report(answer(r), t * HOUR);
    expect(f.stats(0).trappedBy.depth).toBe(1); // leaf, at 3
    return f;
  }

  it('a Crawled page goes again at the idle point, sent without validators, and its links then pass within the cap', () => {
    const f = fetchedLongWay({ scheduleIndex: true });
    expect(f.discover(at('https://b.example/b', 1), 3 * HOUR)).toBe(false); // marked, not queued yet
    const [again] = takeAll(f, 3 * HOUR);
    expect(again).toMatchObject({ url: 'https://b.example/b', depth: 1, relink: true });
    expect(again!.etag).toBeUndefined();
    f.report(answer(again!), 3 * HOUR);
    expect(f.stats(0).trappedBy.depth).toBe(0);
    const [leaf] = takeAll(f, 4 * HOUR);
    expect(leaf).toMatchObject({ url: 'https://l.example/leaf', depth: 2 });
    expect(leaf!.relink).toBeUndefined();
    f.report(answer(leaf!), 4 * HOUR);
    // Done: a recrawl of b later is an ordinary one again (validators, no relink).
    expect(takeAll(f, 5 * HOUR)).toEqual([]);
    const later = takeAll(f, 400 * HOUR).find((r) => r.url === 'https://b.example/b');
    expect(later).toMatchObject({ depth: 1, etag: '"v1"' });
    expect(later!.relink).toBeUndefined();
  });

  it('not fetched again when the new depth is at the cap, with no cap, or before the cap parks a URL', () => {
    // A depth that falls to the cap (narrowed after the fetch): its links would still be past it.
    const h = new Frontier(1, 0, { depthCap: 3 });
    h.discover(at('https://b.example/solo', 3), 0);
    for (const r of takeAll(h, 0)) h.report(answer(r), 0);
    h.setAdmission({ depthCap: 2 }, 0);
    const free = new Frontier(1, 0, {});
    free.discover(at('https://b.example/solo', 5), 0);
    for (const r of takeAll(free, 0)) free.report(answer(r), 0);
    // All Crawled; a path no shorter, or none that can matter, sends nothing.
    const g = new Frontier(1, 0, { depthCap: 3 });
    g.discover(at('https://b.example/solo', 3), 0);
    for (const r of takeAll(g, 0)) g.report(answer(r), 0);
    for (const [fr, d] of [[h, 2], [free, 1], [g, 3]] as const) {
      expect(fr.discover(at('https://b.example/solo', d), HOUR)).toBe(false);
      expect(takeAll(fr, HOUR)).toEqual([]);
    }
    // 2 < 3, but the cap has parked nothing: marked, not fetched, until it does.
    expect(g.discover(at('https://b.example/solo', 2), HOUR)).toBe(false);
    expect(takeAll(g, HOUR)).toEqual([]);
    expect(g.discover(at('https://c.example/deep', 4), HOUR)).toBe(false); // parked past 3
    expect(takeAll(g, HOUR)).toMatchObject([{ url: 'https://b.example/solo', depth: 2, relink: true }]);
  });

  it('nothing goes again when the parked URLs all came within the cap by other paths before the idle point', () => {
    const links: Record<string, string[]> = {
      'https://s.example/': ['https://a.example/a'],
      'https://a.example/a': ['https://p.example/p'],
      'https://p.example/p': ['https://q.example/q'],
      'https://s.example/2': ['https://p.example/p', 'https://q.example/q'],
    };
    const f = new Frontier(1, 0, { depthCap: 2 });
    f.seed('https://s.example/', 's.example', 1, 0, 0);
    const fetched: string[] = [];
    const go = (t: number): void => {
      for (const r of takeAll(f, t)) fetched.push(r.url), f.report({ row: r.row, url: r.url, status: 200, links: (links[r.url] ?? []).map((url) => ({ url })) }, t);
    };
    for (let t = 0; t < 3; t++) go(t * HOUR);
    expect(f.stats(0).trappedBy.depth).toBe(1); // q, at 3
    f.seed('https://s.example/2', 's.example', 1, 3, 3); // p falls to 1 (marked), q to 1 (admitted)
    for (let t = 3; t < 8; t++) go(t * HOUR);
    expect(fetched.sort()).toEqual(['https://a.example/a', 'https://p.example/p', 'https://q.example/q', 'https://s.example/', 'https://s.example/2']);
  });

  it('a relink round waits while fewer URLs are parked than it would fetch again (the parked bound what it can release)', () => {
    const f = new Frontier(1, 0, { depthCap: 3 });
    for (const x of ['a', 'b']) f.discover(at(`https://${x}.example/x`, 3), 0);
    for (const r of takeAll(f, 0)) f.report(answer(r), 0);
    f.discover(at('https://c.example/deep1', 4), HOUR); // one parked
    for (const x of ['a', 'b']) f.discover(at(`https://${x}.example/x`, 1), HOUR); // two marked
    expect(f.stats(0)).toMatchObject({ relinkMarked: 2, trappedBy: { depth: 1 } });
    expect(takeAll(f, HOUR)).toEqual([]);
    f.discover(at('https://c.example/deep2', 4), HOUR); // two parked: worth the round
    expect(takeAll(f, HOUR).map((r) => [r.url, r.relink]).sort()).toEqual([
      ['https://a.example/x', true],
      ['https://b.example/x', true],
    ]);
  });

  it('a page whose depth falls twice before the idle point goes again once, at the shorter depth', () => {
    const f = fetchedLongWay(); // b fetched at 2, leaf parked at 3
    f.discover(at('https://q.example/busy', 1), 3 * HOUR); // queued: not idle yet
    const [busy] = takeAll(f, 3 * HOUR);
    expect(busy).toMatchObject({ url: 'https://q.example/busy' });
    f.discover(at('https://b.example/b', 1), 3 * HOUR);
    f.discover(at('https://b.example/b', 0), 3 * HOUR);
    expect(takeAll(f, 3 * HOUR)).toEqual([]); // busy in flight
    f.report(answer(busy!), 3 * HOUR);
    expect(takeAll(f, 4 * HOUR)).toMatchObject([{ url: 'https://b.example/b', depth: 0, relink: true }]);
  });

  it('bindDepthCap: told the cap binds elsewhere, the marked pages go (once); depthCapBinds says so', () => {
    const f = new Frontier(1, 0, { depthCap: 3 });
    f.discover(at('https://a.example/x', 3), 0);
    for (const r of takeAll(f, 0)) f.report(answer(r), 0);
    f.discover(at('https://a.example/x', 1), HOUR); // marked
    expect(f.depthCapBinds).toBe(false);
    expect(takeAll(f, HOUR)).toEqual([]);
    expect(() => f.bindDepthCap(Number.NaN)).toThrow(/bindDepthCap nowMs/);
    expect(f.bindDepthCap(HOUR)).toBe(true);
    expect(f.bindDepthCap(HOUR)).toBe(false);
    expect(f.depthCapBinds).toBe(false); // nothing parked here
    expect(takeAll(f, HOUR)).toMatchObject([{ url: 'https://a.example/x', depth: 1, relink: true }]);
  });

  it("bindDepthCap with a cluster crawl's counts: a round only when the parked URLs summed over the slots are at least the marked pages", () => {
    const f = new Frontier(1, 0, { depthCap: 3 });
    for (const x of ['a', 'b']) f.discover(at(`https://${x}.example/x`, 3), 0);
    for (const r of takeAll(f, 0)) f.report(answer(r), 0);
    for (const x of ['a', 'b']) f.discover(at(`https://${x}.example/x`, 1), HOUR); // two marked
    f.discover(at('https://c.example/deep', 4), HOUR); // one parked here
    expect(f.relinkCounts()).toEqual({ parked: 1, marked: 2 });
    expect(takeAll(f, HOUR)).toEqual([]); // 1 < 2 here
    // The crawl's sums say the same: still no round, at the idle point or a dispatch.
    expect(f.bindDepthCap(HOUR, { parked: 1, marked: 2 })).toBe(true);
    expect(f.bindDepthCap(HOUR, { parked: 1, marked: 2 })).toBe(false);
    expect(f.relinkWhenIdle(HOUR)).toBe(0);
    expect(takeAll(f, HOUR)).toEqual([]);
    // Another slot parked two more: 3 >= 2, the round runs once.
    expect(f.bindDepthCap(HOUR, { parked: 3, marked: 2 })).toBe(true);
    expect(f.relinkWhenIdle(HOUR)).toBe(2);
    expect(f.relinkWhenIdle(HOUR)).toBe(0);
    expect(f.relinkCounts()).toEqual({ parked: 1, marked: 0 });
    expect(takeAll(f, HOUR).map((r) => [r.url, r.relink]).sort()).toEqual([
      ['https://a.example/x', true],
      ['https://b.example/x', true],
    ]);
    for (const bad of [{ parked: -1, marked: 0 }, { parked: 1.5, marked: 0 }, { parked: 0, marked: Number.NaN }]) {
      expect(() => f.bindDepthCap(HOUR, bad)).toThrow(/bindDepthCap crawl\.(parked|marked) must be a non-negative integer/);
    }
  });

  it('a cap narrowed on a resume binds when it parks a queued URL at its turn, and the marked pages go then', () => {
    const f = new Frontier(1, 0, { depthCap: 5 });
    f.discover(at('https://a.example/x', 3), 0);
    for (const r of takeAll(f, 0)) f.report(answer(r), 0);
    f.discover(at('https://y.example/y', 4), HOUR); // queued, not fetched
    expect(f.discover(at('https://a.example/x', 1), HOUR)).toBe(false); // marked: nothing parked yet
    f.setAdmission({ depthCap: 2 }, HOUR);
    // The call that parks y ends without a URL (the banks take x's host at the next one).
    expect([...takeAll(f, HOUR), ...takeAll(f, HOUR)]).toMatchObject([{ url: 'https://a.example/x', depth: 1, relink: true }]);
    expect(f.stats(0).trappedBy.depth).toBe(1); // y
  });

  it('in flight when the depth falls: a 304 of the conditional fetch sends it again, unconditionally', () => {
    const f = new Frontier(1, 0, { depthCap: 2, scheduleIndex: true });
    f.seed('https://s.example/', 's.example', 1, 0, 0);
    for (let t = 0; t < 3; t++) for (const r of takeAll(f, t * HOUR)) f.report(answer(r), t * HOUR);
    // b's recrawl (a week on) goes out with its validators; the shorter path arrives meanwhile.
    const recrawls = takeAll(f, 200 * HOUR);
    const recrawl = recrawls.find((r) => r.url === 'https://b.example/b')!;
    expect(recrawl).toMatchObject({ etag: '"v1"', depth: 2 });
    expect(f.discover(at('https://b.example/b', 1), 200 * HOUR)).toBe(false); // in flight: keeps its turn
    for (const r of recrawls) if (r !== recrawl) f.report(answer(r, 304), 200 * HOUR);
    f.report(answer(recrawl, 304), 200 * HOUR);
    const [again] = takeAll(f, 201 * HOUR);
    expect(again).toMatchObject({ url: 'https://b.example/b', depth: 1, relink: true });
    expect(again!.etag).toBeUndefined();
    f.report(answer(again!), 201 * HOUR);
    expect(takeAll(f, 202 * HOUR).map((r) => r.url)).toEqual(['https://l.example/leaf']);
  });

  it('a marked page answered 304 when its depth is no longer below the cap is left unmarked (nothing counts it as waiting)', () => {
    const f = new Frontier(1, 0, { depthCap: 2, scheduleIndex: true });
    f.seed('https://s.example/', 's.example', 1, 0, 0);
    for (let t = 0; t < 3; t++) for (const r of takeAll(f, t * HOUR)) f.report(answer(r), t * HOUR);
    const recrawls = takeAll(f, 200 * HOUR);
    const recrawl = recrawls.find((r) => r.url === 'https://b.example/b')!;
    f.discover(at('https://b.example/b', 1), 200 * HOUR); // in flight: marked
    f.setAdmission({ depthCap: 1 }, 200 * HOUR); // 1 is no longer below the cap
    for (const r of recrawls) f.report(answer(r, 304), 200 * HOUR);
    expect(f.relinkCounts().marked).toBe(0);
    expect(f.stats(0).relinkMarked).toBe(0);
    f.bindDepthCap(200 * HOUR, { parked: 5, marked: 0 });
    expect(f.relinkWhenIdle(201 * HOUR)).toBe(0);
  });

  it('in flight when the depth falls: its content passes the links at the new depth, and it is not sent again', () => {
    const f = fetchedLongWay({ scheduleIndex: true });
    const recrawl = takeAll(f, 200 * HOUR).find((r) => r.url === 'https://b.example/b')!;
    f.discover(at('https://b.example/b', 1), 200 * HOUR);
    f.report(answer(recrawl, 200), 200 * HOUR);
    expect(takeAll(f, 201 * HOUR).map((r) => r.url)).toEqual(['https://l.example/leaf']);
    // The week's recrawl of b stays where the report put it: not early, not twice.
    expect(takeAll(f, 300 * HOUR).filter((r) => r.url === 'https://b.example/b')).toEqual([]);
  });

  it('with the schedule index: the recrawl that was waiting does not come early or twice', () => {
    const f = fetchedLongWay({ scheduleIndex: true }); // b fetched in hour 2: due again in hour 170
    f.discover(at('https://b.example/b', 1), 3 * HOUR);
    const [again] = takeAll(f, 3 * HOUR);
    f.report(answer(again!), 3 * HOUR); // due again in hour 171
    expect(takeAll(f, 4 * HOUR).map((r) => r.url)).toEqual(['https://l.example/leaf']);
    expect(takeAll(f, 170.5 * HOUR).map((r) => r.url)).not.toContain('https://b.example/b');
    expect(takeAll(f, 171.5 * HOUR).map((r) => r.url)).toContain('https://b.example/b');
  });

  it('a pending relink survives a checkpoint', () => {
    const f = fetchedLongWay({ scheduleIndex: true });
    f.discover(at('https://b.example/b', 1), 3 * HOUR);
    const g = Frontier.recover(f.checkpoint(), { depthCap: 2, scheduleIndex: true });
    const [again] = takeAll(g, 3 * HOUR);
    expect(again).toMatchObject({ url: 'https://b.example/b', depth: 1, relink: true });
    expect(again!.etag).toBeUndefined();
    g.report(answer(again!), 3 * HOUR);
    expect(takeAll(g, 4 * HOUR).map((r) => r.url)).toEqual(['https://l.example/leaf']);
  });

  describe('through a redirect', () => {
    // s → a → b; b redirects to b/, which links leaf. b is first met at depth 2 (cap 2), so b/
    // takes 2 and leaf is parked at 3; then s2 → b finds b at depth 1.
    const graph: Record<string, string[]> = {
      'https://s.example/': ['https://a.example/a'],
      'https://a.example/a': ['https://b.example/b'],
      'https://b.example/b/': ['https://l.example/leaf'],
      'https://s.example/2': ['https://b.example/b'],
    };
    const fetch = (r: FetchRequest): Outcome =>
      r.url === 'https://b.example/b'
        ? { row: r.row, url: r.url, status: 301, location: 'https://b.example/b/' }
        : { row: r.row, url: r.url, status: 200, links: (graph[r.url] ?? []).map((url) => ({ url })) };

    it('a target here takes the depth at once, and a fetched one goes again for its links', () => {
      const f = new Frontier(1, 0, { depthCap: 2, stateMachine: true });
      f.seed('https://s.example/', 's.example', 1, 0, 0);
      for (let t = 0; t < 4; t++) for (const r of takeAll(f, t * HOUR)) f.report(fetch(r), t * HOUR);
      expect(f.stats(0).trappedBy.depth).toBe(1); // leaf, at 3
      f.discover(at('https://b.example/b', 1), 5 * HOUR); // the redirect itself is not fetched again
      const again = takeAll(f, 5 * HOUR);
      expect(again).toMatchObject([{ url: 'https://b.example/b/', depth: 1, relink: true }]);
      f.report(fetch(again[0]!), 5 * HOUR);
      expect(takeAll(f, 6 * HOUR)).toMatchObject([{ url: 'https://l.example/leaf', depth: 2 }]);
    });

    it('a target routed elsewhere: the redirect is fetched again and sends it on at the new depth', () => {
      const sent: [string, number][] = [];
      // b.example's URLs belong to another partition (a cluster slot): routed away.
      const linkRouter = (ds: readonly Discovery[]): Discovery[] => ds.filter((d) => (d.host === 'b.example' && d.url.endsWith('/') ? (sent.push([d.url, d.depth]), false) : true));
      const f = new Frontier(1, 0, { depthCap: 2, stateMachine: true, linkRouter });
      f.seed('https://s.example/', 's.example', 1, 0, 0);
      for (let t = 0; t < 4; t++) for (const r of takeAll(f, t * HOUR)) f.report(fetch(r), t * HOUR);
      expect(sent).toEqual([['https://b.example/b/', 2]]);
      f.discover(at('https://c.example/deep', 9), 5 * HOUR); // the cap binds here
      f.discover(at('https://b.example/b', 1), 5 * HOUR);
      const again = takeAll(f, 5 * HOUR);
      expect(again).toMatchObject([{ url: 'https://b.example/b', depth: 1, relink: true }]);
      f.report(fetch(again[0]!), 5 * HOUR);
      expect(sent).toEqual([['https://b.example/b/', 2], ['https://b.example/b/', 1]]);
      expect(takeAll(f, 400 * HOUR).map((r) => r.url)).not.toContain('https://b.example/b'); // once
    });
  });
});
