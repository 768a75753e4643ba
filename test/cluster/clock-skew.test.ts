/**
 * A slot moved between nodes whose clocks differ: its host windows travel in the checkpoint as
 * readings on the last owner's clock, and the next owner moves them onto its own by the two
 * nodes' offsets to Redis (`clockShiftMs`, `shiftPartitionClock`). Node A's clock runs 5 s
 * behind; it fetches a host's first page and leaves; node B (an honest clock) takes the slot and
 * must still wait the host's 3 s interval from A's real fetch. Before the shift B read the window
 * as over 5 s early and fetched the second page at once.
 *
 * Real redis-server; in-process nodes; the fetch times are read on this process's wall clock.
 */
import { describe, expect, it } from 'vitest';
import { ClusterNode } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

const INTERVAL_MS = 3_000;
const SKEW_MS = 5_000;

describe('a slot moved between nodes with skewed clocks', () => {
  const world = nodeWorld('meguri-skew-');

  it("the next owner keeps the host's window on its own clock: the second page waits the interval from the first", async () => {
    const fetched: { url: string; node: string; at: number }[] = [];
    const fetcher = (node: string) => ({
      fetch: (req: FetchRequest): Promise<Outcome> => {
        fetched.push({ url: req.url, node, at: Date.now() });
        return Promise.resolve({ row: req.row, url: req.url, status: 200 });
      },
    });
    const common = {
      redis: world.server.url,
      crawl: 'skew',
      store: world.store,
      settings: { slots: 1, grouping: 'host' as const, politeness: { floorMs: INTERVAL_MS, defaultIntervalMs: INTERVAL_MS } },
      heartbeatTtlMs: 1_000,
      checkpointMs: 600_000, // the only checkpoint is A's leaving one
      pollMs: 20,
      concurrency: 4,
    };
    const a = new ClusterNode({ ...common, fetcher: fetcher('A'), nodeId: 'A', now: () => Date.now() - SKEW_MS });
    await a.start();
    expect(a.stats().clockOffsetMs).toBeGreaterThan(SKEW_MS - 100);
    expect(await a.seed(['http://h.skew.test/1', 'http://h.skew.test/2'])).toBe(2);
    const runA = a.run();
    await until(() => fetched.length === 1, 30_000, "A's first fetch");
    a.stop();
    await runA;
    expect(fetched).toHaveLength(1); // A left before the host's window let it fetch again

    const b = new ClusterNode({ ...common, fetcher: fetcher('B'), nodeId: 'B' });
    await b.start();
    await b.run(); // a campaign: ends once the slot is drained
    expect(fetched.map((f) => f.node)).toEqual(['A', 'B']);
    expect(fetched.map((f) => f.url).sort()).toEqual(['http://h.skew.test/1', 'http://h.skew.test/2']);
    // 50 ms: the wall clock against the nodes' clocks and the offsets' own bounds (≈ 1 ms here).
    expect(fetched[1]!.at - fetched[0]!.at).toBeGreaterThanOrEqual(INTERVAL_MS - 50);
    expect(b.stats().clockShifts).toBe(1);
  }, 60_000);
});
