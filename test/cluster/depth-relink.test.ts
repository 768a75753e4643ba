/**
 * The depth cap in a cluster crawl when a page's depth falls after its fetch: the page is fetched
 * again for its links in a round when the cap binds — at least as many URLs parked past it as the
 * round would fetch — counted over every slot (ClusterNode `shareDepthBinds`: Redis flag
 * `depth-binds`, each slot's counts in `relink-counts`), not only in the slot that parked it.
 *
 * Cap 3. s → l1 → l2 → p → q is the long way (p at 3, q parked at 4); s → w → p the short one,
 * found late because w answers slowly: p falls to 2 and q, at 3, is within the cap. p and q are on
 * hosts in different slots, and p's slot parks nothing itself. In the second case w links to q
 * too: q comes within the cap by that path, nothing stays parked, and a round would fetch p again
 * for nothing.
 *
 * Real redis-server; one in-process Engine in cluster mode owning both slots, a scripted fetcher.
 */
import { describe, expect, it } from 'vitest';
import { slotOf } from '../../src/cluster/index.js';
import { main } from '../../src/cli/main.js';
import { sumRelinkCounts } from '../../src/cluster/drained.js';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { bufferIo } from '../cli/helpers.js';
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

  /** Crawls LINKS (+ `extra`) over two slots, p and q in different ones; returns the fetches. */
  async function crawl(tag: string, extra: Record<string, string[]>): Promise<{ fetched: FetchRequest[]; stopReason: string | undefined; crawl: string }> {
    const links: Record<string, string[]> = { ...LINKS, ...extra };
    const crawl = [tag, `${tag}-1`, `${tag}-2`, `${tag}-3`, `${tag}-4`, `${tag}-5`].find((c) => slotOf(c, 'p.test', 2) !== slotOf(c, 'q.test', 2))!;
    expect(crawl).toBeDefined();
    const fetched: FetchRequest[] = [];
    let pDone = false;
    const fetcher = {
      fetch: async (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return { row: req.row, url: req.url, status: 404 };
        fetched.push(req);
        // The short way to p is found late: w answers once p's page (fetched the long way, its
        // link q parked) is through the crawl — not merely sent, which under load left p in
        // flight when its depth fell (its content then passes the links at the new depth).
        if (req.url === 'http://w.test/') {
          for (let i = 0; i < 1_500 && !pDone; i++) await new Promise((r) => setTimeout(r, 10));
          await new Promise((r) => setTimeout(r, 100));
        }
        return { row: req.row, url: req.url, status: 200, etag: '"v"', links: (links[req.url] ?? []).map((url) => ({ url })) };
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
    for await (const page of e.run()) if (page.url === 'http://p.test/') pDone = true;
    clearTimeout(stopper);
    await e.close();
    return { fetched, stopReason: e.stopReason, crawl };
  }

  it("a page whose depth falls in a slot that parked nothing is fetched again once another slot's cap binds, and its link is followed", async () => {
    const { fetched, stopReason } = await crawl('crelink', {});
    const urls = fetched.map((r) => r.url);
    expect(urls).toContain('http://q.test/');
    // p twice: first at 3, then again at 2 for its links, without validators.
    const ps = fetched.filter((r) => r.url === 'http://p.test/');
    expect(ps.map((r) => [r.depth, r.relink, r.etag])).toEqual([
      [3, undefined, undefined],
      [2, true, undefined],
    ]);
    expect(urls.filter((u) => u === 'http://q.test/')).toHaveLength(1);
    expect(stopReason).toBe('drained');
  }, 90_000);

  it('a page whose depth fell is not fetched again when the URL once parked came within the cap by another path', async () => {
    const { fetched, stopReason, crawl: name } = await crawl('crelink-none', { 'http://w.test/': ['http://p.test/', 'http://q.test/'] });
    // q was parked at 4 (its slot set the crawl's flag) and then reached at 2 through w: nothing
    // is parked at the end, so the round that would fetch p again (1 marked) never runs.
    expect(fetched.filter((r) => r.url === 'http://p.test/').map((r) => r.depth)).toEqual([3]);
    expect(fetched.filter((r) => r.url === 'http://q.test/').map((r) => r.depth)).toEqual([2]);
    expect(fetched).toHaveLength(6);
    expect(stopReason).toBe('drained');
    // meguri stats over the slots says why p waits, with the crawl's sums.
    const args = ['stats', '--redis', world.server.url, '--crawl', name, '--store', world.store];
    const io = bufferIo();
    expect(await main(args, io)).toBe(0);
    expect(io.out()).toMatch(/relink {6}1 fetched page reached by a shorter path since, to be fetched again for its links once at least as many URLs are parked past the depth cap \(now 0\)/);
    const js = bufferIo();
    expect(await main([...args, '--json'], js)).toBe(0);
    expect(JSON.parse(js.out()).total).toMatchObject({ relinkMarked: 1, trappedBy: { depth: 0 } });
  }, 90_000);
});

describe('sumRelinkCounts', () => {
  it("sums every slot's parked and marked counts, leaving out a field that does not parse", () => {
    expect(sumRelinkCounts({})).toEqual({ parked: 0, marked: 0 });
    expect(sumRelinkCounts({ 0: '3 1', 1: '0 7', 5: '12 0' })).toEqual({ parked: 15, marked: 8 });
    expect(sumRelinkCounts({ 0: '2 2', 1: 'x', 2: '-1 4', 3: '1.5 0', 4: '1 2 3', 5: '9999999999999999 0', 6: '' })).toEqual({ parked: 2, marked: 2 });
  });
});
