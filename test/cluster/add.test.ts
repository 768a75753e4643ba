/**
 * `Engine.add()` while a cluster-mode run is running: the seeds the scope takes reach the crawl
 * through the engine's node (scope seeds, then the owning slots' inboxes) and are fetched and
 * yielded like the first seeds — by whichever node owns their slot; the others are refused with
 * their reason; seeds added as the run stops are in Redis when the node has left, and the next
 * run fetches them; a send Redis refuses ends the run with that error; seeds given before run()
 * are taken at the start as before; add() after the run ended throws. Before the fix, add() in
 * cluster mode queued the seeds for a start already past and said they were taken (the mid-run
 * tests fail on that code; the before-run one failed only on its seed refused twice, once from
 * the options' seeds and once from the pending ones).
 *
 * Deterministic without timed assertions: each seed page links a page the server withholds until
 * the test has called add(), so the campaign cannot drain before the seeds are given; the rest
 * is judged by the server's request log, Redis and the pages yielded once the runs have ended.
 *
 * Real components only: a redis-server on a random loopback port and in-process Engines.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ClusterKeys, slotOf } from '../../src/cluster/index.js';
import { Engine, InvalidStateError } from '../../src/index.js';
import type { EngineOptions, RefusedSeed } from '../../src/index.js';
import { until } from './child.js';
import { clusterEngine, clusterWorld } from './redis.js';
import { type LoggedWeb, hostOf, listenLoopback } from '../fetch/server.js';

const WAIT_MS = 60_000;
const SLOTS = 2;

/** Every request logged as `host/path`. */
interface Web extends LoggedWeb {
  /** Answers the withheld `/slow` page of `host` (every one asked so far and later). */
  release(host: string): void;
}

/**
 * Each host (every name under .test; each test its own, as '/slow' is released once per host): '/' links '/slow' and '/p1'; '/slow' is answered only once the test releases the
 * host; '/extra' and '/private/x' exist but nothing links them.
 */
async function serve(): Promise<Web> {
  const log: string[] = [];
  const released = new Map<string, () => void>();
  const gate = new Map<string, Promise<void>>();
  const gateOf = (host: string): Promise<void> => {
    let g = gate.get(host);
    if (g === undefined) gate.set(host, (g = new Promise<void>((resolve) => released.set(host, resolve))));
    return g;
  };
  const server = createServer((req, res) => {
    const host = hostOf(req);
    const path = req.url ?? '/';
    log.push(`${host}${path}`);
    const send = (status: number, body: string): void => {
      res.writeHead(status, { 'content-type': path.endsWith('.txt') ? 'text/plain' : 'text/html' }).end(body);
    };
    if (path === '/robots.txt') return send(200, 'User-agent: *\nAllow: /\n');
    if (path === '/') return send(200, '<html><body><a href="/slow">slow</a> <a href="/p1">p1</a></body></html>');
    if (path === '/slow') return void gateOf(host).then(() => send(200, '<html><body>slow</body></html>'));
    if (['/p1', '/extra', '/private/x'].includes(path)) return send(200, `<html><body>${path}</body></html>`);
    send(404, 'not found');
  });
  return { ...(await listenLoopback(server)), log, release: (host) => void (gateOf(host), released.get(host)!()) };
}

const world = clusterWorld(serve, 'meguri-add-');

const url = (host: string, path: string): string => `http://${host}:${world.web.port}${path}`;

const engineOf = (crawl: string, seeds: readonly string[], extra: Partial<EngineOptions> = {}): Engine => clusterEngine(world, crawl, SLOTS, { seeds: [...seeds], ...extra });

/**
 * Runs `engine` to its end, every page's URL into `pages`, and closes it; `onFirst` runs once,
 * at the first page (the run is going: each seed's '/slow' is withheld, so nothing drained).
 */
async function drain(engine: Engine, pages: string[] = [], onFirst?: () => void | Promise<void>): Promise<string[]> {
  let first = onFirst;
  try {
    for await (const page of engine.run()) {
      pages.push(page.url);
      if (first !== undefined) {
        const f = first;
        first = undefined;
        await f();
      }
    }
  } finally {
    await engine.close();
  }
  return pages;
}

