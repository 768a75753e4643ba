/**
 * Origins a site moved away from (EngineOptions.learnAliases, src/dedup/aliases.ts), through
 * the real HttpFetcher on loopback: `site.test` answers every path with a 301 to the same path
 * on `www.site.test`, whose pages still link `http://site.test:PORT/…` — a redirect per URL
 * until the move is learned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineOptions, crawl } from '../../src/index.js';
import { AGENT } from './helpers.js';

const PAGES = 30;
let server: Server;
let port = 0;
const asked: { host: string; path: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    asked.push({ host, path });
    if (path === '/robots.txt') {
      res.writeHead(404);
      return res.end();
    }
    if (host === 'site.test') {
      res.writeHead(301, { location: `http://www.site.test:${port}${path}` });
      return res.end();
    }
    const m = /^\/(?:p\/(\d+))?$/.exec(path);
    if (host !== 'www.site.test' || m === null) {
      res.writeHead(404);
      return res.end();
    }
    const i = Number(m[1] ?? 0);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><a href="http://site.test:${port}/p/${(i + 1) % PAGES}">next</a> <a href="http://site.test:${port}/p/${(i * 7 + 3) % PAGES}">more</a></body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

function options(extra: Partial<EngineOptions> = {}): Partial<EngineOptions> & { agent: string } {
  return { seeds: [`http://site.test:${port}/`], agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 5, startDelayMs: 5 }, ...extra };
}

const pagesOf = (host: string): string[] => asked.filter((r) => r.host === host && r.path !== '/robots.txt').map((r) => r.path);

describe('origins a site moved away from (learnAliases)', () => {
  it('after three permanent redirects to www., links into the old origin are taken there: every page once, a few redirects', async () => {
    asked.length = 0;
    const summary = await crawl(options());
    expect(summary.reason).toBe('drained');
    const www = pagesOf('www.site.test');
    expect(new Set(www).size).toBe(www.length);
    expect(www.filter((p) => p.startsWith('/p/')).sort()).toEqual(Array.from({ length: PAGES }, (_, i) => `/p/${i}`).sort());
    const redirected = pagesOf('site.test');
    expect(redirected.length).toBeGreaterThanOrEqual(3);
    expect(redirected.length).toBeLessThanOrEqual(8);
    expect(summary.learnedAliases).toEqual([{ from: `http://site.test:${port}`, to: `http://www.site.test:${port}` }]);
    expect(summary.counts.aliasRewrites).toBeGreaterThan(0);
    expect(summary.counts.redirects).toBe(redirected.length);
  });

  it('learnAliases: false follows a redirect per URL', async () => {
    asked.length = 0;
    const summary = await crawl(options({ learnAliases: false }));
    expect(pagesOf('site.test').length).toBe(PAGES + 1);
    expect(summary.learnedAliases).toEqual([]);
    expect(summary.counts.aliasRewrites).toBe(0);
  });

  it('the checkpoint keeps the alias: a resume takes links into the old origin there from its first page', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'meguri-aliases-'));
    try {
      await crawl(options({ dataDir, seeds: [`http://site.test:${port}/`], maxPages: 5 }));
      asked.length = 0;
      const again = await crawl(options({ dataDir, seeds: [], maxPages: 100 }));
      expect(again.learnedAliases).toEqual([{ from: `http://site.test:${port}`, to: `http://www.site.test:${port}` }]);
      // Learned in the first run (its three redirects were the only URLs queued on the old
      // origin then): the resume follows no redirect and relearns nothing.
      expect(pagesOf('site.test')).toEqual([]);
      expect(again.counts.aliasRewrites).toBeGreaterThan(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
