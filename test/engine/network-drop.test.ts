/**
 * The crawler's own network drops mid-crawl: the name server stops answering and connections
 * fail, for longer than the DNS answer's TTL. No page may be lost to it: the name's last
 * answer is served again (serve-stale, src/fetch/dns.ts), so each try meets a refused
 * connection — a host outage, which spends no retry while it is young — instead of a DNS
 * failure charged to its URL.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/index.js';
import { blackhole } from '../fetch/blackhole.js';
import { AGENT } from './helpers.js';

const PAGES = 12;
const DROP_AT = 4;

let server: Server | undefined;
afterEach(
  () =>
    new Promise<void>((resolve) => {
      if (server === undefined || !server.listening) return resolve();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

/** Serves the chain /p/0 → /p/1 → … → /p/PAGES-1, so every page after a drop is found only after it. */
async function serveChain(headers: Record<string, string> = {}): Promise<number> {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') return void res.writeHead(404).end();
    const i = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? NaN);
    if (!(i >= 0 && i < PAGES)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html', ...headers });
    res.end(`<html><body>${i + 1 < PAGES ? `<a href="/p/${i + 1}">next</a>` : 'the end'}</body></html>`);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/**
 * Crawls the chain to its end. Once /p/DROP_AT is crawled, `drop` takes the network down and
 * returns `back`, the network's return, which waits for its own condition or `done()`.
 */
async function crawlThroughDrop(e: Engine, drop: (done: () => boolean) => Promise<{ back: Promise<void> }>): Promise<{ fetched: string[]; byStatus: Record<string, number>; offlineAtEnd: number }> {
  const fetched: string[] = [];
  let restored: Promise<void> | undefined;
  let finished = false;
  try {
    for await (const page of e.run()) {
      if (page.status === 200) fetched.push(new URL(page.url).pathname);
      if (page.url.endsWith(`/p/${DROP_AT}`) && page.status === 200 && restored === undefined) restored = (await drop(() => finished)).back;
    }
    return { fetched: fetched.sort(), byStatus: e.urlsByStatus(), offlineAtEnd: e.offlineSinceMs() };
  } finally {
    finished = true;
    await e.close();
    await restored;
  }
}

const ALL_PAGES = Array.from({ length: PAGES }, (_, i) => `/p/${i}`).sort();

describe('the crawler’s network drops mid-crawl', () => {
  it('loses no page: DNS failures of a name answered before are served its last answer, and the refused connections spend no retry', { timeout: 30_000 }, async () => {
    const port = await serveChain();
    let down = false;
    let failedLookups = 0;
    let offset = 0;
    let offlineReports = 0;
    const e = new Engine({
      seeds: [`http://net.test:${port}/p/0`],
      agent: AGENT,
      allowPrivate: true,
      clock: () => performance.timeOrigin + performance.now() + offset,
      // Each try during the drop would be the URL's last without the outage rules.
      retryLimit: 1,
      politeness: { minDelayMs: 5, startDelayMs: 5 },
      progressIntervalMs: 20,
      onProgress: (p) => {
        if (p.offlineSinceMs > 0) offlineReports++;
      },
      resolve: async () => {
        if (down) {
          failedLookups++;
          // c-ares' word when no name server can be reached.
          throw Object.assign(new Error('queryA ECONNREFUSED net.test'), { code: 'ECONNREFUSED' });
        }
        return [{ address: '127.0.0.1', family: 4 as const, ttlSeconds: 60 }];
      },
    });
    const triesWhileDown = (): number => e.summary().counts.networkErrors;
    const { fetched, byStatus, offlineAtEnd } = await crawlThroughDrop(e, async (finished) => {
      // The drop: connections refused, the resolver unreachable, and the clock past the
      // answer's TTL (60 s) so the next fetch must ask the resolver again.
      down = true;
      server!.closeAllConnections();
      server!.close();
      offset += 10 * 60_000;
      const back = (async () => {
        // Down until the crawler has tried (and failed) several times.
        while (triesWhileDown() < 4 && !finished()) await new Promise((r) => setTimeout(r, 20));
        await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
        down = false;
      })();
      return { back };
    });
    expect(fetched).toEqual(ALL_PAGES);
    expect(byStatus).toMatchObject({ Crawled: PAGES, Gone: 0 });
    expect(e.summary().counts.networkErrors).toBeGreaterThanOrEqual(4);
    // The resolver was asked during the drop and failed; its last answer stood in.
    expect(failedLookups).toBeGreaterThanOrEqual(1);
    // Progress said the crawl was offline while nothing answered, and no longer says so.
    expect(offlineReports).toBeGreaterThan(0);
    expect(offlineAtEnd).toBe(0);
  });
});

describe('the crawler’s network drops silently mid-crawl (packets dropped: connections time out)', () => {
  it('loses no page: a connection not made in time is the host’s outage and the crawl offline, not a fault of the page', { timeout: 30_000 }, async () => {
    // A dead uplink behind a working Wi-Fi, a firewall dropping SYNs: nothing refuses, every
    // connection waits out its timeout. Charged to the page as a timeout, each try was one of
    // the URL's retries (retryLimit 1: the chain ended at the first page after the drop).
    const port = await serveChain({ connection: 'close' });
    let offlineReports = 0;
    const e = new Engine({
      seeds: [`http://quiet.test:${port}/p/0`],
      agent: AGENT,
      allowPrivate: true,
      retryLimit: 1,
      http: { connectTimeoutMs: 200 },
      politeness: { minDelayMs: 5, startDelayMs: 5 },
      progressIntervalMs: 20,
      onProgress: (p) => {
        if (p.offlineSinceMs > 0) offlineReports++;
      },
      resolve: async () => ['127.0.0.1'],
    });
    const failures = (): number => e.summary().counts.networkErrors;
    let holding = false;
    const { fetched, byStatus, offlineAtEnd } = await crawlThroughDrop(e, async (finished) => {
      server!.closeAllConnections();
      await new Promise((r) => server!.close(r));
      const hole = await blackhole(port);
      holding = await hole.holds();
      const back = (async () => {
        while (failures() < 4 && !finished()) await new Promise((r) => setTimeout(r, 20));
        await hole.close();
        await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
      })();
      return { back };
    });
    expect(holding).toBe(true);
    expect(fetched).toEqual(ALL_PAGES);
    expect(byStatus).toMatchObject({ Crawled: PAGES, Gone: 0 });
    expect(e.summary().counts.networkErrors).toBeGreaterThanOrEqual(4);
    expect(offlineReports).toBeGreaterThan(0);
    expect(offlineAtEnd).toBe(0);
  });
});

describe('the crawler’s network drops while a new host’s robots.txt is due', () => {
  it('does not give the host up: robots.txt failures while the crawl is offline do not count towards robotsMaxAttempts', { timeout: 30_000 }, async () => {
    const asked: string[] = [];
    let dropAfterServing = true;
    server = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const path = req.url ?? '/';
      asked.push(`${host}${path}`);
      if (path === '/robots.txt') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      if (host === 'site.test') {
        const i = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? 0);
        // /p/2 names a host the crawl has not met; the network drops the moment it is served.
        const links = i < 4 ? [`/p/${i + 1}`] : [];
        if (i === 2) links.push(`http://new.test:${port}/n/0`);
        res.end(`<html><body>${links.map((l) => `<a href="${l}">x</a>`).join('')}</body></html>`);
        if (i === 2 && dropAfterServing) {
          dropAfterServing = false;
          res.once('finish', () => {
            server!.close();
            server!.closeAllConnections();
          });
        }
        return;
      }
      res.end(path === '/n/0' ? '<html><body><a href="/n/1">x</a></body></html>' : '<html><body>end</body></html>');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;

    const e = new Engine({
      seeds: [`http://site.test:${port}/p/0`],
      agent: AGENT,
      allowPrivate: true,
      scope: 'any',
      robotsMaxAttempts: 2,
      robotsRetryMs: 50,
      politeness: { minDelayMs: 5, startDelayMs: 5 },
      resolve: async () => ['127.0.0.1'],
    });
    const newHostRobotsTries = (): number => e.robotsRequests - 1; // site.test's own was the first
    let finished = false;
    const restored = (async () => {
      while (server!.listening && !finished) await new Promise((r) => setTimeout(r, 10));
      // Down until new.test's robots.txt has failed well past robotsMaxAttempts (given up, it
      // is not asked again: then the network comes back after 4 s and the host stays written off).
      const until = Date.now() + 4_000;
      while (newHostRobotsTries() < 5 && !finished && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      if (!finished) await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    })();
    const fetched: string[] = [];
    try {
      for await (const page of e.run()) if (page.status === 200) fetched.push(new URL(page.url).host.replace(/:\d+$/, '') + new URL(page.url).pathname);
    } finally {
      finished = true;
      await e.close();
    }
    await restored;
    expect(newHostRobotsTries()).toBeGreaterThanOrEqual(5);
    expect(fetched.sort()).toEqual(['new.test/n/0', 'new.test/n/1', 'site.test/p/0', 'site.test/p/1', 'site.test/p/2', 'site.test/p/3', 'site.test/p/4']);
    expect(e.summary().robotsUnreachable).toEqual([]);
  });
});

describe('a page whose connection is reset every time (a WAF, a crashing worker)', () => {
  it('is no outage: it spends its retries and a one-shot crawl ends, never saying it is offline', { timeout: 30_000 }, async () => {
    let resets = 0;
    server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/bad') {
        resets++;
        return void req.socket.resetAndDestroy();
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(req.url === '/' ? '<a href="/a">a</a><a href="/bad">bad</a>' : 'page');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    let offlineReports = 0;
    const e = new Engine({
      seeds: [`http://reset.test:${port}/`],
      agent: AGENT,
      allowPrivate: true,
      politeness: { minDelayMs: 5, startDelayMs: 5 },
      progressIntervalMs: 20,
      onProgress: (p) => {
        if (p.offlineSinceMs > 0) offlineReports++;
      },
      resolve: async () => ['127.0.0.1'],
    });
    const bad: { status: number; errorKind: string | undefined }[] = [];
    let byStatus: Record<string, number> = {};
    try {
      for await (const page of e.run()) if (page.url.endsWith('/bad')) bad.push({ status: page.status, errorKind: page.errorKind });
      byStatus = e.urlsByStatus();
    } finally {
      await e.close();
    }
    // Read as a refused connection, the fourth try was never charged: the crawl waited out the
    // outage grace (an hour) with /bad first in its host's queue.
    expect(resets).toBe(4);
    expect(bad).toEqual(Array(4).fill({ status: 0, errorKind: 'network' }));
    expect(byStatus).toMatchObject({ Crawled: 2, Gone: 1 });
    expect(offlineReports).toBe(0);
  });
});

describe('killed while the crawl is offline', () => {
  it('a resume replays the journal as the live run decided: the failures it spared are not charged then', { timeout: 30_000 }, async () => {
    let up = true;
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/robots.txt') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(path === '/p/0' ? '<a href="/p/1">1</a>' : 'end');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const root = mkdtempSync(join(tmpdir(), 'meguri-offline-replay-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    const options = {
      seeds: [`http://site.test:${port}/p/0`],
      agent: AGENT,
      allowPrivate: true,
      // Any failure charged gives the URL up.
      retryLimit: 0,
      checkpointIntervalMs: 3_600_000,
      politeness: { minDelayMs: 5, startDelayMs: 5 },
      resolve: async () => ['127.0.0.1'],
    };
    try {
      const a = new Engine({ ...options, dataDir: live });
      let spared = 0;
      for await (const page of a.run()) {
        if (page.url.endsWith('/p/0') && up) {
          // The network drops after the first page: /p/1's connections fail, the crawl is offline.
          up = false;
          server.closeAllConnections();
          server.close();
        } else if (page.status === 0 && ++spared === 2) {
          // Journaled and reported twice without a retry spent: the state of a kill -9 now is
          // the data directory as it is (journal since the first checkpoint, no final one).
          expect(a.offlineSinceMs()).toBeGreaterThan(0);
          expect(a.urlsByStatus().Gone).toBe(0);
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
      const b = new Engine({ ...options, dataDir: killed });
      const fetched: string[] = [];
      for await (const page of b.run()) fetched.push(`${new URL(page.url).pathname} ${page.status}`);
      expect(b.summary().recovery.replayedOutcomes).toBeGreaterThanOrEqual(2); // /p/0 and at least one spared failure
      // Replayed as an ordinary failure, /p/1 was Gone at once (retryLimit 0) and never fetched.
      expect(fetched).toEqual(['/p/1 200']);
      expect(b.urlsByStatus()).toMatchObject({ Crawled: 2, Gone: 0 });
      await b.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