describe('Engine.add() in cluster mode', () => {
  it('seeds added mid-run are fetched and yielded: an unlinked page, and a new host whose scope they widen', async () => {
    const engine = engineOf('cadd', [url('a1.test', '/')]);
    let given: { added: number; refused: readonly RefusedSeed[] } | undefined;
    const pages = await drain(engine, [], () => {
      // The run is going: a1.test/slow is withheld until this returns, so nothing drained yet.
      given = engine.add([url('a1.test', '/extra'), url('b1.test', '/')]);
      world.web.release('a1.test');
      world.web.release('b1.test');
    });
    expect(engine.stopReason).toBe('drained');
    // Fetched (the server's own log) and yielded: the unlinked page, and the new host with the
    // pages its '/' links (in scope: the seed widened the host scope).
    for (const [host, path] of [['a1.test', '/extra'], ['b1.test', '/'], ['b1.test', '/slow'], ['b1.test', '/p1']] as const) {
      expect(world.web.log, `${host}${path} fetched`).toContain(`${host}${path}`);
      expect(pages, `${host}${path} yielded`).toContain(url(host, path));
    }
    expect(given).toEqual({ added: 2, refused: [] });
    expect(new Set(pages).size, 'each page yielded once').toBe(pages.length);
  }, WAIT_MS);

  it('seeds out of scope or malformed are refused mid-run with their reason, and never fetched', async () => {
    const engine = engineOf('cadd-refuse', [url('a4.test', '/')], { exclude: ['**/private/**'] });
    let given: { added: number; refused: readonly RefusedSeed[] } | undefined;
    const pages = await drain(engine, [], () => {
      given = engine.add([url('a4.test', '/private/x'), 'not a url', 'ftp://a4.test/f', url('a4.test', '/extra')]);
      world.web.release('a4.test');
    });
    const refused = [
      { url: url('a4.test', '/private/x'), reason: 'excluded' },
      { url: 'not a url', reason: 'not-http' },
      { url: 'ftp://a4.test/f', reason: 'not-http' },
    ];
    expect(given).toEqual({ added: 1, refused });
    expect(engine.summary().refusedSeeds).toEqual(refused);
    // The ones that are no crawlable URL are in rejectedSeeds too, as in single-process mode.
    expect(engine.rejectedSeeds).toEqual(['not a url', 'ftp://a4.test/f']);
    expect(world.web.log).not.toContain('a4.test/private/x');
    expect(world.web.log).toContain('a4.test/extra');
    expect(pages).toContain(url('a4.test', '/extra'));
  }, WAIT_MS);

  it("a seed added on one node is fetched and yielded by the node owning its slot", async () => {
    const crawl = 'cadd-two';
    // One seed host per slot (each '/' links a withheld '/slow': neither slot drains before the add).
    const hostIn = (prefix: string, slot: number): string => {
      for (let n = 0; ; n++) if (slotOf(crawl, `${prefix}${n}.test`, SLOTS) === slot) return `${prefix}${n}.test`;
    };
    const seedHosts = [hostIn('s', 0), hostIn('s', 1)];
    const a = engineOf(crawl, seedHosts.map((h) => url(h, '/')));
    const b = engineOf(crawl, []);
    const pagesA: string[] = [];
    const pagesB: string[] = [];
    const runA = drain(a, pagesA);
    let runB: Promise<unknown> = Promise.resolve();
    let extraHost = '';
    try {
      await until(() => a.clusterStats()?.slots.length === SLOTS, WAIT_MS, 'A owns every slot');
      runB = drain(b, pagesB);
      // The coordinator moves one slot to B (its withheld fetch is cut at the drain bound, 5 s).
      await until(() => a.clusterStats()?.slots.length === 1 && b.clusterStats()?.slots.length === 1, WAIT_MS, 'one slot each');
      extraHost = hostIn('x', b.clusterStats()!.slots[0]!);
      expect(a.add(url(extraHost, '/extra'))).toEqual({ added: 1, refused: [] });
      world.web.release(extraHost);
    } finally {
      for (const h of seedHosts) world.web.release(h);
      // On a failure above: end both runs (a no-op for a run that ended).
      if (extraHost === '') await Promise.all([a.stop(), b.stop()]);
      await Promise.all([runA, runB]);
    }
    expect([a.stopReason, b.stopReason]).toEqual(['drained', 'drained']);
    // Sent by A, fetched once and yielded by B, which owns the slot.
    expect(world.web.log.filter((e) => e.startsWith(extraHost))).toEqual([`${extraHost}/robots.txt`, `${extraHost}/extra`]);
    expect(pagesB).toContain(url(extraHost, '/extra'));
    expect(pagesA).not.toContain(url(extraHost, '/extra'));
  }, 2 * WAIT_MS);

  it('seeds added as the run stops reach the crawl before the node leaves: the next run fetches them', async () => {
    const crawl = 'cadd-stop';
    const first = engineOf(crawl, [url('a5.test', '/')]);
    let given: { added: number; refused: readonly RefusedSeed[] } | undefined;
    const pages = await drain(first, [], () => {
      // The send is under way when the node is told to stop: it leaves only once the send is done.
      given = first.add(url('a5.test', '/extra'));
      void first.stop();
      world.web.release('a5.test');
    });
    expect(first.stopReason).toBe('stopped');
    expect(given).toEqual({ added: 1, refused: [] });
    const client = world.redis.client();
    try {
      expect(await client.sismember(new ClusterKeys(crawl).scopeSeeds, url('a5.test', '/extra'))).toBe(1);
    } finally {
      client.disconnect();
    }
    const next = engineOf(crawl, []);
    await drain(next, pages);
    expect(next.stopReason).toBe('drained');
    // Fetched by the stopping run or, from the inbox, by the next one.
    expect(world.web.log).toContain('a5.test/extra');
    expect(pages).toContain(url('a5.test', '/extra'));
  }, WAIT_MS);

  it('seeds given to add() before run() are taken at the start, as before (each once)', async () => {
    const engine = engineOf('cadd-before', [url('a6.test', '/')]);
    world.web.release('a6.test');
    // Before run() nothing is checked yet: every seed counts as accepted, refusals come at the start.
    expect(engine.add([url('a6.test', '/extra'), 'not a url'])).toEqual({ added: 2, refused: [] });
    const pages = await drain(engine);
    expect(engine.stopReason).toBe('drained');
    expect(world.web.log).toContain('a6.test/extra');
    expect(pages).toContain(url('a6.test', '/extra'));
    expect(engine.summary().refusedSeeds).toEqual([{ url: 'not a url', reason: 'not-http' }]);
    expect(engine.rejectedSeeds).toEqual(['not a url']);
  }, WAIT_MS);

  it('add() after the run ended throws, as before', async () => {
    const engine = engineOf('cadd-end', [url('a2.test', '/p1')]);
    try {
      for await (const _ of engine.run()) void _;
      expect(() => engine.add(url('a2.test', '/extra'))).toThrow(InvalidStateError);
    } finally {
      await engine.close();
    }
    expect(() => engine.add(url('a2.test', '/extra'))).toThrow(InvalidStateError);
  }, WAIT_MS);

  it('a send Redis refuses ends the run with that error (no unhandled rejection)', async () => {
    const crawl = 'cadd-fail';
    const engine = engineOf(crawl, [url('a3.test', '/')]);
    const client = world.redis.client();
    let given: { added: number; refused: readonly RefusedSeed[] } | undefined;
    let thrown: unknown;
    try {
      await drain(engine, [], async () => {
        // The crawl's scope-seed set becomes a string: recording the new seed's scope fails (WRONGTYPE).
        await client.set(new ClusterKeys(crawl).scopeSeeds, 'not a set');
        given = engine.add(url('a3.test', '/extra'));
        world.web.release('a3.test');
      });
    } catch (err) {
      thrown = err;
    } finally {
      client.disconnect();
    }
    expect(given).toEqual({ added: 1, refused: [] });
    expect(String(thrown)).toMatch(/WRONGTYPE/);
    expect(world.web.log).not.toContain('a3.test/extra');
  }, WAIT_MS);
});
