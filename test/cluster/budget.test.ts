/**
 * Crawl-wide `maxPages` / `maxRequests` in cluster mode (src/cluster/budget.ts): the limit is
 * recorded with the crawl and counted over every node in Redis — before, both were refused with
 * `cluster` ("per-process budgets"), so a cluster crawl could not be bounded at all.
 *
 * Real redis-server; in-process Engines in cluster mode with a scripted fetcher (a page fails
 * with 500 one time in five, so the page budget is seen to count OK pages only); the token
 * script itself against Redis with a node that dies holding tokens; the count carried in slot
 * checkpoints and added back when Redis lost its data.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BudgetKind, CrawlBudget, readBudgets, reclaimBudgets } from '../../src/cluster/budget.js';
import { ClusterKeys } from '../../src/cluster/keys.js';
import { clusterStatus, formatClusterStatus } from '../../src/cluster/status.js';
import { CheckpointStore, SLOT_FORMAT_MINOR } from '../../src/cluster/store.js';
import { Heartbeat } from '../../src/cluster/membership.js';
import { CrawlSettingsMismatchError } from '../../src/cluster/errors.js';
import { main } from '../../src/cli/main.js';
import { Engine } from '../../src/engine/index.js';
import { bufferIo } from '../cli/helpers.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { nodeWorld } from './redis.js';

const HOSTS = 8;
const PAGES = 25;

/**
 * A web of HOSTS hosts × PAGES pages: each links the next three on its host and one on the next
 * host; one page in five answers 404 (no backoff: a 5xx would slow the hosts), and another one in
 * five is a sitemap (200, its links followed, not a page for `maxPages`).
 */
function web(): { fetcher: { fetch: (req: FetchRequest) => Promise<Outcome> }; requests: string[] } {
  const requests: string[] = [];
  const fetcher = {
    fetch: (req: FetchRequest): Promise<Outcome> => {
      if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      requests.push(req.url);
      const m = /^http:\/\/h(\d+)\.test\/p\/(\d+)$/.exec(req.url);
      const h = Number(m?.[1] ?? 0);
      const p = Number(m?.[2] ?? 0);
      if ((h * 7 + p) % 5 === 3) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      const sitemap = (h * 7 + p) % 5 === 1 ? true : undefined;
      const links = [1, 2, 3].filter((d) => p + d < PAGES).map((d) => ({ url: `http://h${h}.test/p/${p + d}` }));
      links.push({ url: `http://h${(h + 1) % HOSTS}.test/p/${p}` });
      return new Promise((resolve) => setTimeout(() => resolve({ row: req.row, url: req.url, status: 200, links, sitemap }), 2));
    },
  };
  return { fetcher, requests };
}

const seeds = Array.from({ length: HOSTS }, (_, h) => `http://h${h}.test/p/0`);

