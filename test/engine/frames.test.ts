/**
 * Older sites a crawler meets: a frameset index with no anchors at all, and pages that move
 * by `<meta http-equiv=refresh>` instead of a redirect — through the real HttpFetcher on
 * loopback. Without frame and refresh links such a crawl ends at its seed.
 */
import { describe, expect, it } from 'vitest';
import { crawl } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const asked: string[] = [];
const html = (body: string): string => `<html><head><title>t</title></head>${body}</html>`;
const SITE: Record<string, string> = {
  '/': html('<frameset cols="25%,75%"><frame src="menu.html"><frame src="home.html"></frameset>'),
  '/menu.html': html('<body><a href="docs/a.html" target="main">a</a> <a href="old.html" target="main">old</a></body>'),
  '/home.html': html('<body>welcome <iframe src="/widget.html"></iframe></body>'),
  '/widget.html': html('<body>a widget</body>'),
  '/docs/a.html': html('<body>page a, about one thing</body>'),
  // Moved by a refresh: the page itself is a stub; its target is the page.
  '/old.html': html('<head><meta http-equiv="refresh" content="0; URL=\'/new/b.html\'"></head><body>moved</body>'),
  '/new/b.html': html('<body>page b, about another</body>'),
};

const site = loopbackSite((req, res) => {
  const path = req.url ?? '/';
  asked.push(path);
  const body = SITE[path];
  if (body === undefined) {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(body);
});

describe('frames and meta refresh', () => {
  it("a frameset site is crawled through its frames, and a refresh leads to its target at the page's own depth (a redirect)", async () => {
    const depth = new Map<string, number>();
    const summary = await crawl(
      { seeds: [`http://site.test:${site.port()}/`], agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 5, startDelayMs: 5 } },
      (page) => void depth.set(new URL(page.url).pathname, page.depth),
    );
    expect(summary.reason).toBe('drained');
    expect([...depth.keys()].sort()).toEqual(Object.keys(SITE).sort());
    expect(Object.fromEntries(depth)).toMatchObject({ '/': 0, '/menu.html': 1, '/home.html': 1, '/widget.html': 2, '/docs/a.html': 2, '/old.html': 2, '/new/b.html': 2 });
    // Each once.
    const pages = asked.filter((p) => p !== '/robots.txt');
    expect(pages.length).toBe(new Set(pages).size);
  });
});
