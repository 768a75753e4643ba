/**
 * Sitemaps in cluster mode: the `Sitemap:` lines of a robots.txt answer reach the crawl through
 * the engine's node — in scope, they are routed to their slots and fetched, and the pages they
 * list are fetched and yielded, as in a single-process run (a line naming a host of another
 * slot goes through that slot's inbox); out of scope, they are refused (in
 * `summary().refusedSeeds`, as in a single-process run) and never fetched, and they never widen
 * the crawl's scope (not recorded among its scope seeds); with `robotsSitemaps: false` nothing is
 * sent. A sitemap given as a seed (`sitemaps`) is fetched and its entries crawled. Before the fix
 * the first three tests failed: in cluster mode the lines were queued for a single-process loop that
 * never runs, and the sitemap was never fetched. A robots.txt answer that lands while its node
 * leaves still sends its lines (`ClusterNode.routeFound`): before that fix they were dropped and,
 * the answer being in the leaving node's checkpoint, never heard again.
 *
 * Deterministic without timed assertions: each campaign runs until it drains, then the server's
 * request log, Redis and the pages yielded are checked.
 *
 * Real components only: a redis-server on a random loopback port and in-process Engines.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ClusterKeys, slotOf } from '../../src/cluster/index.js';
import type { Engine, EngineOptions } from '../../src/index.js';
import { clusterEngine, clusterWorld } from './redis.js';
import { until } from './child.js';
import { type LoggedWeb, hostOf, listenLoopback } from '../fetch/server.js';

const WAIT_MS = 60_000;
const SLOTS = 2;

/**
 * Every name under .test: '/' links nothing; '/sitemap.xml' lists '/listed' (linked from
 * nowhere); '/listed' and '/private/x' are pages. robots.txt names the host's own sitemap, and
 * for hosts named `far…` also another host's (`elsewhere.test`) and an excluded path's, for hosts
 * named `via…` also the sitemap of the host named `to…` with the same suffix. Every request is
 * logged as `host/path`.
 */
/** While set, late.test's robots.txt is answered only once it resolves. */
let holdRobots: Promise<void> | undefined;

async function serve(): Promise<LoggedWeb> {
  const log: string[] = [];
  let port = 0;
  const server = createServer((req, res) => {
    const host = hostOf(req);
    const path = req.url ?? '/';
    log.push(`${host}${path}`);
    const send = (status: number, type: string, body: string): void => void res.writeHead(status, { 'content-type': type }).end(body);
    const at = (h: string, p: string): string => `http://${h}:${port}${p}`;
    if (path === '/robots.txt' && host === 'late.test' && holdRobots !== undefined) {
      // Answered only when the test says so (see the leaving test).
      void holdRobots.then(() => send(200, 'text/plain', `User-agent: *\nAllow: /\nSitemap: ${at(host, '/sitemap.xml')}\n`));
      return;
    }
    if (path === '/robots.txt') {
      const lines = ['User-agent: *', 'Allow: /', `Sitemap: ${at(host, '/sitemap.xml')}`];
      if (host.startsWith('far')) lines.push(`Sitemap: ${at('elsewhere.test', '/sitemap.xml')}`, `Sitemap: ${at(host, '/private/sitemap.xml')}`);
      if (host.startsWith('via')) lines.push(`Sitemap: ${at(host.replace(/^via/, 'to'), '/sitemap.xml')}`);
      return send(200, 'text/plain', `${lines.join('\n')}\n`);
    }
    if (path === '/sitemap.xml' || path === '/private/sitemap.xml') {
      return send(200, 'application/xml', `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${at(host, '/listed')}</loc></url></urlset>`);
    }
    if (['/', '/listed', '/private/x'].includes(path)) return send(200, 'text/html', `<html><body>${path}</body></html>`);
    send(404, 'text/plain', 'not found');
  });
  const web = await listenLoopback(server);
  port = web.port;
  return { ...web, log };
}

const world = clusterWorld(serve, 'meguri-sitemaps-');

const url = (host: string, path: string): string => `http://${host}:${world.web.port}${path}`;

const engineOf = (crawl: string, extra: Partial<EngineOptions> = {}): Engine => clusterEngine(world, crawl, SLOTS, extra);

/** Runs `engine` to its end; returns the URLs it yielded. */
async function drain(engine: Engine): Promise<string[]> {
  const pages: string[] = [];
  try {
    for await (const page of engine.run()) pages.push(page.url);
  } finally {
    await engine.close();
  }
  return pages;
}

const requestsOf = (host: string): string[] => world.web.log.filter((e) => e.startsWith(`${host}/`));

async function scopeSeedsOf(crawl: string): Promise<string[]> {
  const client = world.redis.client();
  try {
    return (await client.smembers(new ClusterKeys(crawl).scopeSeeds)).sort();
  } finally {
    client.disconnect();
  }
}