describe('crawl-wide budgets in cluster mode', () => {
  const world = nodeWorld('meguri-budget-');
  const common = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], grouping: 'host' as const, scope: 'any' as const, concurrency: 4, politeness: { minDelayMs: 5, startDelayMs: 5, ipMinDelayMs: 0 } };
  // Hosts at 400 ms: a crawl takes seconds, so a node joins (or a limit changes) while another fetches.
  const slow = { politeness: { minDelayMs: 400, startDelayMs: 400, ipMinDelayMs: 0 } };
  const cluster = (crawl: string, nodeId: string) => ({ redis: world.server.url, crawl, store: world.store, slots: 4, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20, nodeId });

  /** The statuses of the pages `e` yields, a sitemap's as 'sitemap'. */
  async function drain(e: Engine): Promise<(Outcome['status'] | 'sitemap')[]> {
    const statuses: (number | 'sitemap')[] = [];
    const stopper = setTimeout(() => void e.stop(), 60_000);
    for await (const page of e.run()) statuses.push(page.sitemap ? 'sitemap' : page.status);
    clearTimeout(stopper);
    await e.close();
    return statuses;
  }

  it('maxPages counts OK pages over every node: two nodes stop together at exactly the limit; a node joining later fetches nothing', async () => {
    const { fetcher, requests } = web();
    const crawl = 'pages-budget';
    const a = new Engine({ ...common, ...slow, fetcher, seeds, maxPages: 60, cluster: cluster(crawl, 'A') });
    const opened = new Promise<void>((resolve) => a.once('open', () => resolve()));
    const ra = drain(a);
    await opened;
    // B names no limit: it takes the recorded one.
    const b = new Engine({ ...common, ...slow, fetcher, cluster: cluster(crawl, 'B') });
    const [sa, sb] = await Promise.all([ra, drain(b)]);
    const ok = [...sa, ...sb].filter((s) => s === 200 || s === 304).length;
    expect(ok).toBe(60);
    expect(sb.length, 'B fetched its share').toBeGreaterThan(0);
    // Failures and sitemaps were fetched and did not count.
    expect(requests.length).toBeGreaterThan(60);
    expect([...sa, ...sb].filter((s) => s === 404).length).toBeGreaterThan(0);
    expect([...sa, ...sb].filter((s) => s === 'sitemap').length).toBeGreaterThan(0);
    expect([...sa, ...sb].filter((s) => s === 404 || s === 'sitemap').length).toBe(requests.length - 60);
    expect([a.stopReason, b.stopReason]).toEqual(['maxPages', 'maxPages']);
    const r = world.server.client();
    const state = await readBudgets(r, new ClusterKeys(crawl), { maxPages: 60 });
    expect(state).toEqual([{ kind: 'pages', limit: 60, spent: 60, held: 0 }]);
    expect(formatClusterStatus((await clusterStatus(r, crawl))!)).toContain('  budget: 60 of 60 pages fetched OK (--max-pages): spent, the crawl stops\n');
    await r.quit();

    // The budget is the crawl's: a node joining now stops at once.
    const c = new Engine({ ...common, ...slow, fetcher, cluster: cluster(crawl, 'C') });
    expect(await drain(c)).toEqual([]);
    expect(c.stopReason).toBe('maxPages');
    // Another limit is refused naming both.
    const d = new Engine({ ...common, ...slow, fetcher, maxPages: 70, cluster: cluster(crawl, 'D') });
    await expect(drain(d)).rejects.toThrow(CrawlSettingsMismatchError);
  }, 120_000);

  it('maxPages counts soft-404s over every node: an app whose routes are all one shell stops at the limit, not at the end of its sitemaps', async () => {
    // Two hosts, each a sitemap of 60 routes answering the same body (contentFp 42): from the
    // fifth the engine reads that body as the not-found page. Before, those did not count, and
    // every listed route was fetched (122 requests for a limit of 20).
    const requests: string[] = [];
    const routes = 60;
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
        requests.push(req.url);
        const host = new URL(req.url).host;
        if (req.url.endsWith('/sitemap.xml')) {
          return Promise.resolve({ row: req.row, url: req.url, status: 200, sitemap: true, links: Array.from({ length: routes }, (_, i) => ({ url: `http://${host}/route/${i}` })) });
        }
        return new Promise((resolve) => setTimeout(() => resolve({ row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: 42n }), 2));
      },
    };
    const shells = ['http://app0.test/sitemap.xml', 'http://app1.test/sitemap.xml'];
    const crawl = 'soft-budget';
    const a = new Engine({ ...common, fetcher, seeds: shells, maxPages: 20, cluster: cluster(crawl, 'A') });
    const opened = new Promise<void>((resolve) => a.once('open', () => resolve()));
    const pages: { soft404: boolean; sitemap: boolean; probe: boolean }[] = [];
    const collect = async (e: Engine): Promise<void> => {
      const stopper = setTimeout(() => void e.stop(), 60_000);
      for await (const page of e.run()) pages.push({ soft404: page.soft404, sitemap: page.sitemap === true, probe: page.probe });
      clearTimeout(stopper);
      await e.close();
    };
    const ra = collect(a);
    await opened;
    const b = new Engine({ ...common, fetcher, cluster: cluster(crawl, 'B') });
    await Promise.all([ra, collect(b)]);
    // Past the fifth route of a host, one made-up route (the soft-404 probe: the shell again) is
    // asked first; it is no page of the budget.
    const routePages = pages.filter((p) => !p.sitemap && !p.probe);
    expect(routePages.filter((p) => p.soft404).length, 'the shell was read as the not-found page').toBeGreaterThan(0);
    expect(routePages).toHaveLength(20);
    const probes = requests.filter((u) => /\/route\/\d{10}$/.test(u));
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.length).toBeLessThanOrEqual(2);
    expect(requests.filter((u) => !u.endsWith('/sitemap.xml'))).toHaveLength(20 + probes.length);
    expect([a.stopReason, b.stopReason]).toEqual(['maxPages', 'maxPages']);
    const r = world.server.client();
    expect(await readBudgets(r, new ClusterKeys(crawl), { maxPages: 20 })).toEqual([{ kind: 'pages', limit: 20, spent: 20, held: 0 }]);
    await r.quit();
  }, 120_000);

  it("after Redis lost its data, the count resumes from the slots' checkpoints (it lived in Redis only)", async () => {
    const { fetcher } = web();
    const crawl = 'lost-budget';
    const a = new Engine({ ...common, ...slow, fetcher, seeds, maxPages: 60, cluster: cluster(crawl, 'A') });
    let okA = 0;
    const stopper = setTimeout(() => void a.stop(), 60_000);
    for await (const page of a.run()) {
      if (page.status === 200 && !page.sitemap) okA++;
      if (okA === 25) void a.stop(); // graceful: final checkpoints carry the counts
    }
    clearTimeout(stopper);
    await a.close();
    expect(okA).toBeGreaterThanOrEqual(25);
    const r = world.server.client();
    await r.flushall();
    await r.quit();
    const b = new Engine({ ...common, ...slow, fetcher, cluster: cluster(crawl, 'B') });
    const restored: string[] = [];
    b.on('storeRestore', (x: { kind: string }) => restored.push(x.kind));
    const okB = (await drain(b)).filter((st) => st === 200).length;
    expect(restored).toContain('slot');
    expect([okA + okB, b.stopReason]).toEqual([60, 'maxPages']);
  }, 120_000);

  it("a checkpoint's counts are read back as written, and checked (a damaged one is not added to a budget)", async () => {
    const st = new CheckpointStore(world.store, 'counted');
    const meta = { format: 'meguri-slot/1', minor: SLOT_FORMAT_MINOR, crawl: 'counted', slot: 0, epoch: 1, seq: 1, cursor: '0-0', applied: 0, digest: 0 } as const;
    expect((await st.read(await st.write({ ...meta, counted: { pages: 7, requests: 9 } }, new Uint8Array(0)))).meta.counted).toEqual({ pages: 7, requests: 9 });
    for (const [i, counted] of [{ pages: -1, requests: 2 }, { pages: 1 }, { pages: 1.5, requests: 2 }, 'many'].entries()) {
      const rel = await st.write({ ...meta, seq: 2 + i, counted: counted as unknown as { pages: number; requests: number } }, new Uint8Array(0));
      await expect(st.read(rel)).rejects.toThrow(/counted is not/);
    }
    // An older build's checkpoint has none: it counts 0.
    expect((await st.read(await st.write({ ...meta, minor: 2, seq: 9 }, new Uint8Array(0)))).meta.counted).toBeUndefined();
  });

  it('a running node takes a changed limit (meguri cluster limit) within a second', async () => {
    const { fetcher } = web();
    const crawl = 'changed-budget';
    const a = new Engine({ ...common, ...slow, fetcher, seeds, maxPages: 10, cluster: cluster(crawl, 'A') });
    let ok = 0;
    let raised: Promise<number> | undefined;
    const stopper = setTimeout(() => void a.stop(), 60_000);
    for await (const page of a.run()) {
      if (page.status === 200 && !page.sitemap) ok++;
      if (ok === 4 && raised === undefined) raised = main(['cluster', 'limit', '--redis', world.server.url, '--crawl', crawl, '--store', world.store, '--max-pages', '14'], bufferIo());
    }
    clearTimeout(stopper);
    await a.close();
    expect(await raised).toBe(0);
    expect([ok, a.stopReason]).toEqual([14, 'maxPages']);
  }, 60_000);

  it('maxRequests counts every request, failures included', async () => {
    const { fetcher, requests } = web();
    const a = new Engine({ ...common, fetcher, seeds, maxRequests: 23, cluster: cluster('requests-budget', 'A') });
    const statuses = await drain(a);
    expect([statuses.length, requests.length, a.stopReason]).toEqual([23, 23, 'maxRequests']);
    expect(statuses.filter((s) => s === 404).length, JSON.stringify(statuses)).toBeGreaterThan(0);
  }, 60_000);

  it('never starts more fetches than the limit, and Redis counts granted = spent + held (fast-check over three nodes)', async () => {
    const redis = world.server.client();
    let run = 0;
    const step = fc.record({ node: fc.integer({ min: 0, max: 2 }), op: fc.constantFrom('take', 'ok', 'fail', 'sync', 'release'), want: fc.integer({ min: 0, max: 6 }) });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 12 }), fc.array(step, { maxLength: 60 }), async (limit, steps) => {
        const keys = new ClusterKeys(`prop-${run++}`);
        for (const id of ['n0', 'n1', 'n2']) await new Heartbeat(redis, keys, id, 60_000, () => Date.now()).beat();
        const nodes = [0, 1, 2].map((i) => new CrawlBudget(redis, keys, `n${i}`, 'pages', limit));
        const out = [0, 0, 0];
        let started = 0;
        let ok = 0;
        let now = 0;
        for (const { node, op, want } of steps) {
          const b = nodes[node]!;
          now += 10;
          if (op === 'take') {
            if (b.take()) {
              started++;
              out[node]!++;
            }
          } else if (op === 'ok' || op === 'fail') {
            if (out[node]! > 0) {
              out[node]!--;
              b.complete(op === 'ok');
              // A failed fetch's token goes back to the pool: it may start another fetch.
              if (op === 'ok') ok++;
              else started--;
            }
          } else if (op === 'sync') await b.sync(want, now, 0);
          else await b.release();
          // The fetches that may still count never exceed the limit.
          expect(started).toBeLessThanOrEqual(limit);
        }
        for (const b of nodes) await b.release();
        const h = await redis.hgetall(keys.budget('pages'));
        const held = Object.entries(h).filter(([k]) => k.startsWith('h:')).reduce((t, [, v]) => t + Number(v), 0);
        expect(Number(h['spent'] ?? 0)).toBe(ok);
        expect(Number(h['granted'] ?? 0)).toBe(ok + held);
        expect(held).toBe(out.reduce((t, n) => t + n, 0));
        expect(Number(h['granted'] ?? 0)).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 60 },
    );
    await redis.quit();
  });

  it("a dead node's tokens go back to the crawl; its late spends still count", async () => {
    const redis = world.server.client();
    const keys = new ClusterKeys('dead-budget');
    const clock = (): number => Date.now();
    const beat = async (id: string): Promise<Heartbeat> => {
      const hb = new Heartbeat(redis, keys, id, 60_000, clock);
      expect(await hb.beat()).toBe(true);
      return hb;
    };
    await beat('A');
    await beat('B');
    const kind: BudgetKind = 'pages';
    const a = new CrawlBudget(redis, keys, 'A', kind, 12);
    const b = new CrawlBudget(redis, keys, 'B', kind, 12);
    await a.sync(10, 0, 1_000);
    await b.sync(10, 0, 1_000);
    expect([a.held, b.held]).toEqual([10, 2]);
    for (let i = 0; i < 3; i++) expect(a.take()).toBe(true);
    // A's heartbeat entry is gone (killed): the coordinator gives its 10 back.
    await redis.zrem(keys.nodes, 'A');
    expect(await reclaimBudgets(redis, keys)).toBe(10);
    // (B's last take fell short, so it waits its retry period before asking again.)
    await b.sync(10, 500, 1_000);
    expect(b.held).toBe(2);
    await b.sync(10, 1_000, 1_000);
    expect(b.held).toBe(10);
    // A, not live, takes nothing; the fetches it had out still complete and count.
    a.complete(true);
    a.complete(true);
    a.complete(false);
    await a.sync(10, 0, 1_000);
    expect(a.spent, 'spends are told at most every 100 ms').toBe(0);
    await a.sync(10, 1_000, 1_000);
    expect(a.spent).toBe(2);
    // The failed fetch's token went back to A's pool, though Redis took A's tokens: giving the
    // surplus back drops it here too, and a rejoin (forget) drops everything A held.
    expect(a.held).toBe(8);
    await a.sync(0, 1_100, 1_000);
    expect(a.held, 'tokens not wanted are kept 200 ms').toBe(8);
    await a.sync(0, 1_300, 1_000);
    expect([a.held, a.available]).toEqual([0, false]);
    a.forget();
    a.complete(false); // a fetch of a dropped slot ending after the rejoin returns nothing
    expect(a.available).toBe(false);
    const [granted, spent, hA, hB] = await redis.hmget(keys.budget(kind), 'granted', 'spent', 'h:A', 'h:B');
    // granted = spent + held: the late spends were granted anew (12 + 2 = 14 started in all).
    expect([Number(granted), Number(spent), hA, Number(hB)]).toEqual([12, 2, null, 10]);
    // B spends the rest of what it holds: the crawl's count reaches the limit.
    for (let i = 0; i < 10; i++) b.take();
    for (let i = 0; i < 10; i++) b.complete(true);
    await b.sync(0, 2_000, 1_000);
    expect([b.spent, b.reached()]).toEqual([12, true]);
    await redis.quit();
  });
});
