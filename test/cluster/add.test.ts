/**
 * `Engine.add()` while a cluster-mode run is running: the seeds the scope takes reach the crawl
 * through the engine's node (scope seeds, then the owning slots' inboxes) and are fetched and
 * yielded like the first seeds; the others are refused with their reason; a send Redis refuses
 * ends the run with that error; add() after the run ended throws. Before the fix, add() in
 * cluster mode queued the seeds for a start that had already happened and said they were taken.
 *
 * Deterministic without timed assertions: the seed page links a page the server withholds until
 * the test has called add(), so the campaign cannot drain before the seeds are given; the rest
 * is judged by the server's request log and the pages yielded once the run has ended.
 *
 * Real components only: a redis-server on a random loopback port and in-process Engines.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ClusterKeys } from '../../src/cluster/index.js';
import { Engine, InvalidStateError } from '../../src/index.js';
import type { RefusedSeed } from '../../src/index.js';
import { clusterWorld } from './redis.js';

const WAIT_MS = 60_000;
const SLOTS = 2;

interface Web {
  readonly server: Server;
  readonly port: number;
  /** Every request, as `host/path`. */
  readonly log: string[];
  /** Answers the withheld `/slow` page of `host` (every one asked so far and later). */
  release(host: string): void;
}

/**
 * Each host (every name under .test; each test its own, as '/slow' is released once per host): '/' links '/slow' and '/p1'; '/slow' is answered only once the test releases the
 * host; '/extra' and '/private/x' exist but nothing links them.
 */
function serve(): Promise<Web> {
  const log: string[] = [];
  const released = new Map<string, () => void>();
  const gate = new Map<string, Promise<void>>();
  const gateOf = (host: string): Promise<void> => {
    let g = gate.get(host);
    if (g === undefined) gate.set(host, (g = new Promise<void>((resolve) => released.set(host, resolve))));
    return g;
  };
  const server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
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
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({ server, port, log, release: (host) => void (gateOf(host), released.get(host)!()) });
    }),
  );
}

const world = clusterWorld(serve, 'meguri-add-');

const url = (host: string, path: string): string => `http://${host}:${world.web.port}${path}`;

function engineOf(crawl: string, seeds: readonly string[], extra: Record<string, unknown> = {}): Engine {
  return new Engine({
    agent: 'meguri-test/1.0',
    seeds: [...seeds],
    allowPrivate: true,
    resolve: async (h) => (h.endsWith('.test') ? ['127.0.0.1'] : []),
    concurrency: 4,
    grouping: 'host',
    scope: 'host',
    politeness: { minDelayMs: 20, startDelayMs: 20, ipMinDelayMs: 5 },
    cluster: { redis: world.redis.url, crawl, store: world.store, slots: SLOTS, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20 },
    ...extra,
  });
}

describe('Engine.add() in cluster mode', () => {
  it('seeds added mid-run are fetched and yielded; out-of-scope and malformed ones are refused with their reason', async () => {
    const engine = engineOf('cadd', [url('a1.test', '/')], { exclude: ['**/private/**'] });
    const pages: string[] = [];
    let given: { added: number; refused: readonly RefusedSeed[] } | undefined;
    try {
      for await (const page of engine.run()) {
        pages.push(page.url);
        if (given !== undefined) continue;
        // The run is going: a1.test/slow is withheld until this returns, so nothing drained yet.
        given = engine.add([url('a1.test', '/extra'), url('b1.test', '/'), url('a1.test', '/private/x'), 'not a url', 'ftp://a1.test/f']);
        world.web.release('a1.test');
        world.web.release('b1.test');
      }
    } finally {
      await engine.close();
    }
    expect(given).toEqual({
      added: 2,
      refused: [
        { url: url('a1.test', '/private/x'), reason: 'excluded' },
        { url: 'not a url', reason: 'not-http' },
        { url: 'ftp://a1.test/f', reason: 'not-http' },
      ],
    });
    expect(engine.stopReason).toBe('drained');
    // Fetched (the server's own log) and yielded: the unlinked page, and the new host (its scope
    // widened by the seed) with the pages its '/' links.
    for (const u of [url('a1.test', '/extra'), url('b1.test', '/'), url('b1.test', '/slow'), url('b1.test', '/p1')]) {
      expect(world.web.log, u).toContain(u.replace(/^http:\/\//, '').replace(`:${world.web.port}`, ''));
      expect(pages, u).toContain(u);
    }
    expect(world.web.log).not.toContain('a1.test/private/x');
    expect(engine.summary().refusedSeeds).toEqual(given!.refused);
    expect(new Set(pages).size, 'each page yielded once').toBe(pages.length);
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
    const pages: string[] = [];
    let given: { added: number; refused: readonly RefusedSeed[] } | undefined;
    let thrown: unknown;
    try {
      for await (const page of engine.run()) {
        pages.push(page.url);
        if (given !== undefined) continue;
        // The crawl's scope-seed set becomes a string: recording the new seed's scope fails (WRONGTYPE).
        await client.set(new ClusterKeys(crawl).scopeSeeds, 'not a set');
        given = engine.add(url('a3.test', '/extra'));
        world.web.release('a3.test');
      }
    } catch (err) {
      thrown = err;
    } finally {
      await engine.close();
      client.disconnect();
    }
    expect(given).toEqual({ added: 1, refused: [] });
    expect(String(thrown)).toMatch(/WRONGTYPE/);
    expect(world.web.log).not.toContain('a3.test/extra');
  }, WAIT_MS);
});
