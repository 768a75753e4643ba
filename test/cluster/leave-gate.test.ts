/**
 * A node that leaves while a request waits at its IP gate: the wait must end. Before, the
 * gate retried its Redis calls with backoff for ever once the node had closed its connection,
 * so `meguri crawl --redis` stopped by Ctrl-C printed its summary and then never exited (seen
 * in one of three runs on a loopback site). One in-process node on a real redis-server; the
 * first request is held open past the node's leaving, so the second reaches the gate's Redis
 * call only after the connection closed.
 */
import { describe, expect, it } from 'vitest';
import { ClusterNode, crawlSalt, slotOf } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

describe('a node leaving with a request at its IP gate', () => {
  const world = nodeWorld('meguri-leave-gate-');

  it('ends the wait: no fetch is left in flight once the node has left', async () => {
    const crawl = 'leave-gate';
    const S = 2;
    // Two hosts on one IP in different slots: only the IP gate orders their starts.
    const names = Array.from({ length: 40 }, (_, i) => `h${i}.leave.test`);
    const h1 = names.find((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === 0)!;
    const h2 = names.find((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === 1)!;
    const IP = '10.9.8.6';
    let held: (() => void) | undefined;
    const seen: string[] = [];
    const fetcher = {
      // The first request is held open (its abort ignored, as a stuck socket would) until the
      // test answers it; the other host's request waits behind it at the gate.
      fetch: (req: FetchRequest): Promise<Outcome> => {
        seen.push(req.url);
        const ok: Outcome = { row: req.row, url: req.url, status: 200, ip: IP };
        if (held === undefined) return new Promise((resolve) => (held = () => resolve(ok)));
        return Promise.resolve(ok);
      },
    };
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: S, grouping: 'host' },
      nodeId: 'leaver',
      ipVerdictMs: 10, // every start asks Redis whether its IP is shared
      handoffDrainMs: 100,
      checkpointMs: 600_000,
      pollMs: 20,
      frontier: { resolver: () => IP },
      fetcher,
    });
    await node.start();
    expect(await node.seed([`http://${h1}/`, `http://${h2}/`])).toBe(2);
    const run = node.run();
    await until(() => held !== undefined && node.inFlightFetches() === 2, 30_000, 'one fetch held, the other at the gate');
    node.stop();
    await run; // left: final checkpoints written, Redis connection closed
    held!();
    // The waiting request now reaches the gate: it must give up rather than retry a closed connection.
    await until(() => node.inFlightFetches() === 0, 10_000, 'the fetch waiting at the gate to end');
    expect(seen).toHaveLength(1);
  }, 60_000);
});
