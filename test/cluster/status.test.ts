import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_SPREAD_WARN_MS, ClusterKeys, Heartbeat, clockSpread, coordinate, joinCrawl } from '../../src/cluster/index.js';
import { resetInbox } from '../../src/cluster/routing.js';
import { main } from '../../src/cli/main.js';
import { bufferIo } from '../cli/helpers.js';
import { RedisProxy, type RedisServer, startRedis } from './redis.js';

describe('clockSpread', () => {
  const node = (live: boolean, clockOffsetMs: number | undefined, clockOffsetErrorMs = 0) => ({ live, clockOffsetMs, clockOffsetErrorMs });
  it('is the largest difference of live offsets less both error bounds, 0 within them, undefined under two readings', () => {
    expect(clockSpread([])).toBeUndefined();
    expect(clockSpread([node(true, 5), node(true, undefined), node(false, 900)])).toBeUndefined();
    expect(clockSpread([node(true, 5, 2), node(true, -300, 3), node(true, 40, 1)])).toBe(340 - 3 - 1);
    expect(clockSpread([node(true, 5, 20), node(true, -10, 20)])).toBe(0);
    expect(clockSpread([node(true, 0), node(false, 5_000), node(true, 7)])).toBe(7);
    expect(CLOCK_SPREAD_WARN_MS).toBe(100);
  });
});

