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
import { Engine, type EngineOptions, crawl } from '../../src/index.js';
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
    if (host === 'www.site.test' && path === '/extra') {
      // Met only by the resume below: links into the old origin no run has seen.
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(`<html><body>${Array.from({ length: 5 }, (_, i) => `<a href="http://site.test:${port}/x/${i}">x</a>`).join(' ')}</body></html>`);
    }
    if (host === 'www.site.test' && /^\/x\/\d+$/.test(path)) {
      res.writeHead(200, { 'content-type': 'text/html' });
      // Each its own text (five alike would be a soft-404 template).
      return res.end(`<html><body>extra page ${path} ${'x'.repeat(Number(path.slice(3)) * 50)}</body></html>`);
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
      const first = await crawl(options({ dataDir }));
      expect(first.reason).toBe('drained');
      asked.length = 0;
      // A new page links five old-origin URLs no run has seen: taken straight to www at once.
      const again = await crawl(options({ dataDir, seeds: [`http://www.site.test:${port}/extra`] }));
      expect(again.reason).toBe('drained');
      expect(again.learnedAliases).toEqual([{ from: `http://site.test:${port}`, to: `http://www.site.test:${port}` }]);
      expect(pagesOf('site.test')).toEqual([]);
      expect(pagesOf('www.site.test').filter((p) => p.startsWith('/x/')).sort()).toEqual(['/x/0', '/x/1', '/x/2', '/x/3', '/x/4']);
      expect(again.counts.aliasRewrites).toBe(5);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('an alias a site only half follows', () => {
  // site2.test moved to www.site2.test except /legacy/, which only the old origin serves (the
  // new one answers 404 there); the new origin's later pages link the legacy pages.
  let legacy: Server;
  let lport = 0;
  const seen: { host: string; path: string }[] = [];
  beforeAll(async () => {
    legacy = createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      const path = req.url ?? '/';
      seen.push({ host, path });
      if (path === '/robots.txt') {
        res.writeHead(404);
        return res.end();
      }
      if (host === 'site2.test' && path.startsWith('/legacy/')) {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html><body>an old page</body></html>');
      }
      if (host === 'site2.test') {
        res.writeHead(301, { location: `http://www.site2.test:${lport}${path}` });
        return res.end();
      }
      const m = /^\/(?:p\/(\d+))?$/.exec(path);
      if (m === null) {
        res.writeHead(404, { 'content-type': 'text/html' });
        return res.end('<html><body>not here</body></html>');
      }
      const i = Number(m[1] ?? 0);
      const old = i >= 20 ? ` <a href="http://site2.test:${lport}/legacy/${i}">old</a>` : '';
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><a href="http://site2.test:${lport}/p/${(i + 1) % PAGES}">next</a>${old}</body></html>`);
    });
    await new Promise<void>((r) => legacy.listen(0, '127.0.0.1', r));
    lport = (legacy.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => legacy.close(() => r()));
  });

  it('a rewritten link answering 404 unlearns the alias and the link is fetched as found: no page lost', async () => {
    const summary = await crawl(options({ seeds: [`http://site2.test:${lport}/`] }));
    expect(summary.reason).toBe('drained');
    const oldPaths = seen.filter((r) => r.host === 'site2.test').map((r) => r.path);
    // Every legacy page fetched from the origin that serves it.
    for (let i = 20; i < PAGES; i++) expect(oldPaths).toContain(`/legacy/${i}`);
    // The legacy links taken to the new origin before the first miss there (one, or a few
    // already queued under load) missed, and each was sent back as found.
    expect(summary.rewriteMisses.length).toBeGreaterThanOrEqual(1);
    for (const url of summary.rewriteMisses) expect(url).toMatch(new RegExp(`^http://site2\\.test:${lport}/legacy/\\d+$`));
    expect(seen.filter((r) => r.host === 'www.site2.test' && r.path.startsWith('/legacy/'))).toHaveLength(summary.rewriteMisses.length);
    expect(summary.rewriteMisses.length).toBeLessThan(PAGES - 20);
    expect(summary.learnedAliases).toEqual([]);
  });

  it('the link as found takes the missed URL\'s depth and is no seed of the crawl', async () => {
    const at = seen.length;
    const engine = new Engine(options({ seeds: [`http://site2.test:${lport}/`] }));
    const depths = new Map<string, number>();
    for await (const page of engine.run()) depths.set(page.url, page.depth);
    const summary = engine.summary();
    expect(summary.reason).toBe('drained');
    expect(summary.rewriteMisses.length).toBeGreaterThanOrEqual(1);
    // /p/i is i links from the seed (each hop through the old origin's redirect keeps the
    // depth), so /legacy/i is i + 1: a missed link comes back at that depth, not as a seed at 0.
    for (let i = 20; i < PAGES; i++) expect(depths.get(`http://site2.test:${lport}/legacy/${i}`), `/legacy/${i}`).toBe(i + 1);
    expect(engine.options.seeds.filter((u) => u.includes('/legacy/'))).toEqual([]);
    // Every legacy page serves the same body: past five, one made-up URL asks the server for
    // its not-found answer (a soft-404 probe; it is that body, so they are read as not found).
    const legacy = seen.slice(at).filter((r) => r.host === 'site2.test' && r.path.startsWith('/legacy/'));
    expect(legacy.filter((r) => !/^\/legacy\/\d{10}$/.test(r.path))).toHaveLength(PAGES - 20);
    expect(legacy.filter((r) => /^\/legacy\/\d{10}$/.test(r.path))).toHaveLength(1);
  });
});

describe('a section whose URLs redirect to add a trailing slash (learnAliases)', () => {
  // /docs/i answers 301 to /docs/i/, where the page is; every page links the others without the slash.
  const N = 30;
  let slashed: Server;
  let sport = 0;
  const seen: string[] = [];
  beforeAll(async () => {
    slashed = createServer((req, res) => {
      const path = req.url ?? '/';
      seen.push(path);
      if (path === '/robots.txt') {
        res.writeHead(404);
        return res.end();
      }
      const m = /^\/docs\/(\d+)(\/?)$/.exec(path);
      if (m !== null && m[2] === '') {
        res.writeHead(301, { location: `/docs/${m[1]}/` });
        return res.end();
      }
      if (path === '/index') {
        // Every page twice, as the site writes it and without the slash: the second kind queued
        // before the rule is learned.
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(`<html><body>${Array.from({ length: N }, (_, i) => `<a href="/docs/${i}/">d</a> <a href="/docs/${i}">d</a>`).join(' ')}</body></html>`);
      }
      if (path === '/extra') {
        // Met only by the resume below: links into the section no run has seen.
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end(`<html><body>${[100, 101, 102, 103, 104].map((i) => `<a href="/docs/${i}">d</a>`).join(' ')}</body></html>`);
      }
      const i = m === null ? 0 : Number(m[1]);
      if (path !== '/' && m === null) {
        res.writeHead(404);
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><p>doc ${i} ${'words '.repeat(i + 3)}</p><a href="/docs/${(i + 1) % N}">next</a> <a href="/docs/${(i * 7 + 3) % N}">see also</a></body></html>`);
    });
    await new Promise<void>((r) => slashed.listen(0, '127.0.0.1', r));
    sport = (slashed.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => slashed.close(() => r()));
  });
  const opts = (extra: Partial<EngineOptions> = {}): Partial<EngineOptions> & { agent: string } => ({
    seeds: [`http://127.0.0.1:${sport}/`],
    agent: AGENT,
    allowPrivate: true,
    politeness: { minDelayMs: 5, startDelayMs: 5 },
    ...extra,
  });

  it('after three, links into the section are written with the slash: every page once, a few redirects; off, a redirect per page', async () => {
    seen.length = 0;
    const summary = await crawl(opts());
    expect(summary.reason).toBe('drained');
    const pages = seen.filter((p) => p.endsWith('/') && p !== '/');
    expect(pages.sort()).toEqual(Array.from({ length: N }, (_, i) => `/docs/${i}/`).sort());
    const redirects = seen.filter((p) => /^\/docs\/\d+$/.test(p));
    expect(redirects.length).toBeGreaterThanOrEqual(3);
    expect(redirects.length).toBeLessThanOrEqual(N / 3);
    expect(summary.learnedAliases).toEqual([{ from: `http://127.0.0.1:${sport}/docs/…`, to: `http://127.0.0.1:${sport}/docs/…/` }]);
    expect(summary.counts.aliasRewrites).toBeGreaterThan(0);

    seen.length = 0;
    const off = await crawl(opts({ learnAliases: false }));
    expect(off.learnedAliases).toEqual([]);
    expect(seen.filter((p) => /^\/docs\/\d+$/.test(p))).toHaveLength(N);
  });

  it('a URL queued before the rule whose page was fetched meanwhile is not fetched: a redirect saved', async () => {
    seen.length = 0;
    const summary = await crawl(opts({ seeds: [`http://127.0.0.1:${sport}/index`] }));
    expect(summary.reason).toBe('drained');
    expect(seen.filter((p) => /^\/docs\/\d+\/$/.test(p))).toHaveLength(N);
    const redirects = seen.filter((p) => /^\/docs\/\d+$/.test(p)).length;
    // Each slashless URL was either fetched (a redirect) or refused at its turn.
    expect(redirects + summary.counts.aliasCopies).toBe(N);
    expect(summary.counts.aliasCopies).toBeGreaterThan(0);
  });

  it('the checkpoint keeps the rule: a resume writes new links the section\'s way from its first page', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'meguri-slashes-'));
    try {
      expect((await crawl(opts({ dataDir, seeds: [`http://127.0.0.1:${sport}/docs/0/`] }))).reason).toBe('drained');
      seen.length = 0;
      const again = await crawl(opts({ dataDir, seeds: [`http://127.0.0.1:${sport}/extra`] }));
      expect(again.reason).toBe('drained');
      expect(again.learnedAliases).toEqual([{ from: `http://127.0.0.1:${sport}/docs/…`, to: `http://127.0.0.1:${sport}/docs/…/` }]);
      // Its five links went straight to their pages: no redirect asked (three without the rule).
      expect(seen.filter((p) => /^\/docs\/10\d/.test(p)).sort()).toEqual(['/docs/100/', '/docs/101/', '/docs/102/', '/docs/103/', '/docs/104/']);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
