/**
 * A node that leaves while a request waits at its IP gate: the wait must end. Before, the
 * gate retried its Redis calls with backoff for ever once the node had closed its connection,
 * so `meguri crawl --redis` stopped by Ctrl-C printed its summary and then never exited (seen
 * in one of three runs on a loopback site). One in-process node on a real redis-server; the
 * first request is held open past the node's leaving, so the second reaches the gate's Redis
 * call only after the connection closed.
 */
import { describe, expect, it } from 'vitest';
import { ClusterNode } from '../../src/cluster/index.js';
import { until } from './child.js';
import { heldGatePair, nodeWorld } from './redis.js';

describe('a node leaving with a request at its IP gate', () => {
  const world = nodeWorld('meguri-leave-gate-');

  it('ends the wait: no fetch is left in flight once the node has left', async () => {
    const crawl = 'leave-gate';
    const IP = '10.9.8.6';
    const pair = heldGatePair(crawl, 'leave.test', IP);
    const [h1, h2] = pair.hosts;
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: 2, grouping: 'host' },
      nodeId: 'leaver',
      ipVerdictMs: 10, // every start asks Redis whether its IP is shared
      handoffDrainMs: 100,
      checkpointMs: 600_000,
      pollMs: 20,
      frontier: { resolver: () => IP },
      fetcher: pair.fetcher,
    });
    await node.start();
    expect(await node.seed([`http://${h1}/`, `http://${h2}/`])).toBe(2);
    const run = node.run();
    await until(() => pair.held() !== undefined && node.inFlightFetches() === 2, 30_000, 'one fetch held, the other at the gate');
    node.stop();
    await run; // left: final checkpoints written, Redis connection closed
    pair.answer();
    // The waiting request now reaches the gate: it must give up rather than retry a closed connection.
    await until(() => node.inFlightFetches() === 0, 10_000, 'the fetch waiting at the gate to end');
    expect(pair.seen).toHaveLength(1);
  }, 60_000);
});
