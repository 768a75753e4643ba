/**
 * A cluster node in continuous mode (`recrawl`) says when its next fetch is: once every page is
 * fetched, `Engine.nextFetchAt()` is the soonest next start over the slots the node runs (the
 * hour the pages come due again), which `meguri crawl --recrawl --redis` prints on its progress
 * line. It read the engine's own frontier, which a cluster node does not have: undefined. The
 * same for `Engine.urlsByStatus()`, which the metrics' frontier_urls gauge reads.
 *
 * Real components only: a redis-server on a random loopback port and an in-process Engine.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { until } from './child.js';
import { clusterEngine, clusterWorld } from './redis.js';
import { hostOf, listenLoopback } from '../fetch/server.js';

const world = clusterWorld(async () => {
  const log: string[] = [];
  const server = createServer((req, res) => {
    log.push(`${hostOf(req)}${req.url ?? '/'}`);
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/' ? '<a href="/a">a</a>' : '<p>a</p>');
  });
  return { ...(await listenLoopback(server)), log };
}, 'meguri-continuous-');

describe('a continuous cluster node', () => {
  it('names its next fetch once every page is fetched: the hour they come due again', async () => {
    const engine = clusterEngine(world, 'continuous', 2, { seeds: [`http://c1.test:${world.web.port}/`], recrawl: true });
    const pages: string[] = [];
    let firstAt = 0;
    let nextAt: number | undefined;
    try {
      for await (const page of engine.run()) {
        if (pages.length === 0) firstAt = Date.now();
        pages.push(page.url);
        if (pages.length === 2) {
          await until(() => (nextAt = engine.nextFetchAt()) !== undefined, 30_000, 'a next fetch known');
          // The URL counts (the metrics' frontier_urls gauge) over the node's slots: before, they
          // read the engine's own frontier, which a cluster node does not have, and were empty.
          await until(() => engine.urlsByStatus()['Crawled'] === 2, 30_000, 'both pages counted as crawled');
          engine.stop();
        }
      }
    } finally {
      await engine.close();
    }
    expect(pages).toHaveLength(2);
    // A node running no slot (here: closed, its slots given back) counts 0 in every status; before,
    // it returned no status at all and the gauge kept the last counts it had been given.
    expect(engine.urlsByStatus()).toMatchObject({ Scheduled: 0, InFlight: 0, Crawled: 0, Gone: 0 });
    // Due again in a later hour than the one the pages were fetched in.
    expect(nextAt).toBeGreaterThanOrEqual((Math.floor(firstAt / 3_600_000) + 1) * 3_600_000);
  }, 60_000);
});
