/**
 * An error in a node's loop that retrying cannot mend ends its run with that error: a slot
 * checkpoint whose partition is damaged (flipped bytes; its checksum refuses it) and that has no
 * previous checkpoint to fall back to (it is the slot's first; fallback.test.ts has the other
 * case) makes `run()` reject with `CorruptPartitionError` naming the damage. Before, the loop counted it as
 * a Redis error and retried the slot open every turn, dispatching nothing and saying nothing
 * (this test then timed out).
 *
 * Real redis-server; in-process nodes; a real checkpoint store in a temp directory.
 */
import { describe, expect, it } from 'vitest';
import { ClusterKeys, ClusterNode, readSlots } from '../../src/cluster/index.js';
import { CorruptPartitionError } from '../../src/errors/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { damageCheckpoint, nodeWorld } from './redis.js';

describe('a node loop error that retrying cannot mend', () => {
  const world = nodeWorld('meguri-fatal-');

  it('a damaged slot checkpoint ends the run with CorruptPartitionError instead of a silent retry loop', async () => {
    const fetcher = { fetch: (req: FetchRequest): Promise<Outcome> => Promise.resolve({ row: req.row, url: req.url, status: 200 }) };
    const common = { redis: world.server.url, crawl: 'fatal', store: world.store, settings: { slots: 1, grouping: 'host' as const }, heartbeatTtlMs: 1_000, checkpointMs: 600_000, pollMs: 20, fetcher };
    const a = new ClusterNode({ ...common, nodeId: 'A', campaign: false });
    await a.start();
    const runA = a.run();
    await until(() => a.stats().slots.length === 1, 30_000, 'A owns the slot');
    a.stop();
    await runA; // leaving: the slot's final checkpoint is written and accepted
    const r = world.server.client();
    const [rec] = await readSlots(r, new ClusterKeys('fatal'), 1);
    r.disconnect();
    expect(rec!.ckpt).not.toBe('');
    damageCheckpoint(world.store, 'fatal', rec!.ckpt);

    // Not a campaign: the leaving node marked the slot idle, and a campaign would call the crawl
    // drained before opening it. Stopped after 20 s if the error never ends it (before the fix).
    const b = new ClusterNode({ ...common, nodeId: 'B', campaign: false });
    await b.start();
    const stopper = setTimeout(() => b.stop(), 20_000);
    const err = await b.run().catch((e: unknown) => e);
    clearTimeout(stopper);
    expect(err).toBeInstanceOf(CorruptPartitionError);
    expect(b.stats().slots).toEqual([]); // it never opened the slot
  }, 60_000);
});
