/**
 * A kept-alive connection closed by the server while the next request is already on its way.
 *
 * Seen once in crawl.test under a load of 18: the server logged one request for a page and the
 * engine yielded the page twice. The cause, reproduced there by stopping the sim's process for
 * a few seconds at a time (SIGSTOP/SIGCONT, what a loaded CPU does to it): undici drops a
 * pooled connection 2 s before the server's advertised `Keep-Alive: timeout=5`, and checks
 * for a FIN before reusing one, but a server whose event loop runs late takes its overdue
 * idle-timeout first and reads afterwards — so a request that arrived meanwhile is in its
 * kernel buffer, unread, when the socket is closed, and the close resets the connection. The
 * server's application never saw the request; the client gets ECONNRESET with no response.
 * The engine yields that attempt (a status-0 page, errorKind `network`) and fetches the URL
 * again under politeness: one request answered, two pages yielded, one of them a failure.
 * That is correct — an automatic resend would be an unpaced second request whenever the server
 * did read it before resetting — so the crawl test's accounting (helpers.ts `reconcile`) lets
 * a no-response failure stand without a logged request, and nothing else.
 *
 * Here the crossing is made every time: a raw server resets any connection on which a second
 * request arrives, without logging it, so any request that lands on a reused connection is
 * reset, and succeeds on a fresh one.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type Page } from '../../src/index.js';
import { AGENT, collect, reconcile, type ServedRequest } from './helpers.js';

/** The pages of the one-host site, each linking to the next. */
const PAGES: Record<string, string> = {
  '/': '<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>',
  '/a': '<html><body><a href="/b">b</a></body></html>',
  '/b': '<html><body>end</body></html>',
};

interface RacingServer {
  readonly port: number;
  /** Requests the "application" read and answered (the ones reset on arrival are not here). */
  readonly log: { path: string; status: number }[];
  /** Requests reset on arrival on a reused connection. */
  resets: number;
  close(): Promise<void>;
}

/**
 * HTTP/1.1 over `node:net`, just enough for GETs without a body: the first request on a
 * connection is answered with a keep-alive response (the client will reuse the connection);
 * a request arriving on a connection that already served one is reset unread, as an idle
 * close crossing it would.
 */
async function racingServer(): Promise<RacingServer> {
  const state: RacingServer = { port: 0, log: [], resets: 0, close: async () => undefined };
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let served = 0;
    let buf = '';
    socket.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.slice(0, end);
      buf = buf.slice(end + 4);
      if (served > 0) {
        state.resets++;
        socket.resetAndDestroy();
        return;
      }
      served++;
      const path = head.split(' ')[1] ?? '/';
      const isRobots = path === '/robots.txt';
      const body = isRobots ? 'User-agent: *\nAllow: /\n' : PAGES[path];
      const status = body === undefined ? 404 : 200;
      state.log.push({ path, status });
      const payload = Buffer.from(body ?? 'not found');
      socket.write(
        `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Not Found'}\r\n` +
          `Content-Type: ${isRobots ? 'text/plain' : 'text/html'}\r\nContent-Length: ${payload.length}\r\n` +
          'Connection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n',
      );
      socket.write(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}

describe('a kept-alive connection reset as the next request arrives', () => {
  let server: RacingServer;
  let engine: Engine;
  let pages: Omit<Page, 'body'>[];
  const url = (path: string): string => `http://race.test:${server.port}${path}`;

  beforeAll(async () => {
    server = await racingServer();
    engine = new Engine({
      seeds: [url('/')],
      agent: AGENT,
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      politeness: { minDelayMs: 20, startDelayMs: 20, ipMinDelayMs: 5 },
      retryLimit: 4,
    });
    pages = await collect(engine.run());
  }, 60_000);

  afterAll(async () => {
    await engine?.close();
    await server?.close();
  });

  it('yields the reset attempt as a transport failure and fetches the page once more: one request answered per page', () => {
    expect(engine.stopReason).toBe('drained');
    // Every page was answered exactly once; every one was first reset on a reused connection.
    expect(server.log.filter((r) => r.path !== '/robots.txt').map((r) => `${r.path} ${r.status}`).sort()).toEqual(['/ 200', '/a 200', '/b 200']);
    // Which request lands on a reused connection depends on the order (a retry goes after its
    // host's untried URLs, so /b may take the connection before /a's retry does): each page is
    // yielded as its resets, then its one answer, and every reset the server made is one of them.
    let yieldedResets = 0;
    for (const path of Object.keys(PAGES)) {
      const mine = pages.filter((p) => p.url === url(path));
      const resets = mine.length - 1;
      expect(mine.map((p) => `${p.status} ${p.errorKind ?? ''}`.trim()), path).toEqual([...Array<string>(resets).fill('0 network'), '200']);
      for (const p of mine.slice(0, resets)) expect(p.error).toMatch(/ECONNRESET/);
      expect(mine[resets]!.ok).toBe(true);
      yieldedResets += resets;
    }
    expect(pages.filter((p) => p.url === url('/'))[0]!.status).toBe(0);
    expect(yieldedResets).toBe(server.resets);
    // After robots.txt every answer leaves a connection the next request lands on: reset, answer, three times.
    expect(server.resets).toBe(3);
    // The crawl test's accounting takes this run as it is: nothing fetched twice, nothing missing.
    const served: ServedRequest[] = server.log.filter((r) => r.path !== '/robots.txt').map((r) => ({ url: url(r.path), status: r.status }));
    expect(reconcile(served, pages)).toEqual([]);
  });
});

describe('reconcile (the crawl test accounting)', () => {
  const u = 'http://h.test/p';
  it.each([
    ['one request, one page', [{ url: u, status: 200 }], [{ url: u, status: 200 }], 0],
    ['a dropped connection is a status-0 page', [{ url: u, status: 0 }, { url: u, status: 200 }], [{ url: u, status: 0, errorKind: 'network' }, { url: u, status: 200 }], 0],
    ['a reset the server never logged, then the page', [{ url: u, status: 200 }], [{ url: u, status: 0, errorKind: 'network' }, { url: u, status: 200 }], 0],
    ['an answer the client timed out on is a status-0 page', [{ url: u, status: 200 }], [{ url: u, status: 0, errorKind: 'timeout' }], 0],
    ['one request yielded twice', [{ url: u, status: 200 }], [{ url: u, status: 200 }, { url: u, status: 200 }], 1],
    ['a page with no request', [], [{ url: u, status: 200 }], 1],
    ['a request with no page', [{ url: u, status: 503 }, { url: u, status: 200 }], [{ url: u, status: 200 }], 1],
    ['a status the server never answered', [{ url: u, status: 503 }], [{ url: u, status: 200 }], 1],
    ['a DNS failure yields no page', [], [{ url: u, status: 0, errorKind: 'dns' }], 1],
  ] as const)('%s', (_what, served, yielded, problems) => {
    expect(reconcile(served, yielded)).toHaveLength(problems);
  });
});
