/**
 * An Engine in cluster mode checkpoints its slots at the engine's `checkpointIntervalMs` when
 * one is given (`meguri crawl --checkpoint-every`), as a single process does; `cluster.checkpointMs`
 * still wins. Before, the engine's period was silently ignored with `--redis` and every slot kept
 * the node's 10-s default: a killed node's re-fetches could not be bounded from the command line.
 *
 * Real redis-server; an in-process Engine with a scripted fetcher that holds its one page until
 * the slots have checkpointed a few times.
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
    const engine = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      seeds: ['http://a.test/'],
      checkpointIntervalMs: 100,
      fetcher: {
        fetch: async (req: FetchRequest): Promise<Outcome> => {
          // Held until the slots have checkpointed three times each (2 slots), however long that takes.
          if (!req.url.endsWith('/robots.txt')) await until(() => checkpoints.length >= 8, 60_000, 'periodic slot checkpoints');
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
    // Consecutive checkpoints of a slot are a period apart: far below the 10-s default.
    const gaps: number[] = [];
    for (const slot of [0, 1]) {
      const at = checkpoints.filter((c) => c.slot === slot).map((c) => c.atMs);
      for (let i = 1; i < at.length; i++) gaps.push(at[i]! - at[i - 1]!);
    }
    expect(gaps.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...gaps)).toBeLessThan(5_000);
  }, 90_000);
});
