/**
 * An Engine in cluster mode checkpoints its slots at the engine's `checkpointIntervalMs` when
 * one is given (`meguri crawl --checkpoint-every`), as a single process does; `cluster.checkpointMs`
 * still wins. Before, the engine's period was silently ignored with `--redis` and every slot kept
 * the node's 10-s default: a killed node's re-fetches could not be bounded from the command line.
 *
 * Real redis-server; an in-process Engine with a scripted fetcher that holds its one page until
 * the slots have come to their checkpoint period a few times. An idle slot's periods are
 * skipped (its accepted checkpoint holds its state: test/cluster/idle-checkpoint.test.ts), so
 * they are counted, written or skipped, and timed from the start.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

describe('the slot checkpoint period of an Engine in cluster mode', () => {
  const world = nodeWorld('meguri-ckptperiod-');

  it("is the engine's checkpointIntervalMs when given", async () => {
    const checkpoints: { slot: number; atMs: number }[] = [];
    const periods = (): number => {
      const s = engine.clusterStats();
      return s === undefined ? 0 : s.checkpoints + s.checkpointsSkipped;
    };
    let heldMs = 0;
    const engine: Engine = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      seeds: ['http://a.test/'],
      checkpointIntervalMs: 100,
      fetcher: {
        fetch: async (req: FetchRequest): Promise<Outcome> => {
          // Held until the slots (2) have come to their period eight times in all, however long that takes.
          if (!req.url.endsWith('/robots.txt')) {
            const t0 = performance.now();
            const from = periods();
            await until(() => periods() >= from + 8, 60_000, 'periodic slot checkpoints');
            heldMs = performance.now() - t0;
          }
          return { row: req.row, url: req.url, status: req.url.endsWith('/robots.txt') ? 404 : 200 };
        },
      },
      cluster: { redis: world.server.url, crawl: 'ckpt-period', store: world.store, slots: 2, heartbeatTtlMs: 1_000, pollMs: 20 },
    });
    engine.on('checkpoint', (c) => checkpoints.push({ slot: c.slot!, atMs: c.atMs! }));
    for await (const _ of engine.run()) {
      // one page; a campaign ends drained
    }
    await engine.close();
    // Eight periods (written or skipped) passed while the page was held: four of each slot, far
    // sooner than the 10-s default's 40 s.
    expect(checkpoints.length).toBeGreaterThan(0);
    expect(heldMs).toBeGreaterThan(0);
    expect(heldMs).toBeLessThan(5_000);
  }, 90_000);
});
