/**
 * A node stalled between its poll and its inbox read (a GC pause, SIGSTOP, a starved CPU) past
 * its heartbeat's TTL, woken after another node took its slot over: before, its read went out
 * as one more reader of the slot's consumer group and took the entries the new owner — which
 * reset the group's position to its checkpoint's cursor — would read next; they stayed pending
 * under the stalled node, the new owner's cursor moved past them, and the links were lost. Now
 * a node whose last renewal is older than TTL/2 reads no inbox (src/cluster/node.ts
 * `readInboxes`).
 *
 * Real redis-server; two in-process nodes; the stall is held at the node's inbox read (its
 * `pump`, wrapped for the test) so that it lands exactly there.
 */
import { describe, expect, it } from 'vitest';
import { ClusterKeys, ClusterNode } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

describe('a node woken after its slot was taken over', () => {
  const world = nodeWorld('meguri-zombie-read-');

  it('reads nothing from the inbox: the new owner applies every link sent to the slot', async () => {
    const crawl = 'zombie-read';
    const TTL = 1_000;
    // Fetches never answer: the slot's state changes only by what its inbox brings.
    const hang = { fetch: (_req: FetchRequest, signal: AbortSignal): Promise<Outcome> => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })) };
    const opts = (nodeId: string) => ({ redis: world.server.url, crawl, store: world.store, fetcher: hang, settings: { slots: 1 }, heartbeatTtlMs: TTL, pollMs: 50, checkpointMs: 200, campaign: false, nodeId });
    const a = new ClusterNode(opts('A'));
    await a.start();
    const runA = a.run().catch(() => {});
    await until(() => a.stats().slots.includes(0), 10_000, 'A owns slot 0');
    await a.seed(['http://a.zombie.test/x']);
    await until(() => a.inFlightFetches() === 1, 10_000, 'A fetching');
    // A's loop stalls right before its next inbox read.
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    let stalled = false;
    const node = a as unknown as { pump: () => Promise<void> };
    const pump = node.pump.bind(a);
    node.pump = async () => {
      if (!stalled) {
        stalled = true;
        await held;
      }
      return pump();
    };
    await until(() => stalled, 10_000, 'A stalled');
    await new Promise((res) => setTimeout(res, 2.5 * TTL)); // A's entry expires on Redis
    const b = new ClusterNode(opts('B'));
    await b.start();
    const runB = b.run().catch(() => {});
    await until(() => b.stats().slots.includes(0) && b.inFlightFetches() === 1, 20_000, 'B owns slot 0 and fetches again');
    const before = b.stats().entriesApplied;
    // A link routed to the slot, then A wakes and makes the read it was about to make.
    const r = world.server.client();
    const keys = new ClusterKeys(crawl);
    await r.xadd(keys.inbox(0), '*', 'k', 's', 'd', 'http://b.zombie.test/y\tb.zombie.test\t1');
    release();
    await until(() => b.stats().entriesApplied > before, 10_000, 'B applied the entry');
    // Nothing is left pending under A; B's frontier holds both URLs.
    const pending = (await r.xpending(keys.inbox(0), 'owner', '-', '+', 10)) as [string, string][];
    expect(pending.filter(([, owner]) => owner === 'A')).toEqual([]);
    expect(b.frontiers()[0]!.len()).toBe(2);
    r.disconnect();
    a.stop();
    b.stop();
    await Promise.all([runA, runB]);
  }, 60_000);
});