describe('robots.txt Sitemap lines in cluster mode', () => {
  it('the sitemap robots.txt names is fetched, and the page it lists (linked from nowhere) fetched and yielded', async () => {
    const engine = engineOf('csm', { seeds: [url('h1.test', '/')] });
    const pages = await drain(engine);
    expect(engine.stopReason).toBe('drained');
    expect(requestsOf('h1.test').sort()).toEqual(['h1.test/', 'h1.test/listed', 'h1.test/robots.txt', 'h1.test/sitemap.xml']);
    expect(pages).toContain(url('h1.test', '/listed'));
    expect(new Set(pages).size, 'each page yielded once').toBe(pages.length);
    // Routed, not recorded as a scope seed: only the given seed widens the scope.
    expect(await scopeSeedsOf('csm')).toEqual([url('h1.test', '/')]);
    expect(engine.summary().refusedSeeds).toEqual([]);
  }, WAIT_MS);

  it('Sitemap lines out of scope are refused with their reason and never fetched; they do not widen the scope', async () => {
    const engine = engineOf('csm-far', { seeds: [url('far1.test', '/')], exclude: ['**/private/**'] });
    const pages = await drain(engine);
    expect(engine.stopReason).toBe('drained');
    expect(requestsOf('elsewhere.test')).toEqual([]);
    expect(requestsOf('far1.test').sort()).toEqual(['far1.test/', 'far1.test/listed', 'far1.test/robots.txt', 'far1.test/sitemap.xml']);
    expect(pages).toContain(url('far1.test', '/listed'));
    expect(engine.summary().refusedSeeds).toEqual([
      { url: url('elsewhere.test', '/sitemap.xml'), reason: 'off-host' },
      { url: url('far1.test', '/private/sitemap.xml'), reason: 'excluded' },
    ]);
    expect(await scopeSeedsOf('csm-far')).toEqual([url('far1.test', '/')]);
  }, WAIT_MS);

  it("a Sitemap line naming another slot's host (scope any) is routed to that slot, fetched and its page yielded", async () => {
    const crawl = 'csm-cross';
    let n = 0;
    while (slotOf(crawl, `via${n}.test`, SLOTS) === slotOf(crawl, `to${n}.test`, SLOTS)) n++;
    const engine = engineOf(crawl, { seeds: [url(`via${n}.test`, '/')], scope: 'any' });
    const pages = await drain(engine);
    expect(engine.stopReason).toBe('drained');
    expect(requestsOf(`to${n}.test`).sort()).toEqual([`to${n}.test/listed`, `to${n}.test/robots.txt`, `to${n}.test/sitemap.xml`]);
    expect(pages).toContain(url(`to${n}.test`, '/listed'));
    expect(pages).toContain(url(`via${n}.test`, '/listed'));
    expect(await scopeSeedsOf(crawl)).toEqual([url(`via${n}.test`, '/')]);
  }, WAIT_MS);

  it('a robots.txt answer landing while the node leaves: its Sitemap line still reaches the crawl, and the next node fetches it', async () => {
    // The leaving node's drain waits for the answer, and its final checkpoint holds it, so the
    // next owner never asks for robots.txt again: before the fix the line was dropped (the
    // node no longer took seeds) and the sitemap was never fetched.
    let answer!: () => void;
    holdRobots = new Promise<void>((r) => (answer = r));
    const crawl = 'csm-leave';
    const first = engineOf(crawl, { seeds: [url('late.test', '/')] });
    const firstRun = drain(first);
    await until(() => requestsOf('late.test').includes('late.test/robots.txt'), 30_000, 'the robots.txt request');
    void first.stop();
    await new Promise((r) => setTimeout(r, 300)); // the node begins to leave; its drain waits up to 5 s
    answer();
    await firstRun;
    holdRobots = undefined;
    expect(first.stopReason).toBe('stopped');
    expect(requestsOf('late.test')).toEqual(['late.test/robots.txt']);
    const next = engineOf(crawl, { seeds: [url('late.test', '/')] });
    const pages = await drain(next);
    expect(next.stopReason).toBe('drained');
    // robots.txt once: the answer reached the leaving node's checkpoint, and so did the line.
    expect(requestsOf('late.test').sort()).toEqual(['late.test/', 'late.test/listed', 'late.test/robots.txt', 'late.test/sitemap.xml']);
    expect(pages).toContain(url('late.test', '/listed'));
    expect(await scopeSeedsOf(crawl)).toEqual([url('late.test', '/')]);
  }, WAIT_MS);

  it('with robotsSitemaps: false nothing is sent: the sitemap is not fetched', async () => {
    const engine = engineOf('csm-off', { seeds: [url('h2.test', '/')], robotsSitemaps: false });
    const pages = await drain(engine);
    expect(engine.stopReason).toBe('drained');
    expect(requestsOf('h2.test').sort()).toEqual(['h2.test/', 'h2.test/robots.txt']);
    expect(pages).toEqual([url('h2.test', '/')]);
  }, WAIT_MS);

  it('a sitemap given as a seed is fetched and its entries crawled', async () => {
    const engine = engineOf('csm-seed', { sitemaps: [url('h3.test', '/sitemap.xml')], robotsSitemaps: false });
    const pages = await drain(engine);
    expect(engine.stopReason).toBe('drained');
    expect(requestsOf('h3.test').sort()).toEqual(['h3.test/listed', 'h3.test/robots.txt', 'h3.test/sitemap.xml']);
    expect(pages).toContain(url('h3.test', '/listed'));
  }, WAIT_MS);
});
