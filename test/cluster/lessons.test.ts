/**
 * Lessons in a cluster (docs/DESIGN.md, "Lessons in a cluster"): each node learns from its own
 * pages, and a row a lesson refused is never lost to it — a lesson lifted on a node queues the
 * refused rows of the slots it runs (`ClusterNode.reconsider`), and a slot opened on a node asks
 * again of its Refused rows (`ClusterNodeOptions.opened`), whoever refused them. Shown with the
 * noindex lesson, whose evidence a scripted site gives exactly (the mechanism is the lessons'
 * shared `#requeueRefused` and the engine's resume rule).
 *
 * Real redis-server; in-process Engines with a scripted fetcher.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

/**
 * A front page linking `tools` tool pages; a tool page says noindex and nofollow while fewer
 * than `quiet` tool pages were fetched, and is a page to index from then on (`onContent` is
 * called as the first such is fetched).
 */
function site(tools: number, quiet = Infinity, onContent?: () => void): { fetcher: { fetch: (req: FetchRequest) => Promise<Outcome> }; fetched: string[] } {
  const fetched: string[] = [];
  let toolsFetched = 0;
  const fetcher = {
    fetch: (req: FetchRequest): Promise<Outcome> => {
      if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      fetched.push(req.url);
      if (req.url === 'http://w.test/') {
        const links = Array.from({ length: tools }, (_, i) => ({ url: `http://w.test/edit?title=A${i}` }));
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links, contentFp: 1n, simhash: 1n });
      }
      const n = BigInt(fetched.length + 10);
      const hush = toolsFetched++ < quiet;
      if (toolsFetched === quiet + 1) onContent?.();
      return Promise.resolve({ row: req.row, url: req.url, status: 200, noindex: hush, nofollow: hush, contentFp: n, simhash: n });
    },
  };
  return { fetcher, fetched };
}

const toolUrls = (n: number): string[] => Array.from({ length: n }, (_, i) => `http://w.test/edit?title=A${i}`).sort();

describe('lessons in a cluster', () => {
  const world = nodeWorld('meguri-clessons-');
  const common = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], grouping: 'host' as const, scope: 'any' as const, politeness: { minDelayMs: 20, startDelayMs: 20, ipMinDelayMs: 0 } };
  // A node's final checkpoints must be accepted within its shutdown's bound (one TTL): 5 s, so a
  // loaded machine does not make the next node open an older one.
  const cluster = (crawl: string, nodeId: string) => ({ redis: world.server.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 5_000, checkpointMs: 200, pollMs: 20, nodeId });
  const drain = async (e: Engine): Promise<void> => {
    const stopper = setTimeout(() => void e.stop(), 60_000);
    for await (const _ of e.run()) {
      // pages
    }
    clearTimeout(stopper);
    await e.close();
  };

  it('a node learns a shape from its own pages and refuses URLs of it, as one process does', async () => {
    const s = site(12);
    const node = new Engine({ ...common, fetcher: s.fetcher, seeds: ['http://w.test/'], cluster: cluster('learn', 'A') });
    await drain(node);
    // 8 teach; of the 4 left, the 1st, 2nd and 4th refusals are checks, the 3rd is refused.
    expect(s.fetched.length).toBe(1 + 11);
    expect(node.summary().noindexShapes).toEqual(['http://w.test/edit?title=*']);
    expect(node.summary().counts.noindexSkipped).toBe(1);
  }, 90_000);

  it('a check that finds content lifts the lesson, and the node fetches every URL it refused', async () => {
    // 8 teach, the checks at refusals 1, 2 and 4 are quiet (3 is refused), refusals 5–7 are
    // refused, and the check at refusal 8 finds content: 4 refused rows in the node's slot.
    let refusedAtLift: number | undefined;
    const s = site(24, 11, () => (refusedAtLift = node.urlsByStatus()['Refused']));
    const node = new Engine({ ...common, fetcher: s.fetcher, seeds: ['http://w.test/'], cluster: cluster('lift', 'A') });
    await drain(node);
    // The lesson was learned on the node and refused rows of its slot before the check.
    expect(refusedAtLift).toBe(4);
    expect([...new Set(s.fetched)].sort()).toEqual([...toolUrls(24), 'http://w.test/'].sort());
    expect(s.fetched.length).toBe(1 + 24);
    expect(node.summary().noindexShapes).toEqual([]);
    expect(node.summary().counts.noindexSkipped).toBe(0);
  }, 90_000);

  it("a URL one node's lesson refused is fetched by the next node to open its slot", async () => {
    // Continuous mode (recrawl): a campaign ends for good once drained, and a node joining a
    // drained crawl leaves at once; here A stops with its slots checkpointed and B takes them.
    const a = site(12);
    const first = new Engine({ ...common, recrawl: true, fetcher: a.fetcher, seeds: ['http://w.test/'], cluster: cluster('moved', 'A') });
    const runA = drain(first);
    await until(() => a.fetched.length === 1 + 11 && first.urlsByStatus()['Refused'] === 1, 30_000, 'the lesson learned and a URL refused');
    first.stop();
    await runA;
    expect(first.summary().noindexShapes).toEqual(['http://w.test/edit?title=*']);
    const refused = toolUrls(12).filter((u) => !a.fetched.includes(u));
    expect(refused).toHaveLength(1);

    // Node B holds no lesson: its slots open from A's final checkpoints, and the refused row is
    // queued and fetched there (one URL of a shape teaches nothing). Before, it stayed refused.
    const b = site(12);
    const second = new Engine({ ...common, recrawl: true, fetcher: b.fetcher, cluster: cluster('moved', 'B') });
    const runB = drain(second);
    try {
      await until(() => b.fetched.length > 0, 20_000, 'node B fetching the refused URL');
      await until(() => second.urlsByStatus()['Refused'] === 0 && second.urlsByStatus()['Crawled'] === 1 + 12, 20_000, 'every URL crawled');
    } finally {
      second.stop();
      await runB;
    }
    expect(b.fetched).toEqual(refused);
    expect(second.summary().noindexShapes).toEqual([]);
  }, 90_000);
});
