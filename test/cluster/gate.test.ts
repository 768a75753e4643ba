/**
 * The per-IP gate with views of the IP's interval (issue 22's adaptive per-IP interval): the
 * largest live view wins — over the sources (slots) of one process, and over the nodes on the
 * Redis gate — whichever caller starts next. Real redis-server; the spacing is read on the Redis
 * clock (TIME while the start holds the gate), so the bounds are lower bounds a slow machine
 * only widens.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys, IpGate } from '../../src/cluster/index.js';
import { type RedisServer, startRedis } from './redis.js';
import { until } from './child.js';

const clock = (): number => performance.timeOrigin + performance.now();

/** Redis TIME in ms (µs precision). */
async function redisMs(c: Redis): Promise<number> {
  const [s, us] = await c.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

describe('IpGate: the largest live view of an IP spaces every start to it', () => {
  let server: RedisServer;
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await server.dispose();
  });
  const client = (): Redis => {
    const c = server.client();
    clients.push(c);
    return c;
  };

  it('two nodes with different views of a shared IP: every start is the larger view after the one before, whoever makes it', async () => {
    const keys = new ClusterKeys('gate-views');
    const opts = { verdictMs: 100, maxIntervalMs: 20, now: clock };
    const a = { gate: new IpGate(client(), keys, 'node-a', opts), iv: 300, redis: client() };
    const b = { gate: new IpGate(client(), keys, 'node-b', opts), iv: 20, redis: client() };
    const ip = '10.9.8.7';
    // Both register and learn that the IP is shared (a verdict of "alone" lasts verdictMs).
    for (const n of [a, b]) n.gate.release(await n.gate.acquire(ip, n.iv), clock());
    await until(async () => {
      for (const n of [a, b]) n.gate.release(await n.gate.acquire(ip, n.iv), clock());
      return a.gate.sharedIps().includes(ip) && b.gate.sharedIps().includes(ip);
    }, 30_000, 'both nodes see the IP shared');
    // Let the sharing guard and the last warm-up start pass before counting.
    const starts: { at: number; who: string }[] = [];
    const run = async (n: typeof a, who: string, count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const t = await n.gate.acquire(ip, n.iv);
        starts.push({ at: await redisMs(n.redis), who }); // while holding the gate
        n.gate.release(t, clock());
      }
    };
    await Promise.all([run(a, 'a', 4), run(b, 'b', 8)]);
    starts.sort((x, y) => x.at - y.at);
    expect(new Set(starts.map((s) => s.who))).toEqual(new Set(['a', 'b']));
    const gaps = starts.slice(1).map((s, i) => s.at - starts[i]!.at);
    // Node b's own view is 20 ms; node a's 300 ms binds b too (1 ms: the gate's ms clock).
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(a.iv - 1);
    // Each node's report is its current view; a narrowed view replaces the node's own report.
    const gate = await client().hgetall(keys.ipGate(ip));
    expect(gate['v:node-a']?.split(':')[0]).toBe('300');
    expect(gate['v:node-b']?.split(':')[0]).toBe('20');
    a.gate.release(await a.gate.acquire(ip, 20), clock());
    expect((await client().hget(keys.ipGate(ip), 'v:node-a'))?.split(':')[0]).toBe('20');
    // A rise noted between starts reaches the Redis gate without waiting for the node's next start.
    a.gate.note(ip, 500, 'slot-7');
    await until(async () => (await client().hget(keys.ipGate(ip), 'v:node-a'))?.split(':')[0] === '500', 10_000, 'the raised view on Redis');
    const t0 = await redisMs(b.redis);
    const held = await b.gate.acquire(ip, b.iv);
    // Read while holding the gate, as the starts above: the release (sent after, on the gate's
    // own connection) lands no earlier, and the next start is spaced from the release. Read
    // after release() instead, this TIME can overtake the release on Redis and the bound fails.
    const t1 = await redisMs(b.redis);
    b.gate.release(held, clock());
    expect(t1 - t0).toBeGreaterThan(0);
    const next = await b.gate.acquire(ip, b.iv);
    const t2 = await redisMs(b.redis);
    b.gate.release(next, clock());
    expect(t2 - t1).toBeGreaterThanOrEqual(500 - 1);
  }, 60_000);

  it('one process, two slots with different views of an unshared IP: the larger spaces both', async () => {
    const gate = new IpGate(client(), new ClusterKeys('gate-local'), 'solo', { verdictMs: 60_000, maxIntervalMs: 10, now: clock });
    const ip = '10.1.1.1';
    const starts: number[] = [];
    const run = async (source: string, iv: number, count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const t = await gate.acquire(ip, iv, source);
        const at = clock();
        starts.push(at);
        gate.release(t, at);
      }
    };
    await Promise.all([run('1', 200, 3), run('2', 10, 6)]);
    starts.sort((x, y) => x - y);
    const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(200);
    expect(gate.gateCalls).toBe(0); // unshared: never a Redis round trip for the take
    expect(gate.intervalOf(ip)).toBe(200);
  }, 30_000);
  it('a shared IP widened to a fractional interval past 6 s: the Redis release succeeds (a fractional PEXPIRE was refused, and retried for ever)', async () => {
    // Adaptive widening multiplies intervals (a soft widening is ×1.25: 1 000 × 1.25⁹ ≈ 7 450.58
    // ms; 7 593.75 here): the release's
    // forget horizon, ten intervals, was a fractional PEXPIRE, which Redis refuses. The release
    // then retried every 5 s for ever, the gate stayed held on Redis, and this node's next start
    // to the IP waited behind it — no more fetches from that IP.
    const keys = new ClusterKeys('gate-fraction');
    const opts = { verdictMs: 100, maxIntervalMs: 20, now: clock };
    const a = new IpGate(client(), keys, 'node-a', opts);
    const b = new IpGate(client(), keys, 'node-b', opts);
    const ip = '10.7.7.7';
    await until(async () => {
      for (const g of [a, b]) g.release(await g.acquire(ip, 20), clock());
      return a.sharedIps().includes(ip) && b.sharedIps().includes(ip);
    }, 30_000, 'both nodes see the IP shared');
    const before = a.failures;
    const t = await a.acquire(ip, 7_593.75);
    expect(t.token).toBeDefined(); // taken on Redis
    a.release(t, clock());
    const r = client();
    await until(async () => (await r.hget(keys.ipGate(ip), 'holder')) === '', 10_000, 'the Redis gate released');
    expect(a.failures - before).toBe(0);
    expect(await r.pttl(keys.ipGate(ip))).toBeGreaterThan(10 * 7_593);
  }, 60_000);
});
