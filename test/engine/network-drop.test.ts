/**
 * The crawler's own network drops mid-crawl: the name server stops answering and connections
 * fail, for longer than the DNS answer's TTL. No page may be lost to it: the name's last
 * answer is served again (serve-stale, src/fetch/dns.ts), so each try meets a refused
 * connection — a host outage, which spends no retry while it is young — instead of a DNS
 * failure charged to its URL.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/index.js';
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

describe('the crawler’s network drops mid-crawl', () => {
  it('loses no page: DNS failures of a name answered before are served its last answer, and the refused connections spend no retry', { timeout: 30_000 }, async () => {
    // A chain /p/0 → /p/1 → … so every page after the drop is found only after it.
    const asked: string[] = [];
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      asked.push(path);
      if (path === '/robots.txt') return void res.writeHead(404).end();
      const i = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? NaN);
      if (!(i >= 0 && i < PAGES)) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body>${i + 1 < PAGES ? `<a href="/p/${i + 1}">next</a>` : 'the end'}</body></html>`);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;

    let down = false;
    let failedLookups = 0;
    let offset = 0;
    const e = new Engine({
      seeds: [`http://net.test:${port}/p/0`],
      agent: AGENT,
      allowPrivate: true,
      clock: () => performance.timeOrigin + performance.now() + offset,
      // Each try during the drop would be the URL's last without the outage rules.
      retryLimit: 1,
      politeness: { minDelayMs: 5, startDelayMs: 5 },
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
    const fetched: string[] = [];
    let restored: Promise<void> | undefined;
    let byStatus: Record<string, number> = {};
    let finished = false;
    try {
      for await (const page of e.run()) {
        if (page.status === 200) fetched.push(new URL(page.url).pathname);
        if (page.url.endsWith(`/p/${DROP_AT}`) && page.status === 200 && !down) {
          // The drop: connections refused, the resolver unreachable, and the clock past the
          // answer's TTL (60 s) so the next fetch must ask the resolver again.
          down = true;
          server.closeAllConnections();
          server.close();
          offset += 10 * 60_000;
          restored = (async () => {
            // Down until the crawler has tried (and failed) several times.
            while (triesWhileDown() < 4 && !finished) await new Promise((r) => setTimeout(r, 20));
            await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
            down = false;
          })();
        }
      }
      byStatus = e.urlsByStatus();
    } finally {
      finished = true;
      await e.close();
    }
    await restored;
    const s = e.summary();
    expect(fetched.sort()).toEqual(Array.from({ length: PAGES }, (_, i) => `/p/${i}`).sort());
    expect(byStatus).toMatchObject({ Crawled: PAGES, Gone: 0 });
    expect(s.counts.networkErrors).toBeGreaterThanOrEqual(4);
    // The resolver was asked during the drop and failed; its last answer stood in.
    expect(failedLookups).toBeGreaterThanOrEqual(1);
  });
});
