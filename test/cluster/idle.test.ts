/**
 * A node with nothing in flight waited for its next eligible fetch by blocking on its inboxes
 * (XREADGROUP … BLOCK ms) for the time left. The node's clock reads fractional milliseconds, and
 * Redis refuses a fractional BLOCK ("timeout is not an integer"): every such wait was a failed
 * call, counted in `redisErrors` and slept through, on a healthy Redis (11 in this test's 12
 * pages). Now the node blocks only in whole 50-ms waits when nothing is due sooner, and waits
 * for a fetch due sooner with a timer (Redis ends a BLOCK on its own tick: 30-ms blocks took
 * ~100 ms, so pages 30 ms apart came 100 ms apart once the BLOCK was whole).
 *
 * Real redis-server; an in-process node whose one host is fetched every ~30 ms.
 */
import { describe, expect, it } from 'vitest';
import { ClusterNode } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { nodeWorld } from './redis.js';

describe('a node idling between polite fetches', () => {
  const world = nodeWorld('meguri-idle-');

  it('waits on its inboxes without a single Redis error', async () => {
    const N = 12;
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        const i = Number(/\/p(\d+)$/.exec(req.url)![1]);
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: i + 1 < N ? [{ url: `http://one.idle.test/p${i + 1}` }] : [] });
      },
    };
    const node = new ClusterNode({
      redis: world.server.url,
      crawl: 'idle',
      store: world.store,
      settings: { slots: 1, grouping: 'host', politeness: { defaultIntervalMs: 30, floorMs: 30 } },
      heartbeatTtlMs: 2_000,
      pollMs: 100,
      fetcher,
    });
    await node.start();
    await node.seed(['http://one.idle.test/p0']);
    const summary = await node.run(); // a campaign: ends once the chain is fetched
    expect(summary.pages).toBe(N);
    expect(summary.redisErrors).toBe(0);
  }, 60_000);
});
