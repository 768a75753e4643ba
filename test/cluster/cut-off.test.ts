/**
 * A cluster node cut off from Redis — a partition: its commands neither answer nor fail — and
 * then stopped (Ctrl-C) must still leave. Its loop waits on Redis between checks of the stop,
 * and its shutdown waited on the final acceptances: the node never left. Now the loop is left a
 * TTL after the stop and every wait of the shutdown is bounded by a TTL; what the node could not
 * accept is what a killed node leaves, and the next node finishes the crawl from the store.
 *
 * Real components only: a redis-server, a loopback TCP proxy in front of it for the node that is
 * cut off (RedisProxy), a loopback web server and in-process Engines.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { RedisProxy, clusterEngine, clusterWorld } from './redis.js';
import { hostOf, listenLoopback } from '../fetch/server.js';

const PAGES = 30;
const world = clusterWorld(async () => {
  const log: string[] = [];
  const server = createServer((req, res) => {
    log.push(`${hostOf(req)}${req.url ?? '/'}`);
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const links = req.url === '/' ? Array.from({ length: PAGES }, (_, i) => `<a href="/p${i}">p${i}</a>`).join('') : '';
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>${req.url}</p>${links}`), 50);
  });
  return { ...(await listenLoopback(server)), log };
}, 'meguri-cutoff-');

describe('a cluster node cut off from Redis', () => {
  it('still leaves when stopped, and the next node finishes the crawl', async () => {
    const proxy = await new RedisProxy(world.redis.port).start();
    const seed = `http://cut.test:${world.web.port}/`;
    const cluster = { redis: proxy.url, crawl: 'cutoff', store: world.store, slots: 2, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20 };
    const first = clusterEngine(world, 'cutoff', 2, { seeds: [seed], cluster });
    const firstPages: string[] = [];
    try {
      for await (const page of first.run()) {
        firstPages.push(page.url);
        if (firstPages.length === 5) {
          proxy.freeze();
          first.stop();
        }
      }
    } finally {
      await first.close();
      proxy.thaw();
      await proxy.close();
    }
    // Before, the loop above never ended (the test timed out).
    expect(firstPages.length).toBeGreaterThanOrEqual(5);
    expect(firstPages.length).toBeLessThan(PAGES + 1);

    const second = clusterEngine(world, 'cutoff', 2, { seeds: [] });
    try {
      for await (const _ of second.run()) {
        // the rest of the crawl
      }
    } finally {
      await second.close();
    }
    const fetched = new Set(world.web.log.filter((u) => !u.endsWith('/robots.txt')));
    expect(fetched.size).toBe(PAGES + 1);
  }, 90_000);
});
