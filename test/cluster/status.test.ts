import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys, Heartbeat, coordinate, joinCrawl } from '../../src/cluster/index.js';
import { resetInbox } from '../../src/cluster/routing.js';
import { main } from '../../src/cli/main.js';
import { bufferIo } from '../cli/helpers.js';
import { type RedisServer, startRedis } from './redis.js';

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
    for (let s = 0; s < 4; s++) await resetInbox(r, keys, s, '0-0');
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

    const missing = bufferIo();
    expect(await main(['cluster', 'status', '--redis', server.url, '--crawl', 'nope'], missing)).toBe(1);
    expect(missing.err()).toContain('no crawl "nope"');
    const usage = bufferIo();
    expect(await main(['cluster', 'status', '--crawl', 'st'], usage)).toBe(2);
    r.disconnect();
  });
});