describe('meguri cluster status', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server.dispose();
  });

  it('prints nodes, slots per node, inbox lag and hand-offs in progress (text and --json)', async () => {
    const r = server.client();
    const keys = new ClusterKeys('st');
    await joinCrawl(r, keys, { slots: 4 });
    await new Heartbeat(r, keys, 'node-a', 60_000, () => performance.now()).beat();
    await coordinate(r, keys, 'node-a', 4, 60_000);
    await new Heartbeat(r, keys, 'node-b', 60_000, () => performance.now()).beat();
    await coordinate(r, keys, 'node-a', 4, 60_000); // asks node-a to hand 2 slots to node-b
    for (let s = 0; s < 4; s++) await resetInbox(r, keys, s, '0-0', 'test');
    for (let i = 0; i < 5; i++) await r.xadd(keys.inbox(3), '*', 'k', 'l', 'd', `http://x.test/${i}\tx.test\t1\t1\t`);

    const io = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st', '--json'], io)).toBe(0);
    const st = JSON.parse(io.out()) as { nodes: { id: string; slots: number[]; live: boolean }[]; handoffs: number; inboxLag: number; slots: { movingTo: string }[] };
    expect(st.nodes.map((n) => [n.id, n.slots.length, n.live])).toEqual([
      ['node-a', 4, true],
      ['node-b', 0, true],
    ]);
    expect(st.handoffs).toBe(2);
    expect(st.inboxLag).toBe(5);

    const text = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st'], text)).toBe(0);
    expect(text.out()).toMatch(/2 live node\(s\).*inbox lag 5, hand-offs in progress 2/);
    expect(text.out()).toMatch(/slot \d: moving node-a → node-b/);

    // Clocks: each node's offset to Redis as it published it; nodes 300 ms apart are flagged.
    expect(st.nodes.every((n) => (n as { clockOffsetMs?: number }).clockOffsetMs === undefined)).toBe(true);
    const publish = (id: string, offset: number, error: number) =>
      r.set(keys.nodeInfo(id), JSON.stringify({ pages: 0, pagesPerSec: 0, canDispatch: true, ipGateBlocked: false, clockOffsetMs: offset, clockOffsetErrorMs: error }));
    await publish('node-a', 2, 1);
    await publish('node-b', -298, 1);
    const skewed = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st'], skewed)).toBe(0);
    expect(skewed.out()).toMatch(/node-a .*clock -2 ms of Redis's \(±1\)/);
    expect(skewed.out()).toMatch(/node-b .*clock \+298 ms of Redis's \(±1\)/);
    expect(skewed.out()).toMatch(/warning: the live nodes' clocks differ by at least 298 ms; .* \(NTP\)/);
    const skewedJson = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st', '--json'], skewedJson)).toBe(0);
    expect((JSON.parse(skewedJson.out()) as { clockSpreadMs: number }).clockSpreadMs).toBe(298);
    await publish('node-b', -40, 1);
    const synced = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st'], synced)).toBe(0);
    expect(synced.out()).not.toContain('warning');
    expect(synced.out()).not.toContain('retried errors');

    // Retried errors, by kind, once a node has any (a store that keeps failing says so by name).
    await r.set(keys.nodeInfo('node-a'), JSON.stringify({ pages: 3, pagesPerSec: 0, canDispatch: true, ipGateBlocked: false, redisErrors: 2, storeErrors: 7 }));
    await r.set(keys.nodeInfo('node-b'), JSON.stringify({ pages: 1, pagesPerSec: 0, canDispatch: true, ipGateBlocked: false, redisErrors: 0, storeErrors: 4, checkpointFallbacks: 1 }));
    const failing = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st'], failing)).toBe(0);
    expect(failing.out()).toMatch(/node-a .*retried errors: Redis 2, checkpoint store 7/);
    expect(failing.out()).toMatch(/node-b .*retried errors: checkpoint store 4  damaged checkpoints replaced by their previous one: 1\n/);
    expect(failing.out()).not.toMatch(/node-a .*damaged checkpoints/);
    const failingJson = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'st', '--json'], failingJson)).toBe(0);
    expect((JSON.parse(failingJson.out()) as { nodes: { redisErrors: number; storeErrors: number }[] }).nodes.map((n) => [n.redisErrors, n.storeErrors])).toEqual([
      [2, 7],
      [0, 4],
    ]);

    const missing = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'nope'], missing)).toBe(1);
    expect(missing.err()).toContain('no crawl "nope"');
    const usage = bufferIo();
    expect(await main(['cluster', 'status', '--crawl', 'st'], usage)).toBe(2);
    r.disconnect();
  });

  it('fails with a sentence, not a hang, when Redis does not answer (a frozen link), and when it is not there (never showing a password)', async () => {
    const proxy = await new RedisProxy(server.port).start();
    try {
      proxy.freeze();
      const io = bufferIo();
      // Before, the command waited for the ready check for ever and printed nothing.
      expect(await main(['cluster', 'status', '--redis', proxy.url, '--crawl', 'st'], io)).toBe(1);
      expect(io.err()).toMatch(new RegExp(`^meguri: Redis at redis://127\\.0\\.0\\.1:${proxy.port} did not answer within 10 s \\[ETIMEDOUT\\]\n  check --redis and the network path`));
    } finally {
      proxy.thaw();
      await proxy.close();
    }
    const gone = bufferIo();
    expect(await main(['cluster', 'status', '--redis', `redis://admin:s3cret@127.0.0.1:${proxy.port}`, '--crawl', 'st'], gone)).toBe(1);
    expect(gone.err()).toMatch(new RegExp(`^meguri: cannot reach Redis at redis://127\\.0\\.0\\.1:${proxy.port}: .*ECONNREFUSED`));
    // A password in --redis never reaches the terminal or a log.
    expect(gone.err()).not.toMatch(/s3cret|admin/);
  }, 30_000);

  it("shows each node its own counters when Redis lists the nodes in another order than their names'", async () => {
    // The live set lists nodes in the order their heartbeats expire: node-z (first to beat) before node-a.
    const r = server.client();
    const keys = new ClusterKeys('order');
    await joinCrawl(r, keys, { slots: 2 });
    await new Heartbeat(r, keys, 'node-z', 60_000, () => performance.now()).beat();
    await new Heartbeat(r, keys, 'node-a', 90_000, () => performance.now()).beat();
    await coordinate(r, keys, 'node-z', 2, 60_000);
    await r.set(keys.nodeInfo('node-z'), JSON.stringify({ pages: 81, pagesPerSec: 2, canDispatch: true, ipGateBlocked: false }));
    await r.set(keys.nodeInfo('node-a'), JSON.stringify({ pages: 12, pagesPerSec: 0, canDispatch: true, ipGateBlocked: false }));
    const io = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'order', '--json'], io)).toBe(0);
    const st = JSON.parse(io.out()) as { nodes: { id: string; pages: number; pagesPerSec: number }[] };
    expect(st.nodes.map((n) => [n.id, n.pages, n.pagesPerSec])).toEqual([
      ['node-a', 12, 0],
      ['node-z', 81, 2],
    ]);
    const text = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'order'], text)).toBe(0);
    expect(text.out()).toMatch(/node-z {2}live {2}slots \d.* pages 81 {2}2\.0\/s/);
    // A node that has left keeps its count, not a rate it no longer has.
    await r.zrem(keys.nodes, 'node-z');
    const gone = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'order'], gone)).toBe(0);
    expect(gone.out()).toMatch(/node-z {2}gone {2}slots \d.* pages 81 *(\n|$)/);
    r.disconnect();
  });
});
