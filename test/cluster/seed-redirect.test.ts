/**
 * A seed redirected out of the scope in a cluster crawl: `http://a.test/` → `http://www.a.test/`
 * under `scope: 'host'`. A single process makes the target a seed (test/cli/seed-redirect.test.ts);
 * a cluster node did not (its scope seeds are the crawl's, in Redis), so the crawl fetched the
 * redirect and nothing else. Now the target is sent as a seed — recorded among the scope seeds,
 * then routed — and a node re-reads the scope seeds before it applies seeds from its inbox, so the
 * node owning the target's slot (here another node than the one that fetched the redirect's slot
 * may be) follows the target's links.
 *
 * Real redis-server; two in-process Engines in cluster mode (continuous, so neither leaves before
 * the seed is added), a scripted fetcher.
 */
import { describe, expect, it } from 'vitest';
import { slotOf } from '../../src/cluster/index.js';
import { Engine, type EngineOptions } from '../../src/engine/index.js';
import type { Fetcher } from '../../src/fetch/http.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

describe('a seed redirected out of the scope in a cluster crawl', () => {
  const world = nodeWorld('meguri-credir-');

  /** A campaign on one node in cluster mode (2 slots): each page's depth. */
  async function oneNode(crawl: string, fetcher: Fetcher, extra: Partial<EngineOptions>): Promise<Map<string, number>> {
    const e = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      fetcher,
      politeness: { minDelayMs: 5, startDelayMs: 5, ipMinDelayMs: 0 },
      cluster: { redis: world.server.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20 },
      ...extra,
    });
    const depths = new Map<string, number>();
    for await (const page of e.run()) depths.set(page.url, page.depth);
    await e.close();
    return depths;
  }

  it("its target becomes the crawl's seed, and the target's owner follows its links", async () => {
    // A crawl name whose two slots put the seed's host and the target's apart.
    const crawl = ['credir', 'credir-1', 'credir-2', 'credir-3', 'credir-4'].find((c) => slotOf(c, 'a.test', 2) !== slotOf(c, 'www.a.test', 2))!;
    expect(crawl).toBeDefined();
    const fetched: string[] = [];
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
        fetched.push(req.url);
        if (req.url === 'http://a.test/') return Promise.resolve({ row: req.row, url: req.url, status: 301, location: 'http://www.a.test/' });
        const links = req.url === 'http://www.a.test/' ? ['http://www.a.test/x', 'http://www.a.test/y', 'http://other.test/'].map((url) => ({ url })) : [];
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links });
      },
    };
    const common = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], fetcher, grouping: 'host' as const, scope: 'host' as const, recrawl: true, politeness: { minDelayMs: 5, startDelayMs: 5, ipMinDelayMs: 0 } };
    const cluster = (nodeId: string) => ({ redis: world.server.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20, nodeId });
    const a = new Engine({ ...common, cluster: cluster('A') });
    const b = new Engine({ ...common, cluster: cluster('B') });
    const run = async (e: Engine): Promise<void> => {
      for await (const _ of e.run()) {
        // pages
      }
      await e.close();
    };
    const opened = new Promise<void>((resolve) => a.once('open', () => resolve()));
    const ra = run(a);
    await opened;
    const rb = run(b);
    try {
      await until(() => a.clusterStats()?.slots.length === 1 && b.clusterStats()?.slots.length === 1, 30_000, 'one slot each');
      expect(a.add(['http://a.test/'])).toEqual({ added: 1, refused: [] });
      await until(() => fetched.includes('http://www.a.test/x') && fetched.includes('http://www.a.test/y'), 30_000, "the target's links fetched");
    } finally {
      void a.stop();
      void b.stop();
      await Promise.all([ra, rb]);
    }
    expect(fetched).toContain('http://www.a.test/');
    expect(fetched).not.toContain('http://other.test/');
  }, 90_000);

  it("a page's refresh target keeps the page's depth only within its host group: hop counts are each node's own", async () => {
    const fetched: string[] = [];
    const pages: Record<string, { links?: string[]; refresh?: string }> = {
      'http://a.test/': { refresh: 'http://b.test/home' },
      'http://b.test/home': { links: ['http://b.test/x'] },
      'http://c.test/': { refresh: 'http://c.test/en/' },
      'http://c.test/en/': { links: ['http://c.test/en/x'] },
    };
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
        fetched.push(req.url);
        const p = pages[req.url] ?? {};
        const links = [...(p.links ?? []).map((url) => ({ url })), ...(p.refresh === undefined ? [] : [{ url: p.refresh, refresh: true }])];
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links });
      },
    };
    const depths = await oneNode('crefresh', fetcher, { grouping: 'host', scope: 'any', maxDepth: 1, seeds: ['http://a.test/', 'http://c.test/'] });
    // Within c.test: the target at the page's depth, its link within maxDepth 1. Across to b.test:
    // an ordinary link (depth 1), its own link past the cap.
    expect([depths.get('http://c.test/en/'), depths.get('http://c.test/en/x')]).toEqual([0, 1]);
    expect(depths.get('http://b.test/home')).toBe(1);
    expect(fetched).not.toContain('http://b.test/x');
  }, 90_000);

  it("a seed's meta refresh to another domain: its target becomes the crawl's seed, as a seed's redirect target does", async () => {
    const fetched: string[] = [];
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
        fetched.push(req.url);
        const links = req.url === 'http://old.test/' ? [{ url: 'http://new.test/home', refresh: true }] : req.url === 'http://new.test/home' ? [{ url: 'http://new.test/x' }, { url: 'http://other.test/' }] : [];
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links });
      },
    };
    const depths = await oneNode('crefresh-seed', fetcher, { seeds: ['http://old.test/'] });
    expect(Object.fromEntries(depths)).toEqual({ 'http://old.test/': 0, 'http://new.test/home': 0, 'http://new.test/x': 1 });
    expect(fetched).not.toContain('http://other.test/');
  }, 90_000);
});
