/**
 * The depth cap in a cluster crawl when a page's depth falls after its fetch: the page is fetched
 * again for its links once the cap binds (it has parked a URL), and a slot's page may lead into
 * another slot's parked URL — so the cap binds crawl-wide (ClusterNode `shareDepthBinds`, Redis
 * key `depth-binds`), not only in the slot that parked it.
 *
 * Cap 3. s → l1 → l2 → p → q is the long way (p at 3, q parked at 4); s → w → p the short one,
 * found late because w answers slowly: p falls to 2 and q, at 3, is within the cap. p and q are on
 * hosts in different slots, and p's slot parks nothing itself.
 *
 * Real redis-server; one in-process Engine in cluster mode owning both slots, a scripted fetcher.
 */
import { describe, expect, it } from 'vitest';
import { slotOf } from '../../src/cluster/index.js';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { nodeWorld } from './redis.js';

const LINKS: Record<string, string[]> = {
  'http://s.test/': ['http://l.test/1', 'http://w.test/'],
  'http://l.test/1': ['http://l.test/2'],
  'http://l.test/2': ['http://p.test/'],
  'http://w.test/': ['http://p.test/'],
  'http://p.test/': ['http://q.test/'],
};

describe('the depth cap over slots', () => {
  const world = nodeWorld('meguri-crelink-');

  it("a page whose depth falls in a slot that parked nothing is fetched again once another slot's cap binds, and its link is followed", async () => {
    const crawl = ['crelink', 'crelink-1', 'crelink-2', 'crelink-3', 'crelink-4', 'crelink-5'].find((c) => slotOf(c, 'p.test', 2) !== slotOf(c, 'q.test', 2))!;
    expect(crawl).toBeDefined();
    const fetched: FetchRequest[] = [];
    const fetcher = {
      fetch: async (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return { row: req.row, url: req.url, status: 404 };
        fetched.push(req);
        // The short way to p is found late: w answers once p has been fetched the long way.
        if (req.url === 'http://w.test/') {
          for (let i = 0; i < 600 && !fetched.some((r) => r.url === 'http://p.test/'); i++) await new Promise((r) => setTimeout(r, 10));
          await new Promise((r) => setTimeout(r, 300));
        }
        return { row: req.row, url: req.url, status: 200, etag: '"v"', links: (LINKS[req.url] ?? []).map((url) => ({ url })) };
      },
    };
    const e = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      // An address per host: a fetch in flight to one must not hold the others back.
      resolve: async (h: string) => [`127.0.0.${2 + ['s.test', 'l.test', 'w.test', 'p.test', 'q.test'].indexOf(h)}`],
      fetcher,
      grouping: 'host',
      scope: 'any',
      seeds: ['http://s.test/'],
      maxDepth: 3,
      politeness: { minDelayMs: 5, startDelayMs: 5, ipMinDelayMs: 0 },
      cluster: { redis: world.server.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20, nodeId: 'A' },
    });
    const stopper = setTimeout(() => void e.stop(), 60_000);
    for await (const _ of e.run()) {
      // pages
    }
    clearTimeout(stopper);
    await e.close();
    const urls = fetched.map((r) => r.url);
    expect(urls).toContain('http://q.test/');
    // p twice: first at 3, then again at 2 for its links, without validators.
    const ps = fetched.filter((r) => r.url === 'http://p.test/');
    expect(ps.map((r) => [r.depth, r.relink, r.etag])).toEqual([
      [3, undefined, undefined],
      [2, true, undefined],
    ]);
    expect(urls.filter((u) => u === 'http://q.test/')).toHaveLength(1);
    expect(e.stopReason).toBe('drained');
  }, 90_000);
});
