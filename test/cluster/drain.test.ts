/**
 * The hand-off drain bound: a moving slot's sent fetches that outlast `handoffDrainMs` are cut
 * (aborted, their outcomes never told), the checkpoint holds them schedulable, the next owner
 * fetches them again — and the node counts exactly those (`ClusterCheckpoint.refetch`,
 * `ClusterNodeStats.handoffRefetches`). Two in-process nodes on a real redis-server; node A's
 * fetches never answer, so only the bound can end its hand-off and its leaving.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterCheckpoint, ClusterNode, crawlSalt, slotOf } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

describe('hand-off drain bound', () => {
  let server: RedisServer;
  let store: string;
  beforeAll(async () => {
    server = await startRedis();
    store = mkdtempSync(join(tmpdir(), 'meguri-drain-'));
  });
  afterAll(async () => {
    await server.dispose();
    rmSync(store, { recursive: true, force: true });
  });

  it('fetches outlasting the drain are cut, counted, and fetched again by the next owner — no more, no fewer', async () => {
    const crawl = 'drain';
    const S = 2;
    // Eight hosts, four in each slot, one page each.
    const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.drain.test`);
    const bySlot = [0, 1].map((s) => hosts.filter((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === s).slice(0, 4));
    expect(bySlot.every((l) => l.length === 4)).toBe(true);
    const urls = bySlot.flat().map((h) => `http://${h}/page`);

    const sentByA: string[] = [];
    // A's server never answers: each fetch ends only when the node aborts it.
    const fa = {
      fetch: (req: FetchRequest, signal: AbortSignal): Promise<Outcome> => {
        sentByA.push(req.url);
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      },
    };
    const fetchedByB: string[] = [];
    const fb = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        fetchedByB.push(req.url);
        return Promise.resolve({ row: req.row, url: req.url, status: 200 });
      },
    };
    const checkpointsA: ClusterCheckpoint[] = [];
    const common = {
      redis: server.url,
      crawl,
      store,
      settings: { slots: S, grouping: 'host' as const },
      heartbeatTtlMs: 1_000,
      checkpointMs: 600_000, // no periodic checkpoint: each one here is a hand-off's or the leaving's
      pollMs: 20,
      handoffDrainMs: 200,
      concurrency: 8,
    };
    const a = new ClusterNode({ ...common, fetcher: fa, nodeId: 'A', onCheckpoint: (c) => checkpointsA.push(c) });
    await a.start();
    // The heartbeat read Redis's clock: the same machine's wall clock, so the offset is how far
    // the wall clock has moved from the node's default clock — the monotonic one anchored at
    // the thread's start — which is 0 plus drift, or a step when the system clock was set while
    // the worker ran (a CI run met 6.2 s). Compared with that divergence measured here.
    const divergence = Date.now() - (performance.timeOrigin + performance.now());
    expect(Math.abs(a.stats().clockOffsetMs! - divergence)).toBeLessThan(1_000);
    expect(a.stats().clockOffsetErrorMs).toBeGreaterThanOrEqual(1);
    expect(await a.seed(urls)).toBe(8);
    const runA = a.run();
    await until(() => a.stats().inFlight === 8, 30_000, 'all eight sent by A');
    const b = new ClusterNode({ ...common, fetcher: fb, nodeId: 'B' });
    await b.start();
    const runB = b.run();
    await until(() => a.stats().handoffs >= 1, 30_000, 'a slot handed to B');
    a.stop();
    const sa = await runA;
    const sb = await runB; // a campaign: B ends once both slots are drained
    expect(sa.handoffs).toBe(1);
    // Every page A sent was cut (A's server never answers): 4 by the hand-off, 4 by the leaving.
    const handoff = checkpointsA.filter((c) => c.leaving && c.refetch > 0);
    expect(handoff.map((c) => c.refetch).sort()).toEqual([4, 4]);
    // Each leaving checkpoint holds its slot's four URLs (the count the log's checkpoint line prints).
    expect(handoff.map((c) => c.urls)).toEqual([4, 4]);
    expect(sa.handoffRefetches).toBe(8);
    expect(new Set(sentByA)).toEqual(new Set(urls));
    // …and each was fetched again by B, exactly once: re-fetches = the count the node gave.
    expect(fetchedByB.sort()).toEqual([...urls].sort());
    expect(sb.pages).toBe(8);
    expect(sb.handoffRefetches).toBe(0);
  }, 60_000);
});
